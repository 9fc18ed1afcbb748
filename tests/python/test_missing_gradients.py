"""Every op's backward with each subset of its inputs lacking a gradient buffer (grad_req 'null'
for the others): the gradients asked for must not depend on which others were asked for. Each
subset is checked against MXNet 1.9.1 running the same script, and the full set against finite
differences in float64. (Before the fix, an absent gradient crossed to the kernel with no shape:
`a * p` with p's gradient absent read p as a broadcast scalar, and Concat misplaced its slices.)"""
import numpy as np
import pytest

from conftest import run_here, run_mxnet_script

# Runs under both systems (`mx` is MXNet 1.9.1 or mxplug). Each case: name, op, kwargs, inputs as
# (shape, kind): 'x' a differentiable normal input, 'p' differentiable and positive (divisors,
# bases of powers), 'i' an integer index below the number given as the shape's last entry, 'c'
# a 0/1 condition. Prints one JSON line: per case, per subset, the gradients and the output.
SCRIPT = r'''
import itertools, json, sys
import numpy as np

CASES = [
    ("mul", "elemwise_mul", {}, [((3,), "x"), ((3,), "x")]),
    ("div", "elemwise_div", {}, [((2, 3), "x"), ((2, 3), "p")]),
    ("add", "elemwise_add", {}, [((2, 3), "x"), ((2, 3), "x")]),
    ("sub", "elemwise_sub", {}, [((2, 3), "x"), ((2, 3), "x")]),
    ("power", "_power", {}, [((2, 3), "p"), ((2, 3), "x")]),
    ("maximum", "_maximum", {}, [((2, 3), "x"), ((2, 3), "x")]),
    ("minimum", "_minimum", {}, [((2, 3), "x"), ((2, 3), "x")]),
    ("hypot", "_hypot", {}, [((2, 3), "x"), ((2, 3), "x")]),
    ("mod", "_mod", {}, [((2, 3), "x"), ((2, 3), "p")]),
    ("b_mul_row", "broadcast_mul", {}, [((2, 3), "x"), ((1, 3), "x")]),
    ("b_mul_outer", "broadcast_mul", {}, [((2, 1), "x"), ((1, 3), "x")]),
    ("b_div", "broadcast_div", {}, [((2, 3), "x"), ((2, 1), "p")]),
    ("b_add", "broadcast_add", {}, [((2, 3), "x"), ((3,), "x")]),
    ("b_sub", "broadcast_sub", {}, [((1, 3), "x"), ((2, 3), "x")]),
    ("b_power", "broadcast_power", {}, [((2, 3), "p"), ((1, 3), "x")]),
    ("b_maximum", "broadcast_maximum", {}, [((2, 3), "x"), ((2, 1), "x")]),
    ("b_minimum", "broadcast_minimum", {}, [((2, 1), "x"), ((2, 3), "x")]),
    ("b_hypot", "broadcast_hypot", {}, [((2, 3), "x"), ((1, 3), "x")]),
    ("b_mod", "broadcast_mod", {}, [((2, 3), "x"), ((1, 3), "p")]),
    ("b_greater", "broadcast_greater", {}, [((2, 3), "x"), ((1, 3), "x")]),
    ("broadcast_like", "broadcast_like", {}, [((1, 3), "x"), ((2, 3), "x")]),
    ("dot", "dot", {}, [((3, 4), "x"), ((4, 2), "x")]),
    ("dot_t", "dot", {"transpose_a": True, "transpose_b": True}, [((4, 3), "x"), ((2, 4), "x")]),
    ("batch_dot", "batch_dot", {}, [((2, 3, 4), "x"), ((2, 4, 2), "x")]),
    ("concat0", "Concat", {"dim": 0}, [((2, 2), "x"), ((3, 2), "x"), ((4, 2), "x")]),
    ("concat1", "Concat", {"dim": 1}, [((2, 1), "x"), ((2, 3), "x"), ((2, 2), "x")]),
    ("stack", "stack", {"axis": 1}, [((2, 3), "x"), ((2, 3), "x"), ((2, 3), "x")]),
    ("add_n", "add_n", {}, [((2, 3), "x"), ((2, 3), "x"), ((2, 3), "x")]),
    ("ElementWiseSum", "ElementWiseSum", {}, [((3,), "x"), ((3,), "x")]),
    ("where", "where", {}, [((2, 3), "c"), ((2, 3), "x"), ((2, 3), "x")]),
    ("take", "take", {"axis": 0}, [((4, 3), "x"), ((5, 4), "i")]),
    ("pick", "pick", {"axis": 1}, [((3, 4), "x"), ((3, 4), "i")]),
    ("Embedding", "Embedding", {"input_dim": 5, "output_dim": 3}, [((4, 5), "i"), ((5, 3), "x")]),
    ("FullyConnected", "FullyConnected", {"num_hidden": 3},
     [((2, 5), "x"), ((3, 5), "x"), ((3,), "x")]),
    ("FullyConnected_3d", "FullyConnected", {"num_hidden": 2, "flatten": False},
     [((2, 3, 4), "x"), ((2, 4), "x"), ((2,), "x")]),
    ("Convolution", "Convolution", {"num_filter": 3, "kernel": (3, 3), "pad": (1, 1), "stride": (2, 2)},
     [((2, 2, 5, 5), "x"), ((3, 2, 3, 3), "x"), ((3,), "x")]),
    ("Convolution_groups", "Convolution", {"num_filter": 4, "kernel": (2, 2), "num_group": 2},
     [((1, 2, 4, 4), "x"), ((4, 1, 2, 2), "x"), ((4,), "x")]),
    ("Deconvolution", "Deconvolution", {"num_filter": 3, "kernel": (3, 3), "stride": (2, 2), "no_bias": False},
     [((1, 2, 3, 3), "x"), ((2, 3, 3, 3), "x"), ((3,), "x")]),
    ("BatchNorm", "BatchNorm", {"fix_gamma": False},
     [((4, 3, 2, 2), "x"), ((3,), "p"), ((3,), "x")]),
    ("prelu", "LeakyReLU", {"act_type": "prelu"}, [((2, 3, 4), "x"), ((3,), "p")]),
    ("UpSampling_two", "UpSampling", {"scale": 2, "sample_type": "nearest"},
     [((1, 2, 2, 2), "x"), ((1, 1, 4, 4), "x")]),
]


def values(case_index, shape, kind, dtype):
    rng = np.random.RandomState(1000 + case_index)
    if kind == "i":
        return rng.randint(0, shape[-1], size=shape[:-1]).astype(dtype)
    if kind == "c":
        return (rng.uniform(size=shape) > 0.5).astype(dtype)
    v = rng.uniform(0.5, 2.0, size=shape) if kind == "p" else rng.normal(size=shape)
    return v.astype(dtype)


def op_fn(name):
    return getattr(mx.sym, name, None) or getattr(mx.sym._internal, name)


def run(case_index, case, dtype, given=None):
    """The output and the gradients of `given` (names) for one case; all of them by default."""
    _, op, kwargs, inputs = case
    names = ["in%d" % i for i in range(len(inputs))]
    sym = op_fn(op)(*[mx.sym.Variable(n) for n in names], **kwargs)
    args = {n: mx.nd.array(values(case_index * 10 + i, shape, kind, dtype), dtype=dtype)
            for i, (n, (shape, kind)) in enumerate(zip(names, inputs))}
    grads = {n: mx.nd.zeros(args[n].shape, dtype=dtype) for n in given}
    req = {n: ("write" if n in given else "null") for n in names}
    ex = sym.bind(mx.cpu(), args, args_grad=grads, grad_req=req,
                  aux_states={n: mx.nd.ones(s, dtype=dtype) if "var" in n else mx.nd.zeros(s, dtype=dtype)
                              for n, s in zip(sym.list_auxiliary_states(),
                                              sym.infer_shape(**{k: v.shape for k, v in args.items()})[2])})
    out = ex.forward(is_train=True)[0]
    head = mx.nd.array(np.random.RandomState(case_index).normal(size=out.shape).astype(dtype), dtype=dtype)
    ex.backward([head])
    return out.asnumpy(), {n: grads[n].asnumpy() for n in given}, args, head


def differentiable(case):
    return ["in%d" % i for i, (_, kind) in enumerate(case[3]) if kind in "xp"]


def finite_differences(ci, case, eps=1e-6):
    """Central differences of sum(head * output) in float64, beside the analytic gradients."""
    _, op, kwargs, inputs = case
    out, grads, args, head = run(ci, case, "float64", differentiable(case))
    names = ["in%d" % i for i in range(len(inputs))]
    sym = op_fn(op)(*[mx.sym.Variable(n) for n in names], **kwargs)
    ex = sym.simple_bind(mx.cpu(), grad_req="null", type_dict={n: "float64" for n in args},
                         **{n: a.shape for n, a in args.items()})
    for n, a in args.items():
        ex.arg_dict[n][:] = a
    for n in sym.list_auxiliary_states():
        ex.aux_dict[n][:] = 1 if "var" in n else 0
    h = head.asnumpy()
    numeric = {}
    for n in differentiable(case):
        base = args[n].asnumpy()
        g = np.zeros(base.size)
        for k in range(base.size):
            for sign in (1, -1):
                x = base.copy().ravel()
                x[k] += sign * eps
                ex.arg_dict[n][:] = x.reshape(base.shape)
                g[k] += sign * float((ex.forward(is_train=True)[0].asnumpy() * h).sum()) / (2 * eps)
        ex.arg_dict[n][:] = base
        numeric[n] = [g.tolist(), grads[n].ravel().tolist()]
    return numeric


if sys.argv[1] == "finite-differences":
    print(json.dumps({case[0]: finite_differences(ci, case) for ci, case in enumerate(CASES)}))
else:
    result = {}
    for ci, case in enumerate(CASES):
        per_subset = {}
        diff = differentiable(case)
        for r in range(1, len(diff) + 1):
            for subset in itertools.combinations(diff, r):
                out, grads, _, _ = run(ci, case, sys.argv[1], subset)
                per_subset[",".join(subset)] = {n: g.ravel().tolist() for n, g in grads.items()}
                per_subset[",".join(subset)]["output"] = out.ravel().tolist()
        result[case[0]] = per_subset
    print(json.dumps(result))
'''

@pytest.fixture(scope="module")
def both(mx):
    here = run_here(mx, SCRIPT, ["float64"])
    there = run_mxnet_script(SCRIPT, ["float64"])
    return here, there


def case_names():
    return [line.split('"')[1] for line in SCRIPT.splitlines() if line.startswith('    ("')]


@pytest.mark.parametrize("case", case_names())
def test_gradients_asked_for_do_not_depend_on_the_others(both, case):
    here, there = both
    subsets = here[case]
    full = max(subsets, key=lambda s: s.count(","))
    for subset, grads in subsets.items():
        for name, g in grads.items():
            # Equal to MXNet 1.9.1's for the same subset, and to this system's full-set gradient.
            np.testing.assert_allclose(g, there[case][subset][name], rtol=1e-6, atol=1e-9,
                                       err_msg="%s: %s with gradients for %s only, against MXNet 1.9.1"
                                       % (case, name, subset))
            if name != "output":
                np.testing.assert_allclose(g, subsets[full][name], rtol=1e-12, atol=1e-12,
                                           err_msg="%s: %s differs when only %s have gradients"
                                           % (case, name, subset))


def test_full_gradients_equal_finite_differences(mx):
    numeric = run_here(mx, SCRIPT, ["finite-differences"])
    for case, per_input in numeric.items():
        for name, (fd, analytic) in per_input.items():
            np.testing.assert_allclose(analytic, fd, rtol=1e-5, atol=1e-6,
                                       err_msg="%s: gradient of %s against finite differences" % (case, name))


def test_the_issue_cases_as_reported(mx):
    """The two reports, exactly: a*p with only a's gradient, Concat with the middle input left out."""
    a, p = mx.sym.Variable("a"), mx.sym.Variable("p")
    ga = mx.nd.zeros(3)
    ex = (a * p).bind(mx.cpu(), {"a": mx.nd.array([1, 2, 3]), "p": mx.nd.array([10, 20, 30])}, args_grad={"a": ga})
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones(3))
    assert ga.asnumpy().tolist() == [10, 20, 30]
    x, y, z = (mx.sym.Variable(n) for n in "xyz")
    gz = mx.nd.zeros((4, 2))
    ex = mx.sym.Concat(x, y, z, dim=0).bind(
        mx.cpu(), {"x": mx.nd.ones((2, 2)), "y": mx.nd.ones((3, 2)), "z": mx.nd.ones((4, 2))},
        args_grad={"x": mx.nd.zeros((2, 2)), "z": gz})
    ex.forward(is_train=True)
    ex.backward(mx.nd.array(np.repeat(np.arange(9.0), 2).reshape(9, 2)))
    assert gz.asnumpy().ravel().tolist() == [5, 5, 6, 6, 7, 7, 8, 8]
