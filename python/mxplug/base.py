"""What the other modules share: the exception types and the type tuples, named as MXNet's."""
import numpy as np

from ._core import MXNetError

#: What MXNet's functions accept as a number, an integer and a string.
numeric_types = (float, int, np.generic)
integer_types = (int, np.integer)
string_types = (str,)

MXNetError.__module__ = "mxplug.base"
#: mxplug's own name for MXNetError (the same class).
MXPlugError = MXNetError


class NotImplementedForSymbol(MXNetError):
    """An NDArray-only operation called on a Symbol (MXNet's class and message)."""

    def __init__(self, function, alias, *args):
        super().__init__()
        self.function = function.__name__
        self.alias = alias
        self.args = [str(type(a)) for a in args]

    def __str__(self):
        msg = "Function {}".format(self.function)
        if self.alias:
            msg += ' (namely operator "{}")'.format(self.alias)
        if self.args:
            msg += " with arguments ({})".format(", ".join(self.args))
        msg += " is not implemented for Symbol and only available in NDArray."
        return msg


__all__ = ["MXNetError"]
