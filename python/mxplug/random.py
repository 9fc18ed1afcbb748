"""Random number generation (MXNet's ``mx.random``)."""
from . import _core
from .context import Context
from .ndarray.random import (uniform, normal, randn, randint, exponential, gamma, poisson,  # noqa: F401
                             negative_binomial, generalized_negative_binomial, multinomial, shuffle)


def seed(seed_state, ctx="all"):
    """Seeds the random streams of every device (``ctx='all'``) or of one context.

    Ordered with the work already pushed: sampling pushed before the call uses the old state,
    sampling pushed after it the new one, whatever the engine.
    """
    if not isinstance(seed_state, int):
        raise ValueError("seed_state must be an int, got %r" % (seed_state,))
    if ctx == "all":
        _core.random_seed(seed_state & 0xFFFFFFFFFFFFFFFF)
    else:
        _core.random_seed(seed_state & 0xFFFFFFFFFFFFFFFF, Context(ctx)._dl())
