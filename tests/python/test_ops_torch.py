"""Operators against PyTorch (Debian's python3-torch): forward values, and backward through the
op's own gradient against torch.autograd, in float64."""
import numpy as np
import pytest

import torch  # Debian's python3-torch, installed by tools/install-deps.sh
torch.set_num_threads(2)
rng = np.random.default_rng(5)


def ours(mx, op, arrays, **kwargs):
    """Forward (training mode) and the gradients of every argument for output gradient og."""
    inputs = [mx.nd.array(a, dtype="float64") for a in arrays]
    outputs = mx._core.invoke_train(op, inputs, kwargs)
    og = rng.standard_normal(outputs[0].shape)
    grads = mx._core.invoke_backward(op, kwargs, inputs, outputs, [mx.nd.array(og, dtype="float64")])
    return outputs[0].asnumpy(), [g.asnumpy() for g in grads], og


def theirs(fn, arrays, og, grad_of=None):
    ts = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    out = fn(*ts)
    out.backward(torch.tensor(og))
    return out.detach().numpy(), [t.grad.numpy() if t.grad is not None else None for t in ts]


CASES = [
    ("Activation", dict(act_type="relu"), [(3, 4)], lambda x: torch.relu(x)),
    ("Activation", dict(act_type="sigmoid"), [(3, 4)], lambda x: torch.sigmoid(x)),
    ("Activation", dict(act_type="tanh"), [(3, 4)], lambda x: torch.tanh(x)),
    ("Activation", dict(act_type="softrelu"), [(3, 4)], lambda x: torch.nn.functional.softplus(x)),
    ("Activation", dict(act_type="softsign"), [(3, 4)], lambda x: torch.nn.functional.softsign(x)),
    ("LeakyReLU", dict(act_type="leaky", slope=0.1), [(3, 4)], lambda x: torch.nn.functional.leaky_relu(x, 0.1)),
    ("LeakyReLU", dict(act_type="elu", slope=0.7), [(3, 4)], lambda x: torch.nn.functional.elu(x, 0.7)),
    ("LeakyReLU", dict(act_type="selu"), [(3, 4)], lambda x: torch.selu(x)),
    ("LeakyReLU", dict(act_type="gelu"), [(3, 4)], lambda x: torch.nn.functional.gelu(x)),
    ("LeakyReLU", dict(act_type="prelu"), [(2, 3, 4), (3,)],
     lambda x, g: torch.nn.functional.prelu(x, g)),
    ("softmax", dict(axis=1), [(2, 5, 3)], lambda x: torch.softmax(x, 1)),
    ("log_softmax", dict(), [(4, 6)], lambda x: torch.log_softmax(x, -1)),
    ("softmax", dict(temperature=3.0), [(4, 6)], lambda x: torch.softmax(x / 3.0, -1)),
    ("FullyConnected", dict(num_hidden=5), [(4, 3, 2), (5, 6), (5,)],
     lambda x, w, b: torch.nn.functional.linear(x.reshape(4, -1), w, b)),
    ("FullyConnected", dict(num_hidden=5, flatten=False), [(4, 3, 2), (5, 2), (5,)],
     lambda x, w, b: torch.nn.functional.linear(x, w, b)),
    ("dot", dict(transpose_b=True), [(3, 4), (5, 4)], lambda a, b: a @ b.T),
    ("batch_dot", dict(transpose_a=True), [(2, 4, 3), (2, 4, 5)], lambda a, b: a.transpose(1, 2) @ b),
    ("broadcast_mul", dict(), [(3, 1, 4), (2, 4)], lambda a, b: a * b),
    ("broadcast_div", dict(), [(3, 4), (4,)], lambda a, b: a / b),
    ("sum", dict(axis=(0, 2), keepdims=True), [(3, 4, 2)], lambda x: x.sum(dim=(0, 2), keepdim=True)),
    ("mean", dict(axis=1), [(3, 4, 2)], lambda x: x.mean(dim=1)),
    ("max", dict(axis=0), [(3, 4)], lambda x: x.max(dim=0).values),
    ("norm", dict(axis=1), [(3, 4)], lambda x: torch.linalg.norm(x, dim=1)),
    ("transpose", dict(axes=(1, 2, 0)), [(2, 3, 4)], lambda x: x.permute(1, 2, 0)),
    ("Concat", dict(num_args=2, dim=0), [(2, 3), (1, 3)], lambda a, b: torch.cat([a, b], 0)),
    ("tile", dict(reps=(2, 3)), [(2, 2)], lambda x: x.repeat(2, 3)),
    ("exp", dict(), [(3, 4)], torch.exp),
    ("tanh", dict(), [(3, 4)], torch.tanh),
    ("erf", dict(), [(3, 4)], torch.erf),
    ("clip", dict(a_min=-0.5, a_max=0.5), [(3, 4)], lambda x: torch.clamp(x, -0.5, 0.5)),
]


@pytest.mark.parametrize("op,kwargs,shapes,fn", CASES, ids=[c[0] + str(i) for i, c in enumerate(CASES)])
def test_forward_and_backward_match_torch(mx, op, kwargs, shapes, fn):
    arrays = [rng.standard_normal(s) for s in shapes]
    out, grads, og = ours(mx, op, arrays, **kwargs)
    ref_out, ref_grads = theirs(fn, arrays, og)
    # float64 throughout, but float parameters (slope, a_min) are float32 in MXNet's schema too.
    tol = 1e-7 if any(isinstance(v, float) for v in kwargs.values()) else 1e-10
    np.testing.assert_allclose(out, ref_out, rtol=tol, atol=1e-10)
    for i, (g, r) in enumerate(zip(grads, ref_grads)):
        np.testing.assert_allclose(g, r, rtol=tol, atol=1e-9, err_msg="gradient of input %d" % i)


def test_softmax_output_gradient_is_cross_entropy(mx):
    x = rng.standard_normal((4, 5))
    label = np.array([1, 0, 4, 2], dtype=np.float64)
    inputs = [mx.nd.array(x, dtype="float64"), mx.nd.array(label, dtype="float64")]
    outputs = mx._core.invoke_train("SoftmaxOutput", inputs, {"normalization": "batch"})
    grads = mx._core.invoke_backward("SoftmaxOutput", {"normalization": "batch"}, inputs, outputs, [])
    t = torch.tensor(x, requires_grad=True)
    torch.nn.functional.cross_entropy(t, torch.tensor(label, dtype=torch.long)).backward()
    np.testing.assert_allclose(grads[0].asnumpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(outputs[0].asnumpy(), torch.softmax(torch.tensor(x), 1).numpy(), rtol=1e-12)


def test_embedding_matches_torch(mx):
    w = rng.standard_normal((6, 3))
    idx = np.array([[1, 5], [0, 1]], dtype=np.float64)
    inputs = [mx.nd.array(idx, dtype="float64"), mx.nd.array(w, dtype="float64")]
    kw = {"input_dim": 6, "output_dim": 3}
    outputs = mx._core.invoke_train("Embedding", inputs, kw)
    og = rng.standard_normal((2, 2, 3))
    grads = mx._core.invoke_backward("Embedding", kw, inputs, outputs, [mx.nd.array(og, dtype="float64")])
    tw = torch.tensor(w, requires_grad=True)
    out = torch.nn.functional.embedding(torch.tensor(idx, dtype=torch.long), tw)
    out.backward(torch.tensor(og))
    np.testing.assert_allclose(outputs[0].asnumpy(), out.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(grads[1].asnumpy(), tw.grad.numpy(), rtol=1e-12)


def test_dropout_in_training_and_prediction(mx):
    x = mx.nd.ones((200, 100))
    assert (mx.nd.Dropout(x, p=0.3).asnumpy() == 1).all()  # prediction: identity
    mx.random.seed(4)
    out, mask = mx._core.invoke_train("Dropout", [x], {"p": 0.3})
    o = out.asnumpy()
    kept = o != 0
    assert abs(kept.mean() - 0.7) < 0.01
    np.testing.assert_allclose(o[kept], 1 / 0.7, rtol=1e-6)
    g = mx._core.invoke_backward("Dropout", {"p": 0.3}, [x], [out, mask], [mx.nd.ones((200, 100))])[0]
    np.testing.assert_allclose(g.asnumpy(), o, rtol=1e-6)  # the gradient passes where the mask does
    always = mx.nd.Dropout(x, p=0.5, mode="always").asnumpy()
    assert abs((always == 0).mean() - 0.5) < 0.02
    shared = mx.nd.Dropout(x, p=0.5, mode="always", axes=(0,)).asnumpy()
    assert (shared == shared[:1]).all()  # one mask shared along axis 0
