"""Initializers (by name pattern, their statistics), metrics (against NumPy and MXNet 1.9.1 on the
same numbers), callbacks (Speedometer's lines, checkpoints) and mx.model checkpoints read and
written by MXNet 1.9.1."""
import json
import logging
import math

import numpy as np
import pytest

from conftest import run_mxnet

# ---- Initializers -----------------------------------------------------------------------------------


def fill(mx, init, name, shape):
    arr = mx.nd.full(shape, 123.0)
    init(mx.init.InitDesc(name), arr)
    return arr.asnumpy()


def test_names_choose_the_rule(mx):
    init = mx.init.Uniform(0.5)
    assert (fill(mx, init, "fc1_bias", (7,)) == 0).all()
    assert (fill(mx, init, "bn_gamma", (7,)) == 1).all()
    assert (fill(mx, init, "bn_beta", (7,)) == 0).all()
    assert (fill(mx, init, "bn_moving_mean", (7,)) == 0).all()
    assert (fill(mx, init, "bn_moving_var", (7,)) == 1).all()
    w = fill(mx, init, "fc1_weight", (50, 40))
    assert -0.5 <= w.min() < -0.45 and 0.45 < w.max() <= 0.5
    with pytest.raises(ValueError, match="Unknown initialization pattern for fc1_mystery"):
        fill(mx, init, "fc1_mystery", (3,))


def test_init_attribute_wins(mx):
    desc = mx.init.InitDesc("fc_weight", attrs={"__init__": mx.init.Constant(0.25).dumps()})
    arr = mx.nd.zeros((3, 2))
    mx.init.Xavier()(desc, arr)
    assert (arr.asnumpy() == 0.25).all()
    v = mx.sym.Variable("w", init=mx.init.One())
    assert json.loads(v.attr("__init__")) == ["one", {}]


@pytest.mark.parametrize("rnd_type,factor_type,magnitude", [
    ("uniform", "avg", 3), ("gaussian", "in", 2), ("uniform", "out", 2.34), ("gaussian", "avg", 3)])
def test_xavier_statistics(mx, rnd_type, factor_type, magnitude):
    shape = (64, 32, 5, 5)
    mx.random.seed(1)
    w = fill(mx, mx.init.Xavier(rnd_type, factor_type, magnitude), "conv_weight", shape)
    fan_in, fan_out = 32 * 25, 64 * 25
    factor = {"avg": (fan_in + fan_out) / 2, "in": fan_in, "out": fan_out}[factor_type]
    scale = math.sqrt(magnitude / factor)
    std = scale / math.sqrt(3) if rnd_type == "uniform" else scale
    assert abs(w.mean()) < 0.02 * scale
    assert w.std() == pytest.approx(std, rel=0.02)
    if rnd_type == "uniform":
        assert w.min() >= -scale and w.max() <= scale and w.max() > 0.99 * scale


def test_msra_normal_uniform_statistics(mx):
    mx.random.seed(2)
    w = fill(mx, mx.init.MSRAPrelu(factor_type="in", slope=0.0), "c_weight", (128, 64, 3, 3))
    assert w.std() == pytest.approx(math.sqrt(2.0 / (64 * 9)), rel=0.02)
    w = fill(mx, mx.init.Normal(0.3), "fc_weight", (300, 200))
    assert w.std() == pytest.approx(0.3, rel=0.02) and abs(w.mean()) < 0.01
    w = fill(mx, mx.init.Uniform(), "fc_weight", (300, 200))
    assert w.std() == pytest.approx(0.07 / math.sqrt(3), rel=0.02)
    with pytest.raises(ValueError, match="Xavier initializer cannot be applied to vector v_weight"):
        fill(mx, mx.init.Xavier(), "v_weight", (10,))


def test_orthogonal_constant_zero_one(mx):
    w = fill(mx, mx.init.Orthogonal(scale=2.0), "w_weight", (6, 4, 2))
    flat = w.reshape(6, 8)
    np.testing.assert_allclose(flat @ flat.T, 4.0 * np.eye(6), atol=1e-5)
    assert (fill(mx, mx.init.Constant(3.5), "w_weight", (2, 2)) == 3.5).all()
    assert (fill(mx, mx.init.Zero(), "w_weight", (2, 2)) == 0).all()
    assert (fill(mx, mx.init.One(), "w_weight", (2, 2)) == 1).all()
    assert mx.init.create("xavier", magnitude=2) == mx.init.Xavier(magnitude=2)
    assert isinstance(mx.init.create(mx.init.Normal(0.2).dumps()), mx.init.Normal)


def test_bilinear_matches_mxnet(mx):
    want = run_mxnet("import mxnet as mx\na = mx.nd.zeros((2, 1, 4, 5))\n"
                     "mx.init.Bilinear()(mx.init.InitDesc('up_weight'), a)\nprint(a.asnumpy().tolist())")
    np.testing.assert_array_equal(fill(mx, mx.init.Bilinear(), "up_weight", (2, 1, 4, 5)),
                                  np.array(eval(want.strip().splitlines()[-1]), np.float32))


def test_verbose_logs_each_array(mx, caplog):
    caplog.set_level(logging.INFO)
    fill(mx, mx.init.One().set_verbosity(True), "fc_weight", (4,))
    assert [r.getMessage() for r in caplog.records] == ["Initialized fc_weight as weight: 1.0"]


def test_mixed_and_load(mx, tmp_path):
    mixed = mx.init.Mixed(["fc1.*", ".*"], [mx.init.Constant(2.0), mx.init.Zero()])
    a, b = mx.nd.ones((2,)), mx.nd.ones((2,))
    mixed("fc1_weight", a)
    mixed("fc2_weight", b)
    assert (a.asnumpy() == 2).all() and (b.asnumpy() == 0).all()
    with pytest.raises(ValueError, match="Parameter name x did not match any pattern"):
        mx.init.Mixed(["fc.*"], [mx.init.Zero()])("x", a)

    fname = str(tmp_path / "p.params")
    mx.nd.save(fname, {"arg:fc_weight": mx.nd.full((2, 2), 7.0)})
    load = mx.init.Load(fname, default_init=mx.init.One())
    w, other, bias = mx.nd.zeros((2, 2)), mx.nd.zeros((2,)), mx.nd.full((2,), 5.0)
    load("fc_weight", w)
    load("fc2_weight", other)  # not in the file: the default initializer, by its name rules
    load("fc2_bias", bias)
    assert (w.asnumpy() == 7).all() and (other.asnumpy() == 1).all() and (bias.asnumpy() == 0).all()
    with pytest.raises(ValueError, match=r"fc_weight cannot be initialized from loading. Shape mismatch, target \(3,\)"):
        load("fc_weight", mx.nd.zeros((3,)))
    with pytest.raises(ValueError, match="Cannot Initialize other. Not found in loaded param"):
        mx.init.Load({"a": mx.nd.zeros((1,))})("other", mx.nd.zeros((1,)))


# ---- Metrics ----------------------------------------------------------------------------------------

# The metrics' inputs, made the same way here and in MXNet's process.
DATA_SRC = """
RNG = np.random.RandomState(3)
PROBS = [RNG.dirichlet(np.ones(5), size=8).astype(np.float32) for _ in range(3)]
LABELS = [RNG.randint(0, 5, size=8).astype(np.float32) for _ in range(3)]
BIN_PROBS = [RNG.dirichlet(np.ones(2), size=10).astype(np.float32) for _ in range(3)]
BIN_LABELS = [RNG.randint(0, 2, size=10).astype(np.float32) for _ in range(3)]
REG_PRED = [RNG.randn(6, 2).astype(np.float32) for _ in range(3)]
REG_LABEL = [RNG.randn(6, 2).astype(np.float32) for _ in range(3)]
DATA = {"cls": (LABELS, PROBS), "bin": (BIN_LABELS, BIN_PROBS), "reg": (REG_LABEL, REG_PRED)}
"""
exec(DATA_SRC)

METRICS = [("acc", {}, "cls"), ("top_k_accuracy", {"top_k": 3}, "cls"), ("ce", {}, "cls"),
           ("perplexity", {"ignore_label": None}, "cls"), ("perplexity", {"ignore_label": 2}, "cls"),
           ("f1", {}, "bin"), ("f1", {"average": "micro"}, "bin"), ("mae", {}, "reg"), ("mse", {}, "reg"),
           ("rmse", {}, "reg")]

MXNET_METRICS = '''
import json, sys, numpy as np, mxnet as mx
''' + DATA_SRC + '''
out = []
for name, kwargs, data in json.loads(sys.argv[1]):
    m = mx.metric.create(name, **kwargs)
    labels, preds = DATA[data]
    for l, p in zip(labels, preds):
        m.update([mx.nd.array(l)], [mx.nd.array(p)])
    out.append(m.get())
print(json.dumps(out))
'''


def test_metrics_match_mxnet(mx):
    want = json.loads(run_mxnet("import sys; sys.argv.append(%r)\n" % json.dumps(METRICS) + MXNET_METRICS)
                      .strip().splitlines()[-1])
    for (name, kwargs, which), (want_name, want_value) in zip(METRICS, want):
        m = mx.metric.create(name, **kwargs)
        for label, pred in zip(*DATA[which]):
            m.update([mx.nd.array(label)], [mx.nd.array(pred)])
        got_name, got_value = m.get()
        assert got_name == want_name
        assert got_value == pytest.approx(want_value, rel=1e-5), name


def test_metrics_against_numpy(mx):
    probs, labels = np.concatenate(PROBS), np.concatenate(LABELS).astype(int)
    acc = mx.metric.Accuracy()
    ce = mx.metric.CrossEntropy()
    for label, pred in zip(LABELS, PROBS):
        acc.update([mx.nd.array(label)], [mx.nd.array(pred)])
        ce.update([mx.nd.array(label)], [mx.nd.array(pred)])
    assert acc.get() == ("accuracy", pytest.approx((probs.argmax(1) == labels).mean()))
    assert ce.get()[1] == pytest.approx(-np.log(probs[np.arange(len(labels)), labels] + 1e-12).mean(), rel=1e-6)
    # Predicted classes with the label's shape are compared directly.
    acc.reset()
    acc.update([mx.nd.array([1, 2, 3])], [mx.nd.array([1, 0, 3])])
    assert acc.get()[1] == pytest.approx(2 / 3)


def test_local_and_global_and_composite(mx):
    acc = mx.metric.create("acc")
    acc.update([mx.nd.array([0, 1])], [mx.nd.array([[1, 0], [1, 0]])])
    acc.reset_local()
    assert math.isnan(acc.get()[1]) and acc.get_global()[1] == 0.5
    comp = mx.metric.create(["acc", "ce"])
    assert isinstance(comp, mx.metric.CompositeEvalMetric)
    comp.update([mx.nd.array([0, 1])], [mx.nd.array([[0.9, 0.1], [0.2, 0.8]])])
    names, values = comp.get()
    assert names == ["accuracy", "cross-entropy"]
    assert values == [1.0, pytest.approx(-(math.log(0.9) + math.log(0.8)) / 2, rel=1e-6)]
    assert comp.get_name_value() == list(zip(names, values))


def test_custom_metrics(mx):
    def mean_abs(label, pred):
        return np.abs(label - pred.argmax(1)).mean()
    m = mx.metric.create(mean_abs)
    assert m.name == "mean_abs"
    m.update([mx.nd.array([0, 1])], [mx.nd.array([[0, 1], [0, 1]])])
    assert m.get()[1] == 0.5
    p = mx.metric.np(lambda label, pred: (float((label == pred.argmax(1)).sum()), len(label)))
    assert p.name == "custom(<lambda>)"
    p.update([mx.nd.array([0, 1, 1])], [mx.nd.array([[1, 0], [0, 1], [1, 0]])])
    assert p.get()[1] == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="Shape of labels 2 does not match shape of predictions 1"):
        mx.metric.Accuracy().update([mx.nd.zeros((1,))] * 2, [mx.nd.zeros((1, 2))])
    with pytest.raises(ValueError, match="Metric must be either callable or in mx.metric: nope"):
        mx.metric.create("nope")


# ---- Callbacks and checkpoints ------------------------------------------------------------------------

def test_speedometer_lines(mx, caplog):
    metric = mx.metric.Accuracy()
    speed = mx.callback.Speedometer(batch_size=4, frequent=2)
    caplog.set_level(logging.INFO)
    for nbatch in range(5):
        metric.update([mx.nd.array([0, 1, 1, 0])], [mx.nd.array([0, 1, 0, 0])])
        speed(mx.model.BatchEndParam(epoch=1, nbatch=nbatch, eval_metric=metric, locals=None))
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2
    for line, (lo, hi) in zip(lines, [(0, 2), (2, 4)]):
        head, speed_text, acc = line.split("\t")
        assert head == "Epoch[1] Batch [%d-%d]" % (lo, hi)
        assert speed_text.startswith("Speed: ") and speed_text.endswith(" samples/sec")
        assert acc == "accuracy=0.750000"


def test_checkpoint_round_trip_and_callback(mx, tmp_path):
    data = mx.sym.Variable("data")
    net = mx.sym.BatchNorm(mx.sym.FullyConnected(data, num_hidden=3, name="fc"), name="bn")
    args = {"fc_weight": mx.nd.array(RNG.randn(3, 4)), "fc_bias": mx.nd.array(RNG.randn(3)),
            "bn_gamma": mx.nd.ones((3,)), "bn_beta": mx.nd.zeros((3,))}
    auxs = {"bn_moving_mean": mx.nd.array(RNG.randn(3)), "bn_moving_var": mx.nd.ones((3,))}
    prefix = str(tmp_path / "net")
    mx.callback.do_checkpoint(prefix, period=2)(1, net, args, auxs)  # epoch index 1: saves 0002
    mx.callback.do_checkpoint(prefix, period=2)(2, net, args, auxs)  # epoch index 2: nothing
    assert sorted(p.name for p in tmp_path.iterdir()) == ["net-0002.params", "net-symbol.json"]
    sym, arg2, aux2 = mx.model.load_checkpoint(prefix, 2)
    assert sym.tojson() == net.tojson()
    assert set(arg2) == set(args) and set(aux2) == set(auxs)
    for k in args:
        np.testing.assert_array_equal(arg2[k].asnumpy(), args[k].asnumpy())
    for k in auxs:
        np.testing.assert_array_equal(aux2[k].asnumpy(), auxs[k].asnumpy())


MXNET_CHECKPOINT = '''
import sys, numpy as np, mxnet as mx
prefix, mode = sys.argv[1], sys.argv[2]
if mode == "write":
    data = mx.sym.Variable("data")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=3, name="fc"), name="softmax")
    rng = np.random.RandomState(5)
    args = {"fc_weight": mx.nd.array(rng.randn(3, 4)), "fc_bias": mx.nd.array(rng.randn(3))}
    mx.model.save_checkpoint(prefix, 1, net, args, {})
else:
    sym, args, auxs = mx.model.load_checkpoint(prefix, 7)
    ex = sym.simple_bind(mx.cpu(), data=(2, 4))
    ex.copy_params_from(args, auxs)
    print(repr(ex.forward(data=mx.nd.ones((2, 4)))[0].asnumpy().tolist()))
'''


def test_checkpoints_cross_with_mxnet(mx, tmp_path):
    """A checkpoint MXNet 1.9.1 wrote loads and predicts the same here, and the reverse."""
    theirs, ours = str(tmp_path / "theirs"), str(tmp_path / "ours")
    run_mxnet("import sys; sys.argv[1:] = [%r, 'write']\n" % theirs + MXNET_CHECKPOINT)
    sym, args, auxs = mx.model.load_checkpoint(theirs, 1)
    x = np.ones((2, 4), np.float32)
    w, b = args["fc_weight"].asnumpy(), args["fc_bias"].asnumpy()
    logits = x @ w.T + b
    want = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    ex = sym.simple_bind(mx.cpu(), data=(2, 4))
    ex.copy_params_from(args, auxs)
    np.testing.assert_allclose(ex.forward(data=mx.nd.array(x))[0].asnumpy(), want, rtol=1e-6)
    mx.model.save_checkpoint(ours, 7, sym, args, auxs)
    printed = run_mxnet("import sys; sys.argv[1:] = [%r, 'read']\n" % ours + MXNET_CHECKPOINT)
    np.testing.assert_allclose(np.array(eval(printed.strip().splitlines()[-1])), want, rtol=1e-6)
