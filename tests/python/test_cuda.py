"""The CUDA plugin: built wherever nvcc is found, it loads on every machine, lists its kernels,
and reports 0 devices with the runtime's reason where there is no GPU. Where there is one, its
kernels give the CPU kernels' results (the full comparison is the conformance suite)."""
import os
import subprocess

import numpy as np
import pytest

from conftest import INSTALL, built_with, run_cli, run_json

pytestmark = pytest.mark.skipif(not built_with("cuda"),
                                reason="built without the CUDA plugin (no CUDA toolkit with nvcc)")

PLUGIN = INSTALL / "lib" / "mxplug" / "plugins" / "libmxplug_cuda.so"

UNARY = ["negative", "abs", "sign", "exp", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt",
         "cbrt", "square", "reciprocal", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh",
         "cosh", "tanh", "sigmoid", "relu", "softsign", "erf", "round", "rint", "floor", "ceil",
         "trunc", "fix", "gamma", "gammaln", "_copy", "identity", "BlockGrad", "stop_gradient", "clip"]
BINARY = ["add", "sub", "mul", "div", "mod", "power", "maximum", "minimum", "hypot", "equal",
          "not_equal", "greater", "greater_equal", "lesser", "lesser_equal", "logical_and",
          "logical_or", "logical_xor"]
SCALAR = {"plus" if b == "add" else "minus" if b == "sub" else b for b in BINARY}
REVERSED_SCALAR = ["_rminus_scalar", "_rdiv_scalar", "_rmod_scalar", "_rpower_scalar"]
# The ops of issue 22's list that have CUDA kernels so far; the list grows with the kernels.
CUDA_OPS = (set(UNARY) | {"broadcast_" + b for b in BINARY} | {"_%s_scalar" % s for s in SCALAR}
            | set(REVERSED_SCALAR) | {"elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div",
                                      "broadcast_plus", "broadcast_minus"}
            | {"sum", "mean", "prod", "max", "min", "nansum", "nanprod", "sum_axis", "norm",
               "argmax", "argmin"}
            | {"_zeros", "_ones", "_full", "_arange", "_eye", "zeros_like", "ones_like", "Cast",
               "cast"}
            | {"Reshape", "reshape", "Flatten", "flatten", "expand_dims", "transpose", "slice", "crop",
               "_slice_assign", "_slice_assign_scalar", "take", "broadcast_to", "broadcast_like"}
            | {"Concat", "concat", "stack", "SliceChannel", "split", "ElementWiseSum", "add_n",
               "slice_axis", "tile", "repeat", "flip", "reverse", "squeeze"}
            | {"dot", "batch_dot", "FullyConnected"}
            | {"sgd_update", "sgd_mom_update", "nag_mom_update", "adam_update", "rmsprop_update",
               "rmspropalex_update", "adagrad_update"}
            | {"Activation", "LeakyReLU", "softmax", "log_softmax", "SoftmaxOutput", "Softmax",
               "LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput",
               "MakeLoss", "make_loss", "Dropout", "Embedding"}
            | {"_random_uniform", "_random_normal", "_random_randint", "_sample_multinomial"}
            | {"pick", "one_hot", "where"})
# cuBLAS and OpenBLAS sum products in different orders: float32 results agree to a few ulps of
# the sums' magnitudes, which cancellation can make large next to the result.
GEMM_OPS = {"dot", "batch_dot", "FullyConnected"}


def cuda_entry():
    code, out, err = run_json(["devices"])
    assert code == 0, err
    (entry,) = [d for d in out["devices"] if d["name"] == "cuda"]
    return entry


def require_gpu():
    entry = cuda_entry()
    if entry["count"] == 0:
        pytest.skip("no CUDA device: " + entry["reason"])


def test_the_plugin_loads_and_says_how_many_devices_and_why():
    entry = cuda_entry()
    assert entry["dlpack_device_type"] == 2
    if entry["count"] == 0:
        # The runtime's own words, and which call said them.
        assert "cudaGetDeviceCount" in entry["reason"], entry
    else:
        assert "compute capability" in entry["devices"][0]["description"]


def test_it_is_a_well_formed_plugin_that_needs_only_the_driver_and_cublas():
    code, out, err = run_json(["check", str(PLUGIN)])
    assert code == 0, (out, err)
    ldd = subprocess.run(["ldd", str(PLUGIN)], capture_output=True, text=True, check=True).stdout
    assert "libmxplug" not in ldd  # plugins never link the core
    assert "libcudart" not in ldd  # the runtime is linked statically
    assert "libcublas.so" in ldd and "libcublas.so.13 => not found" not in ldd, ldd


def test_the_ops_it_has_kernels_for_show_cuda_in_the_list():
    code, out, err = run_json(["list"])
    assert code == 0, err
    devices = {op["name"]: op["devices"] for op in out["operators"]}
    missing = sorted(name for name in CUDA_OPS if "cuda" not in devices.get(name, []))
    assert not missing, missing
    code, text, _ = run_cli(["list"])
    assert "broadcast_add             tensor     cpu, cuda" in text


def test_a_gpu_context_without_a_device_is_a_clear_error(mx):
    entry = cuda_entry()
    if entry["count"] > 0:
        pytest.skip("this machine has %d CUDA device(s)" % entry["count"])
    assert mx.context.num_gpus() == 0
    with pytest.raises(mx.base.MXNetError, match=r"cuda\(0\) does not exist: cuda has 0 device"):
        mx.nd.ones((2, 3), mx.gpu())


def op_symbol(mx, op, n_inputs, **kwargs):
    """op applied to variables x0, x1, ... (ops named with '_' live in mx.sym._internal)."""
    fn = getattr(mx.sym._internal if op.startswith("_") else mx.sym, op)
    return fn(*[mx.sym.var("x%d" % i) for i in range(n_inputs)], **kwargs)


def run_op(mx, ctx, op, arrays, out_grads, **kwargs):
    """Forward and backward of one op on ctx, through an executor; returns (outputs, grads)."""
    names = ["x%d" % i for i in range(len(arrays))]
    sym = op_symbol(mx, op, len(arrays), **kwargs)
    ex = sym.simple_bind(ctx, **{n: a.shape for n, a in zip(names, arrays)},
                         type_dict={n: a.dtype for n, a in zip(names, arrays)})
    for n, a in zip(names, arrays):
        ex.arg_dict[n][:] = a
    ex.forward(is_train=True)
    ex.backward([mx.nd.array(g, ctx=ctx, dtype=g.dtype) for g in out_grads])
    return [o.asnumpy() for o in ex.outputs], [ex.grad_dict[n].asnumpy() for n in names]


@pytest.mark.parametrize("op,shapes,kwargs", [
    ("exp", [(5, 7)], {}),
    ("clip", [(64,)], {"a_min": -0.3, "a_max": 0.4}),
    ("elemwise_mul", [(3, 4), (3, 4)], {}),
    ("broadcast_div", [(4, 1, 5), (3, 1)], {}),
    ("_rpower_scalar", [(33,)], {"scalar": 1.7}),
    # Gradients of broadcasting reduce onto the smaller input: across threads (many outputs)
    # and within a block (a long run per output).
    ("broadcast_add", [(300, 200), (200,)], {}),
    ("broadcast_mul", [(2, 3000), (2, 1)], {}),
    ("sum", [(4, 5, 6)], {"axis": 1}),
    ("sum", [(3, 1000)], {"axis": 1}),
    ("sum", [(1000, 3)], {"axis": 0}),
    ("mean", [(4, 5, 6)], {"axis": (0, 2), "keepdims": True}),
    ("prod", [(3, 4)], {}),
    ("max", [(6, 7, 8)], {"axis": (0, 2)}),
    ("min", [(6, 7)], {"axis": 0, "exclude": True}),
    ("nansum", [(5, 9)], {"axis": 1}),
    ("norm", [(5, 6)], {"ord": 1, "axis": 1}),
    ("norm", [(40, 50)], {}),
    ("argmax", [(5, 6)], {"axis": 1}),
    ("argmin", [(5, 6, 7)], {"axis": 0}),
    ("Reshape", [(4, 6)], {"shape": (3, -1, 2)}),
    ("Flatten", [(2, 3, 4)], {}),
    ("expand_dims", [(3, 4)], {"axis": 1}),
    ("transpose", [(2, 3, 4)], {"axes": (2, 0, 1)}),
    ("slice", [(6, 7, 8)], {"begin": (1, None, 7), "end": (5, None, 0), "step": (2, None, -3)}),
    ("_slice_assign", [(5, 6), (2, 3)], {"begin": (1, 0), "end": (5, 6), "step": (2, 2)}),
    ("_slice_assign_scalar", [(5, 6)], {"begin": (None, 2), "end": (None, 4), "scalar": 3.5}),
    ("broadcast_to", [(3, 1, 5)], {"shape": (2, 3, 4, 5)}),
    ("broadcast_like", [(1, 7), (300, 7)], {}),
    ("Concat", [(2, 3, 4), (2, 1, 4), (2, 5, 4)], {"dim": 1, "num_args": 3}),
    ("stack", [(3, 4), (3, 4)], {"axis": 2, "num_args": 2}),
    ("split", [(4, 6, 5)], {"num_outputs": 3, "axis": 1}),
    ("SliceChannel", [(4, 6)], {"num_outputs": 4, "axis": 0, "squeeze_axis": True}),
    ("add_n", [(5, 6), (5, 6), (5, 6)], {"num_args": 3}),
    ("slice_axis", [(5, 6, 7)], {"axis": 2, "begin": 1, "end": -2}),
    ("tile", [(2, 3, 4)], {"reps": (2, 1, 3, 2)}),
    ("repeat", [(3, 4)], {"repeats": 3, "axis": 0}),
    ("repeat", [(3, 4)], {"repeats": 2}),
    ("flip", [(3, 4, 5)], {"axis": (0, 2)}),
    ("squeeze", [(3, 1, 4)], {}),
    ("dot", [(33, 70), (70, 21)], {}),
    ("dot", [(70, 33), (21, 70)], {"transpose_a": True, "transpose_b": True}),
    ("dot", [(4, 5, 6), (6,)], {}),
    ("batch_dot", [(3, 17, 40), (3, 17, 9)], {"transpose_a": True}),
    ("FullyConnected", [(64, 5, 20), (30, 100), (30,)], {"num_hidden": 30}),
    ("FullyConnected", [(8, 3, 20), (7, 20)], {"num_hidden": 7, "no_bias": True, "flatten": False}),
])
def test_cuda_kernels_match_the_cpu_kernels(mx, op, shapes, kwargs):
    require_gpu()
    rng = np.random.default_rng(7)
    arrays = [rng.uniform(0.5, 2.0, s).astype(np.float32) for s in shapes]
    sym = op_symbol(mx, op, len(shapes), **kwargs)
    _, out_shapes, _ = sym.infer_shape(**{"x%d" % i: s for i, s in enumerate(shapes)})
    out_grads = [rng.standard_normal(s).astype(np.float32) for s in out_shapes]
    want_outs, want_grads = run_op(mx, mx.cpu(), op, arrays, out_grads, **kwargs)
    got_outs, got_grads = run_op(mx, mx.gpu(0), op, arrays, out_grads, **kwargs)
    tol = dict(rtol=1e-4, atol=1e-4) if op in GEMM_OPS else dict(rtol=1e-5, atol=1e-6)
    for got, want in zip(got_outs + got_grads, want_outs + want_grads):
        np.testing.assert_allclose(got, want, **tol)


NN_CASES = (
    [("Activation", [(5, 7)], {"act_type": t}, None)
     for t in ("relu", "sigmoid", "tanh", "softrelu", "softsign")]
    + [("LeakyReLU", [(4, 3, 5)], {"act_type": t}, None) for t in ("leaky", "elu", "selu", "gelu")]
    + [("LeakyReLU", [(4, 3, 5), (3,)], {"act_type": "prelu"}, None),
       ("LeakyReLU", [(6, 2), (1,)], {"act_type": "prelu"}, None),
       ("softmax", [(4, 5, 6)], {"axis": 1}, None),
       ("softmax", [(8, 10)], {"temperature": 2.0}, None),
       ("log_softmax", [(4, 5, 6)], {"axis": 0}, None),
       ("SoftmaxOutput", [(8, 10), (8,)], {}, (1, 10)),
       ("SoftmaxOutput", [(8, 10), (8,)],
        {"use_ignore": True, "ignore_label": 0, "normalization": "valid", "smooth_alpha": 0.1},
        (1, 10)),
       ("SoftmaxOutput", [(2, 4, 3, 5), (2, 3, 5)],
        {"multi_output": True, "normalization": "batch", "out_grad": True}, (1, 4)),
       ("SoftmaxOutput", [(3, 2, 6), (3, 2)], {"preserve_shape": True, "grad_scale": 0.5}, (1, 6)),
       # Repeated indices add their rows' gradients; those past input_dim are clipped.
       ("Embedding", [(6, 5), (7, 3)], {"input_dim": 7, "output_dim": 3}, (0, 9)),
       ("pick", [(5, 4, 3), (5, 3)], {"axis": 1}, (1, 6)),  # 4 and 5 are clipped
       ("pick", [(5, 4), (5, 1)], {"axis": -1, "keepdims": True, "mode": "wrap"}, (1, 9)),
       ("pick", [(3, 4), (4,)], {"axis": 0}, (1, 3)),
       ("one_hot", [(3, 4)], {"depth": 5, "on_value": 2.5, "off_value": -1}, (0, 6)),
       ("where", [(4, 5), (4, 5), (4, 5)], {}, (0, 2)),
       ("where", [(4,), (4, 5), (4, 5)], {}, (0, 2)),  # a condition per row
       ("LinearRegressionOutput", [(6, 3), (6, 3)], {"grad_scale": 2.0}, None),
       ("LogisticRegressionOutput", [(6, 3), (6, 3)], {}, None),
       ("MAERegressionOutput", [(6, 3), (6, 3)], {}, None),
       ("MakeLoss", [(5, 4)], {"normalization": "valid", "valid_thresh": 0.1}, None),
       ("make_loss", [(5, 4)], {"normalization": "batch", "grad_scale": 3.0}, None)])


@pytest.mark.parametrize("op,shapes,kwargs,labels", NN_CASES)
def test_cuda_nn_kernels_match_the_cpu_kernels(mx, op, shapes, kwargs, labels):
    """Activations, softmax, the loss outputs, Embedding and the selections on signed inputs;
    with labels = (i, k), input i holds integers in [0, k) (labels, indices, conditions)."""
    require_gpu()
    rng = np.random.default_rng(11)
    arrays = [(2 * rng.standard_normal(s)).astype(np.float32) for s in shapes]
    if labels:
        i, k = labels
        arrays[i] = rng.integers(0, k, shapes[i]).astype(np.float32)
    sym = op_symbol(mx, op, len(shapes), **kwargs)
    _, out_shapes, _ = sym.infer_shape(**{"x%d" % i: s for i, s in enumerate(shapes)})
    out_grads = [rng.standard_normal(s).astype(np.float32) for s in out_shapes]
    want_outs, want_grads = run_op(mx, mx.cpu(), op, arrays, out_grads, **kwargs)
    got_outs, got_grads = run_op(mx, mx.gpu(0), op, arrays, out_grads, **kwargs)
    for got, want in zip(got_outs + got_grads, want_outs + want_grads):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kwargs", [{"p": 0.3}, {"p": 0.6, "axes": (1,)}])
def test_cuda_dropout_drops_what_the_cpu_drops_for_the_same_seed(mx, kwargs):
    """gpu(0)'s random stream has cpu(0)'s key: after the same seed, Dropout's mask, output and
    gradient are the CPU's, element for element."""
    require_gpu()
    rng = np.random.default_rng(3)
    x = rng.standard_normal((40, 6, 5)).astype(np.float32)
    og = rng.standard_normal(x.shape).astype(np.float32)
    runs = []
    for ctx in (mx.cpu(0), mx.gpu(0)):
        mx.random.seed(42)
        runs.append(run_op(mx, ctx, "Dropout", [x], [og], **kwargs))
    (want_out,), (want_grad,) = runs[0]
    (got_out,), (got_grad,) = runs[1]
    kept = want_out != 0
    assert 0.2 < 1 - kept.mean() < 0.8  # the CPU run dropped about p of the elements
    np.testing.assert_array_equal(got_out != 0, kept)
    np.testing.assert_allclose(got_out, want_out, rtol=1e-6)
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-6)


def samples(mx, ctx):
    """What each sampler draws on ctx right after the same seed, as NumPy arrays."""
    mx.random.seed(5)
    probs = mx.nd.array([[0.1, 0.6, 0.3], [0.5, 0.25, 0.25]], ctx=ctx)
    drawn = [mx.nd.random.uniform(-2, 3, shape=(7, 9), ctx=ctx),
             mx.nd.random.uniform(0, 1, shape=(33,), dtype="float64", ctx=ctx),
             mx.nd.random.normal(1.5, 2.0, shape=(5, 7), ctx=ctx),  # an odd count: half a pair
             mx.nd.random.normal(0, 1, shape=(16,), dtype="float64", ctx=ctx),
             mx.nd.random.randint(-5, 1000, shape=(40,), ctx=ctx),
             *mx.nd.random.multinomial(probs, shape=50, get_prob=True)]
    return [a.asnumpy() for a in drawn]


def test_cuda_samplers_draw_the_cpu_numbers_for_the_same_seed(mx):
    require_gpu()
    want, got = samples(mx, mx.cpu(0)), samples(mx, mx.gpu(0))
    assert len(np.unique(want[0])) == want[0].size  # draws, not a constant
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-6)


def creations(mx, ctx):
    """Arrays made on ctx by every creation op and Cast, as NumPy arrays."""
    x = mx.nd.array(np.linspace(-3.7, 300.2, 24).reshape(4, 6), ctx=ctx)
    made = [mx.nd.zeros((3, 4), ctx=ctx), mx.nd.ones((5,), ctx=ctx, dtype="int32"),
            mx.nd.full((2, 3), 2.5, ctx=ctx, dtype="float16"),
            mx.nd.arange(2, 11, 1.5, repeat=2, ctx=ctx), mx.nd.arange(7, ctx=ctx, dtype="int64"),
            mx.nd.eye(4, 6, k=1, ctx=ctx), mx.nd.eye(5, k=-2, ctx=ctx, dtype="uint8"),
            mx.nd.zeros_like(x), mx.nd.ones_like(x)]
    made += [x.astype(d) for d in ("float16", "float64", "int8", "uint8", "int32", "int64")]
    made += [x.astype("float16").astype("int32"), x.astype("int64").astype("float16")]
    return [(m.dtype, m.asnumpy()) for m in made]


def test_cuda_creation_ops_and_cast_match_the_cpu(mx):
    require_gpu()
    for (want_dtype, want), (got_dtype, got) in zip(creations(mx, mx.cpu()), creations(mx, mx.gpu(0))):
        assert got_dtype == want_dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("mode", ["clip", "wrap"])
def test_cuda_take_matches_the_cpu_with_repeated_and_outside_indices(mx, mode):
    require_gpu()
    rng = np.random.default_rng(11)
    a = rng.standard_normal((5, 4, 3)).astype(np.float32)
    # Repeats add up in the gradient; -7 and 9 lie outside the axis of 4.
    idx = np.array([[0, 3, 3], [-7, 9, 1]], dtype=np.float32)
    out_grad = rng.standard_normal((5, 2, 3, 3)).astype(np.float32)
    results = []
    for ctx in (mx.cpu(), mx.gpu(0)):
        sym = mx.sym.take(mx.sym.var("a"), mx.sym.var("i"), axis=1, mode=mode)
        ex = sym.simple_bind(ctx, a=a.shape, i=idx.shape, grad_req={"a": "write", "i": "null"})
        ex.arg_dict["a"][:] = a
        ex.arg_dict["i"][:] = idx
        ex.forward(is_train=True)
        ex.backward(mx.nd.array(out_grad, ctx=ctx))
        results.append((ex.outputs[0].asnumpy(), ex.grad_dict["a"].asnumpy()))
    (want_out, want_grad), (got_out, got_grad) = results
    np.testing.assert_array_equal(got_out, want_out)
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-6, atol=1e-6)


# Each update with the ranges its states start in: averages of squares and histories are
# positive, and the centred variance n - g^2 too.
POSITIVE, SIGNED = (0.5, 1.5), (-0.5, 0.5)
UPDATES = [("sgd_update", [], {"lr": 0.1, "wd": 0.01, "clip_gradient": 0.5}),
           ("sgd_mom_update", [SIGNED], {"lr": 0.1, "momentum": 0.9, "wd": 0.01, "rescale_grad": 0.5}),
           ("nag_mom_update", [SIGNED], {"lr": 0.1, "momentum": 0.9}),
           ("adam_update", [SIGNED, POSITIVE], {"lr": 0.01, "beta1": 0.8, "clip_gradient": 0.3}),
           ("rmsprop_update", [POSITIVE], {"lr": 0.01, "gamma1": 0.9, "clip_weights": 1.5}),
           ("rmspropalex_update", [POSITIVE, SIGNED, SIGNED], {"lr": 0.01, "gamma1": 0.9, "gamma2": 0.8}),
           ("adagrad_update", [POSITIVE], {"lr": 0.1, "wd": 0.001})]


@pytest.mark.parametrize("op,state_ranges,kwargs", UPDATES)
def test_cuda_optimizer_updates_match_the_cpu(mx, op, state_ranges, kwargs):
    require_gpu()
    rng = np.random.default_rng(3)
    shape = (37, 29)
    weight, grad = rng.standard_normal(shape), rng.standard_normal(shape)
    states = [rng.uniform(low, high, shape) for low, high in state_ranges]
    results = []
    for ctx in (mx.cpu(), mx.gpu(0)):
        w = mx.nd.array(weight, ctx=ctx)
        st = [mx.nd.array(x, ctx=ctx) for x in states]
        for _ in range(3):  # the states carry from step to step
            getattr(mx.nd, op)(w, mx.nd.array(grad, ctx=ctx), *st, out=w, **kwargs)
        results.append([w.asnumpy()] + [x.asnumpy() for x in st])
    for got, want in zip(results[1], results[0]):
        assert np.isfinite(want).all()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
