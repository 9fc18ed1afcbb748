"""The op conformance suite, as ggml's test-backend-ops is for its backends: every op with a kernel
on a device runs its cases (op_cases.py) there, forward and backward, in every dtype the case
lists, on random inputs, and is compared with the CPU kernel run in float64 on the same values.

Devices: cpu(0), whose float32 and float16 kernels are held to its own float64 ones, and gpu(0)
where one exists: CUDA on a GPU machine, the asynchronous test device when MXPLUG_TEST_DEVICE=testdev
(tools/test.sh runs this file so), skipped with the runtime's reason otherwise. Random ops are
compared in their own dtype: after the same seed a device draws what the CPU draws."""
import functools
import zlib

import numpy as np
import pytest

from conftest import default_ops, run_json
from op_cases import (CASES, COVERED, CREATIONS, DOMINANT, MP_UPDATES, MULTI_UPDATES, OTHER_UPDATES, RANDOM_IMAGE, SPD, SYMMETRIC,
                      UPDATES, WIDE, WITH_NAN, Case)

# How far a dtype's result may lie from the float64 reference, relative and absolute, for a case
# of tolerance 1: a few roundings of the dtype.
TOLERANCE = {"float64": 1e-11, "float32": 1e-5, "float16": 4e-3}


@functools.lru_cache(maxsize=None)
def no_gpu_reason():
    code, out, err = run_json(["devices"])
    assert code == 0, err
    cuda = [d for d in out["devices"] if d["name"] == "cuda"]
    if not cuda:
        return "no GPU backend is loaded (built without the CUDA plugin)"
    return "no GPU: cuda has 0 devices (%s)" % cuda[0]["reason"]


@pytest.fixture(params=["cpu", "gpu"])
def ctx(request, mx):
    if request.param == "cpu":
        return mx.cpu(0)
    if mx.context.num_gpus() == 0:
        pytest.skip(no_gpu_reason())
    return mx.gpu(0)


def ops_with_kernels_on(mx, ctx):
    device_type = ctx._dl()[0]
    return {op["name"] for op in mx.library.operators() if device_type in op["device_types"]}


_kernels = {}


def skip_the_reference_itself(ctx, dtype=None):
    """The CPU in float64 (for random ops, dtype None: in any dtype) is the reference: comparing
    it with itself would check nothing (test_random.py checks that the CPU's draws follow the
    seed)."""
    if ctx.device_type == "cpu" and dtype in (None, "float64"):
        pytest.skip("the cpu%s is the reference" % (" in float64" if dtype else ""))


def require_kernel(mx, ctx, op):
    key = ctx._dl()[0]
    if key not in _kernels:
        _kernels[key] = ops_with_kernels_on(mx, ctx)
    if op not in _kernels[key]:
        pytest.skip("%s has no kernel on %s" % (op, ctx))


def test_every_op_with_a_kernel_on_the_device_has_cases(mx, ctx):
    # The ops of the plugins that ship (test plugins other tests load here are not held to it).
    missing = sorted((ops_with_kernels_on(mx, ctx) & default_ops()) - COVERED)
    assert not missing, "ops with a kernel on %s but no conformance case: %s" % (ctx, missing)


def rng_for(*key):
    """A generator of its own for each case, the same in every run."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def draw(rng, shape, domain):
    if domain in (SPD, SYMMETRIC, DOMINANT):  # matrices on the last two axes
        x, n = rng.uniform(-1, 1, shape), shape[-1]
        if domain == SYMMETRIC:
            return x + np.swapaxes(x, -1, -2)
        if domain == SPD:
            return x @ np.swapaxes(x, -1, -2) + n * np.eye(n)
        return x / 2 + n * np.eye(*shape[-2:])
    if domain == WITH_NAN:
        x = rng.uniform(-2, 2, shape)
        x[rng.random(shape) < 0.2] = np.nan
        return x
    if domain[0] == "ints":
        return rng.integers(domain[1], domain[2], shape).astype(np.float64)
    return rng.uniform(domain[0], domain[1], shape)


def op_symbol(mx, op, n_inputs, **kwargs):
    """op applied to variables x0, x1, ... (ops named with '_' live in mx.sym._internal)."""
    fn = getattr(mx.sym._internal if op.startswith("_") else mx.sym, op)
    return fn(*[mx.sym.var("x%d" % i) for i in range(n_inputs)], **kwargs)


def run_op(mx, ctx, case, arrays, out_grads):
    """Forward (training mode) and, if the case says so, backward of the case's op on ctx through
    an executor; returns (outputs, input gradients) as NumPy arrays."""
    names = ["x%d" % i for i in range(len(arrays))]
    sym = op_symbol(mx, case.op, len(arrays), **case.kwargs)
    ex = sym.simple_bind(ctx, grad_req="write" if case.grad else "null",
                         **{n: a.shape for n, a in zip(names, arrays)},
                         type_dict={n: a.dtype for n, a in zip(names, arrays)})
    for n, a in zip(names, arrays):
        ex.arg_dict[n][:] = a
    ex.forward(is_train=True)
    grads = []
    if case.grad:
        ex.backward([mx.nd.array(g, ctx=ctx, dtype=g.dtype) for g in out_grads])
        grads = [ex.grad_dict[n].asnumpy() for n in names]
    return [o.asnumpy() for o in ex.outputs], grads


def input_dtypes(mx, sym, names, dtype):
    """`dtype` for every input, unless the op refuses it for some (BatchNorm keeps a float16
    layer's gamma and beta in float32, as MXNet does): then each input takes the dtype the op
    infers for it from the first."""
    try:
        sym.infer_type(**{n: dtype for n in names})
        return [dtype] * len(names)
    except mx.MXNetError:
        arg_types, _, _ = sym.infer_type(**{names[0]: dtype})
        return [np.dtype(t).name for t in arg_types]


def assert_close(got, want, dtype, tol, what):
    bound = TOLERANCE[dtype] * tol
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=bound,
                               atol=bound, err_msg=what)


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@pytest.mark.parametrize("case", CASES, ids=repr)
def test_op_matches_the_cpu_in_float64(mx, ctx, case, dtype):
    if dtype not in case.dtypes:
        pytest.skip("%s is not among the dtypes %s supports on every device" % (dtype, case.op))
    skip_the_reference_itself(ctx, dtype)
    require_kernel(mx, ctx, case.op)
    rng = rng_for(case.op, case.shapes, case.kwargs)
    sym = op_symbol(mx, case.op, len(case.shapes), **case.kwargs)
    names = ["x%d" % i for i in range(len(case.shapes))]
    # Both runs see the same values: drawn, rounded to the dtype, and for the reference widened.
    in_types = input_dtypes(mx, sym, names, dtype)
    arrays = [draw(rng, s, d).astype(t) for s, d, t in zip(case.shapes, case.domains, in_types)]
    _, out_shapes, _ = sym.infer_shape(**{n: a.shape for n, a in zip(names, arrays)})
    _, out_types, _ = sym.infer_type(**{n: a.dtype for n, a in zip(names, arrays)})
    # An output follows the inputs' dtype unless the op fixes it (Cast, one_hot): its gradient
    # has the output's dtype.
    _, want_types, _ = sym.infer_type(**{n: np.float64 if np.dtype(t).kind == "f" else t
                                         for n, t in zip(names, in_types)})
    out_grads = [rng.standard_normal(s) for s in out_shapes]
    # (Integer inputs an op requires, batch_take's indices, stay as they are.)
    want_outs, want_grads = run_op(mx, mx.cpu(), case,
                                   [a.astype(np.float64) if a.dtype.kind == "f" else a for a in arrays],
                                   [g.astype(t).astype(w) for g, t, w in
                                    zip(out_grads, out_types, want_types)])
    got_outs, got_grads = run_op(mx, ctx, case, arrays,
                                 [g.astype(t) for g, t in zip(out_grads, out_types)])
    for i, (got, want) in enumerate(zip(got_outs, want_outs)):
        assert got.dtype == np.dtype(out_types[i]), "output %d of %r" % (i, case)
        # An output of a narrower float type than the inputs (multi_sum_sq's float32 from
        # float64) holds that type's precision.
        held = max(dtype, str(got.dtype), key=lambda t: TOLERANCE.get(t, 0))
        assert_close(got, want, held, case.tol, "output %d of %r in %s" % (i, case, dtype))
    for i, (got, want) in enumerate(zip(got_grads, want_grads)):
        assert got.dtype == np.dtype(in_types[i])
        assert_close(got, want, dtype, case.tol, "gradient of input %d of %r in %s" % (i, case, dtype))


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int32", "int64", "uint8"])
@pytest.mark.parametrize("op,kwargs,numpy_made", CREATIONS, ids=lambda v: "" if callable(v) else repr(v))
def test_creation_ops_make_what_numpy_makes(mx, ctx, op, kwargs, numpy_made, dtype):
    require_kernel(mx, ctx, op)
    made = getattr(mx.nd._internal, op)(ctx=ctx, dtype=dtype, **kwargs)
    assert made.context == ctx
    assert made.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(made.asnumpy(), numpy_made().astype(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "uint8"])
def test_set_value_fills_the_array_given_as_out(mx, ctx, dtype):
    require_kernel(mx, ctx, "_set_value")
    out = mx.nd.zeros((3, 4), ctx=ctx, dtype=dtype)
    mx.nd._internal._set_value(src=2.5, out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full((3, 4), 2.5).astype(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_reset_arrays_zeroes_its_arrays_in_place(mx, ctx, dtype):
    require_kernel(mx, ctx, "reset_arrays")
    rng = rng_for("reset_arrays", dtype)
    whole = mx.nd.array(rng.uniform(1, 2, (5, 3)), ctx=ctx, dtype=dtype)
    other = mx.nd.array(rng.uniform(1, 2, (1000,)), ctx=ctx, dtype=dtype)
    kept = whole.asnumpy()
    assert mx.nd.reset_arrays(whole[1:3], other, num_arrays=2) == []
    kept[1:3] = 0
    np.testing.assert_array_equal(whole.asnumpy(), kept)
    np.testing.assert_array_equal(other.asnumpy(), np.zeros(1000, dtype))


@pytest.mark.parametrize("dtype", WIDE)
@pytest.mark.parametrize("op,state_ranges,kwargs", UPDATES, ids=repr)
def test_optimizer_updates_match_the_cpu_in_float64(mx, ctx, op, state_ranges, kwargs, dtype):
    skip_the_reference_itself(ctx, dtype)
    require_kernel(mx, ctx, op)
    rng = rng_for(op)
    shape = (37, 29)
    weight, grad = rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape).astype(dtype)
    states = [rng.uniform(low, high, shape).astype(dtype) for low, high in state_ranges]
    results = []
    for c, d in ((mx.cpu(), "float64"), (ctx, dtype)):
        w = mx.nd.array(weight, ctx=c, dtype=d)
        st = [mx.nd.array(x, ctx=c, dtype=d) for x in states]
        g = mx.nd.array(grad, ctx=c, dtype=d)
        for _ in range(3):  # the states carry from step to step
            getattr(mx.nd, op)(w, g, *st, out=w, **kwargs)
        results.append([w.asnumpy()] + [x.asnumpy() for x in st])
    for i, (got, want) in enumerate(zip(results[1], results[0])):
        assert np.isfinite(want).all()
        assert got.dtype == np.dtype(dtype)
        assert_close(got, want, dtype, 2, "%s of %s in %s" % ("weight" if i == 0 else "state %d" % i,
                                                             op, dtype))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("op,moms,kwargs", MP_UPDATES, ids=repr)
def test_multi_precision_updates_match_the_cpu(mx, ctx, op, moms, kwargs, dtype):
    """The step is float32 arithmetic on weight32 on every device, so the CPU in the same dtype is
    the reference (test_optimizer.py holds the CPU to MXNet 1.9.1)."""
    if ctx.device_type == "cpu":
        pytest.skip("the cpu is the reference")
    require_kernel(mx, ctx, op)
    rng = rng_for(op)
    shape = (37, 29)
    weight, grad = rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape).astype(dtype)
    mom = [rng.uniform(-0.5, 0.5, shape).astype(np.float32) for _ in range(moms)]
    results = []
    for c in (mx.cpu(), ctx):
        w, g = mx.nd.array(weight, ctx=c, dtype=dtype), mx.nd.array(grad, ctx=c, dtype=dtype)
        states = [mx.nd.array(x, ctx=c, dtype="float32") for x in mom]
        states.append(mx.nd.array(weight.astype(np.float32), ctx=c, dtype="float32"))
        for _ in range(3):
            getattr(mx.nd, op)(w, g, *states, out=w, **kwargs)
        results.append([w.asnumpy()] + [x.asnumpy() for x in states])
    # The weight is weight32 cast: float64's holds float32's precision, and a device that fuses
    # a multiply and an add rounds it once where the CPU rounds twice.
    wide = max(dtype, "float32", key=lambda t: TOLERANCE[t])
    for i, (got, want) in enumerate(zip(results[1], results[0])):
        assert got.dtype == (np.dtype(dtype) if i == 0 else np.float32)
        assert_close(got, want, wide if i == 0 else "float32", 2,
                     "%s of %s in %s" % ("weight" if i == 0 else "state %d" % i, op, dtype))


def other_update(mx, ctx, op, rescale):
    """Two steps of op on ctx from the same numbers: the outputs and the states, as NumPy."""
    rng = rng_for(op)
    shape = (37, 29)
    w, g, m, v = (rng.standard_normal(shape), rng.standard_normal(shape), rng.uniform(0, 1, shape),
                  rng.uniform(0, 1, shape))
    mp = op != "_adamw_update"
    W = mx.nd.array(w, ctx=ctx, dtype="float16" if mp else "float32")
    G = mx.nd.array(g, ctx=ctx, dtype=W.dtype)
    M, V, W32 = (mx.nd.array(x, ctx=ctx) for x in (m, v, w))
    states = [M, V] + ([W32] if mp else [])
    for _ in range(2):
        if op.endswith("adamw_update"):
            out = getattr(mx.nd._internal, op)(W, G, *states, mx.nd.array([rescale], ctx=ctx), out=W, lr=0.1, eta=0.5,
                                               wd=0.1, clip_gradient=0.8)
        elif op == "mp_lamb_update_phase1":
            out = mx.nd.mp_lamb_update_phase1(W, G, *states, t=2, wd=0.1, clip_gradient=0.8)
        else:
            out = mx.nd.mp_lamb_update_phase2(W, G.astype("float32"), mx.nd.array([2.0], ctx=ctx),
                                              mx.nd.array([3.0], ctx=ctx), W32, out=W, lr=0.1)
    return [out.asnumpy()] + [s.asnumpy() for s in states]


@pytest.mark.parametrize("rescale", [2.0, float("inf")])
@pytest.mark.parametrize("op", OTHER_UPDATES)
def test_other_updates_match_the_cpu(mx, ctx, op, rescale):
    """AdamW (its rescale_grad an array on the device; not finite: no step) and the
    multi-precision LAMB phases run float32 arithmetic on every device: the CPU's is the
    reference (test_optimizer.py holds the CPU to MXNet 1.9.1)."""
    if ctx.device_type == "cpu":
        pytest.skip("the cpu is the reference")
    require_kernel(mx, ctx, op)
    for got, want in zip(other_update(mx, ctx, op, rescale), other_update(mx, mx.cpu(), op, rescale)):
        assert got.dtype == want.dtype
        assert_close(got, want, max(str(got.dtype), "float32", key=lambda t: TOLERANCE[t]), 2, op)


def multi_update(mx, ctx, op):
    """Two steps of an aggregated update of two weights (of different shapes) on ctx, or LARS's
    rates: the weights and states, as NumPy."""
    rng = rng_for(op)
    if op == "multi_lars":
        lrs, wsq, gsq, wds = (rng.uniform(0, 1, 50).astype(np.float32) for _ in range(4))
        wsq[:5] = gsq[5:10] = 0  # no norm: the rate stays
        return [mx.nd.multi_lars(*[mx.nd.array(x, ctx=ctx) for x in (lrs, wsq, gsq, wds)], eta=0.5,
                                 eps=1e-3, rescale_grad=2).asnumpy()]
    mp = "_mp_" in op
    n_states = 1 if "mom" in op else 2 if ("adamw" in op or "lamb" in op) else 0
    shapes = [(37, 29), (3075,)]  # the second in four chunks of LAMB's norms
    arrays = []
    for s in shapes:
        w = mx.nd.array(rng.standard_normal(s), ctx=ctx, dtype="float16" if mp else "float32")
        states = [mx.nd.array(rng.uniform(0, 1, s), ctx=ctx) for _ in range(n_states)]
        arrays.append([w, mx.nd.array(rng.standard_normal(s) * 3, ctx=ctx, dtype=w.dtype)] + states +
                      ([w.astype("float32")] if mp else []))
    weights = [group[0] for group in arrays]
    tail, kwargs = [], {}
    if "sgd" in op:
        kwargs = dict(rescale_grad=0.5, clip_gradient=1.0, num_weights=2)
        if n_states:
            kwargs["momentum"] = 0.9
        if op.startswith("preloaded"):
            tail = [mx.nd.array([0.1, 0.2], ctx=ctx), mx.nd.array([0.01, 0.05], ctx=ctx)]
        else:
            kwargs.update(lrs=(0.1, 0.2), wds=(0.01, 0.05))
    elif "adamw" in op:
        tail = [mx.nd.array([2.0], ctx=ctx, dtype="float32" if mp else weights[0].dtype)]
        kwargs = dict(lrs=(0.1, 0.2), wds=(0.01, 0.05), etas=(1.0, 0.5), clip_gradient=1.5, num_weights=2)
    else:
        kwargs = dict(learning_rates=(0.1, 0.2), wds=(0.01, 0.05), step_count=(2, 5), rescale_grad=0.5,
                      clip_gradient=1.0, num_tensors=2)
    for _ in range(2):
        getattr(mx.nd._internal if op[0] == "_" else mx.nd, op)(*sum(arrays, []), *tail, out=weights, **kwargs)
    return [a.asnumpy() for group in arrays for a in group]


@pytest.mark.parametrize("op", MULTI_UPDATES)
def test_aggregated_updates_match_the_cpu(mx, ctx, op):
    """Each weight's step is the one-weight rule's on every device (test_optimizer.py holds the
    CPU to MXNet 1.9.1); LAMB's norms add chunks atomically on a GPU, in another order."""
    if ctx.device_type == "cpu":
        pytest.skip("the cpu is the reference")
    require_kernel(mx, ctx, op)
    for got, want in zip(multi_update(mx, ctx, op), multi_update(mx, mx.cpu(), op)):
        assert got.dtype == want.dtype
        assert_close(got, want, max(str(got.dtype), "float32", key=lambda t: TOLERANCE[t]), 2, op)


def draws(mx, ctx, op):
    """What op draws on ctx right after the same seed, as NumPy arrays."""
    mx.random.seed(5)
    if op == "_random_uniform":
        drawn = [mx.nd.random.uniform(-2, 3, shape=(7, 9), ctx=ctx),
                 mx.nd.random.uniform(0, 1, shape=(33,), dtype="float64", ctx=ctx),
                 mx.nd.random.uniform(0, 1, shape=(10,), dtype="float16", ctx=ctx)]
    elif op == "_random_normal":
        drawn = [mx.nd.random.normal(1.5, 2.0, shape=(5, 7), ctx=ctx),  # an odd count: half a pair
                 mx.nd.random.normal(0, 1, shape=(16,), dtype="float64", ctx=ctx)]
    elif op == "_random_randint":
        drawn = [mx.nd.random.randint(-5, 1000, shape=(40,), ctx=ctx),
                 mx.nd.random.randint(0, 1 << 40, shape=(9,), dtype="int64", ctx=ctx)]
    elif op == "_sample_multinomial":
        probs = mx.nd.array([[0.1, 0.6, 0.3], [0.5, 0.25, 0.25]], ctx=ctx)
        drawn = list(mx.nd.random.multinomial(probs, shape=50, get_prob=True))
    elif op == "_shuffle":
        drawn = [mx.nd.random.shuffle(mx.nd.arange(40, ctx=ctx).reshape((10, 4)))]
    elif op in ("_random_exponential", "random_exponential"):
        drawn = [getattr(mx.nd._internal if op[0] == "_" else mx.nd, op)(lam=0.5, shape=(6, 5), ctx=ctx)]
    elif op in ("_random_gamma", "random_gamma"):
        fn = getattr(mx.nd._internal if op[0] == "_" else mx.nd, op)
        drawn = [fn(alpha=0.4, beta=2.0, shape=(17,), ctx=ctx),
                 fn(alpha=3.0, shape=(9,), dtype="float64", ctx=ctx)]
    elif op in ("_random_poisson", "random_poisson"):
        fn = getattr(mx.nd._internal if op[0] == "_" else mx.nd, op)
        drawn = [fn(lam=4.0, shape=(20,), ctx=ctx), fn(lam=40.0, shape=(20,), ctx=ctx)]
    elif op in ("_random_negative_binomial", "random_negative_binomial"):
        fn = getattr(mx.nd._internal if op[0] == "_" else mx.nd, op)
        drawn = [fn(k=3, p=0.3, shape=(25,), ctx=ctx)]
    elif op in ("_random_generalized_negative_binomial", "random_generalized_negative_binomial"):
        fn = getattr(mx.nd._internal if op[0] == "_" else mx.nd, op)
        drawn = [fn(mu=5.0, alpha=0.5, shape=(25,), ctx=ctx), fn(mu=5.0, alpha=0.0, shape=(8,), ctx=ctx)]
    elif op.lstrip("_").startswith("sample_") and op.lstrip("_") != "sample_multinomial":
        fn = getattr(mx.nd._internal if op[0] == "_" else mx.nd, op)
        params = EACH_PARAMS[op.lstrip("_")[len("sample_"):]]
        drawn = [fn(*[mx.nd.array(p, ctx=ctx) for p in params], shape=(4, 3)),
                 fn(*[mx.nd.array(p, ctx=ctx, dtype="float64") for p in params], shape=(5,),
                    dtype="float64")]
    elif op.endswith("_like"):
        fn = getattr(mx.nd._internal, op)
        drawn = [fn(mx.nd.zeros((6, 5), ctx=ctx)), fn(mx.nd.zeros((7,), ctx=ctx, dtype="float64"))]
    elif op in ("uniform", "random_uniform"):
        drawn = [getattr(mx.nd, op)(low=-2, high=3, shape=(7, 9), ctx=ctx)]
    elif op in ("normal", "random_normal"):
        drawn = [getattr(mx.nd, op)(loc=1.5, scale=2.0, shape=(5, 7), ctx=ctx)]
    elif op == "random_randint":
        drawn = [mx.nd.random_randint(low=-5, high=1000, shape=(40,), ctx=ctx)]
    elif op == "sample_multinomial":
        probs = mx.nd.array([[0.1, 0.6, 0.3], [0.5, 0.25, 0.25]], ctx=ctx)
        drawn = list(mx.nd.sample_multinomial(probs, shape=50, get_prob=True))
    elif op == "shuffle":
        drawn = [mx.nd.shuffle(mx.nd.arange(40, ctx=ctx).reshape((10, 4)))]
    else:
        assert False, op
    return [a.asnumpy() for a in drawn]


# The parameter tensors of each _sample_<x> (a distribution per element), and the ops that sample
# like an input (_random_<x>_like).
EACH_PARAMS = {"uniform": ([-1, 0, 2], [1, 0.5, 5]), "normal": ([0, 1, -3], [1, 2, 0.5]),
               "exponential": ([0.5, 1, 4],), "gamma": ([0.4, 1, 6], [1, 2, 0.5]),
               "poisson": ([0.5, 4, 40],), "negative_binomial": ([1, 3, 10], [0.2, 0.5, 0.9]),
               "generalized_negative_binomial": ([1, 5, 20], [0.5, 0, 2])}
EACH = ["_sample_" + x for x in sorted(EACH_PARAMS)]
LIKE = ["_random_%s_like" % x for x in ("uniform", "normal", "exponential", "gamma", "poisson",
                                        "negative_binomial", "generalized_negative_binomial")]

# MXNet's other names of the samplers, each with the op it names.
SAMPLER_ALIASES = {"uniform": "_random_uniform", "random_uniform": "_random_uniform",
                   "normal": "_random_normal", "random_normal": "_random_normal",
                   "random_randint": "_random_randint", "sample_multinomial": "_sample_multinomial",
                   "shuffle": "_shuffle", "random_exponential": "_random_exponential",
                   "random_gamma": "_random_gamma", "random_poisson": "_random_poisson",
                   "random_negative_binomial": "_random_negative_binomial",
                   "random_generalized_negative_binomial": "_random_generalized_negative_binomial"}
SAMPLER_ALIASES.update({op[1:]: op for op in EACH})


@pytest.mark.parametrize("alias", sorted(SAMPLER_ALIASES))
def test_a_samplers_other_name_draws_what_it_names_draws(mx, ctx, alias):
    require_kernel(mx, ctx, alias)
    got, want = draws(mx, ctx, alias), draws(mx, ctx, SAMPLER_ALIASES[alias])
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("op", ["_random_uniform", "_random_normal", "_random_randint",
                                "_sample_multinomial", "_shuffle", "_random_exponential",
                                "_random_gamma", "_random_poisson", "_random_negative_binomial",
                                "_random_generalized_negative_binomial"] + EACH + LIKE
                         + sorted(SAMPLER_ALIASES))
def test_samplers_draw_the_cpu_numbers_for_the_same_seed(mx, ctx, op):
    skip_the_reference_itself(ctx)
    require_kernel(mx, ctx, op)
    want, got = draws(mx, mx.cpu(0), op), draws(mx, ctx, op)
    assert len(np.unique(want[0])) > 1  # draws, not a constant
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "uint8"])
@pytest.mark.parametrize("op", sorted(RANDOM_IMAGE))
def test_random_image_ops_draw_what_the_cpu_draws_for_the_same_seed(mx, ctx, op, dtype):
    """After the same seed, a device's random image op makes the CPU's choices: the same image,
    call after call (uint8 clipped and truncated alike)."""
    skip_the_reference_itself(ctx)
    require_kernel(mx, ctx, op)
    pixels = np.random.RandomState(7).uniform(0, 255, (9, 11, 3)).astype(dtype)
    runs = []
    for c in (mx.cpu(0), ctx):
        mx.random.seed(11)
        x = mx.nd.array(pixels, ctx=c, dtype=dtype)
        runs.append([getattr(mx.nd._internal, op)(x, **RANDOM_IMAGE[op]).asnumpy() for _ in range(6)])
    assert len({w.tobytes() for w in runs[0]}) > 1  # draws, not a constant
    for got, want in zip(runs[1], runs[0]):
        assert got.dtype == want.dtype
        if dtype == "uint8":
            assert np.abs(got.astype(int) - want.astype(int)).max() <= 1  # float rounding at an integer
        else:
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("dtype", WIDE)
@pytest.mark.parametrize("kwargs", [{"p": 0.3}, {"p": 0.6, "axes": (1,)}], ids=repr)
def test_dropout_drops_what_the_cpu_drops_for_the_same_seed(mx, ctx, kwargs, dtype):
    """A device's random stream has the key of the CPU's with its id: after the same seed,
    Dropout's mask, output and gradient are the CPU's, element for element."""
    skip_the_reference_itself(ctx)
    require_kernel(mx, ctx, "Dropout")
    rng = rng_for("Dropout", kwargs)
    x = rng.standard_normal((40, 6, 5)).astype(dtype)
    og = rng.standard_normal(x.shape).astype(dtype)
    case = Case("Dropout", [x.shape], kwargs)
    runs = []
    for c in (mx.cpu(0), ctx):
        mx.random.seed(42)
        runs.append(run_op(mx, c, case, [x], [og]))
    (want_out,), (want_grad,) = runs[0]
    (got_out,), (got_grad,) = runs[1]
    kept = want_out != 0
    assert 0.2 < 1 - kept.mean() < 0.8  # the CPU run dropped about p of the elements
    np.testing.assert_array_equal(got_out != 0, kept)
    assert_close(got_out, want_out, dtype, 1, "Dropout's output")
    assert_close(got_grad, want_grad, dtype, 1, "Dropout's gradient")
