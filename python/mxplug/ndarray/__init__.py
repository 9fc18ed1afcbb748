"""Imperative arrays (MXNet's ``mx.nd``): NDArray, creation functions, and one function per
registered operator, generated from the registry (see ``register``)."""
from .ndarray import (NDArray, array, empty, zeros, ones, full, arange, linspace, split_v2, eye, zeros_like,
                      ones_like, full_like, empty_like, waitall, concatenate, moveaxis, histogram, onehot_encode,
                      from_dlpack, from_numpy, to_dlpack_for_read, to_dlpack_for_write, add, subtract, multiply,
                      divide, true_divide, modulo, power, maximum, minimum, equal, not_equal,
                      greater, greater_equal, lesser, lesser_equal, logical_and, logical_or, logical_xor)
from . import register as _register
from .utils import save, load, load_frombuffer
from . import linalg, random
from . import image

_register.populate(globals())

from .. import autograd as _autograd  # noqa: E402
_autograd._ndarray_methods()  # attach_grad, grad, detach, backward

__all__ = ["NDArray", "array", "empty", "zeros", "ones", "full", "arange", "linspace", "split_v2", "eye", "zeros_like",
           "ones_like", "full_like", "empty_like", "waitall", "save", "load", "load_frombuffer",
           "concatenate", "moveaxis", "histogram", "onehot_encode", "from_dlpack", "from_numpy", "to_dlpack_for_read", "to_dlpack_for_write", "add",
           "subtract", "multiply", "divide", "true_divide", "modulo", "power", "maximum", "minimum",
           "equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal", "logical_and",
           "logical_or", "logical_xor", "linalg", "random", "image"]
