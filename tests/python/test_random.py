"""Sampling ops on the device's random stream: distributions, seeding ordered by the engine,
and the same numbers on every engine."""
import math

import numpy as np
import pytest

from conftest import run_python


def test_distributions_have_the_right_moments(mx):
    mx.random.seed(7)
    n = 200000
    u = mx.nd.random.uniform(-2, 4, shape=(n,)).asnumpy()
    assert u.min() >= -2 and u.max() < 4
    assert abs(u.mean() - 1) < 5 * 6 / np.sqrt(12 * n)
    assert abs(u.var() - 36 / 12) < 0.05
    g = mx.nd.random.normal(3, 2, shape=(n,), dtype="float64").asnumpy()
    assert g.dtype == np.float64
    assert abs(g.mean() - 3) < 5 * 2 / np.sqrt(n)
    assert abs(g.std() - 2) < 0.02
    r = mx.nd.random.randint(-3, 7, shape=(n,)).asnumpy()
    assert r.dtype == np.int32 and r.min() == -3 and r.max() == 6
    counts = np.bincount(r + 3)
    expected = n / 10
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 40  # 9 degrees of freedom: p < 1e-5 beyond this
    h = mx.nd.random.uniform(shape=(1000,), dtype="float16").asnumpy()
    assert h.dtype == np.float16 and 0 <= h.min() and h.max() <= 1


def _poisson_pmf(lam, k):
    return np.exp(-lam + k * np.log(lam) - np.array([math.lgamma(j + 1) for j in k]))


def _chi2_against(counts, probabilities, n):
    """The chi-square statistic of counts against n * probabilities, bins of expectation below
    5 pooled into the last."""
    expected = n * probabilities
    keep = expected >= 5
    pooled_counts = np.append(counts[keep], counts[~keep].sum() + (n - counts.sum()))
    pooled_expected = np.append(expected[keep], n - expected[keep].sum())
    return ((pooled_counts - pooled_expected) ** 2 / pooled_expected).sum(), keep.sum()


def test_rejection_and_composition_samplers_follow_their_distributions(mx):
    """Exponential, gamma (shape below and above 1), Poisson (Knuth's products below rate 12,
    PTRS above) and the negative binomials, against their means and variances and, for the
    counts, against their probability mass functions (chi-square)."""
    mx.random.seed(5)
    n = 200000
    moments = [
        (mx.nd.random.exponential(2.0, shape=(n,)), 2.0, 4.0),
        (mx.nd.random.gamma(0.5, 2.0, shape=(n,), dtype="float64"), 1.0, 2.0),
        (mx.nd.random.gamma(3.0, 0.5, shape=(n,)), 1.5, 0.75),
        (mx.nd.random.poisson(3.0, shape=(n,)), 3.0, 3.0),
        (mx.nd.random.poisson(30.0, shape=(n,), dtype="float64"), 30.0, 30.0),
        (mx.nd.random.negative_binomial(5, 0.4, shape=(n,)), 7.5, 18.75),
        (mx.nd.random.generalized_negative_binomial(4.0, 0.5, shape=(n,)), 4.0, 12.0),
        (mx.nd.random.generalized_negative_binomial(4.0, 0.0, shape=(n,)), 4.0, 4.0),
    ]
    for array, mean, var in moments:
        x = array.asnumpy().astype(np.float64)
        assert x.min() >= 0
        assert abs(x.mean() - mean) < 5 * np.sqrt(var / n), (mean, x.mean())
        assert abs(x.var() - var) < 0.05 * var, (var, x.var())
    for lam in (3.0, 30.0):
        k = mx.nd.random.poisson(lam, shape=(n,)).asnumpy().astype(np.int64)
        support = np.arange(int(lam * 3) + 10)
        chi2, bins = _chi2_against(np.bincount(k, minlength=len(support))[:len(support)],
                                   _poisson_pmf(lam, support), n)
        assert chi2 < bins + 8 * np.sqrt(2 * bins), (lam, chi2, bins)  # far past p = 1e-5
    # Negative binomial (k=5, p=0.4): P(X = j) = C(j + k - 1, j) * (1 - p)^j * p^k.
    x = mx.nd.random.negative_binomial(5, 0.4, shape=(n,)).asnumpy().astype(np.int64)
    j = np.arange(60)
    pmf = np.array([math.comb(i + 4, i) * 0.6 ** i * 0.4 ** 5 for i in j])
    chi2, bins = _chi2_against(np.bincount(x, minlength=60)[:60], pmf, n)
    assert chi2 < bins + 8 * np.sqrt(2 * bins), (chi2, bins)
    sym = mx.sym.random.gamma(2, 3, shape=(2, 3), dtype="float64")
    assert sym.infer_shape()[1] == [(2, 3)] and sym.infer_type()[1] == [np.float64]


def test_shuffle_permutes_rows_and_multinomial_follows_probabilities(mx):
    mx.random.seed(3)
    x = mx.nd.array(np.arange(40).reshape(10, 4))
    s = mx.nd.random.shuffle(x).asnumpy()
    assert sorted(s[:, 0].tolist()) == list(range(0, 40, 4))
    assert (s[:, 1:] - s[:, :1] == [1, 2, 3]).all()  # rows move whole
    p = np.array([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]], dtype=np.float32)
    m = mx.nd.random.multinomial(mx.nd.array(p), shape=(20000,)).asnumpy()
    assert m.shape == (2, 20000) and m.dtype == np.int32
    for row in range(2):
        freq = np.bincount(m[row], minlength=3) / 20000
        assert np.all(np.abs(freq - p[row]) < 5 * np.sqrt(p[row] * (1 - p[row]) / 20000) + 1e-9)
    idx, logp = mx.nd.random.multinomial(mx.nd.array(p), get_prob=True)
    np.testing.assert_allclose(logp.asnumpy(), np.log(p[[0, 1], idx.asnumpy()]), rtol=1e-6)


def test_seed_is_ordered_with_pushed_sampling(mx):
    # No waits in between: the reseed is pushed on the stream's variable, after the first draw.
    mx.random.seed(11)
    a = mx.nd.random.uniform(shape=(1000,))
    b = mx.nd.random.uniform(shape=(1000,))
    mx.random.seed(11)
    c = mx.nd.random.uniform(shape=(1000,))
    d = mx.nd.random.uniform(shape=(1000,))
    assert (a.asnumpy() == c.asnumpy()).all() and (b.asnumpy() == d.asnumpy()).all()
    assert not (a.asnumpy() == b.asnumpy()).all()
    mx.random.seed(12)
    assert not (mx.nd.random.uniform(shape=(1000,)).asnumpy() == a.asnumpy()).all()


def test_same_seed_same_numbers_on_every_engine():
    code = ("import mxplug as mx\n"
            "mx.random.seed(2024)\n"
            "xs = [mx.nd.random.normal(shape=(50,)) for _ in range(20)]\n"
            "ys = [mx.nd.random.randint(0, 100, shape=(7,)) for _ in range(20)]\n"
            "print(repr([x.asnumpy().tolist() for x in xs + ys]))\n")
    outs = []
    for engine in ("threaded", "naive"):
        p = run_python(code, extra_env={"MXPLUG_ENGINE": engine, "MXPLUG_LOG_LEVEL": "1"})
        assert p.returncode == 0, p.stderr
        assert engine + " engine" in p.stderr  # the engine asked for is the one that ran
        outs.append(p.stdout)
    assert outs[0] == outs[1] and len(outs[0]) > 1000


def test_bad_parameters_are_clear_errors_at_the_next_wait(mx):
    """MXNet checks a sampler's parameters when its kernel runs: the call returns, the wait
    raises, naming the op and the parameter."""
    for call, words in [(lambda: mx.nd.random.uniform(2, 1, shape=(3,)), r"_random_uniform.*low"),
                        (lambda: mx.nd.random.randint(5, 5, shape=(3,)), r"_random_randint.*low"),
                        (lambda: mx.nd.random.normal(0, -1, shape=(3,)), r"_random_normal.*scale"),
                        (lambda: mx.nd.random.normal(0, 0, shape=(3,)), r"_random_normal.*scale"),
                        (lambda: mx.nd.random.gamma(-1, 1, shape=(3,)), r"_random_gamma.*Invalid alpha or beta"),
                        (lambda: mx.nd.random.exponential(-2, shape=(3,)), r"_random_exponential.*Invalid lambda"),
                        (lambda: mx.nd.random.negative_binomial(0, 0.5, shape=(3,)), r"_random_negative_binomial.*k=0")]:
        out = call()
        with pytest.raises(mx.MXNetError, match=words):
            out.asnumpy()
    assert mx.nd.random.uniform(0, 1, shape=(2,)).asnumpy().shape == (2,)  # the process lives on


def test_new_samplers_take_mxnet_names_shapes_and_dtypes():
    from parity import assert_parity
    calls = ["mx.nd.random.exponential(2, shape=(2, 3))", "mx.nd.random.gamma(2, 1, shape=(4,), dtype='float64')",
             "mx.nd.random.poisson(3, shape=(2, 2), dtype='float16')", "mx.nd.random.negative_binomial(3, 0.5, shape=5)",
             "mx.nd.random.generalized_negative_binomial(2, 0.5, shape=(1, 2))",
             "mx.random.poisson(1.5, shape=(3,))", "mx.nd._internal._random_exponential(lam=2, shape=(2,))",
             "mx.nd.random_gamma(alpha=2, shape=(3,))", "mx.nd.random_poisson(lam=2, shape=(3,))",
             "mx.nd.random_negative_binomial(k=2, p=0.5, shape=(3,))",
             "mx.nd.random_generalized_negative_binomial(mu=2, alpha=0.3, shape=(3,))"]
    assert_parity({c: "x = %s\nr = (x.shape, x.dtype.__name__ if hasattr(x.dtype, '__name__') else str(x.dtype), "
                      "bool((x.asnumpy() >= 0).all()))" % c for c in calls})


def test_per_element_samplers_follow_each_elements_distribution(mx):
    """_sample_<x> (mx.nd.random.<x> with arrays): one distribution per element of the
    parameters, `shape` samples of each, each against its own mean and variance."""
    mx.random.seed(11)
    n = 100000
    nd = mx.nd.array
    cases = [  # (function, parameter arrays, means, variances)
        (mx.nd.random.uniform, [nd([-1, 10]), nd([1, 20])], [0, 15], [4 / 12, 100 / 12]),
        (mx.nd.random.normal, [nd([0, -5]), nd([1, 3])], [0, -5], [1, 9]),
        (mx.nd.random.exponential, [nd([0.5, 4])], [0.5, 4], [0.25, 16]),  # scale = 1 / lam
        (mx.nd.random.gamma, [nd([0.5, 4]), nd([2, 0.5])], [1, 2], [2, 1]),
        (mx.nd.random.poisson, [nd([2, 30])], [2, 30], [2, 30]),
        (mx.nd.random.negative_binomial, [nd([5, 2]), nd([0.4, 0.8])], [7.5, 0.5], [18.75, 0.625]),
        (mx.nd.random.generalized_negative_binomial, [nd([4, 2]), nd([0.5, 0])], [4, 2], [12, 2]),
    ]
    for fn, params, means, variances in cases:
        x = fn(*params, shape=(n,)).asnumpy().astype(np.float64)
        assert x.shape == (2, n), fn.__name__
        for row, mean, var in zip(x, means, variances):
            assert abs(row.mean() - mean) < 5 * np.sqrt(var / n), (fn.__name__, mean, row.mean())
            assert abs(row.var() - var) < 0.05 * var, (fn.__name__, var, row.var())
    u = mx.nd.random.uniform(nd([[0, 1], [2, 3]]), nd([[1, 2], [3, 4]]), shape=(3, 5)).asnumpy()
    assert u.shape == (2, 2, 3, 5)
    assert ((u >= np.arange(4).reshape(2, 2, 1, 1)) & (u < np.arange(1, 5).reshape(2, 2, 1, 1))).all()
    half = mx.nd.random.normal(nd([0, 1], dtype="float16"), nd([1, 1], dtype="float16"), dtype="float16")
    assert half.dtype == np.float16 and half.shape == (2,)


def test_like_samplers_take_the_shape_and_dtype_of_their_input(mx):
    mx.random.seed(12)
    x = mx.nd.zeros((400, 500), dtype="float64")
    for fn, kwargs, mean, var in [(mx.nd.random.uniform_like, {"low": 2, "high": 4}, 3, 1 / 3),
                                  (mx.nd.random.normal_like, {"loc": 1, "scale": 2}, 1, 4),
                                  (mx.nd.random.exponential_like, {"lam": 4}, 0.25, 1 / 16),
                                  (mx.nd.random.gamma_like, {"alpha": 3, "beta": 2}, 6, 12),
                                  (mx.nd.random.poisson_like, {"lam": 5}, 5, 5),
                                  (mx.nd.random.negative_binomial_like, {"k": 4, "p": 0.5}, 4, 8),
                                  (mx.nd.random.generalized_negative_binomial_like, {"mu": 3, "alpha": 1}, 3, 12)]:
        y = fn(x, **kwargs)
        assert y.shape == x.shape and y.dtype == np.float64
        v = y.asnumpy()
        assert abs(v.mean() - mean) < 5 * np.sqrt(var / v.size), (fn.__name__, v.mean())
        assert abs(v.var() - var) < 0.05 * var, (fn.__name__, v.var())
    s = mx.sym.random.normal_like(mx.sym.var("d"), loc=2)
    assert s.list_arguments() == ["d"] and s.infer_shape(d=(2, 3))[1] == [(2, 3)]
    with pytest.raises(mx.MXNetError, match=r"_random_uniform_like.*low"):
        mx.nd.random.uniform_like(x, low=3, high=1).asnumpy()


def test_unique_zipfian_draws_distinct_classes_as_mxnet_does(mx):
    """Each row holds distinct classes, drawn as MXNet 1.9.1 draws them: class c with the
    probability that round(range_max ** u) - 1 = c, u uniform on [0, 1)."""
    mx.random.seed(13)
    R, n = 6, 100000
    samples, tries = mx.nd._internal._sample_unique_zipfian(range_max=R, shape=(n, 1))
    assert samples.dtype == np.int64 and tries.dtype == np.int64
    assert samples.shape == (n, 1) and tries.shape == (n,) and (tries.asnumpy() == 1).all()
    edges = np.clip(np.log(np.arange(R + 1) + 0.5) / np.log(R), 0, 1)
    expected = n * np.diff(edges)
    chi2 = ((np.bincount(samples.asnumpy().ravel(), minlength=R) - expected) ** 2 / expected).sum()
    assert chi2 < R + 8 * np.sqrt(2 * R), chi2
    rows, tries = mx.nd._internal._sample_unique_zipfian(range_max=50, shape=(200, 20))
    rows, tries = rows.asnumpy(), tries.asnumpy()
    assert all(len(set(r)) == 20 for r in rows) and rows.min() >= 0 and rows.max() < 50
    assert (tries >= 20).all() and tries.mean() > 20  # repeats are drawn and counted
    with pytest.raises(mx.MXNetError, match="cannot exceed the number of possible classes"):
        mx.nd._internal._sample_unique_zipfian(range_max=3, shape=(2, 4))
