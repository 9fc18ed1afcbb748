"""Symbol: MXNet's declarative graph (``mx.sym``), on the core's ``_core.Symbol``.

A symbol is made from variables and ops, composed by call, inspected (``list_arguments``,
``infer_shape``...), saved as MXNet's symbol JSON, and bound to arrays (``bind``, ``simple_bind``)
to make an :class:`~mxplug.executor.Executor`.
"""
import numbers
import warnings

import numpy as np

from .. import _core
from ..attribute import AttrScope
from ..base import MXNetError, NotImplementedForSymbol, integer_types
from ..context import current_context
from ..name import NameManager

# MXNet's dtype flags (the symbol JSON's __dtype__ and infer_type's codes).
_DTYPE_NP_TO_MX = {np.float32: 0, np.float64: 1, np.float16: 2, np.uint8: 3, np.int32: 4, np.int8: 5,
                   np.int64: 6, np.bool_: 7}
_DTYPE_MX_TO_NP = {v: k for k, v in _DTYPE_NP_TO_MX.items()}
# Attributes MXNet stores as __key__ and lists under both names.
_HIDDEN_KEYS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage", "profiler_scope")


def _dtype_flag(dtype):
    if isinstance(dtype, numbers.Integral) and not isinstance(dtype, bool):
        return int(dtype)
    return _DTYPE_NP_TO_MX[np.dtype(dtype).type]


def _hidden(key):
    return "__%s__" % key if key in _HIDDEN_KEYS else key


def _shape_out(shape):
    """A core shape as MXNet 1.x shows it: unknown shape (), unknown dim 0."""
    if shape is None:
        return ()
    return tuple(0 if d < 0 else d for d in shape)


def _shape_in(shape):
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    return tuple(-1 if d == 0 else int(d) for d in shape)


class Symbol(object):
    """A graph of ops with one or more outputs."""

    __slots__ = ("handle",)

    def __init__(self, handle):
        self.handle = handle

    # ---- Structure -------------------------------------------------------------------------

    @property
    def name(self):
        """The head node's name; None for a group of several outputs."""
        return self.handle.name

    def __repr__(self):
        name = self.name
        if name is None:
            return "<Symbol group [%s]>" % ", ".join(s.name for s in self)
        return "<Symbol %s>" % name

    __str__ = __repr__

    def __len__(self):
        return self.handle.num_outputs

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __getitem__(self, index):
        """Output ``index`` (a position, or a name from ``list_outputs``)."""
        if isinstance(index, str):
            names = self.list_outputs()
            matches = [i for i, n in enumerate(names) if n == index]
            if not matches:
                raise ValueError("cannot find output that matches name '%s'; outputs are %s" % (index, names))
            if len(matches) > 1:
                raise ValueError("there are multiple outputs with name '%s'" % index)
            index = matches[0]
        if not isinstance(index, numbers.Integral):
            raise TypeError("symbol index must be an int or an output name, got %r" % (index,))
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("symbol index %d is out of range: the symbol has %d outputs" % (index, len(self)))
        return Symbol(self.handle.output(index))

    def __reduce__(self):  # pickled as MXNet pickles it: by its JSON
        return (load_json, (self.tojson(),))

    def __copy__(self):
        return Symbol(self.handle.copy())

    def __deepcopy__(self, memo):
        return Symbol(self.handle.copy())

    def __call__(self, *args, **kwargs):
        """A copy of the symbol composed with ``args``/``kwargs`` (see ``_compose``)."""
        s = self.__copy__()
        s._compose(*args, **kwargs)
        return s

    def _compose(self, *args, **kwargs):
        """Replaces free variables by symbols: positional in ``list_inputs`` order, keyword by
        name; with ``name=``, the nodes of this symbol are renamed ``<name>_<old name>``."""
        name = kwargs.pop("name", None) or ""
        for a in args:
            if not isinstance(a, Symbol):
                raise TypeError("compose only accepts Symbol inputs, got %r" % (a,))
        for k, v in kwargs.items():
            if not isinstance(v, Symbol):
                raise TypeError("compose only accepts Symbol inputs, got %s=%r" % (k, v))
        self.handle.compose([a.handle for a in args], {k: v.handle for k, v in kwargs.items()}, name)

    def get_internals(self):
        """Every output of every node of the graph, as one symbol."""
        return Symbol(self.handle.get_internals())

    def get_children(self):
        """The inputs of the head node as one symbol; None for a variable."""
        children = self.handle.get_children()
        return Symbol(children) if children.num_outputs else None

    def list_arguments(self):
        return self.handle.list_arguments()

    def list_outputs(self):
        return self.handle.list_outputs()

    def list_auxiliary_states(self):
        return self.handle.list_auxiliary_states()

    def list_inputs(self):
        return self.handle.list_inputs()

    # ---- Attributes ------------------------------------------------------------------------

    def attr(self, key):
        """An attribute of the head node, or None."""
        return self.handle.attr(_hidden(key))

    def list_attr(self, recursive=False):
        """The head node's attributes (``recursive=True`` is deprecated: use ``attr_dict``)."""
        if recursive:
            raise DeprecationWarning("Symbol.list_attr with recursive=True has been deprecated. "
                                     "Please use attr_dict instead.")
        return self._with_bare_keys(self.handle.list_attr())

    def attr_dict(self):
        """{node name: its attributes} for every node that has any."""
        return {name: self._with_bare_keys(attrs) for name, attrs in self.handle.attr_dict()}

    @staticmethod
    def _with_bare_keys(attrs):
        out = dict(attrs)
        for key in _HIDDEN_KEYS:
            if "__%s__" % key in attrs:
                out[key] = attrs["__%s__" % key]
        return out

    def _set_attr(self, **kwargs):
        for key, value in kwargs.items():
            if not isinstance(value, str):
                raise ValueError("Set Attr only accepts string values")
            self.handle.set_attr(_hidden(key), value)

    # ---- Inference -------------------------------------------------------------------------

    def _known(self, args, kwargs, convert):
        known = {}
        if args:
            names = self.list_arguments()
            if len(args) > len(names):
                raise ValueError("%d positional values given, the symbol has %d arguments (%s)"
                                 % (len(args), len(names), ", ".join(names)))
            for name, value in zip(names, args):
                if value is not None:
                    known[name] = convert(value)
        for name, value in kwargs.items():
            if value is not None:
                known[name] = convert(value)
        return known

    def infer_shape(self, *args, **kwargs):
        """(argument shapes, output shapes, auxiliary state shapes) from the shapes of some
        inputs, positional in ``list_arguments`` order or by name; (None, None, None) with a
        warning when some shape cannot be decided. Raises MXNetError on inconsistent shapes."""
        try:
            arg, out, aux, complete = self.handle.infer_shape(self._known(args, kwargs, _shape_in))
        except MXNetError:
            print("infer_shape error. Arguments:")
            for i, a in enumerate(args):
                print("  #%d: %s" % (i, a))
            for k, v in kwargs.items():
                print("  %s: %s" % (k, v))
            raise
        if not complete:
            unknowns = ["%s: %s" % (n, _shape_out(s)) for n, s in zip(self.list_arguments(), arg)
                        if s is None or min(list(s) + [1]) < 0]
            warnings.warn("Cannot decide shape for the following arguments (0s in shape means unknown "
                          "dimensions). Consider providing them as input:\n\t" + "\n\t".join(unknowns[:10]),
                          stacklevel=2)
            return None, None, None
        return [_shape_out(s) for s in arg], [_shape_out(s) for s in out], [_shape_out(s) for s in aux]

    def infer_shape_partial(self, *args, **kwargs):
        """Like infer_shape, but unknown shapes are () and unknown dims 0 instead of None."""
        arg, out, aux, _ = self.handle.infer_shape(self._known(args, kwargs, _shape_in))
        return [_shape_out(s) for s in arg], [_shape_out(s) for s in out], [_shape_out(s) for s in aux]

    def infer_type(self, *args, **kwargs):
        """(argument types, output types, auxiliary state types) as NumPy types from the dtypes of
        some inputs; (None, None, None) when some type cannot be decided."""
        arg, out, aux, complete = self.handle.infer_type(self._known(args, kwargs, _dtype_flag))
        if not complete:
            return None, None, None
        to_np = lambda types: [_DTYPE_MX_TO_NP.get(t) for t in types]  # noqa: E731
        return to_np(arg), to_np(out), to_np(aux)

    def infer_type_partial(self, *args, **kwargs):
        """Like infer_type, but the types that cannot be decided are None."""
        arg, out, aux, _ = self.handle.infer_type(self._known(args, kwargs, _dtype_flag))
        to_np = lambda types: [_DTYPE_MX_TO_NP.get(t) for t in types]  # noqa: E731
        return to_np(arg), to_np(out), to_np(aux)

    # ---- Saving ----------------------------------------------------------------------------

    def tojson(self):
        """MXNet's symbol JSON."""
        return self.handle.tojson()

    def save(self, fname, remove_amp_cast=True):
        """Writes ``tojson()`` to ``fname``, atomically: a kill at any moment leaves the previous
        file or the new one, whole."""
        _core.write_file_atomically(fname, self.tojson())

    def debug_str(self):
        return self.tojson()

    # ---- Binding ---------------------------------------------------------------------------

    def bind(self, ctx, args, args_grad=None, grad_req="write", aux_states=None, group2ctx=None,
             shared_exec=None):
        """An Executor over the given arrays: ``args`` (and ``args_grad``, ``aux_states``) as a
        list in ``list_arguments`` order or a dict by name; ``grad_req`` 'write', 'add' or 'null',
        one for all, a list or a dict. ``group2ctx`` maps ctx_group names (``AttrScope``) to the
        contexts their ops run on (model parallelism); arrays may be on any context."""
        from ..executor import Executor
        return Executor._bind(self, ctx, args, args_grad, grad_req, aux_states, group2ctx=group2ctx)

    def simple_bind(self, ctx, grad_req="write", type_dict=None, stype_dict=None, group2ctx=None,
                    shared_arg_names=None, shared_exec=None, shared_buffer=None, **kwargs):
        """Binds with arrays made here (zeros) from the input shapes given as keywords; with
        ``shared_exec``, the arguments in ``shared_arg_names`` (and their gradients) and the
        auxiliary states are that executor's arrays, as MXNet's bucketing binds them.
        ``shared_buffer`` (MXNet's pool of data arrays reused across buckets) is not used: each
        bind makes its own input arrays."""
        from ..executor import Executor
        return Executor._simple_bind(self, ctx, grad_req, type_dict, kwargs, group2ctx=group2ctx,
                                     shared_arg_names=shared_arg_names, shared_exec=shared_exec)

    def eval(self, ctx=None, **kwargs):
        """Binds ``kwargs`` as the arguments, runs forward, returns the outputs."""
        ex = self.bind(ctx if ctx is not None else current_context(), kwargs)
        return ex.forward()

    # ---- Arithmetic: the operator methods are set from _OPERATORS below -------------------

    def __bool__(self):
        raise NotImplementedForSymbol(self.__bool__, "bool")

    def gradient(self, wrt):
        """Not implemented in MXNet 1.x either: raises MXNetError."""
        raise MXNetError("Symbol.gradient: not implemented (as in MXNet 1.x); bind the symbol and call backward")

    def astype(self, dtype):
        """The symbol cast to ``dtype`` (the op cast)."""
        return _create("cast", "cast", [self], {"dtype": np.dtype(dtype).name})


def _operator(op, hint, scalar_op, scalar_hint, reverse=False):
    """An arithmetic or comparison method: ``op`` with another symbol (operands swapped when
    ``reverse``), ``scalar_op`` with a number; ``hint`` and ``scalar_hint`` name the result as
    MXNet's _internal functions do (``_plus0``, ``_mulscalar0``)."""
    def method(self, other):
        if isinstance(other, Symbol):
            return _create(op, hint, [other, self] if reverse else [self, other], {})
        if isinstance(other, numbers.Number):
            return _create(scalar_op, scalar_hint, [self], {"scalar": other})
        raise TypeError("type %s not supported" % type(other).__name__)
    return method


# method: (op, name hint, scalar op, scalar name hint[, reversed]); what MXNet 1.x's Symbol calls.
_OPERATORS = {
    "__add__": ("elemwise_add", "_plus", "_plus_scalar", "_plusscalar"),
    "__radd__": ("elemwise_add", "_plus", "_plus_scalar", "_plusscalar"),
    "__sub__": ("elemwise_sub", "_minus", "_minus_scalar", "_minusscalar"),
    "__rsub__": ("elemwise_sub", "_minus", "_rminus_scalar", "_rminusscalar", True),
    "__mul__": ("elemwise_mul", "_mul", "_mul_scalar", "_mulscalar"),
    "__rmul__": ("elemwise_mul", "_mul", "_mul_scalar", "_mulscalar"),
    "__truediv__": ("elemwise_div", "_div", "_div_scalar", "_divscalar"),
    "__rtruediv__": ("elemwise_div", "_div", "_rdiv_scalar", "_rdivscalar", True),
    "__mod__": ("_mod", "_mod", "_mod_scalar", "_modscalar"),
    "__rmod__": ("_mod", "_mod", "_rmod_scalar", "_rmodscalar", True),
    "__pow__": ("_power", "_power", "_power_scalar", "_powerscalar"),
    "__rpow__": ("_power", "_power", "_rpower_scalar", "_rpowerscalar", True),
    "__eq__": ("_equal", "_equal", "_equal_scalar", "_equal_scalar"),
    "__ne__": ("_not_equal", "_not_equal", "_not_equal_scalar", "_not_equal_scalar"),
    "__gt__": ("_greater", "_greater", "_greater_scalar", "_greater_scalar"),
    "__ge__": ("_greater_equal", "_greater_equal", "_greater_equal_scalar", "_greater_equal_scalar"),
    "__lt__": ("_lesser", "_lesser", "_lesser_scalar", "_lesser_scalar"),
    "__le__": ("_lesser_equal", "_lesser_equal", "_lesser_equal_scalar", "_lesser_equal_scalar"),
}
for _name, _spec in _OPERATORS.items():
    setattr(Symbol, _name, _operator(*_spec))


def _ndarray_only(name):
    """An NDArray method that makes no sense for a graph: raises as MXNet's Symbol does."""
    def method(self, *args, **kwargs):
        raise NotImplementedForSymbol(getattr(self, name), None)
    method.__name__ = method.__qualname__ = name
    return method


for _name in ("asnumpy", "asscalar", "wait_to_read", "copy", "as_in_context", "backward", "detach"):
    setattr(Symbol, _name, _ndarray_only(_name))
Symbol.__neg__ = lambda self: self * -1.0
# __eq__ makes a symbol; identity stays the hash, as in MXNet.
Symbol.__hash__ = object.__hash__


def _create(op, hint, args, params, name=None, attr=None, kwargs_symbols=None):
    """Makes an op symbol as MXNet's generated functions do: a name from the NameManager, the
    AttrScope's attributes and the hidden ones among ``params`` (lr_mult, wd_mult, ctx_group...),
    then composition with the input symbols."""
    name = NameManager.current.get(name, hint)
    attrs = {}
    for key, value in AttrScope.current.get(attr).items():
        attrs[_hidden(key)] = value
    for key, value in params.items():
        if key in _HIDDEN_KEYS:  # lr_mult, wd_mult, ctx_group...: attributes, as MXNet keeps them
            if value is not None:
                attrs[_hidden(key)] = str(value)
        else:  # None is a value ("None": axis=None), as MXNet passes it
            attrs[key] = "None" if value is None else value
    s = Symbol(_core.Symbol.create_op(op, name, attrs))
    s._compose(*args, name=name, **(kwargs_symbols or {}))
    return s


def Variable(name, attr=None, shape=None, lr_mult=None, wd_mult=None, dtype=None, init=None, stype=None,
             **kwargs):
    """A free input of a graph: data, a label, or a parameter."""
    if not isinstance(name, str):
        raise TypeError("Expect a string for variable `name`")
    attr = dict(AttrScope.current.get(attr))
    if shape is not None:
        attr["__shape__"] = str(tuple(shape) if not isinstance(shape, numbers.Integral) else (shape,))
    if lr_mult is not None:
        attr["__lr_mult__"] = str(lr_mult)
    if wd_mult is not None:
        attr["__wd_mult__"] = str(wd_mult)
    if dtype is not None:
        attr["__dtype__"] = str(_dtype_flag(dtype))
    if init is not None:
        attr["__init__"] = init if isinstance(init, str) else init.dumps()
    if stype is not None:
        attr["__storage_type__"] = str({"default": 0, "row_sparse": 1, "csr": 2}.get(stype, stype))
    for key, value in kwargs.items():
        if key.startswith("__") and key.endswith("__"):
            attr[key] = str(value)
        else:
            raise ValueError("Attribute name=%s is not supported. Additional attributes must start and end "
                             "with double underscores, e.g, __yourattr__" % key)
    attrs = {}
    for key, value in attr.items():
        attrs[_hidden(key)] = value
    return Symbol(_core.Symbol.variable(name, attrs))


var = Variable


def Group(symbols):
    """The outputs of several symbols as one symbol."""
    if not symbols or any(not isinstance(s, Symbol) for s in symbols):
        raise TypeError("Expected a list of symbols as input")
    return Symbol(_core.Symbol.group([s.handle for s in symbols]))


def load_json(json_str):
    """A symbol from MXNet's symbol JSON (also older files with "param"/"attr")."""
    if not isinstance(json_str, str):
        raise TypeError("json_str needs to be a string")
    return Symbol(_core.Symbol.load_json(json_str))


def load(fname):
    """A symbol from a JSON file written by ``save`` (or by MXNet)."""
    if not isinstance(fname, str):
        raise TypeError("fname needs to be a string")
    try:
        with open(fname, "rb") as f:
            text = f.read().decode("utf-8")
    except OSError as e:  # missing, a folder, unreadable: MXNetError, as MXNet raises
        raise MXNetError("cannot read the symbol file %s: %s" % (fname, e.strerror or e)) from None
    except UnicodeDecodeError as e:
        raise MXNetError("the symbol file %s is not UTF-8 text (byte %d)" % (fname, e.start)) from None
    try:
        return load_json(text)
    except MXNetError as e:
        raise MXNetError("%s: %s" % (fname, e)) from None


# ---- Functions of two operands (MXNet's mx.sym.maximum, mx.sym.pow...) -----------------------
# Symbols element-wise (no broadcasting, as MXNet's), or a symbol and a number either way; two
# numbers give a number.

def _binary_function(name, op, scalar_op, rscalar_op, numbers_fn):
    def function(left, right):
        if isinstance(left, Symbol) and isinstance(right, Symbol):
            return _create(op, op, [left, right], {})
        if isinstance(left, Symbol) and isinstance(right, numbers.Number):
            return _create(scalar_op, scalar_op, [left], {"scalar": right})
        if isinstance(left, numbers.Number) and isinstance(right, Symbol):
            return _create(rscalar_op, rscalar_op, [right], {"scalar": left})
        if isinstance(left, numbers.Number) and isinstance(right, numbers.Number):
            return numbers_fn(left, right)
        raise TypeError("%s: types (%s, %s) not supported" % (name, type(left).__name__, type(right).__name__))
    function.__name__ = function.__qualname__ = name
    function.__doc__ = "%s of two symbols element-wise, or of a symbol and a number (MXNet's mx.sym.%s)." % (
        name, name)
    return function


maximum = _binary_function("maximum", "_maximum", "_maximum_scalar", "_maximum_scalar", max)
minimum = _binary_function("minimum", "_minimum", "_minimum_scalar", "_minimum_scalar", min)
pow = _binary_function("pow", "_power", "_power_scalar", "_rpower_scalar", lambda a, b: a ** b)  # noqa: A001
power = pow
hypot = _binary_function("hypot", "_hypot", "_hypot_scalar", "_hypot_scalar", lambda a, b: (a * a + b * b) ** 0.5)


def _graph_shape(shape):
    """A creation op's shape in a graph: MXNet 1.x's 0 is a dimension the rest of the graph gives
    (an RNN cell's begin state zeros((0, n)) takes the batch size), kept as -1 (unknown)."""
    shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    return tuple(-1 if d == 0 else d for d in shape)


def _filled(op, shape, dtype, kwargs):
    return _create(op, op, [], {"shape": _graph_shape(shape), "dtype": np.dtype(dtype or np.float32).name},
                   kwargs.get("name"), kwargs.get("attr"))


def zeros(shape, dtype=None, **kwargs):
    """A symbol of zeros of ``shape``."""
    return _filled("_zeros", shape, dtype, kwargs)


def ones(shape, dtype=None, **kwargs):
    """A symbol of ones of ``shape``."""
    return _filled("_ones", shape, dtype, kwargs)


def full(shape, val, dtype=None, **kwargs):
    """A symbol of ``shape`` filled with ``val``."""
    return _create("_full", "_full", [], {"shape": _graph_shape(shape), "value": float(val),
                                          "dtype": np.dtype(dtype or np.float32).name},
                   kwargs.get("name"), kwargs.get("attr"))


def arange(start, stop=None, step=1.0, repeat=1, infer_range=False, name=None, dtype=None):
    """Evenly spaced values in [start, stop) (MXNet's arange, with ``repeat``)."""
    params = {"start": float(start), "step": float(step), "repeat": int(repeat),
              "dtype": np.dtype(dtype or np.float32).name}
    if stop is not None:
        params["stop"] = float(stop)
    return _create("_arange", "_arange", [], params, name)


def linspace(start, stop, num, endpoint=True, name=None, dtype=None):
    """num evenly spaced values from start to stop (MXNet's linspace)."""
    params = {"start": float(start), "stop": float(stop), "num": int(num), "endpoint": bool(endpoint),
              "dtype": np.dtype(dtype or np.float32).name}
    return _create("_linspace", "_linspace", [], params, name)


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False):
    """Splits ary along axis into equal pieces (an int) or at the given indices (a tuple)."""
    if isinstance(indices_or_sections, int):
        indices, sections = (), indices_or_sections
    elif isinstance(indices_or_sections, tuple):
        indices, sections = tuple([0] + list(indices_or_sections)), 0
    else:
        raise ValueError("indices_or_sections must either int or tuple of ints")
    return _create("_split_v2", "_split_v2", [ary], {"indices": indices, "axis": int(axis),
                                                     "squeeze_axis": bool(squeeze_axis), "sections": sections})


Symbol.split_v2 = lambda self, *args, **kwargs: split_v2(self, *args, **kwargs)


def histogram(a, bins=10, range=None, name=None, attr=None):
    """Counts of a's elements in bins (see mx.nd.histogram); in a graph the range must be given
    with a number of bins."""
    if isinstance(bins, Symbol):
        return _create("_histogram", "histogram", [a, bins], {}, name, attr)
    if isinstance(bins, integer_types):
        if range is None:
            raise ValueError("null range is not supported in symbol mode")
        return _create("_histogram", "histogram", [a], {"bin_cnt": int(bins), "range": tuple(float(x) for x in range)},
                       name, attr)
    raise ValueError("bins argument should be either an integer or an NDArray")


def eye(N, M=0, k=0, dtype=None, **kwargs):
    """A 2-D symbol with ones on the k-th diagonal."""
    return _create("_eye", "_eye", [], {"N": int(N), "M": int(M), "k": int(k),
                                        "dtype": np.dtype(dtype or np.float32).name},
                   kwargs.get("name"), kwargs.get("attr"))
