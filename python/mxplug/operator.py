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
