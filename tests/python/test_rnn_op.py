"""The fused RNN operator (mx.sym.RNN / mx.nd.RNN): the same graphs under MXNet 1.9.1 and under
mxplug give the same outputs, final states and gradients of data, parameters and initial states,
for every mode, stacked and bidirectional; what MXNet's CPU lacks (sequence lengths, LSTM state
clipping) is checked against running each sequence alone, a NumPy LSTM and finite differences."""
import numpy as np
import pytest

from parity import assert_parity

PRE = """
rs = np.random.RandomState(7)
def run(sym, shapes, train=True):
    ex = sym.simple_bind(mx.cpu(), **shapes)
    for name in sorted(ex.arg_dict):
        ex.arg_dict[name][:] = rs.uniform(-0.6, 0.6, ex.arg_dict[name].shape)
    ex.forward(is_train=train)
    outs = [o.copy() for o in ex.outputs]
    if not train:
        return outs
    ex.backward([mx.nd.array(rs.uniform(-1, 1, o.shape)) for o in ex.outputs])
    return outs, {k: v for k, v in sorted(ex.grad_dict.items())}
def rnn(mode, layers=1, bidirectional=False, state_outputs=True, H=4, **kw):
    args = [mx.sym.var('data'), mx.sym.var('w'), mx.sym.var('h0')]
    if mode == 'lstm':
        args.append(mx.sym.var('c0'))
    return mx.sym.RNN(*args, state_size=H, num_layers=layers, mode=mode, bidirectional=bidirectional,
                      state_outputs=state_outputs, name='rnn', **kw)
"""


def cases(**snippets):
    return {name: PRE + code for name, code in snippets.items()}


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
def test_fused_rnn_matches_mxnet(mode):
    one = "s = rnn(%r, %s)\nr = (s.list_arguments(), s.list_outputs(), s.infer_shape(data=(5, 3, 6)), run(s, {'data': (5, 3, 6)}))"
    assert_parity(cases(
        single=one % (mode, "1"),
        stacked=one % (mode, "2"),
        bidirectional=one % (mode, "1, True"),
        stacked_bidirectional=one % (mode, "3, True"),
        no_state_outputs=one % (mode, "2, True, False"),
        inference=one.replace("run(s, {'data': (5, 3, 6)})", "run(s, {'data': (5, 3, 6)}, train=False)") % (mode, "2, True"),
        imperative="T, N, I, H = 4, 2, 3, 5\n"
                   "G = {'lstm': 4, 'gru': 3}.get(%r, 1)\n"
                   "x = mx.nd.array(rs.uniform(-1, 1, (T, N, I)))\n"
                   "w = mx.nd.array(rs.uniform(-0.5, 0.5, (G * H * (I + H) + 2 * G * H,)))\n"
                   "st = [mx.nd.array(rs.uniform(-1, 1, (1, N, H))) for _ in range(2 if %r == 'lstm' else 1)]\n"
                   "a = mx.nd.RNN(x, w, *st, state_size=H, num_layers=1, mode=%r)\n"
                   "b = mx.nd.RNN(x, w, *st, state_size=H, num_layers=1, mode=%r, state_outputs=True)\n"
                   "r = (a, b)" % (mode, mode, mode, mode),
    ), rtol=1e-4)


GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def _args(mx, rs, mode, T, N, I, H, layers, dirs, dtype="float64"):
    size = 0
    for l in range(layers):
        ni = I if l == 0 else H * dirs
        size += dirs * GATES[mode] * H * (ni + H + 2)
    x = mx.nd.array(rs.uniform(-1, 1, (T, N, I)), dtype=dtype)
    w = mx.nd.array(rs.uniform(-0.5, 0.5, (size,)), dtype=dtype)
    states = [mx.nd.array(rs.uniform(-1, 1, (layers * dirs, N, H)), dtype=dtype)
              for _ in range(2 if mode == "lstm" else 1)]
    return x, w, states


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh"])
def test_sequence_lengths_give_each_sequence_alone(mx, mode):
    # cuDNN's semantics (MXNet's CPU ignores the lengths): each sequence runs its own steps, the
    # reverse direction from its own end; its outputs past the end are zero and its final state is
    # the state at its end. So the batch must give what each sequence gives run alone.
    rs = np.random.RandomState(3)
    T, N, I, H, layers = 5, 3, 4, 3, 2
    lengths = [5, 2, 3]
    x, w, states = _args(mx, rs, mode, T, N, I, H, layers, 2)
    kw = dict(state_size=H, num_layers=layers, mode=mode, bidirectional=True, state_outputs=True)
    heads = None

    def run(x, w, states, seq=None):
        for a in [x, w] + states:
            a.attach_grad()
        with mx.autograd.record():
            if seq is None:
                out = mx.nd.RNN(x, w, *states, **kw)
            else:
                out = mx.nd.RNN(x, w, *states, seq, use_sequence_length=True, **kw)
        grads = [mx.nd.array(rs.uniform(-1, 1, o.shape), dtype="float64") for o in out] if seq is not None else None
        return out, grads

    out, heads = run(x, w, states, mx.nd.array(lengths, dtype="int32"))
    mx.autograd.backward(out, heads)
    dx, dw, dstates = x.grad.asnumpy(), w.grad.asnumpy(), [s.grad.asnumpy() for s in states]
    dw_alone = np.zeros_like(dw)
    for n, length in enumerate(lengths):
        xn = mx.nd.array(x.asnumpy()[:length, n:n + 1], dtype="float64")
        wn = mx.nd.array(w.asnumpy(), dtype="float64")
        sn = [mx.nd.array(s.asnumpy()[:, n:n + 1], dtype="float64") for s in states]
        alone, _ = run(xn, wn, sn)
        mx.autograd.backward(alone, [mx.nd.array(heads[0].asnumpy()[:length, n:n + 1], dtype="float64")] +
                             [mx.nd.array(h.asnumpy()[:, n:n + 1], dtype="float64") for h in heads[1:]])
        np.testing.assert_allclose(out[0].asnumpy()[:length, n], alone[0].asnumpy()[:, 0], rtol=1e-10, atol=1e-12)
        assert not out[0].asnumpy()[length:, n].any()
        for o, a in zip(out[1:], alone[1:]):
            np.testing.assert_allclose(o.asnumpy()[:, n], a.asnumpy()[:, 0], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(dx[:length, n], xn.grad.asnumpy()[:, 0], rtol=1e-10, atol=1e-12)
        assert not dx[length:, n].any()
        for d, s in zip(dstates, sn):
            np.testing.assert_allclose(d[:, n], s.grad.asnumpy()[:, 0], rtol=1e-10, atol=1e-12)
        dw_alone += wn.grad.asnumpy()
    np.testing.assert_allclose(dw, dw_alone, rtol=1e-9, atol=1e-12)


def _joined(mx, outputs):
    """One output of every output's elements, for check_numeric_gradient."""
    return mx.sym.concat(*[outputs[i].reshape(-1) for i in range(len(outputs))], dim=0)


def _numpy_lstm(x, w, h, c, H, lo, hi):
    T, N, I = x.shape
    wi = w[:4 * H * I].reshape(4 * H, I)
    wh = w[4 * H * I:4 * H * (I + H)].reshape(4 * H, H)
    bi = w[4 * H * (I + H):4 * H * (I + H + 1)]
    bh = w[4 * H * (I + H + 1):]
    sig = lambda v: 1 / (1 + np.exp(-v))
    ys = []
    for t in range(T):
        g = x[t] @ wi.T + bi + h @ wh.T + bh
        i, f, gg, o = sig(g[:, :H]), sig(g[:, H:2 * H]), np.tanh(g[:, 2 * H:3 * H]), sig(g[:, 3 * H:])
        c = np.clip(f * c + i * gg, lo, hi)
        h = o * np.tanh(c)
        ys.append(h)
    return np.stack(ys), h, c


def test_lstm_state_clipping_matches_numpy_and_finite_differences(mx):
    rs = np.random.RandomState(5)
    T, N, I, H = 6, 2, 3, 4
    x, w, (h0, c0) = _args(mx, rs, "lstm", T, N, I, H, 1, 1)
    w = w * 4  # large weights drive the cells past the clip
    kw = dict(state_size=H, num_layers=1, mode="lstm", state_outputs=True,
              lstm_state_clip_min=-0.6, lstm_state_clip_max=0.7)
    y, hy, cy = mx.nd.RNN(x, w, h0, c0, **kw)
    ey, eh, ec = _numpy_lstm(x.asnumpy(), w.asnumpy(), h0.asnumpy()[0], c0.asnumpy()[0], H, -0.6, 0.7)
    unclipped = _numpy_lstm(x.asnumpy(), w.asnumpy(), h0.asnumpy()[0], c0.asnumpy()[0], H, -np.inf, np.inf)
    assert np.abs(unclipped[2]).max() > 0.7  # the clip matters here
    np.testing.assert_allclose(y.asnumpy(), ey, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(cy.asnumpy()[0], ec, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(hy.asnumpy()[0], eh, rtol=1e-12, atol=1e-12)
    sym = _joined(mx, mx.sym.RNN(mx.sym.var("x"), mx.sym.var("w"), mx.sym.var("h"), mx.sym.var("c"), **kw))
    mx.test_utils.check_numeric_gradient(
        sym, {"x": x.asnumpy(), "w": w.asnumpy(), "h": h0.asnumpy(), "c": c0.asnumpy()},
        numeric_eps=1e-6, rtol=1e-5, atol=1e-7, dtype=np.float64)


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_relu"])
def test_gradients_match_finite_differences_with_sequence_lengths(mx, mode):
    rs = np.random.RandomState(11)
    T, N, I, H = 4, 3, 2, 3
    x, w, states = _args(mx, rs, mode, T, N, I, H, 2, 2)
    names = ["x", "w", "h"] + (["c"] if mode == "lstm" else [])
    sym = _joined(mx, mx.sym.RNN(*[mx.sym.var(n) for n in names], mx.sym.var("len"), state_size=H, num_layers=2,
                                 mode=mode, bidirectional=True, state_outputs=True, use_sequence_length=True))
    location = dict(zip(names, [a.asnumpy() for a in [x, w] + states]))
    location["len"] = np.array([4, 1, 3], dtype=np.float64)
    mx.test_utils.check_numeric_gradient(sym, location, grad_nodes=names, numeric_eps=1e-6, rtol=1e-5,
                                         atol=1e-7, dtype=np.float64)


def test_dropout_between_layers_only_in_training(mx):
    rs = np.random.RandomState(2)
    x, w, states = _args(mx, rs, "gru", 5, 4, 3, 6, 3, 1, dtype="float32")
    kw = dict(state_size=6, num_layers=3, mode="gru", state_outputs=True)
    plain = mx.nd.RNN(x, w, *states, **kw)[0].asnumpy()
    # Not training: dropout does nothing.
    np.testing.assert_array_equal(mx.nd.RNN(x, w, *states, p=0.5, **kw)[0].asnumpy(), plain)
    runs = []
    for seed in (1, 1, 2):
        mx.random.seed(seed)
        with mx.autograd.train_mode():
            runs.append(mx.nd.RNN(x, w, *states, p=0.5, **kw)[0].asnumpy())
    np.testing.assert_array_equal(runs[0], runs[1])  # the device's seeded stream
    assert np.abs(runs[0] - plain).max() > 1e-3 and np.abs(runs[0] - runs[2]).max() > 1e-3
    # One layer has nothing between layers to drop.
    one = dict(kw, num_layers=1)
    x1, w1, s1 = _args(mx, rs, "gru", 5, 4, 3, 6, 1, 1, dtype="float32")
    with mx.autograd.train_mode():
        np.testing.assert_array_equal(mx.nd.RNN(x1, w1, *s1, p=0.5, **one)[0].asnumpy(),
                                      mx.nd.RNN(x1, w1, *s1, **one)[0].asnumpy())


def test_bad_arguments_say_what_is_wrong(mx):
    x = mx.nd.ones((3, 2, 4))
    with pytest.raises(mx.base.MXNetError, match="parameters has shape \\(7,\\), expected \\(160,\\)"):
        mx.nd.RNN(x, mx.nd.ones((7,)), mx.nd.zeros((1, 2, 4)), mx.nd.zeros((1, 2, 4)), state_size=4,
                  num_layers=1, mode="lstm")
    with pytest.raises(mx.base.MXNetError, match="state has shape \\(2, 2, 4\\), expected \\(1, 2, 4\\)"):
        mx.nd.RNN(x, mx.nd.ones((40,)), mx.nd.zeros((2, 2, 4)), state_size=4, num_layers=1, mode="rnn_tanh")
    with pytest.raises(mx.base.MXNetError, match="projection_size is not supported"):
        mx.sym.RNN(mx.sym.var("x"), state_size=4, num_layers=1, mode="lstm", projection_size=2)
    with pytest.raises(mx.base.MXNetError, match="mode"):
        mx.sym.RNN(mx.sym.var("x"), state_size=4, num_layers=1, mode="lstmx")
