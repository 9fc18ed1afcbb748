"""Declarative graphs (MXNet's ``mx.sym`` / ``mx.symbol``): Symbol, Variable, Group, load, and
one function per registered operator, generated from the registry (see ``register``)."""
from .symbol import Symbol, Variable, var, Group, load, load_json, zeros, ones
from . import register as _register

_register.populate(globals())

__all__ = ["Symbol", "Variable", "var", "Group", "load", "load_json", "zeros", "ones"]
