"""Gluon's parameters (MXNet 1.9.1's ``mx.gluon.Parameter``, ``Constant`` and ``ParameterDict``).

A Parameter holds one copy of its array per context, and a gradient array per copy that autograd
writes (``grad_req``). A shape with unknown dimensions (0, MXNet 1.x's legacy unknown) defers the
initialization to the first forward pass, which infers the rest (``allow_deferred_init``).
"""
import re
import warnings
from collections import OrderedDict

import numpy as np

from .. import autograd, initializer
from .. import ndarray as nd
from .. import symbol
from ..context import Context, cpu, current_context

_GRAD_REQS = ("write", "add", "null")


class DeferredInitializationError(Exception):
    """A parameter's data was asked for before its deferred initialization happened."""


def _known(shape):
    return shape is not None and all(d > 0 for d in shape)


def _brief(names, limit=3):
    names = list(names)
    shown = ", ".join("'%s'" % n for n in names[:limit])
    return shown + (", ..., '%s'" % names[-1] if len(names) > limit else "")


class Parameter(object):
    """A weight, bias, or other array of a Block, on one or more contexts.

    Parameters (as MXNet's): ``name``, ``grad_req`` ('write', 'add' or 'null'), ``shape`` (0 for
    a dimension not yet known), ``dtype``, ``lr_mult``, ``wd_mult``, ``init`` (an Initializer or
    its name; None leaves it to the default initializer given to ``initialize``),
    ``allow_deferred_init``, ``differentiable`` (False: never a gradient), ``stype`` and
    ``grad_stype`` ('default' only: mxplug's arrays are dense).
    """

    def __init__(self, name, grad_req='write', shape=None, dtype=np.float32, lr_mult=1.0, wd_mult=1.0,
                 init=None, allow_deferred_init=False, differentiable=True, stype='default',
                 grad_stype='default'):
        self._var = None
        self._data = None
        self._grad = None
        self._ctx_list = None
        self._ctx_map = None
        self._trainer = None
        self._deferred_init = ()
        self._differentiable = differentiable
        self._allow_deferred_init = allow_deferred_init
        self._grad_req = None
        if isinstance(shape, int):
            shape = (shape,)
        self._shape = tuple(shape) if shape is not None else None
        self.name = name
        self._dtype = dtype
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.grad_req = grad_req
        self.init = init
        for what, value in (("stype", stype), ("grad_stype", grad_stype)):
            if value != 'default':
                raise ValueError("Parameter '%s': %s %r is not supported: mxplug's arrays are dense "
                                 "('default' storage only)" % (name, what, value))
        self._stype = stype
        self._grad_stype = grad_stype

    def __repr__(self):
        return 'Parameter {name} (shape={shape}, dtype={dtype})'.format(
            name=self.name, shape=self.shape, dtype=self.dtype)

    @property
    def grad_req(self):
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req):
        if req not in _GRAD_REQS:
            raise ValueError("grad_req must be one of 'write', 'add', or 'null', but got '%s'" % req)
        if not self._differentiable:
            req = 'null'
        if self._grad_req == req:
            return
        self._grad_req = req
        if req == 'null' and self._grad is not None:
            self._grad = None
            self._data = [i.detach() for i in self._data]
        elif self._data is not None:
            self._init_grad()

    @property
    def dtype(self):
        return self._dtype

    @dtype.setter
    def dtype(self, dtype):
        self._dtype = dtype

    @property
    def shape(self):
        return self._shape

    @shape.setter
    def shape(self, new_shape):
        if self._shape is None:
            self._shape = tuple(new_shape)
            return
        if len(self._shape) != len(new_shape) or not all(
                j in (0, -1, i) for i, j in zip(new_shape, self._shape)):
            raise AssertionError("Expected shape %s is incompatible with given shape %s."
                                 % (str(new_shape), str(self._shape)))
        self._shape = tuple(new_shape)

    # ---- data and gradients ----

    def _check_and_get(self, arr_list, ctx):
        if arr_list is not None:
            if ctx is list:
                return arr_list
            if ctx is None:
                if len(arr_list) == 1:
                    return arr_list[0]
                ctx = current_context()
            index = self._ctx_map.get(_ctx_key(ctx))
            if index is not None:
                return arr_list[index]
            raise RuntimeError("Parameter '%s' was not initialized on context %s. It was only initialized on %s."
                               % (self.name, str(ctx), str(self._ctx_list)))
        if self._deferred_init:
            raise DeferredInitializationError(
                "Parameter '%s' has not been initialized yet because initialization was deferred. Actual "
                "initialization happens during the first forward pass. Please pass one batch of data through "
                "the network before accessing Parameters. You can also avoid deferred initialization by "
                "specifying in_units, num_features, etc., for network layers." % self.name)
        raise RuntimeError(
            "Parameter '%s' has not been initialized. Note that you should initialize parameters and create "
            "Trainer with Block.collect_params() instead of Block.params because the later does not include "
            "Parameters of nested child Blocks" % self.name)

    def data(self, ctx=None):
        """This parameter's array on ``ctx`` (the only context, or the current one)."""
        return self._check_and_get(self._data, ctx)

    def list_data(self):
        """The arrays on every context, in the order of ``list_ctx``."""
        return self._check_and_get(self._data, list)

    def grad(self, ctx=None):
        """The gradient array on ``ctx``."""
        if self._data is not None and self._grad is None:
            raise RuntimeError("Cannot get gradient array for Parameter '%s' because grad_req='null'" % self.name)
        return self._check_and_get(self._grad, ctx)

    def list_grad(self):
        if self._data is not None and self._grad is None:
            raise RuntimeError("Cannot get gradient array for Parameter '%s' because grad_req='null'" % self.name)
        return self._check_and_get(self._grad, list)

    def list_ctx(self):
        """The contexts this parameter is (or, deferred, will be) initialized on."""
        if self._data is None:
            if self._deferred_init:
                return self._deferred_init[1]
            raise RuntimeError("Parameter '%s' has not been initialized" % self.name)
        return self._ctx_list

    def row_sparse_data(self, row_id):
        raise RuntimeError("Parameter '%s': row_sparse_data needs row_sparse storage, which mxplug does not "
                           "have (its arrays are dense)" % self.name)

    def list_row_sparse_data(self, row_id):
        raise RuntimeError("Parameter '%s': list_row_sparse_data needs row_sparse storage, which mxplug does "
                           "not have (its arrays are dense)" % self.name)

    def zero_grad(self):
        """Sets the gradient arrays to 0."""
        if self._grad is None:
            return
        for g in self._grad:
            g[:] = 0

    def set_data(self, data):
        """Sets the value on every context (before a deferred initialization: its value)."""
        self.shape = data.shape
        if self._data is None:
            if not self._deferred_init:
                raise AssertionError("Parameter '%s' has not been initialized" % self.name)
            self._deferred_init = self._deferred_init[:3] + (data,)
            return
        for arr in self._check_and_get(self._data, list):
            arr[:] = data

    # ---- initialization ----

    def initialize(self, init=None, ctx=None, default_init=initializer.Uniform(), force_reinit=False):
        """Makes the arrays on ``ctx`` (a context or a list; default the current one) and fills
        them with ``init``, else this parameter's ``init``, else ``default_init`` (by name:
        weights drawn, biases zero...). With unknown dimensions and ``allow_deferred_init``, the
        arrays are made at the first forward pass."""
        if self._data is not None and not force_reinit:
            warnings.warn("Parameter '%s' is already initialized, ignoring. Set force_reinit=True to "
                          "re-initialize." % self.name, stacklevel=2)
            return
        self._data = self._grad = None
        if ctx is None:
            ctx = [current_context()]
        if isinstance(ctx, Context):
            ctx = [ctx]
        if init is None:
            init = default_init if self.init is None else self.init
        if not _known(self.shape):
            if self._allow_deferred_init:
                self._deferred_init = (init, ctx, default_init, None)
                return
            raise ValueError("Cannot initialize Parameter '%s' because it has invalid shape: %s."
                             % (self.name, str(self.shape)))
        self._deferred_init = (init, ctx, default_init, None)
        self._finish_deferred_init()

    def _finish_deferred_init(self):
        if not self._deferred_init:
            return
        init, ctx, default_init, data = self._deferred_init
        self._deferred_init = ()
        if not _known(self.shape):
            raise AssertionError("Cannot initialize Parameter '%s' because it has invalid shape: %s. Please "
                                 "specify in_units, in_channels, etc for `Block`s." % (self.name, str(self.shape)))
        with autograd.pause():
            if data is None:
                data = nd.zeros(shape=self.shape, dtype=self.dtype, ctx=cpu())
                initializer.create(default_init)(initializer.InitDesc(self.name, {'__init__': init}), data)
            self._init_impl(data, ctx)

    def _init_impl(self, data, ctx_list):
        self._ctx_list = list(ctx_list)
        self._ctx_map = {_ctx_key(c): i for i, c in enumerate(self._ctx_list)}
        self._data = [data.copyto(c) for c in self._ctx_list]
        self._init_grad()

    def _init_grad(self):
        if self.grad_req == 'null':
            self._grad = None
            return
        self._grad = [nd.zeros(shape=d.shape, dtype=d.dtype, ctx=d.context) for d in self._data]
        autograd.mark_variables(self._check_and_get(self._data, list), self._grad, self.grad_req)

    def _load_init(self, data, ctx, cast_dtype=False, dtype_source='current'):
        """Sets the value from a loaded array (load_parameters): checks the shape and dtype, and
        initializes on ``ctx`` (default the CPU) when not yet initialized."""
        if self.shape:
            for self_dim, data_dim in zip(self.shape, data.shape):
                if self_dim not in (0, -1, data_dim) or len(self.shape) != len(data.shape):
                    raise AssertionError(
                        "Failed loading Parameter '%s' from saved params: shape incompatible expected %s vs "
                        "saved %s" % (self.name, str(self.shape), str(data.shape)))
            self.shape = tuple(i if i not in (0, -1) else j for i, j in zip(self.shape, data.shape))
        if self.dtype:
            if cast_dtype and np.dtype(self.dtype) != np.dtype(data.dtype):
                if dtype_source == 'current':
                    data = data.astype(self.dtype, copy=False)
                elif dtype_source == 'saved':
                    self.dtype = data.dtype
            elif np.dtype(self.dtype) != np.dtype(data.dtype):
                raise AssertionError(
                    "Failed loading Parameter '%s' from saved params: dtype incompatible expected %s vs saved "
                    "%s. Set cast_dtype=True to cast the dtype of saved params."
                    % (self.name, str(np.dtype(self.dtype).type), str(np.dtype(data.dtype).type)))
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data is None:
            if self._deferred_init:
                if ctx is not None and set(map(_ctx_key, ctx)) != set(map(_ctx_key, self._deferred_init[1])):
                    raise AssertionError(
                        "Failed to load Parameter '%s' on %s because it was previous initialized on %s."
                        % (self.name, str(ctx), str(self.list_ctx())))
                ctx = self._deferred_init[1]
            elif ctx is None:
                ctx = [cpu()]
            self._init_impl(data, ctx)
        else:
            if ctx is not None and set(map(_ctx_key, ctx)) != set(map(_ctx_key, self.list_ctx())):
                raise AssertionError(
                    "Failed to load Parameter '%s' on %s because it was previous initialized on %s."
                    % (self.name, str(ctx), str(self.list_ctx())))
            self.set_data(data)
        self._deferred_init = ()

    def _reduce(self):
        """The value on the CPU: the mean of the copies (what saving writes)."""
        data = self.list_data()
        if len(data) == 1:
            return data[0].copyto(cpu())
        total = data[0].copyto(cpu())
        for d in data[1:]:
            total += d.copyto(cpu())
        return total / len(data)

    def reset_ctx(self, ctx):
        """Moves the parameter to other contexts (the value kept)."""
        if ctx is None:
            ctx = [current_context()]
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data is not None:
            with autograd.pause():
                self._init_impl(self._reduce(), ctx)
        elif self._deferred_init:
            init, _, default_init, data = self._deferred_init
            self._deferred_init = (init, ctx, default_init, data)
        else:
            raise ValueError("Cannot reset context for Parameter '%s' because it has not been initialized."
                             % self.name)

    def var(self):
        """This parameter as a Symbol variable (with its shape, dtype, multipliers and init)."""
        if self._var is None:
            self._var = symbol.var(self.name, shape=self.shape, dtype=self.dtype, lr_mult=self.lr_mult,
                                   wd_mult=self.wd_mult, init=self.init)
        return self._var

    def cast(self, dtype):
        """Casts the data and the gradients to ``dtype``."""
        self.dtype = dtype
        self._var = None
        if self._data is None:
            return
        with autograd.pause():
            self._data = [i.astype(dtype) for i in self._data]
            if self._grad is None:
                return
            self._grad = [i.astype(dtype) for i in self._grad]
            autograd.mark_variables(self._data, self._grad, self.grad_req)


def _ctx_key(ctx):
    return (ctx.device_type, ctx.device_id)


class Constant(Parameter):
    """A parameter that holds a constant and gets no gradient (``value``: a NumPy array or an
    NDArray)."""

    def __init__(self, name, value):
        if not isinstance(value, nd.NDArray):
            value = nd.array(value)
        self.value = value

        class Init(initializer.Initializer):
            def _init_weight(self, _, arr):
                value.copyto(arr)
        init_name = 'Constant_{}_{}'.format(name, id(self))
        initializer.alias(init_name)(Init)
        super(Constant, self).__init__(name, grad_req='null', shape=value.shape, dtype=value.dtype,
                                       init=init_name)

    def __repr__(self):
        return 'Constant {name} (shape={shape}, dtype={dtype})'.format(
            name=self.name, shape=self.shape, dtype=self.dtype)

    @property
    def grad_req(self):
        return 'null'

    @grad_req.setter
    def grad_req(self, req):
        if req != 'null':
            warnings.warn('Constant parameter "{}" does not support grad_req other than "null", and new '
                          'value "{}" is ignored.'.format(self.name, req))


class ParameterDict(object):
    """Parameters by name, with a ``prefix`` that ``get`` puts before the names it is given; a
    ``shared`` dict's parameters are found (and reused) by ``get`` too."""

    def __init__(self, prefix='', shared=None):
        self._prefix = prefix
        self._params = OrderedDict()
        self._shared = shared

    def __repr__(self):
        s = '{name}(\n{content}\n)'
        name = self._prefix + ' ' if self._prefix else ''
        return s.format(name=name, content='\n'.join([_indent('  {0}'.format(v), 2) for v in self.values()]))

    def __getitem__(self, key):
        return self._params[key]

    def __iter__(self):
        return iter(self._params)

    def __len__(self):
        return len(self._params)

    def __contains__(self, key):
        return key in self._params

    def items(self):
        return self._params.items()

    def keys(self):
        return self._params.keys()

    def values(self):
        return self._params.values()

    @property
    def prefix(self):
        return self._prefix

    def _get_impl(self, name):
        if name in self._params:
            return self._params[name]
        if self._shared is not None and name in self._shared._params:
            self._params[name] = self._shared._params[name]
            return self._shared._params[name]
        return None

    def get(self, name, **kwargs):
        """The parameter ``prefix + name``, made with ``kwargs`` when new; when it exists, each
        given attribute must agree with its own (an unknown dimension takes the given one)."""
        name = self.prefix + name
        param = self._get_impl(name)
        if param is None:
            param = Parameter(name, **kwargs)
            self._params[name] = param
            return param
        for k, v in kwargs.items():
            if hasattr(param, k) and getattr(param, k) is not None:
                existing = getattr(param, k)
                if k == 'shape' and len(v) == len(existing):
                    inferred, matched = [], True
                    for dim1, dim2 in zip(v, existing):
                        if dim1 != dim2 and dim1 > 0 and dim2 > 0:
                            matched = False
                            break
                        inferred.append(dim1 if dim1 > 0 else dim2)
                    if matched:
                        param._shape = tuple(inferred)
                        continue
                elif k == 'dtype' and np.dtype(v) == np.dtype(existing):
                    continue
                if not (v is None or v == existing):
                    raise AssertionError(
                        "Cannot retrieve Parameter '%s' because desired attribute does not match with stored for "
                        "attribute '%s': desired '%s' vs stored '%s'." % (name, k, str(v), str(getattr(param, k))))
            else:
                setattr(param, k, v)
        return param

    def get_constant(self, name, value=None):
        """The Constant ``prefix + name``, made from ``value`` when new."""
        name = self.prefix + name
        param = self._get_impl(name)
        if param is None:
            if value is None:
                raise KeyError("No constant named '{}'. Please specify value if you want to create a new "
                               "constant.".format(name))
            param = Constant(name, value)
            self._params[name] = param
        elif value is not None:
            if not isinstance(param, Constant):
                raise AssertionError("Parameter '{}' already exists but it is not a constant.".format(name))
            if isinstance(value, nd.NDArray):
                value = value.asnumpy()
            if not (param.shape == value.shape and (param.value.asnumpy() == value).all()):
                raise AssertionError("Constant '{}' already exists but it's value doesn't match new "
                                     "value".format(name))
        return param

    def update(self, other):
        """Adds ``other``'s parameters (a name held by a different Parameter is refused)."""
        for k, v in other.items():
            if k in self._params and self._params[k] is not v:
                raise AssertionError("Cannot update self with other because they have different Parameters with "
                                     "the same name '%s'" % k)
        for k, v in other.items():
            self._params[k] = v

    def initialize(self, init=initializer.Uniform(), ctx=None, verbose=False, force_reinit=False):
        """Initializes every parameter (``init`` is the default for those without their own)."""
        if verbose:
            init.set_verbosity(verbose=verbose)
        for v in self.values():
            v.initialize(None, ctx, init, force_reinit=force_reinit)

    def zero_grad(self):
        for p in self.values():
            p.zero_grad()

    def reset_ctx(self, ctx):
        for p in self.values():
            p.reset_ctx(ctx)

    def list_ctx(self):
        """The contexts of all the parameters."""
        seen, out = set(), []
        for p in self.values():
            for c in p.list_ctx():
                if _ctx_key(c) not in seen:
                    seen.add(_ctx_key(c))
                    out.append(c)
        return out

    def setattr(self, name, value):
        """Sets an attribute (``grad_req``, ``lr_mult``...) of every parameter."""
        for p in self.values():
            setattr(p, name, value)

    def save(self, filename, strip_prefix=''):
        """Writes the values to ``filename`` (``mx.nd.save`` of a dict), names without
        ``strip_prefix``."""
        arg_dict = {}
        for param in self.values():
            weight = param._reduce()
            if not param.name.startswith(strip_prefix):
                raise ValueError(
                    "Prefix '%s' is to be striped before saving, but Parameter's name '%s' does not start with "
                    "'%s'. this may be due to your Block shares parameters from other Blocks or you forgot to "
                    "use 'with name_scope()' when creating child blocks. For more info on naming, please see "
                    "https://mxnet.apache.org/api/python/docs/tutorials/packages/gluon/blocks/naming.html"
                    % (strip_prefix, param.name, strip_prefix))
            arg_dict[param.name[len(strip_prefix):]] = weight
        nd.save(filename, arg_dict)

    def load(self, filename, ctx=None, allow_missing=False, ignore_extra=False, restore_prefix='',
             cast_dtype=False, dtype_source='current'):
        """Loads values saved by ``save`` (or a checkpoint's ``arg:``/``aux:`` names)."""
        if restore_prefix:
            for name in self.keys():
                if not name.startswith(restore_prefix):
                    raise AssertionError("restore_prefix is '%s' but Parameters name '%s' does not start with '%s'"
                                         % (restore_prefix, name, restore_prefix))
        loaded = nd.load(filename)
        if not isinstance(loaded, dict):
            raise ValueError("'%s' holds a list of arrays, not named parameters" % filename)
        arg_dict = {restore_prefix + re.sub('^(arg|aux):', '', k): v for k, v in loaded.items()}
        self.load_dict(arg_dict, ctx, allow_missing, ignore_extra, filename, cast_dtype, dtype_source)

    def load_dict(self, param_dict, ctx=None, allow_missing=False, ignore_extra=False, filename=None,
                  cast_dtype=False, dtype_source='current'):
        """Sets the values from a dict of name to NDArray."""
        source = "file '%s'" % filename if filename else 'the dict'
        if not allow_missing:
            for name in self.keys():
                if name not in param_dict:
                    raise AssertionError(
                        "Parameter '%s' is missing in %s, which contains parameters: %s. Please make sure source "
                        "and target networks have the same prefix." % (name, source, _brief(param_dict.keys())))
        for name, value in param_dict.items():
            if name not in self._params:
                if not ignore_extra:
                    raise AssertionError(
                        "Parameter '%s' loaded from %s is not present in ParameterDict, choices are: %s. Set "
                        "ignore_extra to True to ignore. Please make sure source and target networks have the "
                        "same prefix." % (name, source, _brief(self._params.keys())))
                continue
            self[name]._load_init(value, ctx, cast_dtype=cast_dtype, dtype_source=dtype_source)


def _indent(s_, num_spaces):
    lines = s_.split('\n')
    if len(lines) == 1:
        return s_
    first = lines.pop(0)
    return first + '\n' + '\n'.join((num_spaces * ' ') + line for line in lines)
