"""Operators against PyTorch (Debian's python3-torch): forward values, and backward through the
op's own gradient against torch.autograd, in float64."""
import numpy as np
import pytest

import torch  # Debian's python3-torch, installed by tools/install-deps.sh
torch.set_num_threads(2)
F = torch.nn.functional
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
    ("tile", dict(reps=(3,)), [(2, 2, 2)], lambda x: x.repeat(1, 1, 3)),
    ("tile", dict(reps=(2, 1, 3, 2)), [(3, 1, 2)], lambda x: x.repeat(2, 1, 3, 2)),
    ("repeat", dict(repeats=3, axis=1), [(2, 3, 2)], lambda x: x.repeat_interleave(3, 1)),
    ("repeat", dict(repeats=2), [(2, 3)], lambda x: x.reshape(-1).repeat_interleave(2)),
    ("Concat", dict(num_args=3, dim=1), [(2, 1, 3), (2, 4, 3), (2, 2, 3)], lambda a, b, c: torch.cat([a, b, c], 1)),
    ("stack", dict(num_args=2, axis=1), [(2, 3), (2, 3)], lambda a, b: torch.stack([a, b], 1)),
    ("stack", dict(num_args=3, axis=-1), [(4,), (4,), (4,)], lambda a, b, c: torch.stack([a, b, c], -1)),
    ("add_n", dict(num_args=3), [(3, 4)] * 3, lambda a, b, c: a + b + c),
    ("slice_axis", dict(axis=1, begin=-3, end=-1), [(2, 5, 3)], lambda x: x[:, 2:4]),
    ("flip", dict(axis=(0, 2)), [(2, 3, 4)], lambda x: torch.flip(x, (0, 2))),
    ("squeeze", dict(axis=(1,)), [(3, 1, 2, 1)], lambda x: x.squeeze(1)),
    ("exp", dict(), [(3, 4)], torch.exp),
    ("tanh", dict(), [(3, 4)], torch.tanh),
    ("erf", dict(), [(3, 4)], torch.erf),
    ("clip", dict(a_min=-0.5, a_max=0.5), [(3, 4)], lambda x: torch.clamp(x, -0.5, 0.5)),
    ("Convolution", dict(kernel=(3, 3), num_filter=4, pad=(1, 1)), [(2, 3, 5, 6), (4, 3, 3, 3), (4,)],
     lambda x, w, b: F.conv2d(x, w, b, padding=1)),
    ("Convolution", dict(kernel=(3, 2), num_filter=4, stride=(2, 1), dilate=(1, 2), pad=(1, 0), num_group=2),
     [(2, 4, 7, 6), (4, 2, 3, 2), (4,)],
     lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), dilation=(1, 2), padding=(1, 0), groups=2)),
    ("Convolution", dict(kernel=(3,), num_filter=2, no_bias=True), [(2, 3, 8), (2, 3, 3)], lambda x, w: F.conv1d(x, w)),
    ("Convolution", dict(kernel=(1, 1), num_filter=5), [(2, 3, 4, 4), (5, 3, 1, 1), (5,)], lambda x, w, b: F.conv2d(x, w, b)),
    ("Convolution", dict(kernel=(2, 2, 2), num_filter=2, pad=(1, 0, 1)), [(1, 2, 3, 4, 3), (2, 2, 2, 2, 2), (2,)],
     lambda x, w, b: F.conv3d(x, w, b, padding=(1, 0, 1))),
    ("Deconvolution", dict(kernel=(3, 3), num_filter=4, stride=(2, 2), pad=(1, 1), adj=(1, 0), no_bias=False),
     [(2, 3, 4, 5), (3, 4, 3, 3), (4,)],
     lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=(1, 0))),
    ("Deconvolution", dict(kernel=(3,), num_filter=4, num_group=2, dilate=(2,)), [(2, 4, 5), (4, 2, 3)],
     lambda x, w: F.conv_transpose1d(x, w, groups=2, dilation=2)),
    ("Pooling", dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1)), [(2, 3, 7, 6)], lambda x: F.max_pool2d(x, 3, 2, 1)),
    ("Pooling", dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg"), [(2, 3, 7, 6)],
     lambda x: F.avg_pool2d(x, 3, 2, 1)),
    ("Pooling", dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg", count_include_pad=False),
     [(2, 3, 7, 6)], lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False)),
    ("Pooling", dict(kernel=(3, 3), stride=(2, 2), pooling_convention="full"), [(2, 3, 8, 8)],
     lambda x: F.max_pool2d(x, 3, 2, ceil_mode=True)),
    ("Pooling", dict(kernel=(2,), pool_type="sum"), [(2, 3, 8)], lambda x: F.avg_pool1d(x, 2, 1) * 2),
    ("Pooling", dict(global_pool=True, pool_type="avg"), [(2, 3, 5, 4)], lambda x: x.mean(dim=(2, 3), keepdim=True)),
    ("Pooling", dict(kernel=(2, 2), pool_type="lp", p_value=2, stride=(2, 2)), [(2, 3, 6, 4)],
     lambda x: F.lp_pool2d(x, 2, 2)),
    ("Pooling", dict(kernel=(2, 2, 2), stride=(2, 2, 2)), [(1, 2, 4, 4, 4)], lambda x: F.max_pool3d(x, 2)),
    # Max pooling's 2-d backward has unrolled loops for 2x2 and 3x3 windows inside the image.
    ("Pooling", dict(kernel=(2, 2), stride=(2, 2)), [(2, 3, 6, 8)], lambda x: F.max_pool2d(x, 2, 2)),
    ("Pooling", dict(kernel=(3, 3)), [(2, 2, 5, 6)], lambda x: F.max_pool2d(x, 3, 1)),
    ("Pooling", dict(kernel=(2, 3), stride=(1, 2)), [(1, 2, 5, 7)], lambda x: F.max_pool2d(x, (2, 3), (1, 2))),
    ("Pooling", dict(global_pool=True), [(2, 3, 4, 5)], lambda x: F.adaptive_max_pool2d(x, 1)),
    ("LRN", dict(nsize=3, alpha=0.001, beta=0.75, knorm=2), [(2, 5, 3, 3)],
     lambda x: F.local_response_norm(x, 3, 0.001, 0.75, 2)),
    ("UpSampling", dict(scale=2, sample_type="nearest", num_args=1), [(2, 3, 3, 4)],
     lambda x: F.interpolate(x, scale_factor=2, mode="nearest")),
    ("UpSampling", dict(scale=2, sample_type="nearest", num_args=2), [(2, 3, 4, 4), (2, 2, 2, 2)],
     lambda a, b: torch.cat([F.interpolate(a, scale_factor=2), F.interpolate(b, scale_factor=4)], 1)),
    ("UpSampling", dict(scale=2, sample_type="nearest", num_args=2, multi_input_mode="sum"),
     [(2, 3, 4, 4), (2, 3, 2, 2)], lambda a, b: F.interpolate(a, scale_factor=2) + F.interpolate(b, scale_factor=4)),
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


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kwargs,fn", [
    (dict(kernel=(2, 2), stride=(2, 2)), lambda x: F.max_pool2d(x, 2, 2)),
    (dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1)), lambda x: F.max_pool2d(x, 3, 2, 1)),
    (dict(kernel=(3, 3), stride=(1, 1)), lambda x: F.max_pool2d(x, 3, 1)),
])
def test_max_pooling_gradient_goes_to_the_first_maximum_of_a_window(mx, dtype, kwargs, fn):
    # Few distinct values, so most windows hold their maximum more than once: MXNet and PyTorch
    # give the gradient to the first in row-major order.
    x = rng.integers(0, 3, (2, 3, 7, 8)).astype(dtype)
    inputs = [mx.nd.array(x, dtype=dtype)]
    outputs = mx._core.invoke_train("Pooling", inputs, kwargs)
    og = rng.standard_normal(outputs[0].shape).astype(dtype)
    grad = mx._core.invoke_backward("Pooling", kwargs, inputs, outputs, [mx.nd.array(og, dtype=dtype)])[0]
    ref_out, (ref_grad,) = theirs(fn, [x.astype(np.float64)], og.astype(np.float64))
    np.testing.assert_array_equal(outputs[0].asnumpy(), ref_out)
    # Overlapping windows sum several float32 gradients: an ulp of the sum, against float64.
    np.testing.assert_allclose(grad.asnumpy(), ref_grad, rtol=1e-6,
                               atol=1e-6 if dtype == "float32" else 0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kwargs,fn", [
    (dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1)), lambda x: F.max_pool2d(x, 3, 2, 1)),
    (dict(kernel=(2, 3), stride=(1, 2), pad=(1, 1)), lambda x: F.max_pool2d(x, (2, 3), (1, 2), 1)),
    (dict(kernel=(3, 3), stride=(2, 2), pooling_convention="full"), lambda x: F.max_pool2d(x, 3, 2, ceil_mode=True)),
    (dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg"), lambda x: F.avg_pool2d(x, 3, 2, 1)),
    (dict(kernel=(3, 2), stride=(2, 1), pad=(1, 1), pool_type="avg", count_include_pad=False),
     lambda x: F.avg_pool2d(x, (3, 2), (2, 1), 1, count_include_pad=False)),
    (dict(kernel=(3, 3), stride=(2, 2), pool_type="avg", pooling_convention="full"),
     lambda x: F.avg_pool2d(x, 3, 2, ceil_mode=True, count_include_pad=False)),
])
def test_large_2d_pooling_matches_torch(mx, dtype, kwargs, fn):
    # Planes enough for the CPU's OpenMP team (pooling.cc), odd sizes so that windows clip at
    # both ends; the gradient of max pooling goes to the first maximum (few distinct values).
    x = rng.integers(-40, 40, (3, 11, 45, 47)).astype(dtype) / 8
    inputs = [mx.nd.array(x, dtype=dtype)]
    outputs = mx._core.invoke_train("Pooling", inputs, kwargs)
    og = rng.standard_normal(outputs[0].shape).astype(dtype)
    grad = mx._core.invoke_backward("Pooling", kwargs, inputs, outputs, [mx.nd.array(og, dtype=dtype)])[0]
    ref_out, (ref_grad,) = theirs(fn, [x.astype(np.float64)], og.astype(np.float64))
    tol = 1e-6 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(outputs[0].asnumpy(), ref_out, rtol=tol, atol=tol)
    np.testing.assert_allclose(grad.asnumpy(), ref_grad, rtol=tol, atol=tol)


@pytest.mark.parametrize("kwargs,split", [
    (dict(num_outputs=3, axis=1), lambda x: torch.split(x, 2, 1)),
    (dict(num_outputs=4, axis=0, squeeze_axis=True), lambda x: [p.squeeze(0) for p in torch.split(x, 1, 0)]),
])
def test_split_outputs_and_gradient_match_torch(mx, kwargs, split):
    x = rng.standard_normal((4, 6, 2))
    inputs = [mx.nd.array(x, dtype="float64")]
    outputs = mx._core.invoke_train("split", inputs, kwargs)
    ogs = [rng.standard_normal(o.shape) for o in outputs]
    (grad,) = mx._core.invoke_backward("split", kwargs, inputs, outputs, [mx.nd.array(g, dtype="float64") for g in ogs])
    t = torch.tensor(x, requires_grad=True)
    pieces = split(t)
    torch.autograd.backward(pieces, [torch.tensor(g) for g in ogs])
    for got, want in zip(outputs, pieces):
        np.testing.assert_array_equal(got.asnumpy(), want.detach().numpy())
    np.testing.assert_array_equal(grad.asnumpy(), t.grad.numpy())


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


def numeric_gradients(mx, op, arrays, kwargs, og, eps=1e-6):
    """Central differences of sum(output 0 * og) in training mode, for every argument."""
    def loss(values):
        out = mx._core.invoke_train(op, [mx.nd.array(v, dtype="float64") for v in values], kwargs)[0]
        return float((out.asnumpy() * og).sum())
    grads = []
    for a in arrays:
        g = np.zeros_like(a)
        for i in np.ndindex(a.shape):
            keep = a[i]
            a[i] = keep + eps
            up = loss(arrays)
            a[i] = keep - eps
            down = loss(arrays)
            a[i] = keep
            g[i] = (up - down) / (2 * eps)
        grads.append(g)
    return grads


@pytest.mark.parametrize("axis,fix_gamma", [(1, False), (-1, False), (1, True)])
def test_batch_norm_training_matches_torch_and_finite_differences(mx, axis, fix_gamma):
    shape = (4, 3, 2, 5) if axis == 1 else (4, 2, 3)
    x, gamma, beta = rng.standard_normal(shape), rng.standard_normal(3), rng.standard_normal(3)
    mean0, var0 = rng.standard_normal(3), rng.random(3) + 0.5
    kw = dict(fix_gamma=fix_gamma, eps=1e-5, axis=axis, momentum=0.8)
    arrays = [x, gamma, beta, mean0, var0]
    inputs = [mx.nd.array(a, dtype="float64") for a in arrays]
    out, mean, invstd = mx._core.invoke_train("BatchNorm", inputs, kw)
    og = rng.standard_normal(shape)
    grads = mx._core.invoke_backward("BatchNorm", kw, inputs, [out, mean, invstd], [mx.nd.array(og, dtype="float64")])

    channels_last = np.moveaxis(x, axis, -1).reshape(-1, 3)
    tx, tg, tb = (torch.tensor(a, requires_grad=True) for a in (x, gamma, beta))
    moved = tx.movedim(axis, -1).reshape(-1, 3)
    ty = F.batch_norm(moved, None, None, torch.ones(3, dtype=torch.float64) if fix_gamma else tg, tb,
                      training=True, eps=1e-5)
    ty = ty.reshape(np.moveaxis(x, axis, -1).shape).movedim(-1, axis)
    ty.backward(torch.tensor(og))
    np.testing.assert_allclose(out.asnumpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grads[0].asnumpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(grads[1].asnumpy(), np.zeros(3) if fix_gamma else tg.grad.numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(grads[2].asnumpy(), tb.grad.numpy(), rtol=1e-9)
    numeric = numeric_gradients(mx, "BatchNorm", [x.copy(), gamma.copy(), beta.copy(), mean0, var0], kw, og)
    np.testing.assert_allclose(grads[0].asnumpy(), numeric[0], rtol=1e-5, atol=1e-7)
    if not fix_gamma:
        np.testing.assert_allclose(grads[1].asnumpy(), numeric[1], rtol=1e-5, atol=1e-7)

    # MXNet's outputs: the batch mean and 1 / sqrt(var + eps); the moving statistics move in
    # backward (biased batch variance; momentum is a float32 parameter, as in MXNet).
    batch_mean, batch_var = channels_last.mean(0), channels_last.var(0)
    np.testing.assert_allclose(mean.asnumpy(), batch_mean, rtol=1e-12)
    np.testing.assert_allclose(invstd.asnumpy(), 1 / np.sqrt(batch_var + 1e-5), rtol=1e-12)
    mom = float(np.float32(0.8))
    np.testing.assert_allclose(inputs[3].asnumpy(), mom * mean0 + (1 - mom) * batch_mean, rtol=1e-12)
    np.testing.assert_allclose(inputs[4].asnumpy(), mom * var0 + (1 - mom) * batch_var, rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw", [dict(fix_gamma=False), dict(fix_gamma=True, eps=1e-3)])
def test_large_batch_norm_training_matches_torch(mx, dtype, kw):
    # Channels enough for the CPU's OpenMP team (batch_norm.cc), and a mean 30x the spread, where
    # a one-pass variance or x * scale + shift in float32 loses digits.
    shape = (6, 8, 37, 41)
    x = 3.0 + 0.1 * rng.standard_normal(shape)
    gamma, beta = rng.standard_normal(8), rng.standard_normal(8)
    arrays = [x, gamma, beta, np.zeros(8), np.ones(8)]
    inputs = [mx.nd.array(a, dtype=dtype) for a in arrays]
    out, mean, invstd = mx._core.invoke_train("BatchNorm", inputs, kw)
    og = rng.standard_normal(shape)
    grads = mx._core.invoke_backward("BatchNorm", kw, inputs, [out, mean, invstd], [mx.nd.array(og, dtype=dtype)])
    xs = [a.asnumpy().astype(np.float64) for a in inputs[:3]]  # what the op saw
    tx, tg, tb = (torch.tensor(a, requires_grad=True) for a in xs)
    eps = kw.get("eps", 1e-3)
    ty = F.batch_norm(tx, None, None, torch.ones(8, dtype=torch.float64) if kw["fix_gamma"] else tg, tb,
                      training=True, eps=eps)
    ty.backward(torch.tensor(og.astype(dtype).astype(np.float64)))
    tol = dict(rtol=1e-5, atol=2e-5) if dtype == "float32" else dict(rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(out.asnumpy(), ty.detach().numpy(), **tol)
    np.testing.assert_allclose(mean.asnumpy(), xs[0].mean(axis=(0, 2, 3)), rtol=1e-6 if dtype == "float32" else 1e-12)
    np.testing.assert_allclose(invstd.asnumpy(), 1 / np.sqrt(xs[0].var(axis=(0, 2, 3)) + eps),
                               rtol=1e-5 if dtype == "float32" else 1e-10)
    np.testing.assert_allclose(grads[0].asnumpy(), tx.grad.numpy(), **tol)
    # gamma's gradient sums dy * (x - mean) * invstd with the statistics the forward saved,
    # rounded to float32 as MXNet's outputs are: against exact statistics that is off by about
    # invstd (10) * sum(dy) (~100) * 1e-7 of a mean of 3, so float32 is held to the saved ones.
    if kw["fix_gamma"]:
        want_gamma = np.zeros(8)
    elif dtype == "float32":
        m, k = mean.asnumpy().astype(np.float64), invstd.asnumpy().astype(np.float64)
        dy = og.astype(dtype).astype(np.float64)
        want_gamma = (dy * (xs[0] - m[None, :, None, None])).sum(axis=(0, 2, 3)) * k
    else:
        want_gamma = tg.grad.numpy()
    np.testing.assert_allclose(grads[1].asnumpy(), want_gamma, **tol)
    np.testing.assert_allclose(grads[2].asnumpy(), tb.grad.numpy(), rtol=1e-5 if dtype == "float32" else 1e-10)


def test_batch_norm_prediction_and_global_stats_use_moving_statistics(mx):
    x, gamma, beta = rng.standard_normal((3, 2, 4)), rng.standard_normal(2), rng.standard_normal(2)
    mean, var = rng.standard_normal(2), rng.random(2) + 0.5
    nd = [mx.nd.array(a, dtype="float64") for a in (x, gamma, beta, mean, var)]
    ref = (x - mean[:, None]) / np.sqrt(var[:, None] + 1e-3) * gamma[:, None] + beta[:, None]
    np.testing.assert_allclose(mx.nd.BatchNorm(*nd, fix_gamma=False).asnumpy(), ref, rtol=1e-12)
    out, m, s = mx.nd.BatchNorm(*nd, fix_gamma=False, output_mean_var=True)
    np.testing.assert_allclose(m.asnumpy(), mean)
    np.testing.assert_allclose(s.asnumpy(), 1 / np.sqrt(var + 1e-3), rtol=1e-12)
    kw = dict(fix_gamma=False, use_global_stats=True)
    outs = mx._core.invoke_train("BatchNorm", nd, kw)
    np.testing.assert_allclose(outs[0].asnumpy(), ref, rtol=1e-12)
    og = rng.standard_normal(x.shape)
    g = mx._core.invoke_backward("BatchNorm", kw, nd, outs, [mx.nd.array(og, dtype="float64")])
    np.testing.assert_allclose(g[0].asnumpy(), og * (gamma / np.sqrt(var + 1e-3))[:, None], rtol=1e-12)
    np.testing.assert_allclose(nd[3].asnumpy(), mean)  # global statistics stay put
    np.testing.assert_allclose(nd[4].asnumpy(), var)


@pytest.mark.parametrize("op,kwargs,shapes,message", [
    ("Convolution", dict(kernel=(3, 3), num_filter=2), [(1, 3, 2, 5), (2, 3, 3, 3), (2,)], "larger than the padded data"),
    ("Convolution", dict(kernel=(3, 3), num_filter=2), [(1, 3, 5), (2, 3, 3, 3), (2,)], "expected 4 axes"),
    ("Convolution", dict(kernel=(3, 3), num_filter=2), [(1, 3, 5, 5), (2, 2, 3, 3), (2,)], "weight has shape"),
    ("Convolution", dict(kernel=(3, 3), num_filter=3, num_group=2), [(1, 4, 5, 5)], "not a multiple of num_group"),
    ("Convolution", dict(kernel=(3, 3), num_filter=2, stride=(1, 1, 1)), [(1, 3, 5, 5), (2, 3, 3, 3), (2,)],
     "stride"),
    ("Convolution", dict(kernel=(3, 3), num_filter=2, layout="NHWC"), [(1, 5, 5, 3)], "layout NHWC"),
    ("Deconvolution", dict(kernel=(3,), num_filter=2, target_shape=(20,)), [(1, 3, 4), (3, 2, 3)], "target_shape"),
    ("Pooling", dict(kernel=(5, 5)), [(1, 2, 3, 3)], "larger than the padded data"),
    ("Pooling", dict(kernel=(2, 2), pool_type="lp"), [(1, 2, 3, 3)], "p_value"),
    ("LRN", dict(nsize=4), [(1, 5, 3, 3)], "must be odd"),
    ("BatchNorm", dict(), [(2, 3), (4,), (3,), (3,), (3,)], "gamma has shape"),
    ("UpSampling", dict(scale=2, sample_type="nearest", num_args=2), [(1, 2, 4, 4), (1, 2, 3, 3)], "arg1"),
    ("UpSampling", dict(scale=2, sample_type="bilinear", num_args=1), [(1, 2, 4, 4)], "bilinear"),
])
def test_nn_ops_reject_bad_input_naming_op_and_argument(mx, op, kwargs, shapes, message):
    arrays = [mx.nd.ones(s) for s in shapes]
    with pytest.raises(mx.MXNetError) as e:
        getattr(mx.nd, op)(*arrays, **kwargs).wait_to_read()
    assert op in str(e.value) and message in str(e.value), str(e.value)
    assert mx.nd.ones((1,)).asscalar() == 1  # the process lives on


@pytest.mark.parametrize("op,kwargs,count,fn", [
    ("exp", {}, 1, torch.exp),
    ("_mul_scalar", dict(scalar=2.5), 1, lambda x: x * 2.5),
    ("clip", dict(a_min=-0.5, a_max=0.5), 1, lambda x: torch.clamp(x, -0.5, 0.5)),
    ("elemwise_mul", {}, 2, torch.mul),
])
def test_large_elementwise_ops_match_torch(mx, op, kwargs, count, fn):
    # Elements enough for the CPU's OpenMP team (elementwise_cpu.cc's kParallelElements), an odd
    # count so the threads' ranges differ in length: maps and the same-shape gradients.
    arrays = [rng.standard_normal((1 << 20) + 37) for _ in range(count)]
    out, grads, og = ours(mx, op, arrays, **kwargs)
    ref_out, ref_grads = theirs(fn, arrays, og)
    np.testing.assert_allclose(out, ref_out, rtol=1e-7, atol=1e-12)
    for i, (g, r) in enumerate(zip(grads, ref_grads)):
        np.testing.assert_allclose(g, r, rtol=1e-7, atol=1e-12, err_msg="gradient of input %d" % i)
