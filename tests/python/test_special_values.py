"""Reductions, comparisons, maximum/minimum and argmax/argmin on inf, -inf and NaN in every float
dtype, against NumPy (and argmax/argmin also against PyTorch and MXNet 1.9.1). Before the fix,
float64 max over [-inf, -inf] gave -1.797e308 (the accumulator started at the double's lowest()),
maximum(nan, 1) gave 1, and argmax skipped NaN."""
import itertools

import numpy as np
import pytest

from conftest import run_here, run_mxnet_script

FLOATS = ["float16", "float32", "float64"]
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, 1.0, -1.0]
# Rows with every mix that matters: all NaN, NaN first or last, infinities of one or both signs.
ROWS = [[np.nan, 1, 3], [2, np.nan, 1], [1, 2, np.nan], [-np.inf, -np.inf, -np.inf], [np.inf, np.inf, 1],
        [np.nan, np.nan, np.nan], [np.inf, -np.inf, 0], [3, 1, np.inf], [-1, -np.inf, 2], [5, 5, 5]]

REDUCTIONS = {"sum": np.sum, "mean": np.mean, "prod": np.prod, "max": np.max, "min": np.min,
              "nansum": np.nansum, "nanprod": np.nanprod,
              "norm": lambda x, axis: np.sqrt(np.sum(x.astype(np.float64) ** 2, axis=axis)).astype(x.dtype)}


def check(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, what
    np.testing.assert_array_equal(got, want, err_msg=what)  # NaN equals NaN here


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", sorted(REDUCTIONS))
def test_reductions_of_special_values_equal_numpy(mx, dtype, op):
    x = np.array(ROWS, dtype=dtype)
    with np.errstate(all="ignore"):
        for axis in (0, 1):
            check(getattr(mx.nd, op)(mx.nd.array(x, dtype=dtype), axis=axis).asnumpy(),
                  REDUCTIONS[op](x, axis=axis), "%s(axis=%d) of %s" % (op, axis, dtype))
        for row in x:  # every row alone, reduced whole
            check(getattr(mx.nd, op)(mx.nd.array(row, dtype=dtype)).asnumpy(),
                  np.array([REDUCTIONS[op](row, axis=None)], dtype=dtype), "%s of %s %s" % (op, row, dtype))


@pytest.mark.parametrize("dtype", FLOATS)
def test_max_and_min_of_infinities_are_infinities(mx, dtype):
    # The reported case: float64 gave -1.797e308 and 1.797e308.
    assert mx.nd.max(mx.nd.array([-np.inf, -np.inf], dtype=dtype)).asnumpy()[0] == -np.inf
    assert mx.nd.min(mx.nd.array([np.inf], dtype=dtype)).asnumpy()[0] == np.inf


COMPARISONS = {"equal": np.equal, "not_equal": np.not_equal, "greater": np.greater,
               "greater_equal": np.greater_equal, "lesser": np.less, "lesser_equal": np.less_equal,
               "maximum": np.maximum, "minimum": np.minimum}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", sorted(COMPARISONS))
def test_comparisons_of_special_values_equal_numpy(mx, dtype, op):
    pairs = np.array(list(itertools.product(SPECIAL, SPECIAL)), dtype=dtype)
    a, b = pairs[:, 0], pairs[:, 1]
    want = COMPARISONS[op](a, b).astype(dtype)
    A, B = mx.nd.array(a, dtype=dtype), mx.nd.array(b, dtype=dtype)
    check(getattr(mx.nd, "broadcast_" + op)(A, B).asnumpy(), want, "broadcast_%s, %s" % (op, dtype))
    check(getattr(mx.nd._internal, "_" + op)(A, B).asnumpy(), want, "_%s, %s" % (op, dtype))
    col = mx.nd.array(a[::6].reshape(6, 1), dtype=dtype)  # broadcast (6, 1) against (1, 6)
    check(getattr(mx.nd, "broadcast_" + op)(col, mx.nd.array(b[:6].reshape(1, 6), dtype=dtype)).asnumpy(),
          want.reshape(6, 6), "broadcast_%s (6, 1) x (1, 6), %s" % (op, dtype))
    for s in SPECIAL:  # the scalar forms, the scalar itself special too
        check(getattr(mx.nd._internal, "_%s_scalar" % op)(A, scalar=s).asnumpy(),
              COMPARISONS[op](a, np.array(s, dtype=dtype)).astype(dtype), "_%s_scalar(%s), %s" % (op, s, dtype))


ARG_SCRIPT = r"""
import json
import numpy as np
nan, inf = float("nan"), float("inf")
rows = %r
out = {}
for dt in ["float16", "float32", "float64"]:
    x = mx.nd.array(np.array(rows, dtype=dt), dtype=dt)
    out[dt] = {op: [getattr(mx.nd, op)(x, axis=a).asnumpy().astype(int).tolist() for a in (0, 1)]
               + [getattr(mx.nd, op)(x).asnumpy().astype(int).tolist()] for op in ("argmax", "argmin")}
print(json.dumps(out))
""" % ([[float(v) for v in row] for row in ROWS],)


def test_argmax_and_argmin_pick_the_first_nan_as_mxnet_numpy_and_pytorch(mx):
    import torch
    here, there = run_here(mx, ARG_SCRIPT, []), run_mxnet_script(ARG_SCRIPT, [])
    assert here == there
    for dt in FLOATS:
        x = np.array(ROWS, dtype=dt)
        for op in ("argmax", "argmin"):
            want = [getattr(np, op)(x, axis=a).tolist() for a in (0, 1)] + [[int(getattr(np, op)(x))]]
            assert here[dt][op] == want, (dt, op)
            t = torch.tensor(x.astype(np.float32))  # PyTorch's CPU argmax takes float32 here
            assert here[dt][op][:2] == [getattr(torch, op)(t, dim=a).tolist() for a in (0, 1)], (dt, op)
