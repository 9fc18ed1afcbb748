"""Declarative graphs (MXNet's ``mx.sym`` / ``mx.symbol``): Symbol, Variable, Group, load, and
one function per registered operator, generated from the registry (see ``register``)."""
from .symbol import (Symbol, Variable, var, Group, load, load_json, zeros, ones, full, arange, linspace, split_v2, eye, maximum,
                     minimum, pow, power, hypot, histogram)
from . import register as _register
from . import image, linalg, random

_register.populate(globals())

__all__ = ["Symbol", "Variable", "var", "Group", "load", "load_json", "zeros", "ones", "full", "arange", "linspace", "split_v2", "eye",
           "maximum", "minimum", "pow", "power", "hypot", "histogram", "image", "linalg", "random"]
