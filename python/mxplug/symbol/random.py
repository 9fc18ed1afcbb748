"""Sampling symbols (MXNet's ``mx.sym.random``): the functions of ``mx.nd.random`` over symbols."""
from ..ndarray.random import LIKE, sampling_functions
from .symbol import Symbol


def _sym_op(name):
    from . import register
    return register._op_function(name)


globals().update(sampling_functions(Symbol, _sym_op))
__all__ = ["uniform", "normal", "randn", "randint", "exponential", "gamma", "poisson", "negative_binomial",
           "generalized_negative_binomial", "multinomial", "shuffle"] + [x + "_like" for x in LIKE]
