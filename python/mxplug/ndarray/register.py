"""One Python function per registered operator, generated at import (MXNet's generated
``mx.nd.<Op>``) and again after ``mx.library.load``. Names starting with ``_`` go to
``mx.nd._internal``; ``_random_<x>``/``_sample_<x>`` also appear as ``mx.nd.random.<x>``, and
``_linalg_<x>`` as ``mx.nd.linalg.<x>``."""
import types

import numpy as np

from .. import _core
from ..context import Context
from .ndarray import NDArray

_internal = types.ModuleType("mxplug.ndarray._internal", "Operators whose names start with '_'.")
_functions = {}
# Sampling ops that mx.nd.random names by their short name (uniform for _random_uniform).
_RANDOM = {"uniform", "normal", "randint", "shuffle", "multinomial", "exponential", "gamma",
           "poisson", "negative_binomial", "generalized_negative_binomial"}


# MXNet 1.x's fluent methods: a.<name>(...) runs the op <name> on a (NDArray and Symbol alike);
# each is added where its op is registered.
FLUENT = (
    "abs", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "argmax", "argmax_channel", "argmin",
    "argsort", "broadcast_axes", "broadcast_like", "broadcast_to", "cbrt", "ceil", "clip", "cos", "cosh",
    "degrees", "depth_to_space", "diag", "exp", "expand_dims", "expm1", "fix", "flatten", "flip", "floor", "log",
    "log10", "log1p", "log2", "log_softmax", "max", "mean", "min", "nanprod", "nansum", "norm", "one_hot",
    "ones_like", "pad", "pick", "prod", "radians", "rcbrt", "reciprocal", "relu", "repeat", "reshape",
    "reshape_like", "rint", "round", "rsqrt", "shape_array", "sigmoid", "sign", "sin", "sinh", "size_array",
    "slice", "slice_axis", "slice_like", "softmax", "softmin", "sort", "space_to_depth", "split", "split_v2",
    "sqrt", "square", "squeeze", "sum", "swapaxes", "take", "tan", "tanh", "tile", "topk", "transpose", "trunc",
    "zeros_like")


def fluent_method(name, op_function):
    """A method that runs `op_function(self, ...)`, named as the op."""
    def method(self, *args, **kwargs):
        return op_function(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = "Runs the operator %s on this array (see its function's help)." % name
    return method


def add_fluent_methods(cls, op_function):
    """Adds to `cls` the fluent methods whose ops are registered and that `cls` does not define."""
    registered = {op["name"] for op in _core.operators()}
    for name in FLUENT:
        if name in registered and name not in cls.__dict__:
            setattr(cls, name, fluent_method(name, op_function(name)))


def _doc(info):
    lines = [info["doc"] or info["name"], "", "Parameters", "----------"]
    for name, type_text, doc in info["arguments"]:
        lines += ["%s : %s" % (name, type_text or "NDArray"), "    " + doc]
    for name, summary, doc, _ in info["params"]:
        lines += ["%s : %s" % (name, summary), "    " + doc]
    lines += ["out : NDArray, optional", "    The output array.", "",
              "Returns", "-------", "out : NDArray or list of NDArrays",
              "", "Registered by plugin '%s'." % info["plugin"]]
    return "\n".join(lines)


def signature(name):
    """(the op's info, its parameter names, whether it takes any number of inputs: num_args)."""
    info = _core.op_info(name)
    param_names = [p[0] for p in info["params"]]
    return info, param_names, "num_args" in param_names


def named(fn, name, doc):
    """``fn`` named and documented as the op (what help() and tracebacks show)."""
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def place(namespace, internal, name, fn):
    """Puts an op's function where MXNet puts it: names starting with '_' in ``_internal``,
    namespaced plugin ops (``myorg.Square``) there too and as ``myorg_Square``, others in the
    namespace; a name already there is kept."""
    if name.startswith("_") or "." in name:
        setattr(internal, name, fn)
    if not name.startswith("_"):
        namespace.setdefault(name.replace(".", "_"), fn)


def place_prefixed(module, prefix, name, fn):
    """``<prefix><x>`` also as ``<x>`` in ``module``, where MXNet puts its namespaced ops
    (``_linalg_`` in ``mx.nd.linalg``/``mx.sym.linalg``, ``_image_`` in ``mx.nd.image``/``mx.sym.image``); a name
    already there is kept."""
    if name.startswith(prefix) and not hasattr(module, name[len(prefix):]):
        setattr(module, name[len(prefix):], fn)


def _make(name):
    info, param_names, var_args = signature(name)
    slots = len([a for a in info["arguments"] if not (a[1] or "").endswith("[]")])

    def positional(args, kwargs):
        """The arrays among the positional arguments; the values after them fill the parameters
        in order (into kwargs), as in MXNet's generated functions."""
        arrays = []
        rest = list(args)
        consumed = 0
        # The inputs come first; None stands for an optional input not given (FullyConnected's
        # bias with no_bias).
        while rest and ((isinstance(rest[0], (NDArray, list, tuple)) and (
                isinstance(rest[0], NDArray) or (rest[0] and isinstance(rest[0][0], NDArray))))
                or (rest[0] is None and consumed < slots)):
            item = rest.pop(0)
            consumed += 1
            if item is not None:
                arrays.extend(item if isinstance(item, (list, tuple)) else [item])
        free = [p for p in param_names if p not in kwargs and p != "num_args"]
        if len(rest) > len(free):
            raise TypeError("%s() takes %d positional parameter(s) after its inputs, %d given"
                            % (name, len(free), len(rest)))
        kwargs.update(zip(free, rest))
        return arrays

    def op_function(*args, **kwargs):
        out = ctx = None
        if kwargs:
            out = kwargs.pop("out", None)
            kwargs.pop("name", None)
            ctx = kwargs.pop("ctx", None)
            if ctx is not None and not isinstance(ctx, Context):
                ctx = Context(ctx)
        # The common call passes arrays alone: no list to rebuild (a third of a small call's time).
        for a in args:
            if not isinstance(a, NDArray):
                arrays = positional(args, kwargs)
                break
        else:
            arrays = list(args)
        if kwargs:
            dtype = kwargs.get("dtype")
            if dtype is not None and not isinstance(dtype, str):
                kwargs["dtype"] = np.dtype(dtype).name
        if var_args and "num_args" not in kwargs:
            kwargs["num_args"] = len(arrays)
        return _core.run_op(name, arrays, kwargs, out, None if ctx is None else ctx._dl())

    return named(op_function, name, _doc(info))


def _op_function(name):
    fn = _functions.get(name)
    if fn is None:
        fn = _functions[name] = _make(name)
    return fn


def populate(namespace):
    """Adds a function for every registered op not yet there (called again after a load)."""
    from . import image as nd_image, linalg as nd_linalg, random as nd_random
    for op in _core.operators():
        name = op["name"]
        fn = _op_function(name)
        place(namespace, _internal, name, fn)
        place_prefixed(nd_linalg, "_linalg_", name, fn)
        place_prefixed(nd_image, "_image_", name, fn)
        if name.startswith("_"):
            for prefix in ("_random_", "_sample_", "_"):
                short = name[len(prefix):]
                if name.startswith(prefix) and short in _RANDOM and not hasattr(nd_random, short):
                    setattr(nd_random, short, fn)
            if name.startswith("_random_"):
                namespace.setdefault(name[1:], fn)  # MXNet's mx.nd.random_uniform and friends
    namespace["_internal"] = _internal
    add_fluent_methods(NDArray, _op_function)
