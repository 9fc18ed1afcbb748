"""Gluon's basic layers (MXNet 1.9.1's ``mx.gluon.nn``): containers, Dense, Dropout, the
normalizations, Embedding, Flatten and the lambdas. Each is a HybridBlock over the operator MXNet's
layer calls, with MXNet's parameter names, shapes, defaults and initializers."""
import numpy as np

from ... import ndarray as nd
from ..block import Block, HybridBlock
from ..parameter import _indent


class Sequential(Block):
    """Calls its children in the order they were added (``add``)."""

    def add(self, *blocks):
        """Appends blocks."""
        for block in blocks:
            self.register_child(block)

    def forward(self, x):
        for block in self._children.values():
            x = block(x)
        return x

    def __repr__(self):
        s = '{name}(\n{modstr}\n)'
        modstr = '\n'.join(['  ({key}): {block}'.format(key=key, block=_indent(block.__repr__(), 2))
                            for key, block in self._children.items()])
        return s.format(name=self.__class__.__name__, modstr=modstr)

    def __getitem__(self, key):
        layers = list(self._children.values())[key]
        if isinstance(layers, list):
            net = type(self)(prefix=self._prefix)
            with net.name_scope():
                net.add(*layers)
            return net
        return layers

    def __len__(self):
        return len(self._children)

    def hybridize(self, active=True, **kwargs):
        if self._children and all(isinstance(c, HybridBlock) for c in self._children.values()):
            import warnings
            warnings.warn("All children of this Sequential layer '%s' are HybridBlocks. Consider using "
                          "HybridSequential for the best performance." % self.prefix, stacklevel=2)
        super(Sequential, self).hybridize(active, **kwargs)


class HybridSequential(HybridBlock):
    """Sequential of HybridBlocks, itself hybridizable."""

    add = Sequential.add

    def hybrid_forward(self, F, x):
        for block in self._children.values():
            x = block(x)
        return x

    __repr__ = Sequential.__repr__
    __getitem__ = Sequential.__getitem__
    __len__ = Sequential.__len__


class Dense(HybridBlock):
    """A fully connected layer: ``activation(dot(x, weight.T) + bias)``; ``flatten`` collapses
    all but the first axis of x first (else the last axis is transformed); ``in_units`` 0
    infers the input size at the first call."""

    def __init__(self, units, activation=None, use_bias=True, flatten=True, dtype='float32',
                 weight_initializer=None, bias_initializer='zeros', in_units=0, **kwargs):
        super(Dense, self).__init__(**kwargs)
        self._flatten = flatten
        with self.name_scope():
            self._units = units
            self._in_units = in_units
            self.weight = self.params.get('weight', shape=(units, in_units), init=weight_initializer,
                                          dtype=dtype, allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get('bias', shape=(units,), init=bias_initializer, dtype=dtype,
                                            allow_deferred_init=True)
            else:
                self.bias = None
            self.act = Activation(activation, prefix=activation + '_') if activation is not None else None

    def hybrid_forward(self, F, x, weight, bias=None):
        out = F.FullyConnected(x, weight, bias, no_bias=bias is None, num_hidden=self._units,
                               flatten=self._flatten, name='fwd')
        return self.act(out) if self.act is not None else out

    def __repr__(self):
        shape = self.weight.shape
        return '{name}({layout}, {act})'.format(
            name=self.__class__.__name__, act=self.act if self.act else 'linear',
            layout='{0} -> {1}'.format(shape[1] if shape[1] else None, shape[0]))


class Activation(HybridBlock):
    """An activation by name: relu, sigmoid, tanh, softrelu or softsign."""

    def __init__(self, activation, **kwargs):
        self._act_type = activation
        super(Activation, self).__init__(**kwargs)

    def _alias(self):
        return self._act_type

    def hybrid_forward(self, F, x):
        return F.Activation(x, act_type=self._act_type, name='fwd')

    def __repr__(self):
        return '{name}({_act_type})'.format(name=self.__class__.__name__, **self.__dict__)


class Dropout(HybridBlock):
    """Zeroes inputs with probability ``rate`` in training (scaling the rest by 1/(1-rate)),
    the same along ``axes``."""

    def __init__(self, rate, axes=(), **kwargs):
        super(Dropout, self).__init__(**kwargs)
        self._rate = rate
        self._axes = axes

    def hybrid_forward(self, F, x):
        if self._rate > 0:
            return F.Dropout(x, p=self._rate, axes=self._axes, name='fwd', cudnn_off=False)
        return F.identity(x)

    def __repr__(self):
        return '{name}(p = {_rate}, axes={_axes})'.format(name=self.__class__.__name__, **self.__dict__)


class _Norm(HybridBlock):
    """What the normalizations share: gamma (grad 'null' without scale) and beta (without
    center) of in_channels elements, inferred at the first call when 0."""

    def _gamma_beta(self, in_channels, center, scale, gamma_initializer, beta_initializer, deferred=True):
        self.gamma = self.params.get('gamma', grad_req='write' if scale else 'null', shape=(in_channels,),
                                     init=gamma_initializer, allow_deferred_init=deferred,
                                     differentiable=scale)
        self.beta = self.params.get('beta', grad_req='write' if center else 'null', shape=(in_channels,),
                                    init=beta_initializer, allow_deferred_init=deferred,
                                    differentiable=center)

    def __repr__(self):
        in_channels = self.gamma.shape[0]
        content = ', '.join('='.join([k, v.__repr__()]) for k, v in self._kwargs.items())
        return '{name}({content}, in_channels={in_channels})'.format(
            name=self.__class__.__name__, content=content, in_channels=in_channels if in_channels else None)


class BatchNorm(_Norm):
    """Batch normalization over ``axis`` (the channels): batch statistics in training (the
    running ones updated with ``momentum``), the running ones otherwise or with
    ``use_global_stats``."""

    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True, use_global_stats=False,
                 beta_initializer='zeros', gamma_initializer='ones', running_mean_initializer='zeros',
                 running_variance_initializer='ones', in_channels=0, **kwargs):
        super(BatchNorm, self).__init__(**kwargs)
        self._kwargs = {'axis': axis, 'eps': epsilon, 'momentum': momentum, 'fix_gamma': not scale,
                        'use_global_stats': use_global_stats}
        self._axis = axis
        if in_channels != 0:
            self.in_channels = in_channels
        self._gamma_beta(in_channels, center, scale, gamma_initializer, beta_initializer)
        self.running_mean = self.params.get('running_mean', grad_req='null', shape=(in_channels,),
                                            init=running_mean_initializer, allow_deferred_init=True,
                                            differentiable=False)
        self.running_var = self.params.get('running_var', grad_req='null', shape=(in_channels,),
                                           init=running_variance_initializer, allow_deferred_init=True,
                                           differentiable=False)

    def cast(self, dtype):
        if np.dtype(dtype).name == 'float16':
            dtype = 'float32'
        super(BatchNorm, self).cast(dtype)

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.BatchNorm(x, gamma, beta, running_mean, running_var, name='fwd', **self._kwargs)


class BatchNormReLU(BatchNorm):
    """BatchNorm followed by ReLU (MXNet runs them as one contrib op, BatchNormWithReLU; here they
    are the two ops, with the same values and gradients)."""

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.relu(super(BatchNormReLU, self).hybrid_forward(F, x, gamma, beta, running_mean, running_var))


class LayerNorm(_Norm):
    """Layer normalization over ``axis`` (default the last)."""

    def __init__(self, axis=-1, epsilon=1e-5, center=True, scale=True, beta_initializer='zeros',
                 gamma_initializer='ones', in_channels=0, prefix=None, params=None):
        super(LayerNorm, self).__init__(prefix=prefix, params=params)
        self._kwargs = {'eps': epsilon, 'axis': axis, 'center': center, 'scale': scale}
        self._axis = axis
        self._epsilon = epsilon
        self._center = center
        self._scale = scale
        self._gamma_beta(in_channels, center, scale, gamma_initializer, beta_initializer)

    def hybrid_forward(self, F, data, gamma, beta):
        return F.LayerNorm(data, gamma=gamma, beta=beta, axis=self._axis, eps=self._epsilon)


class InstanceNorm(_Norm):
    """Instance normalization: each sample's channels normalized over their spatial axes."""

    def __init__(self, axis=1, epsilon=1e-5, center=True, scale=False, beta_initializer='zeros',
                 gamma_initializer='ones', in_channels=0, **kwargs):
        super(InstanceNorm, self).__init__(**kwargs)
        self._kwargs = {'eps': epsilon, 'axis': axis, 'center': center, 'scale': scale}
        self._axis = axis
        self._epsilon = epsilon
        self._gamma_beta(in_channels, center, scale, gamma_initializer, beta_initializer)

    def hybrid_forward(self, F, x, gamma, beta):
        if self._axis == 1:
            return F.InstanceNorm(x, gamma, beta, name='fwd', eps=self._epsilon)
        x = x.swapaxes(1, self._axis)
        return F.InstanceNorm(x, gamma, beta, name='fwd', eps=self._epsilon).swapaxes(1, self._axis)


class GroupNorm(_Norm):
    """Group normalization: the channels split in ``num_groups`` groups, each normalized."""

    def __init__(self, num_groups=1, epsilon=1e-5, center=True, scale=True, beta_initializer='zeros',
                 gamma_initializer='ones', prefix=None, params=None):
        super(GroupNorm, self).__init__(prefix=prefix, params=params)
        self._kwargs = {'eps': epsilon, 'num_groups': num_groups, 'center': center, 'scale': scale}
        self._num_groups = num_groups
        self._epsilon = epsilon
        self._gamma_beta(num_groups, center, scale, gamma_initializer, beta_initializer, deferred=False)

    def hybrid_forward(self, F, data, gamma, beta):
        return F.GroupNorm(data, gamma=gamma, beta=beta, num_groups=self._num_groups, eps=self._epsilon)


class Embedding(HybridBlock):
    """Looks up rows of a (input_dim, output_dim) weight by index."""

    def __init__(self, input_dim, output_dim, dtype='float32', weight_initializer=None, sparse_grad=False,
                 **kwargs):
        super(Embedding, self).__init__(**kwargs)
        if sparse_grad:
            raise ValueError("Embedding: sparse_grad needs row_sparse gradients, which mxplug does not have "
                             "(its arrays are dense)")
        self._kwargs = {'input_dim': input_dim, 'output_dim': output_dim, 'dtype': dtype,
                        'sparse_grad': sparse_grad}
        self.weight = self.params.get('weight', shape=(input_dim, output_dim), init=weight_initializer,
                                      dtype=dtype, allow_deferred_init=True)

    def hybrid_forward(self, F, x, weight):
        return F.Embedding(x, weight, name='fwd', **self._kwargs)

    def __repr__(self):
        return '{block_name}({input_dim} -> {output_dim}, {dtype})'.format(
            block_name=self.__class__.__name__, **self._kwargs)


class Flatten(HybridBlock):
    """Collapses all axes but the first."""

    def hybrid_forward(self, F, x):
        return F.Flatten(x)

    def __repr__(self):
        return self.__class__.__name__


class Lambda(Block):
    """A block of a function: a callable, or the name of an ``mx.nd`` function."""

    def __init__(self, function, prefix=None):
        super(Lambda, self).__init__(prefix=prefix)
        if isinstance(function, str):
            if not hasattr(nd, function):
                raise AssertionError("Function name %s is not found in ndarray." % function)
            self._func_impl = getattr(nd, function)
        elif callable(function):
            self._func_impl = function
        else:
            raise ValueError("Unrecognized function in lambda: {} of type {}".format(function, type(function)))

    def forward(self, *args):
        return self._func_impl(*args)

    def __repr__(self):
        return '{name}({function})'.format(name=self.__class__.__name__, function=self._func_impl.__name__)


class HybridLambda(HybridBlock):
    """A hybridizable block of a function ``f(F, *args)``, or the name of an operator
    function of both ``mx.nd`` and ``mx.sym``."""

    def __init__(self, function, prefix=None):
        super(HybridLambda, self).__init__(prefix=prefix)
        if isinstance(function, str):
            from ... import symbol
            if not (hasattr(nd, function) and hasattr(symbol, function)):
                raise AssertionError("Function name %s is not found in symbol/ndarray." % function)
            func_dict = {symbol: getattr(symbol, function), nd: getattr(nd, function)}
            self._func = lambda F, *args: func_dict[F](*args)
            self._func_name = function
        elif callable(function):
            self._func = function
            self._func_name = function.__name__
        else:
            raise ValueError("Unrecognized function in lambda: {} of type {}".format(function, type(function)))

    def hybrid_forward(self, F, x, *args):
        return self._func(F, x, *args)

    def __repr__(self):
        return '{name}({function})'.format(name=self.__class__.__name__, function=self._func_name)
