"""Weight initialisers (MXNet's ``mx.init`` / ``mx.initializer``).

An initialiser is called as ``init(InitDesc(name, attrs), arr)`` and fills `arr` by the name's
ending, as MXNet does: ``*weight`` by the initialiser's rule, ``*bias`` and ``*beta`` with 0,
``*gamma`` with 1, BatchNorm's ``*moving_mean`` / ``*moving_var`` with 0 / 1, ``*min`` / ``*max``
with 0 / 1; a variable's ``__init__`` attribute (``mx.sym.Variable(init=mx.init.One())``) wins.
Random initialisers draw from ``mx.random`` (seeded by ``mx.random.seed``).
"""
import json
import logging
import re

import numpy as np

from .ndarray import NDArray
from . import ndarray as nd

__all__ = ["InitDesc", "Initializer", "Uniform", "Normal", "Xavier", "MSRAPrelu", "Constant",
           "Zero", "One", "Orthogonal", "Bilinear", "FusedRNN", "Mixed", "Load", "register", "create"]


class InitDesc(str):
    """A parameter's name with its attributes (from the symbol) and the global initialiser."""

    def __new__(cls, name, attrs=None, global_init=None):
        ret = super(InitDesc, cls).__new__(cls, name)
        ret.attrs = attrs or {}
        ret.global_init = global_init
        return ret


_REGISTRY = {}


def register(klass):
    """Registers an initialiser class by its lower-cased name (a decorator); ``create`` and the
    ``__init__`` attributes of variables find it there."""
    _REGISTRY[klass.__name__.lower()] = klass
    return klass


def alias(*names):
    def decorate(klass):
        for name in names:
            _REGISTRY[name.lower()] = klass
        return klass
    return decorate


def create(init, **kwargs):
    """An initialiser from an instance, a registered name, or the JSON of ``dumps()``."""
    if isinstance(init, Initializer):
        return init
    if not isinstance(init, str):
        raise TypeError("create: an initializer, its name or its JSON, got %r" % (init,))
    if init.startswith('['):
        name, kwargs = json.loads(init)
    else:
        name = init
    klass = _REGISTRY.get(name.lower())
    if klass is None:
        raise ValueError("Cannot find initializer %s; registered initializers are: %s"
                         % (name, ", ".join(sorted(_REGISTRY))))
    return klass(**kwargs)


class Initializer(object):
    """Base class: subclasses define ``_init_weight`` (and may override the others)."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._verbose = False
        self._print_func = None

    def set_verbosity(self, verbose=False, print_func=None):
        """Logs each initialised array (with print_func(arr) as the summary, default its norm)."""
        self._verbose = verbose
        self._print_func = print_func or (lambda x: str((nd.norm(x) / np.sqrt(x.size)).asscalar()))
        return self

    def _verbose_print(self, desc, init, arr):
        if self._verbose and self._print_func:
            logging.info('Initialized %s as %s: %s', desc, init, self._print_func(arr))

    def dumps(self):
        """``[name, kwargs]`` as JSON: what a variable's ``__init__`` attribute holds."""
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])

    def __eq__(self, other):
        if not isinstance(other, Initializer):
            return NotImplemented
        return type(self) is type(other) and self._kwargs == other._kwargs

    def __call__(self, desc, arr):
        if not isinstance(arr, NDArray):
            raise TypeError("%s: arr must be an NDArray, got %s" % (type(self).__name__, type(arr).__name__))
        if not isinstance(desc, InitDesc):
            if not isinstance(desc, str):
                raise TypeError("%s: the parameter name must be a str, got %r" % (type(self).__name__, desc))
            desc = InitDesc(desc)
        if desc.global_init is None:
            desc.global_init = self
        init = desc.attrs.get('__init__', "")
        if init:
            create(init)._init_weight(desc, arr)
            self._verbose_print(desc, init, arr)
            return
        for ending, method in self._BY_ENDING:
            if desc.endswith(ending):
                getattr(self, method)(desc, arr)
                self._verbose_print(desc, ending, arr)
                return
        self._init_default(desc, arr)

    # The name endings MXNet dispatches on, in its order (moving_* before the shorter endings).
    _BY_ENDING = [('weight', '_init_weight'), ('bias', '_init_bias'), ('gamma', '_init_gamma'),
                  ('beta', '_init_beta'), ('moving_mean', '_init_zero'), ('moving_var', '_init_one'),
                  ('moving_inv_var', '_init_zero'), ('moving_avg', '_init_zero'),
                  ('running_mean', '_init_zero'), ('running_var', '_init_one'),
                  ('min', '_init_zero'), ('max', '_init_one')]

    def _init_zero(self, _, arr):
        arr[:] = 0.0

    def _init_one(self, _, arr):
        arr[:] = 1.0

    def _init_bias(self, _, arr):
        arr[:] = 0.0

    def _init_gamma(self, _, arr):
        arr[:] = 1.0

    def _init_beta(self, _, arr):
        arr[:] = 0.0

    def _init_weight(self, name, arr):
        raise NotImplementedError("%s must override _init_weight" % type(self).__name__)

    def _init_default(self, name, _):
        raise ValueError('Unknown initialization pattern for %s. Default initialization is now '
                         'limited to "weight", "bias", "gamma" (1.0), and "beta" (0.0). Please use '
                         'mx.sym.Variable(init=mx.init.*) to set initialization pattern' % name)


def _uniform(arr, low, high):
    nd.random.uniform(low, high, shape=arr.shape, dtype=arr.dtype, ctx=arr.context, out=arr)


def _normal(arr, loc, scale):
    nd.random.normal(loc, scale, shape=arr.shape, dtype=arr.dtype, ctx=arr.context, out=arr)


class Load(object):
    """Initialises from saved arrays: a dict, or a ``.params`` file (``arg:``/``aux:`` prefixes
    dropped); names not there go to `default_init`."""

    def __init__(self, param, default_init=None, verbose=False):
        if isinstance(param, str):
            param = nd.load(param)
        if not isinstance(param, dict):
            raise TypeError("Load: param must be a dict of name to NDArray or a .params file of one")
        self.param = {(k[4:] if k.startswith(('arg:', 'aux:')) else k): v for k, v in param.items()}
        self.default_init = default_init
        self.verbose = verbose

    def __call__(self, name, arr):
        if name in self.param:
            if arr.shape != self.param[name].shape:
                raise ValueError('Parameter %s cannot be initialized from loading. Shape mismatch, '
                                 'target %s vs loaded %s' % (name, arr.shape, self.param[name].shape))
            arr[:] = self.param[name]
            if self.verbose:
                logging.info('Initialized %s by loading', name)
        else:
            if self.default_init is None:
                raise ValueError("Cannot Initialize %s. Not found in loaded param and no default "
                                 "Initializer is provided." % name)
            self.default_init(name, arr)
            if self.verbose:
                logging.info('Initialized %s by default', name)


class Mixed(object):
    """The first initialiser whose regular expression matches the name (``re.match``)."""

    def __init__(self, patterns, initializers):
        if len(patterns) != len(initializers):
            raise ValueError("Mixed: %d patterns but %d initializers" % (len(patterns), len(initializers)))
        self.map = list(zip([re.compile(p) for p in patterns], initializers))

    def __call__(self, name, arr):
        for prog, init in self.map:
            if prog.match(name):
                init(name, arr)
                return
        raise ValueError('Parameter name %s did not match any pattern. Consider add a ".*" '
                         'pattern at the and with default Initializer.' % name)


@register
@alias("zeros")
class Zero(Initializer):
    """Weights 0."""

    def _init_weight(self, _, arr):
        arr[:] = 0


@register
@alias("ones")
class One(Initializer):
    """Weights 1."""

    def _init_weight(self, _, arr):
        arr[:] = 1


@register
class Constant(Initializer):
    """Weights `value` (a scalar or an array of the weight's shape)."""

    def __init__(self, value):
        super(Constant, self).__init__(value=value.tolist() if isinstance(value, np.ndarray) else value)
        self.value = value

    def _init_weight(self, _, arr):
        arr[:] = self.value


@register
class Uniform(Initializer):
    """Weights uniform in [-scale, scale]."""

    def __init__(self, scale=0.07):
        super(Uniform, self).__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, _, arr):
        _uniform(arr, -self.scale, self.scale)


@register
class Normal(Initializer):
    """Weights normal with mean 0 and standard deviation sigma."""

    def __init__(self, sigma=0.01):
        super(Normal, self).__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, _, arr):
        _normal(arr, 0, self.sigma)


@register
class Orthogonal(Initializer):
    """Weights from the orthogonal factor of a random matrix (Saxe et al.), times scale."""

    def __init__(self, scale=1.414, rand_type="uniform"):
        super(Orthogonal, self).__init__(scale=scale, rand_type=rand_type)
        if rand_type not in ("uniform", "normal"):
            raise ValueError("Orthogonal: rand_type must be 'uniform' or 'normal', got %r" % (rand_type,))
        self.scale = scale
        self.rand_type = rand_type

    def _init_weight(self, _, arr):
        nout, nin = arr.shape[0], int(np.prod(arr.shape[1:]))
        if self.rand_type == "uniform":
            tmp = nd.random.uniform(-1.0, 1.0, shape=(nout, nin)).asnumpy()
        else:
            tmp = nd.random.normal(0.0, 1.0, shape=(nout, nin)).asnumpy()
        u, _, v = np.linalg.svd(tmp, full_matrices=False)
        res = u if u.shape == tmp.shape else v
        arr[:] = (self.scale * res).reshape(arr.shape).astype(arr.dtype)


@register
class Xavier(Initializer):
    """Glorot's initialiser: scale = sqrt(magnitude / factor) with factor the fan in, fan out or
    their mean (factor_type 'in', 'out', 'avg'); uniform in [-scale, scale] or normal with
    standard deviation scale (rnd_type 'uniform' or 'gaussian'). Fans count the kernel's
    spatial size."""

    def __init__(self, rnd_type="uniform", factor_type="avg", magnitude=3):
        super(Xavier, self).__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        if rnd_type not in ("uniform", "gaussian"):
            raise ValueError("Unknown random type %r: Xavier takes 'uniform' or 'gaussian'" % (rnd_type,))
        if factor_type not in ("avg", "in", "out"):
            raise ValueError("Incorrect factor type %r: Xavier takes 'avg', 'in' or 'out'" % (factor_type,))
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def _init_weight(self, name, arr):
        shape = arr.shape
        if len(shape) < 2:
            raise ValueError('Xavier initializer cannot be applied to vector {0}. It requires at '
                             'least 2D.'.format(name))
        hw_scale = float(np.prod(shape[2:])) if len(shape) > 2 else 1.
        fan_in, fan_out = shape[1] * hw_scale, shape[0] * hw_scale
        factor = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}[self.factor_type]
        scale = np.sqrt(self.magnitude / factor)
        if self.rnd_type == "uniform":
            _uniform(arr, -scale, scale)
        else:
            _normal(arr, 0, scale)


@register
class MSRAPrelu(Xavier):
    """He et al.'s initialiser for PReLU nets: Xavier 'gaussian' with magnitude 2 / (1 + slope^2)."""

    def __init__(self, factor_type="avg", slope=0.25):
        magnitude = 2. / (1 + slope ** 2)
        super(MSRAPrelu, self).__init__("gaussian", factor_type, magnitude)
        self._kwargs = {'factor_type': factor_type, 'slope': slope}


@register
@register
class LSTMBias(Initializer):
    """An LSTM's i2h bias: 0, except ``forget_bias`` for the forget gate (the second quarter)."""

    def __init__(self, forget_bias=1.0):
        super(LSTMBias, self).__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _init_weight(self, name, arr):
        arr[:] = 0.0
        num_hidden = int(arr.shape[0] / 4)
        arr[num_hidden:2 * num_hidden] = self.forget_bias


class Bilinear(Initializer):
    """Bilinear-interpolation kernels for upsampling weights (Deconvolution)."""

    def _init_weight(self, _, arr):
        shape = arr.shape
        weight = np.zeros(int(np.prod(shape)), dtype='float32')
        f = np.ceil(shape[3] / 2.)
        c = (2 * f - 1 - f % 2) / (2. * f)
        for i in range(int(np.prod(shape))):
            x = i % shape[3]
            y = (i // shape[3]) % shape[2]
            weight[i] = (1 - abs(x / f - c)) * (1 - abs(y / f - c))
        arr[:] = weight.reshape(shape)



@register
class FusedRNN(Initializer):
    """The fused RNN operator's parameter vector (mx.rnn.FusedRNNCell): split into per-gate
    weights and biases, each filled by ``init`` (the global initialiser when None), an LSTM's
    forget-gate biases with ``forget_bias``, and packed back."""

    def __init__(self, init, num_hidden, num_layers, mode, bidirectional=False, forget_bias=1.0):
        if isinstance(init, str):
            klass, kwargs = json.loads(init)
            init = _REGISTRY[klass.lower()](**kwargs)
        super(FusedRNN, self).__init__(init=init.dumps() if init is not None else None, num_hidden=num_hidden,
                                       num_layers=num_layers, mode=mode, bidirectional=bidirectional,
                                       forget_bias=forget_bias)
        self._init = init
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._forget_bias = forget_bias

    def _init_weight(self, desc, arr):
        from .rnn import rnn_cell
        cell = rnn_cell.FusedRNNCell(self._num_hidden, self._num_layers, self._mode, self._bidirectional,
                                     forget_bias=self._forget_bias, prefix='')
        args = cell.unpack_weights({'parameters': arr})
        for name in args:
            if self._mode == 'lstm' and name.endswith("_f_bias"):
                args[name][:] = self._forget_bias
            elif self._init is None:
                desc.global_init(InitDesc(name, global_init=desc.global_init), args[name])
            else:
                self._init(InitDesc(name, global_init=desc.global_init), args[name])
        arr[:] = cell.pack_weights(args)['parameters']
