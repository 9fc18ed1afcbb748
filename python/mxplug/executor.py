"""Executor: a Symbol bound to arrays (MXNet's ``Executor``), made by ``Symbol.bind`` and
``Symbol.simple_bind``. ``forward`` and ``backward`` push the steps planned at bind time and
return at once; the outputs and gradients are ready when read. ``MXPLUG_EXEC_PLAN_MEMORY=0`` gives
every entry a buffer of its own (no memory planning), for debugging."""
import os

import numpy as np

from . import _core
from .base import MXNetError
from .context import Context
from .ndarray import NDArray, zeros


def _as_list(name, value, names, allow_missing):
    """A list in ``names`` order from a list or a dict (missing entries None when allowed; keys
    that are not among ``names`` are ignored, as MXNet ignores them)."""
    if value is None:
        return [None] * len(names)
    if isinstance(value, dict):
        if not allow_missing:
            for n in names:
                if n not in value:
                    raise ValueError("key `%s` is missing in `%s`" % (n, name))
        return [value.get(n) for n in names]
    value = list(value)
    if len(value) != len(names):
        raise ValueError("Length of %s do not match number of arguments: %d given, %d expected (%s)"
                         % (name, len(value), len(names), ", ".join(names)))
    return value


def _grad_reqs(grad_req, names):
    if isinstance(grad_req, str):
        return [grad_req] * len(names)
    if isinstance(grad_req, dict):
        unknown = [k for k in grad_req if k not in names]
        if unknown:
            raise ValueError("grad_req: %s not among the arguments %s" % (", ".join(unknown), names))
        return [grad_req.get(n, "null") for n in names]
    return _as_list("grad_req", grad_req, names, False)


def _shared_array(array, wanted, name):
    """`array` (another executor's) where it has the shape, dtype and context of `wanted`, the
    array this bind would have made for `name`."""
    if (array.shape, array.dtype, array.context) != (wanted.shape, wanted.dtype, wanted.context):
        raise MXNetError("simple_bind: %s is shared with shared_exec, whose array is %s %s on %s; "
                         "this bind needs %s %s on %s"
                         % (name, array.shape, np.dtype(array.dtype).name, array.context,
                            wanted.shape, np.dtype(wanted.dtype).name, wanted.context))
    return array


class Executor(object):
    """Runs a bound symbol: ``forward(is_train=...)``, ``backward(out_grads)``, with the arrays in
    ``arg_dict``, ``grad_dict``, ``aux_dict`` and ``output_dict``."""

    def __init__(self, symbol, ctx, handle, grad_req, group2ctx=None):
        self._symbol = symbol
        self._ctx = ctx
        self._group2ctx = group2ctx
        self.handle = handle
        self._grad_req = grad_req
        self.arg_arrays = handle.arg_arrays
        self.grad_arrays = handle.grad_arrays
        self.aux_arrays = handle.aux_arrays
        self.outputs = handle.outputs
        self._arg_names = symbol.list_arguments()
        self._aux_names = symbol.list_auxiliary_states()
        self._output_names = symbol.list_outputs()
        self._arg_dict = dict(zip(self._arg_names, self.arg_arrays))
        self._grad_dict = dict(zip(self._arg_names, self.grad_arrays))
        self._aux_dict = dict(zip(self._aux_names, self.aux_arrays))
        self._output_dict = dict(zip(self._output_names, self.outputs))

    # The arrays by name, as MXNet's properties give them (the same dict each time).
    arg_dict = property(lambda self: self._arg_dict, doc="The argument arrays by name.")
    grad_dict = property(lambda self: self._grad_dict, doc="The gradient arrays by argument name.")
    aux_dict = property(lambda self: self._aux_dict, doc="The auxiliary state arrays by name.")
    output_dict = property(lambda self: self._output_dict, doc="The output arrays by name.")

    # ---- Making ----------------------------------------------------------------------------

    @classmethod
    def _bind(cls, symbol, ctx, args, args_grad, grad_req, aux_states, plan_memory=None, group2ctx=None):
        if plan_memory is None:
            plan_memory = os.environ.get("MXPLUG_EXEC_PLAN_MEMORY", "1") != "0"
        ctx = Context(ctx)
        arg_names, aux_names = symbol.list_arguments(), symbol.list_auxiliary_states()
        args = _as_list("args", args, arg_names, False)
        grads = _as_list("args_grad", args_grad, arg_names, True)
        reqs = _grad_reqs(grad_req, arg_names)
        reqs = [r if g is not None else "null" for r, g in zip(reqs, grads)]
        aux = _as_list("aux_states", aux_states, aux_names, False)
        for what, arrays, names in (("args", args, arg_names), ("args_grad", grads, arg_names),
                                    ("aux_states", aux, aux_names)):
            for n, a in zip(names, arrays):
                if a is not None and not isinstance(a, NDArray):
                    raise TypeError("%s['%s'] must be an NDArray, got %s" % (what, n, type(a).__name__))
        groups = {str(k): Context(v)._dl() for k, v in (group2ctx or {}).items()}
        handle = _core.Executor(symbol.handle, ctx._dl(), args, grads, reqs, aux, plan_memory, groups)
        return cls(symbol, ctx, handle, dict(zip(arg_names, reqs)), group2ctx)

    @classmethod
    def _simple_bind(cls, symbol, ctx, grad_req, type_dict, shapes, plan_memory=None, group2ctx=None,
                     shared_arg_names=None, shared_exec=None):
        ctx = Context(ctx)
        # Model parallelism: a variable of a ctx_group that group2ctx names is made on that
        # group's context, as MXNet's simple_bind makes it; the others on ctx.
        attrs = symbol.attr_dict()
        group2ctx = {k: Context(v) for k, v in (group2ctx or {}).items()}

        def where(name):
            return group2ctx.get(attrs.get(name, {}).get("__ctx_group__"), ctx)
        arg_shapes, _, aux_shapes = symbol.infer_shape(**shapes)
        if arg_shapes is None:
            partial, _, _ = symbol.infer_shape_partial(**shapes)
            unknown = ["%s: %s" % (n, s) for n, s in zip(symbol.list_arguments(), partial) if not s or 0 in s]
            raise MXNetError("simple_bind: cannot infer the shapes of %s from %s" % (", ".join(unknown), shapes))
        arg_names = symbol.list_arguments()
        if type_dict is None:
            attrs = symbol.attr_dict()
            type_dict = {n: np.float32 for n in arg_names if "__dtype__" not in attrs.get(n, {})}
        arg_types, _, aux_types = symbol.infer_type(**type_dict)
        if arg_types is None:
            raise MXNetError("simple_bind: cannot infer the dtypes of the arguments from %s" % (type_dict,))
        aux_names = symbol.list_auxiliary_states()
        args = [zeros(s, where(n), dtype=t) for n, s, t in zip(arg_names, arg_shapes, arg_types)]
        reqs = _grad_reqs(grad_req, arg_names)
        grads = [zeros(s, where(n), dtype=t) if r != "null" else None
                 for n, s, t, r in zip(arg_names, arg_shapes, arg_types, reqs)]
        aux = [zeros(s, where(n), dtype=t) for n, s, t in zip(aux_names, aux_shapes, aux_types)]
        if shared_exec is not None:
            # MXNet's sharing (bucketing): the arguments named in shared_arg_names, with their
            # gradients, and every auxiliary state are shared_exec's own arrays where it has them.
            shared = set(shared_arg_names or ())
            for i, name in enumerate(arg_names):
                if name in shared and name in shared_exec.arg_dict:
                    args[i] = _shared_array(shared_exec.arg_dict[name], args[i], name)
                    if grads[i] is not None and shared_exec.grad_dict.get(name) is not None:
                        grads[i] = _shared_array(shared_exec.grad_dict[name], grads[i], name)
            for i, name in enumerate(aux_names):
                if name in shared_exec.aux_dict:
                    aux[i] = _shared_array(shared_exec.aux_dict[name], aux[i], name)
        return cls._bind(symbol, ctx, args, grads, reqs, aux, plan_memory, group2ctx)

    # ---- Running ---------------------------------------------------------------------------

    def forward(self, is_train=False, **kwargs):
        """Copies ``kwargs`` (arrays by argument name) into the arguments, then pushes the
        forward steps. Returns ``outputs``."""
        for name, value in kwargs.items():
            if name not in self.arg_dict:
                raise ValueError("Unknown argument %s" % name)
            target = self.arg_dict[name]
            if isinstance(value, NDArray):
                if value.shape != target.shape:
                    raise ValueError("Shape not match! Argument %s, need: %s, received: %s"
                                     % (name, target.shape, value.shape))
                value.copyto(target)
            else:
                value = np.asarray(value)
                if value.shape != target.shape:
                    raise ValueError("Shape not match! Argument %s, need: %s, received: %s"
                                     % (name, target.shape, value.shape))
                target[:] = value
        self.handle.forward(bool(is_train))
        self._report_monitored()
        return self.outputs

    def backward(self, out_grads=None, is_train=True):
        """Pushes the gradient steps; ``out_grads`` one array per output (or one array for one
        output), unless every output comes from a loss op. ``is_train=False`` gives the gradient of
        the inference computation (BatchNorm through its moving statistics)."""
        if out_grads is None:
            out_grads = []
        elif isinstance(out_grads, NDArray):
            out_grads = [out_grads]
        elif isinstance(out_grads, dict):
            out_grads = [out_grads.get(n) for n in self._output_names]
        self.handle.backward(list(out_grads), bool(is_train))
        self._report_monitored()

    # ---- Parameters and shapes ---------------------------------------------------------------

    def copy_params_from(self, arg_params, aux_params=None, allow_extra_params=False):
        """Copies arrays by name into the arguments and auxiliary states."""
        for what, params, targets in (("arguments", arg_params, self.arg_dict),
                                      ("auxiliary states", aux_params or {}, self.aux_dict)):
            for name, array in params.items():
                if name in targets:
                    target = targets[name]
                    if array.dtype != target.dtype:
                        array = array.astype(target.dtype)
                    array.copyto(target)
                elif not allow_extra_params:
                    raise ValueError('Find name "%s" that is not in the %s' % (name, what))

    def reshape(self, partial_shaping=False, allow_up_sizing=False, **kwargs):
        """A new executor for other input shapes, sharing every array whose shape stays."""
        arg_shapes, _, aux_shapes = self._symbol.infer_shape(**kwargs)
        if arg_shapes is None:
            raise ValueError("Insufficient argument shapes provided.")

        def remake(names, shapes, arrays, grads):
            new_arrays, new_grads = [], []
            for i, (name, shape) in enumerate(zip(names, shapes)):
                old = arrays[i]
                grad = grads[i] if grads is not None else None
                if tuple(shape) == old.shape:
                    new_arrays.append(old)
                    new_grads.append(grad)
                    continue
                if not (partial_shaping or name in kwargs):
                    raise AssertionError(
                        "Shape of unspecified array arg:%s changed. This can cause the new executor to not "
                        "share parameters with the old one. Please check for error in network. If this is "
                        "intended, set partial_shaping=True to suppress this warning." % name)
                if np.prod(shape) > np.prod(old.shape) and not allow_up_sizing:
                    raise AssertionError(
                        "New shape of arg:%s larger than original. First making a big executor and then down "
                        "sizing it is more efficient than the reverse. If you really want to up size, set "
                        "allow_up_sizing=True to enable allocation of new arrays." % name)
                new_arrays.append(zeros(shape, old.context, dtype=old.dtype))
                new_grads.append(None if grad is None else zeros(shape, old.context, dtype=old.dtype))
            return new_arrays, new_grads

        args, grads = remake(self._arg_names, arg_shapes, self.arg_arrays, self.grad_arrays)
        aux, _ = remake(self._aux_names, aux_shapes, self.aux_arrays, None)
        reqs = [self._grad_req[n] for n in self._arg_names]
        return Executor._bind(self._symbol, self._ctx, args, grads, reqs, aux, group2ctx=self._group2ctx)

    # ---- Reporting -------------------------------------------------------------------------

    @property
    def memory(self):
        """Bytes of what the graph makes itself: {'planned': allocated, 'naive': one buffer per
        entry, 'inplace': written over an input, 'shared': placed in a reused buffer}."""
        return self.handle.memory

    def debug_str(self):
        """The steps as they are pushed, each buffer's block (name@block), and the memory plan."""
        return self.handle.debug_str()

    def set_monitor_callback(self, callback, monitor_all=False):
        """Calls ``callback(name, array)`` for what each op computes in forward and backward,
        named as MXNet names it (``fc1_output``, ``fc1_backward_output0``...; with
        ``monitor_all`` the op's inputs too), after the pass is pushed: the arrays are copies made
        as each op ran, so a later op that reuses the memory does not change them. MXNet passes
        the name as bytes and a raw array handle; mxplug passes a str and an NDArray.
        ``callback=None`` stops monitoring."""
        self._monitor_callback = callback
        self.handle.set_monitor(callback is not None, bool(monitor_all))

    def _report_monitored(self):
        callback = getattr(self, "_monitor_callback", None)
        if callback is not None:
            for name, array in self.handle.take_monitored():
                callback(name, array)
