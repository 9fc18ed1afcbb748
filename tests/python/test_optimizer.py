"""Optimizers, their fused update ops and the learning-rate schedulers: every step against the
update formula written out in NumPy (float64), the optimizer classes against MXNet 1.9.1 run on
the same numbers, and the schedulers against their formulas."""
import json
import math
import pickle

import numpy as np
import pytest

from conftest import run_here, run_mxnet, run_mxnet_script

RNG = np.random.RandomState(7)
W0 = RNG.randn(4, 5).astype(np.float32)
GRADS = [(RNG.randn(4, 5) * 3).astype(np.float32) for _ in range(3)]
COMMON = dict(rescale_grad=0.5, clip_gradient=1.0, wd=0.01)


def clip(g, c):
    return np.clip(g, -c, c)


# ---- NumPy references: (weight, grad, states, kwargs) -> (weight, states) ----

def ref_sgd(w, g, s, lr, wd, rescale_grad, clip_gradient, momentum=0.0):
    step = lr * (clip(rescale_grad * g, clip_gradient) + wd * w)
    if momentum == 0.0:
        return w - step, s
    mom = momentum * s[0] - step
    return w + mom, [mom]


def ref_nag(w, g, s, lr, wd, rescale_grad, clip_gradient, momentum):
    step = lr * (clip(rescale_grad * g, clip_gradient) + wd * w)
    new = w + momentum * (momentum * s[0] - step) - step
    # MXNet writes the weight first; in place, the momentum's decay term then reads the new weight.
    return new, [momentum * s[0] - lr * (clip(rescale_grad * g, clip_gradient) + wd * new)]


def ref_adam(w, g, s, lr, wd, rescale_grad, clip_gradient, beta1, beta2, epsilon):
    g = clip(rescale_grad * g + wd * w, clip_gradient)
    mean = beta1 * s[0] + (1 - beta1) * g
    var = beta2 * s[1] + (1 - beta2) * g * g
    return w - lr * mean / (np.sqrt(var) + epsilon), [mean, var]


def ref_rmsprop(w, g, s, lr, wd, rescale_grad, clip_gradient, gamma1, epsilon, clip_weights):
    g = clip(rescale_grad * g + wd * w, clip_gradient)
    n = (1 - gamma1) * g * g + gamma1 * s[0]
    return np.clip(w - lr * g / np.sqrt(n + epsilon), -clip_weights, clip_weights), [n]


def ref_rmspropalex(w, g, s, lr, wd, rescale_grad, clip_gradient, gamma1, gamma2, epsilon, clip_weights):
    g = clip(rescale_grad * g + wd * w, clip_gradient)
    n = (1 - gamma1) * g * g + gamma1 * s[0]
    mean = (1 - gamma1) * g + gamma1 * s[1]
    delta = gamma2 * s[2] - lr * g / np.sqrt(n - mean * mean + epsilon)
    return np.clip(w + delta, -clip_weights, clip_weights), [n, mean, delta]


def ref_adagrad(w, g, s, lr, wd, rescale_grad, clip_gradient, epsilon):
    g = clip(rescale_grad * g, clip_gradient)
    history = s[0] + g * g
    return w - lr * (g / np.sqrt(history + epsilon) + wd * w), [history]


def ref_signsgd(w, g, s, lr, wd, rescale_grad, clip_gradient):
    return (1 - lr * wd) * w - lr * np.sign(g), s  # MXNet neither rescales nor clips a sign


def ref_signum(w, g, s, lr, wd, rescale_grad, clip_gradient, momentum, wd_lh):
    mom = momentum * s[0] - (1 - momentum) * (wd * w + clip(rescale_grad * g, clip_gradient))
    return (1 - lr * wd_lh) * w + lr * np.sign(mom), [mom]


def ref_ftml(w, g, s, lr, wd, rescale_grad, clip_grad, beta1, beta2, epsilon, t):
    g = clip(rescale_grad * g + wd * w, clip_grad)
    v = beta2 * s[1] + (1 - beta2) * g * g
    d = (1 - beta1 ** t) / lr * (np.sqrt(v / (1 - beta2 ** t)) + epsilon)
    z = beta1 * s[2] + (1 - beta1) * g - (d - beta1 * s[0]) * w
    return -z / d, [d, v, z]


def ref_ftrl(w, g, s, lr, wd, rescale_grad, clip_gradient, lamda1, beta):
    g = clip(rescale_grad * g, clip_gradient)
    z = s[0] + g - (np.sqrt(s[1] + g * g) - np.sqrt(s[1])) * w / lr
    n = s[1] + g * g
    return (np.sign(z) * lamda1 - z) / ((beta + np.sqrt(n)) / lr + wd) * (np.abs(z) > lamda1), [z, n]


def ref_lamb_phase1(w, g, s, wd, rescale_grad, clip_gradient, beta1, beta2, epsilon, t, bias_correction):
    g = clip(rescale_grad * g, clip_gradient)
    mean = beta1 * s[0] + (1 - beta1) * g
    var = beta2 * s[1] + (1 - beta2) * g * g
    m, v = (mean / (1 - beta1 ** t), var / (1 - beta2 ** t)) if bias_correction else (mean, var)
    return m / (np.sqrt(v) + epsilon) + wd * w, [mean, var]  # the step direction, not a weight


OPS = [
    ("sgd_update", 0, ref_sgd, {}),
    ("sgd_mom_update", 1, ref_sgd, dict(momentum=0.9)),
    ("nag_mom_update", 1, ref_nag, dict(momentum=0.9)),
    ("adam_update", 2, ref_adam, dict(beta1=0.8, beta2=0.95, epsilon=1e-6)),
    ("rmsprop_update", 1, ref_rmsprop, dict(gamma1=0.9, epsilon=1e-6, clip_weights=1.2)),
    ("rmspropalex_update", 3, ref_rmspropalex, dict(gamma1=0.9, gamma2=0.8, epsilon=1e-6, clip_weights=1.2)),
    ("adagrad_update", 1, ref_adagrad, dict(epsilon=1e-7)),
    ("signsgd_update", 0, ref_signsgd, {}),
    ("signum_update", 1, ref_signum, dict(momentum=0.9, wd_lh=0.02)),
    ("ftml_update", 3, ref_ftml, dict(beta1=0.6, beta2=0.99, epsilon=1e-8, t=2)),
    ("ftrl_update", 2, ref_ftrl, dict(lamda1=0.05, beta=1.5)),
    ("lamb_update_phase1", 2, ref_lamb_phase1, dict(beta1=0.8, beta2=0.95, epsilon=1e-6, t=3, bias_correction=True)),
]
# ftml_update names its bound clip_grad; lamb_update_phase1 has no lr.
RENAMED = {"ftml_update": {"clip_gradient": "clip_grad"}, "lamb_update_phase1": {"lr": None}}


@pytest.mark.parametrize("name,nstates,ref,extra", OPS, ids=[o[0] for o in OPS])
def test_fused_update_matches_formula(mx, name, nstates, ref, extra):
    kwargs = dict(COMMON, lr=0.1, **extra)
    for old, new in RENAMED.get(name, {}).items():
        value = kwargs.pop(old)
        if new:
            kwargs[new] = value
    # Positive second moments, a small running mean: states a real run could hold.
    init = [np.abs(RNG.randn(4, 5)).astype(np.float32) + (0.5 if k != 1 else 0.0) for k in range(nstates)]
    if name == "rmspropalex_update":
        init[1] *= 0.1
    w = mx.nd.array(W0)
    states = [mx.nd.array(s) for s in init]
    ref_w, ref_s = W0.astype(np.float64), [s.astype(np.float64) for s in init]
    for g in GRADS:
        out = getattr(mx.nd, name)(w, mx.nd.array(g), *states, out=w, **kwargs)
        assert out is w
        ref_w, ref_s = ref(ref_w, g.astype(np.float64), ref_s, **kwargs)
    np.testing.assert_allclose(w.asnumpy(), ref_w, rtol=1e-5, atol=1e-6)
    for got, want in zip(states, ref_s):
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_fused_update_new_output_leaves_weight(mx):
    w, g, mom = mx.nd.array(W0), mx.nd.array(GRADS[0]), mx.nd.zeros((4, 5))
    new = mx.nd.sgd_mom_update(w, g, mom, lr=0.1, momentum=0.9)
    np.testing.assert_array_equal(w.asnumpy(), W0)
    want, (want_mom,) = ref_sgd(W0.astype(np.float64), GRADS[0].astype(np.float64), [np.zeros((4, 5))],
                                lr=0.1, wd=0.0, rescale_grad=1.0, clip_gradient=1e30, momentum=0.9)
    np.testing.assert_allclose(new.asnumpy(), want, rtol=1e-6)
    np.testing.assert_allclose(mom.asnumpy(), want_mom, rtol=1e-6)


def test_fused_update_errors(mx):
    w = mx.nd.zeros((2, 3))
    with pytest.raises(mx.MXNetError, match=r"sgd_mom_update: .*mom has shape \(3,\), expected the weight's shape \(2, 3\)$"):
        mx.nd.sgd_mom_update(w, mx.nd.zeros((2, 3)), mx.nd.zeros((3,)), out=w, lr=0.1)
    with pytest.raises(mx.MXNetError, match=r"adam_update: required parameter 'lr' is missing"):
        mx.nd.adam_update(w, w, w, w)
    with pytest.raises(mx.MXNetError, match=r"sgd_update: .*grad has shape \(3,\), expected the weight's shape \(2, 3\)$"):
        mx.nd.sgd_update(w, mx.nd.zeros((3,)), lr=0.1)
    np.testing.assert_array_equal(w.asnumpy(), np.zeros((2, 3)))


# ---- Optimizer classes ----------------------------------------------------------------------------

def run_updater(mx, name, kwargs, steps=3, names=None):
    """Applies optimizer `name` through an Updater to two weights; returns their values."""
    o = mx.optimizer.create(name, param_idx2name=names or {0: "fc_weight", 1: "fc_bias"}, **kwargs)
    updater = mx.optimizer.get_updater(o)
    weights = [mx.nd.array(W0), mx.nd.array(W0[0])]
    for step in range(steps):
        for i, w in enumerate(weights):
            g = GRADS[step] if i == 0 else GRADS[step][1]
            updater(i, mx.nd.array(g), w)
    return [w.asnumpy() for w in weights]


CLASSES = [
    ("sgd", dict(learning_rate=0.1, momentum=0.9, wd=0.01, rescale_grad=0.5, clip_gradient=1.0)),
    ("sgd", dict(learning_rate=0.1, wd=0.01)),
    ("nag", dict(learning_rate=0.1, momentum=0.9, rescale_grad=0.5)),
    ("nag", dict(learning_rate=0.1, momentum=0.9, wd=0.05)),
    ("adam", dict(learning_rate=0.01, wd=0.01, clip_gradient=2.0)),
    ("rmsprop", dict(learning_rate=0.01, wd=0.01, gamma1=0.8)),
    ("rmsprop", dict(learning_rate=0.01, centered=True, clip_weights=0.9)),
    ("adagrad", dict(learning_rate=0.1, wd=0.01, eps=1e-6)),
    ("signum", dict(learning_rate=0.01, wd=0.01, wd_lh=0.02, rescale_grad=0.5, clip_gradient=1.0)),
    ("signum", dict(learning_rate=0.01, momentum=0.0, wd=0.01)),
    ("ftml", dict(learning_rate=0.05, wd=0.01, clip_gradient=2.0)),
    ("ftrl", dict(learning_rate=0.1, lamda1=0.05, wd=0.01)),
    ("ftrl", dict(rescale_grad=0.5, clip_gradient=1.0)),
    ("lamb", dict(learning_rate=0.01, wd=0.01, clip_gradient=2.0)),
    ("lamb", dict(learning_rate=0.01, lower_bound=0.5, upper_bound=1.0, bias_correction=False)),
    ("lars", dict(learning_rate=0.1, momentum=0.9, wd=0.01, eta=0.01, rescale_grad=0.5)),
    ("lars", dict(learning_rate=0.1, wd=0.01, clip_gradient=1.0)),
    ("lbsgd", dict(learning_rate=0.1, momentum=0.9, wd=0.01, batch_scale=2, warmup_epochs=1,
                   updates_per_epoch=4)),
    ("lbsgd", dict(learning_rate=0.1, warmup_strategy='sqrt', warmup_epochs=1, updates_per_epoch=8)),
    ("lbsgd", dict(learning_rate=0.1, warmup_strategy='lars', wd=0.01)),
]

MXNET_UPDATERS = '''
import json, sys, numpy as np, mxnet as mx
cases = json.loads(sys.argv[1]) if len(sys.argv) > 1 else json.loads(input())
RNG = np.random.RandomState(7)
W0 = RNG.randn(4, 5).astype(np.float32)
GRADS = [(RNG.randn(4, 5) * 3).astype(np.float32) for _ in range(3)]
out = []
for name, kwargs in cases:
    o = mx.optimizer.create(name, param_idx2name={0: "fc_weight", 1: "fc_bias"}, **kwargs)
    updater = mx.optimizer.get_updater(o)
    weights = [mx.nd.array(W0), mx.nd.array(W0[0])]
    for step in range(3):
        for i, w in enumerate(weights):
            updater(i, mx.nd.array(GRADS[step] if i == 0 else GRADS[step][1]), w)
    out.append([w.asnumpy().tolist() for w in weights])
print(json.dumps(out))
'''


def test_optimizers_match_mxnet(mx):
    """Twenty optimizer set-ups, three steps of two weights (a weight and a bias, which gets no
    weight decay), against MXNet 1.9.1's own optimizers on the same numbers."""
    want = json.loads(run_mxnet("import sys; sys.argv.append(%r)\n" % json.dumps(CLASSES) + MXNET_UPDATERS)
                      .strip().splitlines()[-1])
    for (name, kwargs), expected in zip(CLASSES, want):
        got = run_updater(mx, name, kwargs)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, np.array(e, np.float32), rtol=2e-5, atol=1e-6, err_msg=name + str(kwargs))


def test_wd_mult_by_name_and_lr_mult(mx):
    """Biases (names not ending in _weight/_gamma) get no weight decay; lr_mult scales the rate."""
    o = mx.optimizer.SGD(learning_rate=0.1, wd=0.5, param_idx2name={0: "a_weight", 1: "a_bias", 2: "bn_gamma"})
    o.set_lr_mult({"a_weight": 2.0})
    assert o._get_wds([0, 1, 2]) == [0.5, 0.0, 0.5]
    assert o._get_lrs([0, 1, 2]) == [pytest.approx(0.2), 0.1, 0.1]
    w = mx.nd.ones((3,))
    o.update(1, w, mx.nd.zeros((3,)), None)
    np.testing.assert_array_equal(w.asnumpy(), np.ones(3))  # a bias with a zero gradient stays


def test_sym_attributes_set_multipliers(mx):
    data = mx.sym.Variable("data")
    w = mx.sym.Variable("fc_weight", lr_mult=0.5, wd_mult=3.0)
    net = mx.sym.FullyConnected(data, weight=w, num_hidden=2, name="fc")
    o = mx.optimizer.SGD(learning_rate=1.0, wd=0.1, sym=net, param_idx2name={0: "fc_weight", 1: "fc_bias"})
    assert o._get_lr(0) == 0.5 and o._get_wd(0) == pytest.approx(0.3)
    assert o._get_lr(1) == 1.0 and o._get_wd(1) == 0.0


def test_registry(mx):
    assert type(mx.optimizer.create("SGD")) is mx.optimizer.SGD
    assert mx.optimizer.create("adam").lr == 0.001
    with pytest.raises(ValueError, match="Cannot find optimizer nosuch; registered optimizers are: .*sgd"):
        mx.optimizer.create("nosuch")

    @mx.optimizer.register
    class Halve(mx.optimizer.Optimizer):
        def update(self, index, weight, grad, state):
            weight[:] = weight * 0.5
    w = mx.nd.ones((2,))
    mx.optimizer.get_updater(mx.optimizer.create("halve"))(0, mx.nd.ones((2,)), w)
    np.testing.assert_array_equal(w.asnumpy(), [0.5, 0.5])


def test_updater_states_round_trip(mx):
    """Saved states resume exactly: 2 steps, save, new updater loads, 1 step == 3 steps."""
    kwargs = dict(learning_rate=0.01, wd=0.01)
    straight = run_updater(mx, "adam", kwargs)
    o = mx.optimizer.create("adam", param_idx2name={0: "fc_weight", 1: "fc_bias"}, **kwargs)
    u = mx.optimizer.get_updater(o)
    weights = [mx.nd.array(W0), mx.nd.array(W0[0])]
    for step in range(2):
        for i, w in enumerate(weights):
            u(i, mx.nd.array(GRADS[step] if i == 0 else GRADS[step][1]), w)
    blob = u.get_states(dump_optimizer=True)
    u2 = mx.optimizer.get_updater(mx.optimizer.create("sgd"))
    u2.set_states(blob)
    assert isinstance(u2.optimizer, mx.optimizer.Adam)
    for i, w in enumerate(weights):
        u2(i, mx.nd.array(GRADS[2] if i == 0 else GRADS[2][1]), w)
    for got, want in zip(weights, straight):
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)
    assert set(pickle.loads(u.get_states())) == {0, 1}


def test_multi_precision_keeps_a_float32_master(mx):
    """float16 weights: steps of 1e-4 vanish in float16 arithmetic near 1 (spacing 2^-10), but
    accumulate in the float32 master copy that the weight is cast from."""
    o = mx.optimizer.SGD(learning_rate=1e-4, multi_precision=True)
    u = mx.optimizer.get_updater(o)
    w = mx.nd.ones((3,), dtype='float16')
    master = np.float32(1)
    for _ in range(10):
        u(0, mx.nd.ones((3,), dtype='float16'), w)
        master = np.float32(master - np.float32(1e-4))
    assert w.dtype == np.float16
    np.testing.assert_array_equal(w.asnumpy(), np.full(3, master, np.float32).astype(np.float16))
    assert w.asnumpy()[0] != np.float16(1)
    np.testing.assert_array_equal(u.states[0][1].asnumpy(), np.full(3, master))


# Run by MXNet 1.9.1 and by mxplug (`mx` is given): three steps of the mp_* ops on float16 and
# float32 weights, and of SGD, NAG and Adam with multi_precision.
MP_SCRIPT = '''
import json
import numpy as np
rng = np.random.RandomState(3)
w0 = rng.randn(6, 5).astype(np.float16)
grads = [(rng.randn(6, 5) * 2).astype(np.float16) for _ in range(3)]
out = {}
for dtype in ("float16", "float32"):
    for op, kw in (("mp_sgd_update", dict(lr=0.1, wd=0.01, clip_gradient=1.5)),
                   ("mp_sgd_mom_update", dict(lr=0.1, momentum=0.9, wd=0.01, rescale_grad=0.5)),
                   ("mp_nag_mom_update", dict(lr=0.1, momentum=0.9, wd=0.01))):
        w = mx.nd.array(w0, dtype=dtype)
        master, mom = w.astype("float32"), mx.nd.zeros(w.shape)
        for g in grads:
            states = [mom, master] if "mom" in op else [master]
            getattr(mx.nd, op)(w, mx.nd.array(g, dtype=dtype), *states, out=w, **kw)
        out[op + " " + dtype] = [str(w.dtype), str(master.dtype)] + [
            a.asnumpy().astype(np.float64).ravel().tolist() for a in (w, master, mom)]
    for name, kw in (("sgd", dict(momentum=0.9)), ("sgd", {}), ("nag", dict(momentum=0.9)), ("adam", {})):
        u = mx.optimizer.get_updater(mx.optimizer.create(name, learning_rate=0.1, wd=0.01,
                                                         multi_precision=True, **kw))
        w = mx.nd.array(w0, dtype=dtype)
        for g in grads:
            u(0, mx.nd.array(g, dtype=dtype), w)
        out["%s %s %s" % (name, kw, dtype)] = [str(w.dtype), w.asnumpy().astype(np.float64).ravel().tolist()]
print(json.dumps(out))
'''


def test_multi_precision_updates_match_mxnet(mx):
    """mp_sgd_update, mp_sgd_mom_update and mp_nag_mom_update (a float16 or float32 weight stepped
    through its float32 master copy and float32 momentum), and SGD and NAG with multi_precision:
    three steps against MXNet 1.9.1's on the same numbers."""
    want, got = run_mxnet_script(MP_SCRIPT, []), run_here(mx, MP_SCRIPT, [])
    assert sorted(got) == sorted(want)
    for key in want:
        assert got[key][:2] == want[key][:2] if key.startswith("mp_") else got[key][0] == want[key][0], key
        for g, w in zip(got[key], want[key]):
            if isinstance(w, list):
                np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7, err_msg=key)


def test_multi_precision_updates_refuse_other_state_dtypes(mx):
    w = mx.nd.ones((3,), dtype="float16")
    with pytest.raises(mx.MXNetError, match=r"mp_sgd_update: .*weight32 has dtype float16; expected float32"):
        mx.nd.mp_sgd_update(w, w, w.copy(), lr=0.1)
    with pytest.raises(mx.MXNetError, match=r"mp_sgd_update: .*weight has dtype int32; expected float16, float32 or float64"):
        i = mx.nd.ones((3,), dtype="int32")
        mx.nd.mp_sgd_update(i, i, mx.nd.ones((3,)), lr=0.1)
    np.testing.assert_array_equal(w.asnumpy(), np.ones(3, np.float16))


def test_learning_rate_property_and_set(mx):
    o = mx.optimizer.SGD(learning_rate=0.3)
    o.set_learning_rate(0.2)
    assert o.learning_rate == 0.2
    s = mx.optimizer.SGD(lr_scheduler=mx.lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=1.0))
    with pytest.raises(UserWarning):
        s.set_learning_rate(0.1)


# ---- Learning-rate schedulers -----------------------------------------------------------------------

def test_factor_scheduler(mx):
    s = mx.lr_scheduler.FactorScheduler(step=3, factor=0.5, base_lr=1.0, stop_factor_lr=0.1)
    got = [s(n) for n in range(1, 14)]
    want = [max(1.0 * 0.5 ** ((n - 1) // 3), 0.1) for n in range(1, 14)]
    assert got == pytest.approx(want)


def test_multifactor_scheduler(mx):
    s = mx.lr_scheduler.MultiFactorScheduler(step=[2, 5], factor=0.1, base_lr=1.0)
    assert [s(n) for n in range(1, 8)] == pytest.approx([1, 1, .1, .1, .1, .01, .01])
    with pytest.raises(ValueError, match="increasing"):
        mx.lr_scheduler.MultiFactorScheduler(step=[5, 2])


def test_poly_and_cosine_with_warmup(mx):
    p = mx.lr_scheduler.PolyScheduler(max_update=10, base_lr=1.0, pwr=2, final_lr=0.1, warmup_steps=2,
                                      warmup_begin_lr=0.2)
    c = mx.lr_scheduler.CosineScheduler(max_update=10, base_lr=1.0, final_lr=0.1)
    for n in range(0, 14):
        if n < 2:
            want_p = 0.2 + 0.8 * n / 2
        else:
            want_p = 0.1 + 0.9 * (1 - (min(n, 10) - 2) / 8) ** 2
        assert p(n) == pytest.approx(want_p)
        assert c(n) == pytest.approx(0.1 + 0.9 * (1 + math.cos(math.pi * min(n, 10) / 10)) / 2)


def test_scheduler_drives_optimizer(mx):
    """With a scheduler, update t uses lr(t): plain SGD steps of a unit gradient add up to it."""
    o = mx.optimizer.SGD(lr_scheduler=mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=0.8))
    w = mx.nd.zeros((1,))
    for _ in range(5):
        o.update(0, w, mx.nd.ones((1,)), None)
    assert w.asscalar() == pytest.approx(-(0.8 + 0.8 + 0.4 + 0.4 + 0.2))


def test_dcasgd_with_momentum_against_numpy(mx):
    """DCASGD with momentum (which MXNet 1.9.1 cannot run: its `if mom:` asks an array for its
    truth) against the formula in NumPy: m = momentum * m - lr * (g + wd * w + lamda * g^2 *
    (w - w_prev)); w_prev = w; w += m."""
    rng = np.random.default_rng(2)
    w = rng.standard_normal((3, 4)).astype(np.float32)
    opt = mx.optimizer.DCASGD(momentum=0.9, learning_rate=0.1, wd=0.01, lamda=0.3)
    weight = mx.nd.array(w)
    state = opt.create_state(0, weight)
    m, previous = np.zeros_like(w), w.copy()
    for _ in range(3):
        g = rng.standard_normal((3, 4)).astype(np.float32)
        opt.update(0, weight, mx.nd.array(g), state)
        m = 0.9 * m - 0.1 * (g + 0.01 * w + 0.3 * g * g * (w - previous))
        previous = w.copy()
        w = w + m
    np.testing.assert_allclose(weight.asnumpy(), w, rtol=1e-5, atol=1e-6)


def test_lamb_phase2_and_all_finite_match_mxnet():
    from parity import assert_parity
    setup = "w = mx.nd.array([[1.0, -2.0], [0.5, 3.0]]); g = mx.nd.array([[0.1, 0.2], [-0.3, 0.4]])\n"
    cases = {"lamb2_%s" % i: setup + "r = mx.nd.lamb_update_phase2(w, g, mx.nd.array([%s]), mx.nd.array([%s]), "
             "lr=0.1, lower_bound=%s, upper_bound=%s)" % args
             for i, args in enumerate([(2.0, 4.0, -1, -1), (2.0, 4.0, 3.0, -1), (2.0, 4.0, -1, 1.0),
                                       (0.0, 4.0, -1, -1), (2.0, 0.0, -1, -1)])}
    finite = "a = mx.nd.array([1, 2, np.inf]); b = mx.nd.array([1, 2, 3]); n = mx.nd.array([np.nan, 1])\n"
    cases.update({
        "all_finite": finite + "r = [mx.nd.all_finite(x) for x in (a, b, n, b.astype('float16'), a.astype('float64'))]",
        "keeps_the_flag": finite + "r = mx.nd.array([5]); mx.nd.all_finite(b, init_output=False, out=r)",
        "clears_the_flag": finite + "r = mx.nd.array([5]); mx.nd.all_finite(n, init_output=False, out=r)",
        "multi": finite + "r = [mx.nd.multi_all_finite(a, b, num_arrays=2), mx.nd.multi_all_finite(b, b, num_arrays=2)]",
        "symbol": "s = mx.sym.multi_all_finite(mx.sym.var('x'), mx.sym.var('y'), num_arrays=2)\n"
                  "r = [s.infer_shape(x=(2, 3), y=(4,)), s.infer_type(x=np.float16, y=np.float16)]",
        "integers": "r = mx.nd.all_finite(mx.nd.array([1, 2], dtype='int32'))",
    })
    assert_parity(cases, messages={"integers": "only support floating point types, not int32"})


def test_adamw_and_multi_precision_lamb_match_mxnet():
    """_adamw_update and _mp_adamw_update (rescale_grad a one-element array: 0 or not finite skips
    the step), mp_lamb_update_phase1 (g in float32, weight32 kept) and mp_lamb_update_phase2
    (from weight32, which MXNet 1.9.1 does not change): weights, states and outputs."""
    from parity import assert_parity
    setup = ("rs = np.random.RandomState(0); w, g, m, v = rs.randn(6), rs.randn(6), rs.rand(6), rs.rand(6)\n"
             "def adamw(rescale, mp=False, **kw):\n"
             "    W = mx.nd.array(w, dtype='float16' if mp else 'float32'); G = mx.nd.array(g, dtype=W.dtype)\n"
             "    M, V = mx.nd.array(m), mx.nd.array(v)\n"
             "    args = [W, G, M, V] + ([mx.nd.array(w)] if mp else []) + [mx.nd.array([rescale])]\n"
             "    f = mx.nd._internal._mp_adamw_update if mp else mx.nd._internal._adamw_update\n"
             "    kw = dict(dict(lr=0.1, beta1=0.9, beta2=0.99, epsilon=1e-8, wd=0.1, eta=0.5), **kw)\n"
             "    for _ in range(2):\n"
             "        f(*args, out=W, **kw)\n"
             "    return [W, G, M, V] + args[4:-1]\n")
    lamb = ("W = mx.nd.array(w, dtype='float16'); G = mx.nd.array(g, dtype='float16'); M, V = mx.nd.array(m), mx.nd.array(v)\n"
            "W32 = mx.nd.array(w)\n"
            "o = mx.nd.mp_lamb_update_phase1(W, G, M, V, W32, t=2, wd=0.1, beta1=0.9, beta2=0.99, clip_gradient=0.5)\n")
    assert_parity({
        "adamw": setup + "r = adamw(2.0)",
        "clipped": setup + "r = adamw(2.0, clip_gradient=0.5)",
        "clipped to 0": setup + "r = adamw(2.0, clip_gradient=0.0)",
        "skipped on inf": setup + "r = adamw(float('inf'))",
        "skipped on nan": setup + "r = adamw(float('nan'))",
        "skipped on 0": setup + "r = adamw(0.0)",
        "multi-precision": setup + "r = adamw(2.0, mp=True)",
        "mp skipped": setup + "r = adamw(float('inf'), mp=True)",
        "mp lamb phase 1": setup + lamb + "r = [o, W32, M, V]",
        "mp lamb phase 2": setup + lamb + "o2 = mx.nd.mp_lamb_update_phase2(W, o, mx.nd.array([2.0]), mx.nd.array([3.0]), W32, lr=0.1)\n"
                           "r = [o2, W32, W]",
        "mp lamb phase 2, bounds": setup + lamb + "r = mx.nd.mp_lamb_update_phase2(W, o, mx.nd.array([2.0]), mx.nd.array([0.0]), W32, "
                                   "lr=0.1, lower_bound=3.0)",
    }, rtol=2e-3)  # float16 weights


def test_aggregated_updates_match_mxnet():
    """The aggregated updates (MXNet's SGD with aggregation, AdamW and LAMB over groups): two
    steps of two weights of different shapes, each with its own lr and wd, with states and float32
    master copies, lrs and wds given as tuples or preloaded arrays; weights, states and outputs
    (out=weights, as MXNet's optimizers call them: MXNet 1.9.1 fails without out)."""
    from parity import assert_parity
    setup = ("rs = np.random.RandomState(1)\n"
             "shapes = [(3,), (2, 4)]\n"
             "w = [rs.randn(*s) for s in shapes]; g = [rs.randn(*s) * 3 for s in shapes]\n"
             "m = [rs.rand(*s) for s in shapes]; v = [rs.rand(*s) for s in shapes]\n"
             "def run(name, states=(), mp=False, tail=(), steps=2, dtype='float32', **kw):\n"
             "    f = getattr(mx.nd, name, None) or getattr(mx.nd._internal, name)\n"
             "    W = [mx.nd.array(x, dtype='float16' if mp else dtype) for x in w]\n"
             "    G = [mx.nd.array(x, dtype=W[0].dtype) for x in g]\n"
             "    S = [[mx.nd.array(src[k], dtype='float32' if mp else dtype) for src in states] for k in range(2)]\n"
             "    W32 = [mx.nd.array(x) for x in w]\n"
             "    args = []\n"
             "    for k in range(2):\n"
             "        args += [W[k], G[k]] + S[k] + ([W32[k]] if mp else [])\n"
             "    for _ in range(steps):\n"
             "        f(*(args + [mx.nd.array(t, dtype=tail_dtype(t, W[0].dtype)) for t in tail]), out=W, **kw)\n"
             "    return W + G + sum(S, []) + (W32 if mp else [])\n"
             "def tail_dtype(t, wdt):\n"
             "    return 'float32' if len(t) == 2 else wdt\n")
    sgd = dict(lrs=(0.1, 0.2), wds=(0.01, 0.05), rescale_grad=0.5, clip_gradient=1.0, num_weights=2)
    pre = dict(rescale_grad=0.5, clip_gradient=1.0, num_weights=2)
    lrs_wds = "[(0.1, 0.2), (0.01, 0.05)]"
    adamw = "lrs=(0.1, 0.2), wds=(0.01, 0.05), etas=(1.0, 0.5), beta1=0.8, beta2=0.95, num_weights=2"
    lamb = "learning_rates=(0.1, 0.2), wds=(0.01, 0.05), step_count=(2, 5), beta1=0.8, beta2=0.95, num_tensors=2"

    def kw(d, **more):
        return ", ".join("%s=%r" % kv for kv in dict(d, **more).items())
    cases = {
        "sgd": setup + "r = run('multi_sgd_update', %s)" % kw(sgd),
        "sgd float64": setup + "r = run('multi_sgd_update', dtype='float64', %s)" % kw(sgd),
        "sgd clipped to 0": setup + "r = run('multi_sgd_update', %s)" % kw(sgd, clip_gradient=0.0),
        "sgd unclipped": setup + "r = run('multi_sgd_update', %s)" % kw(sgd, clip_gradient=-1.0),
        "sgd mom": setup + "r = run('multi_sgd_mom_update', states=[m], momentum=0.9, %s)" % kw(sgd),
        "mp sgd": setup + "r = run('multi_mp_sgd_update', mp=True, %s)" % kw(sgd),
        "mp sgd mom": setup + "r = run('multi_mp_sgd_mom_update', states=[m], mp=True, momentum=0.9, %s)" % kw(sgd),
        "preloaded sgd": setup + "r = run('preloaded_multi_sgd_update', tail=%s, %s)" % (lrs_wds, kw(pre)),
        "preloaded sgd mom": setup + "r = run('preloaded_multi_sgd_mom_update', states=[m], tail=%s, momentum=0.9, %s)"
                             % (lrs_wds, kw(pre)),
        "preloaded mp sgd": setup + "r = run('preloaded_multi_mp_sgd_update', mp=True, tail=%s, %s)" % (lrs_wds, kw(pre)),
        "preloaded mp sgd mom": setup + "r = run('preloaded_multi_mp_sgd_mom_update', states=[m], mp=True, tail=%s, "
                                "momentum=0.9, %s)" % (lrs_wds, kw(pre)),
        "adamw": setup + "r = run('_multi_adamw_update', states=[m, v], tail=[[2.0]], clip_gradient=1.5, %s)" % adamw,
        "adamw skipped": setup + "r = run('_multi_adamw_update', states=[m, v], tail=[[float('inf')]], %s)" % adamw,
        "mp adamw": setup + "r = run('_multi_mp_adamw_update', states=[m, v], mp=True, tail=[[2.0]], %s)" % adamw,
        "lamb": setup + "r = run('_multi_lamb_update', states=[m, v], rescale_grad=0.5, clip_gradient=1.0, %s)" % lamb,
        "lamb bounds, no bias correction": setup + "r = run('_multi_lamb_update', states=[m, v], lower_bound=2.0, "
                                           "upper_bound=2.5, bias_correction=False, %s)" % lamb,
        "mp lamb": setup + "r = run('_multi_mp_lamb_update', states=[m, v], mp=True, %s)" % lamb,
        "sum_sq": setup + "r = [mx.nd.multi_sum_sq(*[mx.nd.array(x, dtype=t) for x in w], num_arrays=2) "
                          "for t in ('float16', 'float32', 'float64')]",
        "lars": "r = mx.nd.multi_lars(mx.nd.array([0.1, 0.2, 0.3, 0.4]), mx.nd.array([4., 0., 9., 1.]), "
                "mx.nd.array([1., 4., 0., 16.]), mx.nd.array([0.01, 0.02, 0.03, 0.5]), eta=0.5, eps=1e-3, rescale_grad=2)",
        "symbol": "s = mx.sym.multi_sgd_update(*[mx.sym.var(n) for n in 'abcd'], lrs=(0.1, 0.1), wds=(0, 0), num_weights=2)\n"
                  "r = [s.list_arguments(), s.list_outputs()[1].endswith('output1'), s.infer_type(a='float32', b='float32', c='float64', d='float64')]",
        "sum_sq symbol": "r = mx.sym.multi_sum_sq(mx.sym.var('a'), mx.sym.var('b'), num_arrays=2).infer_shape(a=(2, 3), b=(4,))",
        # Errors: the tuples' lengths, shapes, dtypes.
        "short lrs": setup + "r = run('multi_sgd_update', %s)" % kw(sgd, lrs=(0.1,)),
        "short step_count": setup + "r = run('_multi_lamb_update', states=[m, v], %s)" % lamb.replace("(2, 5)", "(2,)"),
        "preloaded lrs too long": setup + "r = run('preloaded_multi_sgd_update', tail=[(0.1, 0.2, 0.3), (0.1, 0.2)], %s)"
                                  % kw(pre),
        "sum_sq of integers": "r = mx.nd.multi_sum_sq(mx.nd.array([1, 2], dtype='int32'), num_arrays=1)",
        "sum_sq mixed dtypes": "r = mx.nd.multi_sum_sq(mx.nd.ones(2), mx.nd.ones(2, dtype='float64'), num_arrays=2)",
        "lars float64": "x = mx.nd.ones(3, dtype='float64'); r = mx.nd.multi_lars(x, x, x, x, eta=1, eps=0)",
        "reset_arrays": "a, b, c = mx.nd.ones((2, 3)), mx.nd.array([1, 2], dtype='float64'), mx.nd.ones(4, dtype='float16')\n"
                        "out = mx.nd.reset_arrays(a, b, c, num_arrays=3); r = [len(out), a, b, c]",
        "reset_arrays of integers": "a = mx.nd.array([1, 2], dtype='int32'); mx.nd.reset_arrays(a, num_arrays=1); r = a",
        "reset_arrays of views": "a = mx.nd.ones((3, 2)); mx.nd.reset_arrays(a[1], a[2:3], num_arrays=2); r = a",
    }
    assert_parity(cases, rtol=2e-3, messages={"sum_sq of integers": "only support floating point types, not int32",
                                             "reset_arrays of integers": "only support floating point types, not int32"})


def test_fused_updates_clip_at_zero_and_take_float16_as_mxnet():
    """MXNet's fused updates clip wherever the bound is >= 0 (clip_gradient=0 zeroes the
    gradient, clip_weights=0 the weight), and step float16 weights: mxplug computes in float32,
    MXNet in float16 (its constants too: 1 - 0.999 is 0.000977 there), so those agree to 1%."""
    from parity import assert_parity
    setup = ("w = mx.nd.array([1.0, 2.0, -0.5]); g = mx.nd.array([3.0, -4.0, 0.25])\n"
             "z = lambda: mx.nd.zeros(3, dtype=w.dtype)\n")
    calls = {
        "sgd": "mx.nd.sgd_update(w, g, lr=0.1, wd=0.01{kw})",
        "sgd_mom": "mx.nd.sgd_mom_update(w, g, z(), lr=0.1, momentum=0.9{kw})",
        "nag_mom": "mx.nd.nag_mom_update(w, g, z(), lr=0.1, momentum=0.9{kw})",
        "adam": "mx.nd.adam_update(w, g, z(), z(), lr=0.1{kw})",
        "rmsprop": "mx.nd.rmsprop_update(w, g, z(), lr=0.1{kw})",
        "rmspropalex": "mx.nd.rmspropalex_update(w, g, z(), z(), z(), lr=0.1{kw})",
        "mp_sgd": "mx.nd.mp_sgd_update(w.astype('float16'), g.astype('float16'), w.copy(), lr=0.1{kw})",
    }
    cases, halves = {}, {}
    for name, call in calls.items():
        cases[name + " clipped to 0"] = setup + "r = " + call.format(kw=", clip_gradient=0.0")
        cases[name + " unclipped"] = setup + "r = " + call.format(kw=", clip_gradient=-1.0")
        if not name.startswith("mp"):
            halves[name + " float16"] = (setup.replace("[3.0, -4.0, 0.25])", "[3.0, -4.0, 0.25]); "
                                                       "w, g = w.astype('float16'), g.astype('float16')")
                                         + "r = " + call.format(kw=""))
    cases["rmsprop weights clipped to 0"] = setup + "r = mx.nd.rmsprop_update(w, g, z(), lr=0.1, clip_weights=0.0)"
    assert_parity(cases, rtol=2e-3)
    assert_parity(halves, rtol=1e-2)


# Run by MXNet 1.9.1 and by mxplug: SGD's multi-precision states and two aggregated steps (indices
# a list: multi_sgd_update and its mom/mp forms) of three weights with their own lr and wd
# multipliers, and compare_optimizer between one-by-one and aggregated SGD.
SGD_LISTS = '''
import json
import numpy as np
rs = np.random.RandomState(0)
shapes = [(3, 4), (5,), (2, 2, 2)]
W = [rs.randn(*s) for s in shapes]
G = [[rs.randn(*s) for s in shapes] for _ in range(2)]
out = {}
for mom in (0.0, 0.9):
    for dtype, mp in (('float32', False), ('float16', True), ('float16', False)):
        opt = mx.optimizer.SGD(learning_rate=0.1, momentum=mom, wd=0.01, multi_precision=mp,
                               rescale_grad=0.5, clip_gradient=1.0)
        opt.set_lr_mult({1: 0.5})
        opt.set_wd_mult({2: 0.0})
        w = [mx.nd.array(x, dtype=dtype) for x in W]
        states = [opt.create_state_multi_precision(i, w[i]) for i in range(3)]
        for step in range(2):
            opt.update_multi_precision([0, 1, 2], w, [mx.nd.array(g, dtype=dtype) for g in G[step]],
                                       states)
        out['%s %s %s' % (mom, dtype, mp)] = {
            'w': [x.asnumpy().astype('float64').ravel().tolist() for x in w],
            'states': [[None if s is None else np.dtype(s.dtype).name
                        for s in (st if isinstance(st, tuple) else (st,))] for st in states],
            'num_update': opt.num_update, 'aggregate_num': opt.aggregate_num}
mx.random.seed(1)
for shape, n in (((4, 5), 1), ([(4, 5), (3,), (2, 6)], 3)):
    mx.test_utils.compare_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.01),
                                    mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.01),
                                    shape, 'float32', ntensors=n)
print(json.dumps(out))
'''


def test_sgd_states_and_aggregated_steps_match_mxnet(mx):
    """SGD keeps a float16 weight's state as (momentum, float32 master), MXNet's order (its pickled
    states load as they are), and steps lists of weights in one op as MXNet's does."""
    want, got = run_mxnet_script(SGD_LISTS, []), run_here(mx, SGD_LISTS, [])
    assert sorted(got) == sorted(want)
    for key in want:
        assert got[key]["states"] == want[key]["states"], key
        assert got[key]["num_update"] == want[key]["num_update"] == 2
        assert got[key]["aggregate_num"] == want[key]["aggregate_num"] == 4
        rtol = 1e-2 if "float16 False" in key else 1e-6  # MXNet computes those in float16
        for g, w in zip(got[key]["w"], want[key]["w"]):
            np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * 1e-1, err_msg=key)
    assert got["0.9 float16 True"]["states"] == [["float32", "float32"]] * 3
    assert got["0.0 float16 True"]["states"] == [[None, "float32"]] * 3


def test_compare_optimizer_catches_a_different_step(mx):
    with pytest.raises(AssertionError):
        mx.test_utils.compare_optimizer(mx.optimizer.SGD(learning_rate=0.1),
                                        mx.optimizer.SGD(learning_rate=0.2), (3, 4), 'float32')
    with pytest.raises(AssertionError):
        mx.test_utils.compare_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9),
                                        mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.5),
                                        [(3, 4), (2,)], 'float32', ntensors=2)
