"""One Python function per registered operator that makes a Symbol (MXNet's generated
``mx.sym.<Op>``), made at import and again after ``mx.library.load``. Names starting with ``_`` go
to ``mx.sym._internal``."""
import types

import numpy as np

from .. import _core
from ..ndarray.register import _doc, named, place, signature
from .symbol import Symbol, _create

_internal = types.ModuleType("mxplug.symbol._internal", "Operators whose names start with '_'.")
_functions = {}


def _make(name):
    info, _, var_args = signature(name)

    def op_function(*args, **kwargs):
        sym_name = kwargs.pop("name", None)
        attr = kwargs.pop("attr", None)
        inputs = []
        for a in args:
            if isinstance(a, Symbol):
                inputs.append(a)
            elif isinstance(a, (list, tuple)) and all(isinstance(x, Symbol) for x in a) and a:
                inputs.extend(a)
            else:
                raise TypeError("%s: positional arguments must be Symbols, got %r; give parameters by "
                                "keyword" % (name, a))
        named = {k: v for k, v in kwargs.items() if isinstance(v, Symbol)}
        params = {k: v for k, v in kwargs.items() if not isinstance(v, Symbol)}
        if var_args and "num_args" not in params:
            params["num_args"] = len(inputs) + len(named)
        if params.get("dtype") is not None and not isinstance(params["dtype"], str):
            params["dtype"] = np.dtype(params["dtype"]).name
        return _create(name, name.lower(), inputs, params, sym_name, attr, named)

    return named(op_function, name, _doc(info).replace("NDArray", "Symbol"))


def populate(namespace):
    """Adds a function for every registered op not yet there (called again after a load)."""
    for op in _core.operators():
        name = op["name"]
        fn = _functions.get(name)
        if fn is None:
            fn = _functions[name] = _make(name)
        place(namespace, _internal, name, fn)
    namespace["_internal"] = _internal
