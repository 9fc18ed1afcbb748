"""The operator registry (MXNet's ``mx.operator``): which operators the loaded plugins register."""
import collections

from . import _core

OperatorArguments = collections.namedtuple("OperatorArguments", ["narg", "names", "types"])


def get_all_registered_operators():
    """The names of every registered operator (the loaded plugins' and ``mx.library.load``'s)."""
    return [op["name"] for op in _core.operators()]


def get_operator_arguments(op_name):
    """(argument names, their type descriptions) of an operator: its inputs, then its parameters,
    as MXNet lists them."""
    info = _core.op_info(op_name)
    names = [a[0] for a in info["arguments"]] + [p[0] for p in info["params"]]
    types = [a[1] or "NDArray-or-Symbol" for a in info["arguments"]] + [p[1] for p in info["params"]]
    return OperatorArguments(len(names), names, types)


# ---- Operators written in Python (MXNet's CustomOp) ---------------------------------------------
# The Custom op (python/src/custom_op.cc, Note [Python custom ops]) calls the _custom_* functions
# below; the objects it works with stay here, keyed by id.

class CustomOp(object):
    """Base class of operators written in Python: override ``forward`` and ``backward``; the
    class its CustomOpProp's ``create_operator`` returns."""

    def __init__(self):
        pass

    def forward(self, is_train, req, in_data, out_data, aux):
        """Writes ``out_data`` (and may update ``aux``) from ``in_data``. ``req`` holds one of
        'null', 'write', 'inplace', 'add' per output; ``self.assign`` honours it."""
        pass

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        """Writes ``in_grad`` from ``out_grad`` (and the data that declare_backward_dependency
        asked for; the others are None). ``req`` holds one request per input gradient."""
        pass

    def assign(self, dst, req, src):
        """Writes ``src`` into ``dst`` as ``req`` asks: 'null' nothing, 'write'/'inplace' a copy,
        'add' a sum."""
        if req == 'null':
            return
        elif req in ('write', 'inplace'):
            dst[:] = src
        elif req == 'add':
            dst[:] += src


class CustomOpProp(object):
    """Base class of the properties of operators written in Python: argument and output names,
    shape and type inference, what backward reads, and the operator itself. Register a subclass
    with ``@mx.operator.register("name")``; ``mx.nd.Custom(..., op_type="name")`` and
    ``mx.sym.Custom`` construct it with their other keyword arguments, as strings.

    need_top_grad: whether backward reads the gradients of the outputs (a loss reads none, so it
    needs no head gradient)."""

    def __init__(self, need_top_grad=True):
        self.need_top_grad_ = need_top_grad

    def infer_shape(self, in_shape):
        """(input shapes, output shapes[, auxiliary state shapes]) from the input shapes."""
        return in_shape, (in_shape[0],) * len(self.list_outputs()), ()

    def infer_type(self, in_type):
        """(input types, output types[, auxiliary state types]) from the input types (NumPy
        types)."""
        return in_type, [in_type[0]] * len(self.list_outputs()), \
            [in_type[0]] * len(self.list_auxiliary_states())

    def infer_storage_type(self, in_stype):
        """Storage types: mxplug stores every array dense ('default')."""
        for i, stype in enumerate(in_stype):
            assert stype == 'default', "mxplug stores arrays dense: in_stype[%d] is %r" % (i, stype)
        return in_stype, ['default'] * len(self.list_outputs()), \
            ['default'] * len(self.list_auxiliary_states())

    def infer_storage_type_backward(self, ograd_stype, in_stype, out_stype, igrad_stype, aux_stype):
        """Storage types of backward: every array is dense ('default')."""
        return ['default'] * len(ograd_stype), ['default'] * len(in_stype), \
            ['default'] * len(out_stype), ['default'] * len(igrad_stype), ['default'] * len(aux_stype)

    def list_outputs(self):
        return ['output']

    def list_arguments(self):
        return ['data']

    def list_auxiliary_states(self):
        return []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        """The ids of what backward reads, among those of the output gradients, inputs and
        outputs given."""
        deps = []
        if self.need_top_grad_:
            deps.extend(out_grad)
        deps.extend(in_data)
        deps.extend(out_data)
        return deps

    def create_operator(self, ctx, in_shapes, in_dtypes):
        """The CustomOp that computes this op for inputs of these shapes and dtypes (type flags)
        on ``ctx``."""
        return CustomOp()


_custom_props = {}   # op_type -> CustomOpProp subclass
_custom_objects = {}  # id -> _CustomInstance
_custom_next_id = [0]
_REQ_NAMES = ('null', 'write', 'inplace', 'add')


def register(reg_name):
    """Registers a CustomOpProp subclass as the custom operator ``reg_name`` (a decorator)."""
    def do_register(prop_cls):
        _custom_props[reg_name] = prop_cls
        return prop_cls
    return do_register


class _CustomInstance(object):
    """One property (one Custom node or call) and the operators made of it, one per signature of
    the inputs (MXNet makes one per node, at bind)."""

    def __init__(self, op_type, prop):
        self.op_type = op_type
        self.prop = prop
        self.operators = {}

    def operator(self, device, in_shapes, in_flags):
        from .context import _from_dl
        key = (tuple(device), tuple(map(tuple, in_shapes)), tuple(in_flags))
        made = self.operators.get(key)
        if made is None:
            ctx = _from_dl(tuple(device))
            made = self.operators[key] = (
                self.prop.create_operator(ctx, [list(s) for s in in_shapes], list(in_flags)), ctx)
        return made


# MXNet's type flags (mxplug's MXPDType) and NumPy's names.
_FLAG_NAMES = ("float32", "float64", "float16", "uint8", "int32", "int8", "int64", "bool", "int16",
               "uint16", "uint32", "uint64")


def _dtype_flag(dtype):
    import numpy as np
    return -1 if dtype is None else _FLAG_NAMES.index(np.dtype(dtype).name)


def _np_type(flag):
    import numpy as np
    return None if flag < 0 else np.dtype(_FLAG_NAMES[flag]).type


def _three(result, what, n_in, n_out, n_aux):
    if len(result) == 2:
        ins, outs = result
        auxs = []
    elif len(result) == 3:
        ins, outs, auxs = result
    else:
        raise AssertionError("%s must return 2 or 3 lists" % what)
    for got, want, name in ((outs, n_out, "output"), (ins, n_in, "input"), (auxs, n_aux, "aux state")):
        if len(got) != want:
            raise AssertionError("%s Error: expecting %d entries in returned %s, got %d."
                                 % (what, want, name, len(got)))
    return list(ins), list(outs), list(auxs)


def _custom_create(attrs):
    op_type = attrs.pop("op_type")
    prop_cls = _custom_props.get(op_type)
    if prop_cls is None:
        raise ValueError("Cannot find custom operator %s: register it with mx.operator.register "
                         "(registered: %s)" % (op_type, ", ".join(sorted(_custom_props)) or "none"))
    kwargs = {k: v for k, v in attrs.items() if not (k.startswith("__") and k.endswith("__"))}
    prop = prop_cls(**kwargs)
    _custom_next_id[0] += 1
    key = _custom_next_id[0]
    _custom_objects[key] = _CustomInstance(op_type, prop)
    return key, list(prop.list_arguments()), list(prop.list_outputs()), list(prop.list_auxiliary_states())


def _custom_release(ids):
    for key in ids:
        _custom_objects.pop(key, None)


def _custom_infer_shape(key, in_shapes):
    inst = _custom_objects[key]
    prop = inst.prop
    ins, outs, auxs = _three(prop.infer_shape([list(s) for s in in_shapes]), "InferShape",
                             len(in_shapes), len(prop.list_outputs()), len(prop.list_auxiliary_states()))
    return [[int(d) for d in s] for s in ins], [[int(d) for d in s] for s in outs], \
        [[int(d) for d in s] for s in auxs]


def _custom_infer_type(key, in_flags):
    prop = _custom_objects[key].prop
    ins, outs, auxs = _three(prop.infer_type([_np_type(f) for f in in_flags]), "InferType",
                             len(in_flags), len(prop.list_outputs()), len(prop.list_auxiliary_states()))
    return [_dtype_flag(t) for t in ins], [_dtype_flag(t) for t in outs], [_dtype_flag(t) for t in auxs]


def _custom_backward_dependency(key, out_grad, in_data, out_data):
    return [int(d) for d in _custom_objects[key].prop.declare_backward_dependency(
        list(out_grad), list(in_data), list(out_data))]


def _wait_all_written(arrays):
    # The call ends when the Python code's writes have: they are pushed ops, still running.
    for a in arrays:
        if a is not None:
            a.wait_to_read()


def _custom_forward(key, device, in_shapes, in_flags, is_train, req, in_data, out_data, aux):
    op, ctx = _custom_objects[key].operator(device, in_shapes, in_flags)
    with ctx:
        op.forward(is_train=bool(is_train), req=[_REQ_NAMES[r] for r in req], in_data=in_data,
                   out_data=out_data, aux=aux)
    _wait_all_written(out_data + aux)


def _custom_backward(key, device, in_shapes, in_flags, req, out_grad, in_data, out_data, in_grad, aux):
    op, ctx = _custom_objects[key].operator(device, in_shapes, in_flags)
    with ctx:
        op.backward(req=[_REQ_NAMES[r] for r in req], out_grad=out_grad, in_data=in_data,
                    out_data=out_data, in_grad=in_grad, aux=aux)
    _wait_all_written(in_grad + aux)


# The Custom op's plugin is this package's extension module itself.
_core.load_library(_core.__file__, False)
