"""One Python function per registered operator that makes a Symbol (MXNet's generated
``mx.sym.<Op>``), made at import and again after ``mx.library.load``. Names starting with ``_`` go
to ``mx.sym._internal``."""
import types

import numpy as np

from .. import _core
from ..base import MXNetError
from ..ndarray.register import _doc, add_fluent_methods, named, place, place_prefixed, signature
from .symbol import Symbol, _create

_internal = types.ModuleType("mxplug.symbol._internal", "Operators whose names start with '_'.")
_functions = {}


def _make(name):
    info, param_names, var_args = signature(name)
    # The named inputs; an op whose input is a list (type 'NDArray-or-Symbol[]') takes any number.
    slots = [a[0] for a in info["arguments"] if not (a[1] or "").endswith("[]")]

    def op_function(*args, **kwargs):
        sym_name = kwargs.pop("name", None)
        attr = kwargs.pop("attr", None)
        inputs = []
        rest = list(args)
        positional = []
        if slots:  # positional values fill the op's inputs first (None: not given), as in MXNet
            for slot in slots[:len(rest)]:
                value = rest.pop(0)
                if value is not None and not isinstance(value, Symbol):
                    raise AssertionError("Argument %s must be Symbol instances, but got %r" % (slot, value))
                positional.append(value)
        else:  # any number of inputs (Concat, add_n): the symbols, or lists of them, given first
            while rest and (isinstance(rest[0], Symbol) or (isinstance(rest[0], (list, tuple)) and rest[0]
                                                            and all(isinstance(x, Symbol) for x in rest[0]))):
                item = rest.pop(0)
                inputs.extend(item if isinstance(item, (list, tuple)) else [item])
        # Positional values after the inputs fill the parameters in order.
        free = [p for p in param_names if p not in kwargs and p != "num_args"]
        if len(rest) > len(free) or any(isinstance(v, Symbol) for v in rest):
            raise TypeError("%s: takes its input symbols first, then at most %d parameter value(s); got %r"
                            % (name, len(free), rest))
        kwargs.update(zip(free, rest))
        if positional:
            # In the order of the inputs these parameters give the op (RNN's state_cell and
            # sequence_length come and go with mode and use_sequence_length), as MXNet composes.
            order = slots
            try:
                order = _core.op_inputs(name, {k: v for k, v in kwargs.items() if not isinstance(v, Symbol)})
            except Exception:  # pylint: disable=broad-except
                pass  # bad parameters: _create below says what is wrong
            for slot, value in zip(order, positional):
                if value is not None:
                    kwargs[slot] = value
        named = {k: v for k, v in kwargs.items() if isinstance(v, Symbol)}
        params = {k: v for k, v in kwargs.items() if not isinstance(v, Symbol)}
        if var_args and "num_args" not in params:
            params["num_args"] = len(inputs) + len(named)
        if params.get("dtype") is not None and not isinstance(params["dtype"], str):
            params["dtype"] = np.dtype(params["dtype"]).name
        s = _create(name, name.lower(), inputs, params, sym_name, attr, named)
        # An MXNet library's custom op (its inputs neither named nor counted by num_args) cannot
        # make its missing inputs into variables: MXNet refuses too. (Custom, whose inputs the
        # Python property names, makes them, as MXNet does.)
        if (not slots and not var_args and info["plugin"].startswith("mxnet_lib:")
                and len(inputs) + len(named) < len(_core.op_inputs(name, params))):
            raise MXNetError("Not enough argument to call operator %s" % name)
        return s

    return named(op_function, name, _doc(info).replace("NDArray", "Symbol"))


def _op_function(name):
    fn = _functions.get(name)
    if fn is None:
        fn = _functions[name] = _make(name)
    return fn


def populate(namespace):
    """Adds a function for every registered op not yet there (called again after a load), and the
    fluent methods of their ops to Symbol."""
    from . import image as sym_image
    from . import linalg as sym_linalg
    for op in _core.operators():
        name = op["name"]
        place(namespace, _internal, name, _op_function(name))
        place_prefixed(sym_linalg, "_linalg_", name, _op_function(name))
        place_prefixed(sym_image, "_image_", name, _op_function(name))
    namespace["_internal"] = _internal
    add_fluent_methods(Symbol, _op_function)
