"""Sampling (MXNet's ``mx.nd.random``, re-exported as ``mx.random``), with MXNet's signatures;
``mx.sym.random`` has the same functions over symbols (``sampling_functions``).

With numbers for the distribution's parameters, each function runs the ``_random_<x>`` op (one
distribution for the whole output); with arrays (or symbols), the ``_sample_<x>`` op (one
distribution per element of the parameters, ``shape`` samples of each). ``<x>_like(data)`` runs
``_random_<x>_like``. Sampling ops that a plugin adds beyond these appear here by their short
name (``register.populate``)."""
from ..base import numeric_types


# The distributions with a _random_<x>_like op (x_like: samples of data's shape and dtype).
LIKE = ("uniform", "normal", "gamma", "exponential", "poisson", "negative_binomial",
        "generalized_negative_binomial")


def sampling_functions(tensor_type, op_function):
    """MXNet's sampling functions for tensors of `tensor_type` (NDArray or Symbol), which call an op
    through `op_function(name)`."""

    def sample(function, params, **kwargs):
        # MXNet's _random_helper: numbers run _random_<x>, tensors _sample_<x>, never a mix.
        values = list(params.values())
        kind = tensor_type if isinstance(values[0], tensor_type) else numeric_types
        if kind is numeric_types and not isinstance(values[0], numeric_types):
            raise ValueError("Distribution parameters must be either %s or numbers, but got %s."
                             % (tensor_type.__name__, type(values[0])))
        for v in values[1:]:
            assert isinstance(v, kind), ("Distribution parameters must all have the same type, but "
                                         "got both %s and %s." % (type(values[0]), type(v)))
        kwargs = {k: v for k, v in kwargs.items() if v is not None}
        if kind is tensor_type:
            kwargs.pop("ctx", None)  # the parameters' context
            return op_function("_sample_" + function)(*values, **kwargs)
        return op_function("_random_" + function)(**params, **kwargs)

    def like(function, doc):
        def sampler(data=None, out=None, name=None, **kwargs):
            kwargs.update(out=out, name=name)
            return op_function("_random_%s_like" % function)(
                data, **{k: v for k, v in kwargs.items() if v is not None})
        sampler.__name__ = sampler.__qualname__ = function + "_like"
        sampler.__doc__ = doc + " with the shape and dtype of ``data``."
        return sampler

    def uniform(low=0, high=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
        """Samples of the uniform distribution on [low, high)."""
        return sample("uniform", {"low": low, "high": high}, shape=shape, dtype=dtype, ctx=ctx, out=out, **kwargs)

    def normal(loc=0, scale=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
        """Samples of the normal distribution of mean ``loc`` and standard deviation ``scale``."""
        return sample("normal", {"loc": loc, "scale": scale}, shape=shape, dtype=dtype, ctx=ctx, out=out,
                      **kwargs)

    def randn(*shape, **kwargs):
        """Samples of the normal distribution (``loc``, ``scale`` by keyword) of shape ``shape``."""
        loc, scale = kwargs.pop("loc", 0), kwargs.pop("scale", 1)
        return normal(loc, scale, shape=shape, **kwargs)

    def randint(low, high, shape=None, dtype=None, ctx=None, out=None, **kwargs):
        """Integers drawn uniformly from [low, high)."""
        return sample("randint", {"low": low, "high": high}, shape=shape, dtype=dtype, ctx=ctx, out=out, **kwargs)

    def exponential(scale=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
        """Samples of the exponential distribution of mean ``scale`` (rate 1 / scale)."""
        lam = 1.0 / scale
        return sample("exponential", {"lam": lam}, shape=shape, dtype=dtype, ctx=ctx, out=out, **kwargs)

    def gamma(alpha=1, beta=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
        """Samples of the gamma distribution of shape ``alpha`` and scale ``beta``."""
        return sample("gamma", {"alpha": alpha, "beta": beta}, shape=shape, dtype=dtype, ctx=ctx, out=out,
                      **kwargs)

    def poisson(lam=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
        """Samples of the Poisson distribution of rate ``lam`` (as floats)."""
        return sample("poisson", {"lam": lam}, shape=shape, dtype=dtype, ctx=ctx, out=out, **kwargs)

    def negative_binomial(k=1, p=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
        """Samples of the negative binomial distribution: failures before ``k`` successes of
        probability ``p``."""
        return sample("negative_binomial", {"k": k, "p": p}, shape=shape, dtype=dtype, ctx=ctx, out=out,
                      **kwargs)

    def generalized_negative_binomial(mu=1, alpha=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
        """Samples of the negative binomial distribution of mean ``mu`` and dispersion ``alpha``."""
        return sample("generalized_negative_binomial", {"mu": mu, "alpha": alpha}, shape=shape, dtype=dtype,
                      ctx=ctx, out=out, **kwargs)

    def multinomial(data, shape=None, get_prob=False, out=None, dtype="int32", **kwargs):
        """Indices drawn from the categorical distributions in the last axis of ``data``."""
        kwargs = dict(kwargs, shape=shape, get_prob=get_prob, out=out, dtype=dtype)
        return op_function("_sample_multinomial")(data, **{k: v for k, v in kwargs.items() if v is not None})

    def shuffle(data, **kwargs):
        """A copy of ``data`` with its first axis shuffled."""
        return op_function("_shuffle")(data, **kwargs)

    likes = [like(name, "Samples of the %s distribution" % name.replace("_", " ")) for name in LIKE]
    return {f.__name__: f for f in [uniform, normal, randn, randint, exponential, gamma, poisson,
                                    negative_binomial, generalized_negative_binomial, multinomial,
                                    shuffle] + likes}


def _nd_op(name):
    from . import register
    return register._op_function(name)


def _made():
    from .ndarray import NDArray
    return sampling_functions(NDArray, _nd_op)


globals().update(_made())
__all__ = ["uniform", "normal", "randn", "randint", "exponential", "gamma", "poisson", "negative_binomial",
           "generalized_negative_binomial", "multinomial", "shuffle"] + [x + "_like" for x in LIKE]
