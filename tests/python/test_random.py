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


def test_bad_parameters_are_clear_errors(mx):
    with pytest.raises(mx.MXNetError, match=r"_random_uniform.*low"):
        mx.nd.random.uniform(2, 1, shape=(3,))
    with pytest.raises(mx.MXNetError, match=r"_random_randint.*low"):
        mx.nd.random.randint(5, 5, shape=(3,))
    with pytest.raises(mx.MXNetError, match=r"_random_normal.*scale"):
        mx.nd.random.normal(0, -1, shape=(3,))
    with pytest.raises(mx.MXNetError, match=r"_random_gamma.*Invalid alpha or beta"):
        mx.nd.random.gamma(-1, 1, shape=(3,))
    with pytest.raises(mx.MXNetError, match=r"_random_exponential.*Invalid lambda"):
        mx.nd.random.exponential(-2, shape=(3,))
    with pytest.raises(mx.MXNetError, match=r"_random_negative_binomial.*k=0"):
        mx.nd.random.negative_binomial(0, 0.5, shape=(3,))


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
