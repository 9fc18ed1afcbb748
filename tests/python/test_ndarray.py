"""mx.nd against NumPy: creation, properties, views, indexing, operators with broadcasting,
reductions, engine ordering and error reporting, save/load and pickle."""
import json
import pickle
import struct

import numpy as np
import pytest

from conftest import TEST_DEVICE, TEST_PLUGINS, run_python

rng = np.random.default_rng(0)


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(a.asnumpy() if hasattr(a, "asnumpy") else a, b, rtol=tol, atol=tol)


def test_creation_functions_match_numpy(mx):
    assert mx.nd.zeros((2, 3)).asnumpy().tolist() == np.zeros((2, 3)).tolist()
    assert mx.nd.ones(4, dtype="int32").asnumpy().tolist() == [1, 1, 1, 1]
    assert mx.nd.ones(4, dtype="int32").dtype == np.int32
    close(mx.nd.full((2, 2), 3.5), np.full((2, 2), 3.5))
    close(mx.nd.arange(2, 11, 3), np.arange(2, 11, 3))
    close(mx.nd.arange(5), np.arange(5))
    close(mx.nd.arange(0, 3, repeat=2), np.repeat(np.arange(3), 2))
    close(mx.nd.eye(3, 4, k=1), np.eye(3, 4, k=1))
    src = rng.standard_normal((3, 4)).astype(np.float64)
    assert mx.nd.array(src).dtype == np.float32  # as MXNet: float32 unless dtype is given
    assert mx.nd.array(np.arange(3)).dtype == np.float32
    assert mx.nd.array([[1, 2], [3, 4]]).dtype == np.float32
    a = mx.nd.array(src, dtype=src.dtype)
    assert a.dtype == np.float64
    close(mx.nd.zeros_like(a), np.zeros_like(src))
    close(mx.nd.ones_like(a), np.ones_like(src))
    for dtype in ("float32", "float64", "float16", "uint8", "int8", "int32", "int64"):
        x = mx.nd.array([1, 2, 3], dtype=dtype)
        assert x.dtype == np.dtype(dtype).type
        assert x.asnumpy().dtype == np.dtype(dtype)
        assert (x + x).asnumpy().tolist() == [2, 4, 6]


def test_properties_and_conversions(mx):
    a = mx.nd.array(np.arange(24).reshape(2, 3, 4), dtype="int64")
    assert a.shape == (2, 3, 4) and a.size == 24 and a.ndim == 3
    assert a.context == mx.current_context() and a.ctx == a.context
    assert str(mx.nd.array([1], ctx=mx.cpu()).context) == "cpu(0)"
    b = a.copy()
    b += 1
    close(a, np.arange(24).reshape(2, 3, 4))  # copy is independent
    c = mx.nd.zeros((2, 3, 4))
    a.copyto(c)
    close(c, a.asnumpy())
    assert a.as_in_context(a.context) is a
    on_cpu = a.as_in_context(mx.cpu())
    assert on_cpu.context == mx.cpu() and on_cpu.asnumpy().tolist() == a.asnumpy().tolist()
    i = a.astype("int32")
    assert i.dtype == np.int32 and i.asnumpy().tolist() == a.asnumpy().astype(np.int32).tolist()
    assert i.astype(np.int32, copy=False) is i
    assert mx.nd.array([7.5]).asscalar() == 7.5
    with pytest.raises(ValueError):
        a.asscalar()
    assert "<NDArray 2x3x4 @%s>" % a.context in repr(a)


def test_reshape_views_and_special_values(mx):
    a = mx.nd.array(np.arange(24).reshape(2, 3, 4))
    assert a.reshape((4, 0, 2)).shape == (4, 3, 2)
    assert a.reshape((-1,)).shape == (24,)
    assert a.reshape((-3, -2)).shape == (6, 4)
    assert a.reshape((-4, 1, 2, -2)).shape == (1, 2, 3, 4)
    assert a.reshape((-1, 0), reverse=True).shape == (6, 4)
    assert a.reshape(6, 4).shape == (6, 4)
    v = a.reshape((6, 4))
    v[:] = 0  # a reshape is a view, as in MXNet
    assert a.asnumpy().sum() == 0
    assert a.flatten().shape == (2, 12)
    assert a.expand_dims(1).shape == (2, 1, 3, 4)
    assert mx.nd.zeros((1, 3, 1)).squeeze().shape == (3,)
    assert mx.nd.zeros((1, 3, 1)).squeeze(axis=0).shape == (3, 1)
    m = mx.nd.array([[1, 2, 3], [4, 5, 6]])
    close(m.T, np.array([[1, 2, 3], [4, 5, 6]]).T)
    with pytest.raises(mx.MXNetError, match="Reshape"):
        a.reshape((5, -1))


@pytest.mark.parametrize("key", [
    1, -1, slice(1, 3), slice(None, None, 2), slice(None, None, -1), (1, 2), (slice(None), 1),
    (Ellipsis, 1), (1, Ellipsis), (None, 1), (slice(0, 3, 2), None, slice(1, None)),
    ([0, 2, 2],), (slice(None), [1, 0]), (1, [2, 0]), (-2, slice(None, None, -2)),
])
def test_getitem_matches_numpy(mx, key):
    src = np.arange(20, dtype=np.float32).reshape(4, 5)
    a = mx.nd.array(src)
    k = key[0] if isinstance(key, tuple) and len(key) == 1 and isinstance(key[0], list) else key
    expect = src[k]
    got = a[k]
    assert got.shape == np.asarray(expect).shape or (got.shape == (1,) and np.ndim(expect) == 0)
    close(got.asnumpy().reshape(np.shape(expect)), expect)


def test_getitem_with_an_ndarray_index(mx):
    src = np.arange(12, dtype=np.float32).reshape(4, 3)
    a = mx.nd.array(src)
    close(a[mx.nd.array([3, 0], dtype="int32")], src[[3, 0]])


# Keys with several index arrays, as text so that MXNet 1.9.1 evaluates the same ones: the arrays
# broadcast together and pick elements pointwise (they were taken one axis at a time, so
# y[[1, 1, 0], [0, 1, 0]] gave a 3x3 array instead of [2, 3, 0]).
ADVANCED_KEYS = [
    "y[[1, 1, 0], [0, 1, 0]]", "y[[[1, 1, 0], [0, 1, 0]]]", "x[[0, 1], [1, 2]]", "x[[0, 1], :, [1, 2]]",
    "x[:, [0, 1], [1, 2]]", "x[1, :, [0, 3]]", "x[[0, 1], 1]", "x[[[0], [1]], [0, 2]]", "x[None, [0, 1]]",
    "x[nd.array([1, 0]), nd.array([2, 2])]", "x[[-1, 0], [-1, -3]]", "x[..., [0, 3]]", "x[[1, 0], ::2]",
    "x[np.array([1, 0]), 1:3, np.array([0, 3])]", "x[1, [0, 2], 3]", "x[0, None]", "x[:, None, 1]",
    "x[[0, 1], None, [1, 2]]", "x[1, ..., [[0], [3]]]",
]
ADVANCED_SCRIPT = """
import json
import numpy as np
nd = mx.nd
x = nd.array(np.arange(24).reshape(2, 3, 4))
y = nd.array([[0, 1], [2, 3]])
out = {}
for key in %r:
    r = eval(key).asnumpy()
    out[key] = [list(r.shape), r.ravel().tolist()]
print(json.dumps(out))
""" % (ADVANCED_KEYS,)


def test_advanced_indexing_is_pointwise_as_numpy_and_mxnet(mx):
    from conftest import run_here, run_mxnet_script
    here = run_here(mx, ADVANCED_SCRIPT, [])
    there = run_mxnet_script(ADVANCED_SCRIPT, [])
    x, y = np.arange(24.0).reshape(2, 3, 4), np.array([[0.0, 1], [2, 3]])
    for key in ADVANCED_KEYS:
        want = np.asarray(eval(key.replace("nd.array", "np.array"), {"x": x, "y": y, "np": np}))  # noqa: S307
        assert here[key] == [list(want.shape), want.ravel().tolist()], key
        assert here[key] == there[key], key
    assert here["y[[1, 1, 0], [0, 1, 0]]"] == [[3], [2.0, 3.0, 0.0]]  # the reported case


def test_advanced_indexing_errors_name_the_axis_and_shapes(mx):
    x = mx.nd.zeros((2, 3))
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 1 with size 3"):
        x[[0, 1], [0, 3]]
    with pytest.raises(IndexError, match=r"could not be broadcast together with shapes \(2,\) \(3,\)"):
        x[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError, match="too many indices"):
        x[[0], [0], [0]]


@pytest.mark.parametrize("key", [
    slice(None), 1, slice(1, 3), (slice(None), 2), (1, slice(0, 2)), (slice(None, None, 2), slice(None, None, -2)),
    (Ellipsis, 0), ([0, 2],),
])
@pytest.mark.parametrize("kind", ["scalar", "ndarray", "numpy"])
def test_setitem_matches_numpy(mx, key, kind):
    src = np.arange(20, dtype=np.float32).reshape(4, 5)
    k = key[0] if isinstance(key, tuple) and len(key) == 1 and isinstance(key[0], list) else key
    target_shape = src[k].shape
    value = 7.0 if kind == "scalar" else rng.standard_normal(target_shape[-1:] or ()).astype(np.float32)
    a = mx.nd.array(src)
    expect = src.copy()
    expect[k] = value
    a[k] = mx.nd.array(value) if kind == "ndarray" and np.ndim(value) else value
    close(a, expect)


BINARY = [("__add__", np.add), ("__sub__", np.subtract), ("__mul__", np.multiply),
          ("__truediv__", np.divide), ("__pow__", np.power), ("__mod__", np.mod)]


@pytest.mark.parametrize("method,ref", BINARY)
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 1, 4), (2, 4)), ((4,), (3, 4)), ((2, 3), (1,))])
def test_binary_operators_broadcast_like_numpy(mx, method, ref, shapes):
    x = rng.uniform(0.5, 2.0, shapes[0]).astype(np.float32)
    y = rng.uniform(0.5, 2.0, shapes[1]).astype(np.float32)
    a, b = mx.nd.array(x), mx.nd.array(y)
    close(getattr(a, method)(b), ref(x, y), 1e-4)
    close(getattr(a, method)(1.5), ref(x, np.float32(1.5)), 1e-4)
    rmethod = "__r" + method[2:]
    close(getattr(a, rmethod)(1.5), ref(np.float32(1.5), x), 1e-4)


def test_inplace_operators_and_aliases_are_serialized(mx):
    x = mx.nd.array([1, 2])
    y = x
    for _ in range(50):
        x += 1
        y *= 3
        x -= 0.5
        y /= 2
    expect = np.array([1, 2], dtype=np.float64)
    for _ in range(50):
        expect = (((expect + 1) * 3) - 0.5) / 2
    close(y, expect, 1e-3)
    assert x is y


def test_operators_through_the_number_slots_match_numpy_and_raise_as_methods_do(mx):
    # Note [Arithmetic slots]: `a + b` enters through the type's slot, not the method.
    x = np.array([1.5, -2.0, 4.0], dtype=np.float32)
    a = mx.nd.array(x)
    close(2 - a, 2 - x)
    close(3 / a, 3 / x, 1e-6)
    close(2 ** a, 2 ** x, 1e-5)
    close(a ** 2, x ** 2)
    close(a % 1.25, np.mod(x, np.float32(1.25)), 1e-6)
    with pytest.raises(TypeError):
        pow(a, 2, 3)  # NDArray takes no modulus
    with pytest.raises(TypeError):
        a + "1"
    with pytest.raises(TypeError):
        "1" + a
    with pytest.raises(mx.MXNetError, match="broadcast_add"):
        a + mx.nd.ones((2,))
    b = a
    b **= 2
    assert b is a
    close(a, x ** 2)
    with pytest.raises(TypeError):
        b += "1"


def test_comparisons_give_zero_one_arrays_of_the_input_dtype(mx):
    x = np.array([[1, 5, 3]], dtype=np.float32)
    a = mx.nd.array(x)
    for op, ref in [("__eq__", np.equal), ("__ne__", np.not_equal), ("__gt__", np.greater),
                    ("__ge__", np.greater_equal), ("__lt__", np.less), ("__le__", np.less_equal)]:
        got = getattr(a, op)(3)
        assert got.dtype == np.float32
        close(got, ref(x, 3).astype(np.float32))
        close(getattr(a, op)(mx.nd.array([[3], [1]])), ref(x, np.array([[3], [1]])).astype(np.float32))
    assert (mx.nd.array([1, 2], dtype="int32") == 2).dtype == np.int32


def test_bool_of_arrays(mx):
    assert bool(mx.nd.array([1])) and not bool(mx.nd.array([0]))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(mx.nd.array([1, 2]))


UNARY = ["negative", "abs", "sign", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "square",
         "reciprocal", "sin", "cos", "tanh", "sigmoid", "relu", "round", "floor", "ceil", "log2"]
NUMPY_UNARY = {"rsqrt": lambda v: 1 / np.sqrt(v), "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
               "relu": lambda v: np.maximum(v, 0), "log1p": np.log1p}


@pytest.mark.parametrize("op", UNARY)
def test_unary_ops_match_numpy(mx, op):
    x = rng.uniform(0.1, 3.0, (3, 5)).astype(np.float32) * rng.choice([-1, 1], (3, 5))
    if op in ("log", "log1p", "sqrt", "rsqrt", "log2"):
        x = np.abs(x)
    ref = NUMPY_UNARY.get(op) or getattr(np, op)
    close(getattr(mx.nd, op)(mx.nd.array(x)), ref(x), 1e-5)


@pytest.mark.parametrize("op", ["sum", "mean", "prod", "max", "min"])
@pytest.mark.parametrize("axis,keepdims", [(None, False), (1, False), ((0, 2), True), (-1, True)])
def test_reductions_match_numpy(mx, op, axis, keepdims):
    x = rng.uniform(0.5, 1.5, (3, 4, 2))
    a = mx.nd.array(x, dtype="float64")
    got = getattr(mx.nd, op)(a, axis=axis, keepdims=keepdims)
    expect = getattr(np, op)(x, axis=axis, keepdims=keepdims)
    close(got.asnumpy().reshape(np.shape(expect)), expect, 1e-10)
    got = getattr(a, op)(axis=axis, exclude=True) if axis is not None else None
    if got is not None:
        keep = (axis,) if isinstance(axis, int) else axis
        keep = tuple(k % 3 for k in keep)
        other = tuple(i for i in range(3) if i not in keep)
        close(got, getattr(np, op)(x, axis=other), 1e-10)


def test_clip_transpose_take_broadcast_to(mx):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    a = mx.nd.array(x)
    close(mx.nd.clip(a, -0.5, 0.5), np.clip(x, -0.5, 0.5))
    close(a.transpose(axes=(2, 0, 1)), x.transpose(2, 0, 1))
    close(mx.nd.transpose(a), x.transpose())
    idx = np.array([[2, 0], [1, 1]])
    close(mx.nd.take(a, mx.nd.array(idx), axis=1), np.take(x, idx, axis=1))
    close(mx.nd.array([[1], [2]]).broadcast_to((2, 3)), np.broadcast_to([[1], [2]], (2, 3)))


def test_positional_parameters_and_keyword_inputs(mx):
    x = rng.standard_normal((3, 4)).astype(np.float32)
    w = rng.standard_normal((5, 4)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    out = mx.nd.FullyConnected(data=mx.nd.array(x), weight=mx.nd.array(w), bias=mx.nd.array(b), num_hidden=5)
    close(out, x @ w.T + b, 1e-4)
    close(mx.nd.sum(mx.nd.array(x), 1), x.sum(axis=1))  # axis given positionally, as in MXNet
    dest = mx.nd.zeros((3, 5))
    res = mx.nd.FullyConnected(mx.nd.array(x), mx.nd.array(w), mx.nd.array(b), num_hidden=5, out=dest)
    assert res is dest
    close(dest, x @ w.T + b, 1e-4)


def test_bad_calls_name_the_op_and_the_argument(mx):
    a = mx.nd.ones((2, 3))
    with pytest.raises(mx.MXNetError, match=r"elemwise_add.*rhs"):
        mx.nd.elemwise_add(a, mx.nd.ones((3, 2)))
    with pytest.raises(mx.MXNetError, match=r"num_hidden"):
        mx.nd.FullyConnected(a, mx.nd.ones((4, 3)), mx.nd.ones(4), num_hidden=-1)
    with pytest.raises(mx.MXNetError, match=r"broadcast_add.*could not be broadcast"):
        a + mx.nd.ones((4,))
    with pytest.raises(mx.MXNetError, match=r"expected 2 inputs"):
        mx.nd.elemwise_add(a)
    with pytest.raises(mx.MXNetError, match=r"no input named 'bogus'"):
        mx.nd.elemwise_add(a, a, bogus=a)
    assert (a + a).asnumpy().sum() == 12  # and the process goes on


def test_kernel_errors_surface_at_the_next_sync_point_then_clear(mx):
    mx.library.load(str(TEST_PLUGINS / "faulty" / "libtest_faulty_ops.so"), verbose=False)
    assert hasattr(mx.nd, "test_FailForward")  # ops of a plugin loaded later appear at once
    a = mx.nd.ones((3,), ctx=mx.cpu())  # the op has only a CPU kernel
    bad = mx.nd.test_FailForward(a)  # returns at once; the kernel fails on a worker
    after = bad + 1
    with pytest.raises(mx.MXNetError, match="deliberate failure"):
        after.asnumpy()
    after.wait_to_read()  # reported once, then cleared everywhere it reached (MXNet 1.9.1 does
    bad.wait_to_read()    # the same: tests/python/test_hardening.py checks it against MXNet)
    mx.nd.waitall()
    assert (a * 2).asnumpy().tolist() == [2, 2, 2]


def test_generated_functions_have_docstrings_from_the_schema(mx):
    doc = mx.nd.FullyConnected.__doc__
    assert "num_hidden : int >= 1, required" in doc
    assert "no_bias : boolean, default false" in doc
    assert "data : NDArray-or-Symbol" in doc
    assert mx.nd._internal._plus_scalar is not None


def test_save_load_round_trips(mx, tmp_path):
    arrays = {"w": mx.nd.array(rng.standard_normal((3, 4))), "i": mx.nd.array([1, 2], dtype="int64"),
              "h": mx.nd.array([0.5, 1.5], dtype="float16"), "s": mx.nd.array([3.0])}
    f = str(tmp_path / "d.params")
    mx.nd.save(f, arrays)
    back = mx.nd.load(f)
    assert sorted(back) == sorted(arrays)
    for k in arrays:
        assert back[k].dtype == arrays[k].dtype
        close(back[k], arrays[k].asnumpy())
    mx.nd.save(f, [arrays["w"], arrays["i"]])
    lst = mx.nd.load(f)
    assert isinstance(lst, list) and len(lst) == 2
    mx.nd.save(f, arrays["w"])
    close(mx.nd.load(f)[0], arrays["w"].asnumpy())
    with open(f, "rb") as fh:
        close(mx.nd.load_frombuffer(fh.read())[0], arrays["w"].asnumpy())


def test_truncated_and_corrupted_files_raise_and_never_crash(mx, tmp_path):
    f = str(tmp_path / "x.params")
    mx.nd.save(f, {"a": mx.nd.array(np.arange(6.0).reshape(2, 3)), "b": mx.nd.ones(2, dtype="int32")})
    data = open(f, "rb").read()
    for n in range(len(data)):  # every prefix is an error, never a crash or a partial result
        with pytest.raises(mx.MXNetError, match="cannot load NDArrays"):
            mx.nd.load_frombuffer(data[:n])
    flips = np.random.default_rng(1)
    for _ in range(300):  # random corruption: a clear error or a well-formed result
        buf = bytearray(data)
        for pos in flips.integers(0, len(buf), 3):
            buf[pos] ^= int(flips.integers(1, 256))
        try:
            mx.nd.load_frombuffer(bytes(buf))
        except mx.MXNetError as e:
            assert "cannot load NDArrays" in str(e)
    with pytest.raises(mx.MXNetError, match="cannot open"):
        mx.nd.load(str(tmp_path / "missing.params"))


def test_pickle_round_trip(mx):
    a = mx.nd.array(rng.standard_normal((2, 3)), dtype="float64")
    b = pickle.loads(pickle.dumps(a))
    assert b.dtype == np.float64 and b.context == a.context
    close(b, a.asnumpy())


def test_files_are_compatible_with_mxnet_both_ways(mx, tmp_path):
    from conftest import run_mxnet
    theirs = tmp_path / "theirs.params"
    out = run_mxnet(
        "import mxnet as mx, numpy as np\n"
        "r = np.random.RandomState(3)\n"
        "mx.nd.save(%r, {'w': mx.nd.array(r.randn(3, 4)), 'i': mx.nd.array([5, 6], dtype='int32'),\n"
        "  'd': mx.nd.array(r.randn(2), dtype='float64'), 'u': mx.nd.array([1, 255], dtype='uint8')})\n"
        "print('ok')" % str(theirs))
    assert out.strip() == "ok"
    r = np.random.RandomState(3)
    w, d = r.randn(3, 4).astype(np.float32), r.randn(2)
    got = mx.nd.load(str(theirs))
    close(got["w"], w, 0)
    assert got["i"].dtype == np.int32 and got["i"].asnumpy().tolist() == [5, 6]
    close(got["d"], d, 0)
    assert got["u"].asnumpy().tolist() == [1, 255]
    ours = tmp_path / "ours.params"
    mx.nd.save(str(ours), {"w": mx.nd.array(w), "h": mx.nd.array([1.5, -2], dtype="float16"),
                           "l": mx.nd.array([2 ** 40], dtype="int64")})
    text = run_mxnet(
        "import mxnet as mx\n"
        "d = mx.nd.load(%r)\n"
        "for k in sorted(d): print(k, d[k].dtype.__name__, d[k].shape, d[k].asnumpy().ravel().tolist())"
        % str(ours))
    lines = text.strip().splitlines()
    assert lines[0] == "h float16 (2,) [1.5, -2.0]"
    assert lines[1] == "l int64 (1,) [1099511627776]"
    assert lines[2].startswith("w float32 (3, 4) ")
    np.testing.assert_allclose(eval(lines[2].split(" ", 4)[4]), w.ravel(), rtol=0, atol=0)
    # Byte-identical to what MXNet writes for the same arrays. (The arrays above are on the
    # current context: on the test device run, gpu arrays, which MXNet without CUDA loads on its
    # CPU and would save back as CPU arrays.)
    on_cpu = tmp_path / "on_cpu.params"
    mx.nd.save(str(on_cpu), {k: v.as_in_context(mx.cpu()) for k, v in mx.nd.load(str(ours)).items()})
    same = run_mxnet(
        "import mxnet as mx\n"
        "print(open(%r, 'rb').read() == (lambda f: (mx.nd.save(f, mx.nd.load(%r)), open(f, 'rb').read())[1])(%r))"
        % (str(on_cpu), str(on_cpu), str(tmp_path / "again.params")))
    assert same.strip() == "True"
    # The device each array was saved from is recorded as MXNet does (dev_type 1 cpu, 2 gpu).
    saved_on_gpu = mx.current_context().device_type == "gpu"
    assert (open(ours, "rb").read() != open(on_cpu, "rb").read()) == saved_on_gpu


def test_take_in_mode_raise_counts_negatives_from_the_end_and_names_the_index_out_of_range(mx):
    """On every device (the GPU's kernel checks the indices first, as MXNet's does): the error comes
    at the wait and names the index, the axis and its size."""
    src = np.arange(12, dtype=np.float32).reshape(4, 3)
    a = mx.nd.array(src)
    got = mx.nd.take(a, mx.nd.array([-1, 0, -4, 3]), mode="raise")
    assert np.array_equal(got.asnumpy(), src[[-1, 0, -4, 3]])
    out = mx.nd.take(a, mx.nd.array([2, -5, 0]), mode="raise")
    with pytest.raises(mx.MXNetError, match=r"index -5 is out of range for axis 0 of size 4"):
        out.wait_to_read()
    assert a.asnumpy().sum() == src.sum()  # the device works on


def test_interpreter_exits_cleanly_with_work_still_pushed():
    from conftest import run_python
    code = ("import mxplug as mx\n"
            "a = mx.nd.ones((300, 300))\n"
            "for _ in range(300):\n"
            "    a = a * 1.0001 + 0.5\n"
            "b = a.sum()\n")  # no waitall: the engine drains at exit
    p = run_python(code)
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""


def test_join_split_repeat_ops_match_numpy(mx):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    y = rng.standard_normal((2, 1, 4)).astype(np.float32)
    a, b = mx.nd.array(x), mx.nd.array(y)
    close(mx.nd.Concat(a, b, dim=1), np.concatenate([x, y], axis=1))
    close(mx.nd.concat(a, a, dim=-1), np.concatenate([x, x], axis=-1))
    close(mx.nd.concatenate([a, a], axis=0), np.concatenate([x, x], axis=0))
    close(mx.nd.stack(a, a, axis=2), np.stack([x, x], axis=2))
    parts = mx.nd.split(a, num_outputs=2, axis=2)
    for got, want in zip(parts, np.split(x, 2, axis=2)):
        close(got, want)
    close(mx.nd.split(b, num_outputs=1, axis=1, squeeze_axis=True), y[:, 0, :])
    close(mx.nd.add_n(a, a, a), 3 * x)
    close(mx.nd.slice_axis(a, axis=2, begin=1, end=-1), x[:, :, 1:-1])
    close(mx.nd.tile(a, reps=(2, 1, 1, 2)), np.tile(x, (2, 1, 1, 2)))
    close(mx.nd.repeat(a, repeats=2, axis=-1), np.repeat(x, 2, axis=-1))
    close(mx.nd.repeat(a, repeats=3), np.repeat(x, 3))
    close(mx.nd.flip(a, axis=(0, 2)), np.flip(x, axis=(0, 2)))
    close(mx.nd.squeeze(b, axis=1), np.squeeze(y, axis=1))


def test_index_ops_match_numpy(mx):
    x = rng.standard_normal((4, 5)).astype(np.float32)
    a = mx.nd.array(x)
    close(mx.nd.argmax(a, axis=1), np.argmax(x, axis=1).astype(np.float32))
    close(mx.nd.argmin(a, axis=0), np.argmin(x, axis=0).astype(np.float32))
    assert mx.nd.argmax(a).asscalar() == np.argmax(x)
    close(mx.nd.norm(a), [np.linalg.norm(x)], 1e-5)
    close(mx.nd.norm(a, ord=1, axis=1), np.abs(x).sum(axis=1), 1e-5)
    idx = np.array([0, 4, 2, 1])
    close(mx.nd.pick(a, mx.nd.array(idx), axis=1), x[np.arange(4), idx])
    close(mx.nd.pick(a, mx.nd.array([7, -1, 2, 1]), axis=1), x[np.arange(4), [4, 0, 2, 1]])  # clip
    close(mx.nd.one_hot(mx.nd.array([1, 0, 3]), 4), np.eye(4)[[1, 0, 3]])
    cond = (x > 0).astype(np.float32)
    close(mx.nd.where(mx.nd.array(cond), a, -a), np.where(cond > 0, x, -x))
    row_cond = np.array([1, 0, 0, 1], dtype=np.float32)
    close(mx.nd.where(mx.nd.array(row_cond), a, a * 0), x * row_cond[:, None])


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_dot_and_batch_dot_match_numpy(mx, ta, tb):
    a = rng.standard_normal((4, 3) if ta else (3, 4)).astype(np.float32)
    b = rng.standard_normal((5, 4) if tb else (4, 5)).astype(np.float32)
    ref = (a.T if ta else a) @ (b.T if tb else b)
    close(mx.nd.dot(mx.nd.array(a), mx.nd.array(b), transpose_a=ta, transpose_b=tb), ref, 1e-4)
    A = rng.standard_normal((2,) + a.shape).astype(np.float32)
    B = rng.standard_normal((2,) + b.shape).astype(np.float32)
    ref = np.matmul(A.transpose(0, 2, 1) if ta else A, B.transpose(0, 2, 1) if tb else B)
    close(mx.nd.batch_dot(mx.nd.array(A), mx.nd.array(B), transpose_a=ta, transpose_b=tb), ref, 1e-4)


def test_dot_of_nd_arrays_and_errors(mx):
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    b = rng.standard_normal((4, 5)).astype(np.float32)
    close(mx.nd.dot(mx.nd.array(a), mx.nd.array(b)), np.tensordot(a, b, axes=1), 1e-4)
    with pytest.raises(mx.MXNetError, match=r"dot.*reduction axis"):
        mx.nd.dot(mx.nd.array(b), mx.nd.array(b))
    with pytest.raises(mx.MXNetError, match=r"FullyConnected.*float32 or float64"):
        mx.nd.FullyConnected(mx.nd.ones((2, 3), dtype="int32"), mx.nd.ones((4, 3), dtype="int32"),
                             no_bias=True, num_hidden=4)


def test_shapes_whose_element_count_overflows_are_refused(mx, tmp_path):
    """The count wrapped round: zeros((2**62, 4)) had size 0 and x[2**60] read memory it did not
    own. Every shape that becomes memory is checked, as PyTorch checks, naming op and shape."""
    big = 2 ** 62
    for shape in [(big, 4), (big, big), (2 ** 40, 2 ** 24)]:  # the last: elements fit, bytes do not
        with pytest.raises(mx.MXNetError, match=r"_full: output 'output': shape \(%d, %d\) of float32 has more "
                           r"elements or bytes than a 64-bit size can count" % shape):
            mx.nd.zeros(shape)
    with pytest.raises(mx.MXNetError, match=r"broadcast_to: output 'output': shape \(%d, %d\)" % (big, big)):
        mx.nd.zeros((1, 1)).broadcast_to((big, big))
    x = mx.sym.Variable("x")
    with pytest.raises(mx.MXNetError, match=r"infer_shape: node '.*' \(_mul_scalar\): input 'data' has shape "
                                            r"\(%d, 4\), more elements than a 64-bit size can count" % big):
        (x * 2).infer_shape(x=(big, 4))
    # A hostile .params file: a zero-sized array (0, 2**62, 2**62) loads (it holds no element, as
    # PyTorch allows), but reducing it would make a (2**62, 2**62) array, which is refused.
    path = str(tmp_path / "hostile.params")
    mx.nd.save(path, {"z": mx.nd.zeros((0, 3, 5))})
    data = open(path, "rb").read()
    dims = struct.pack("<qqq", 0, 3, 5)
    assert data.count(dims) == 1
    open(path, "wb").write(data.replace(dims, struct.pack("<qqq", 0, big, big)))
    z = mx.nd.load(path)["z"]
    assert z.shape == (0, big, big) and z.size == 0
    with pytest.raises(mx.MXNetError, match=r"sum: output 'output': shape \(%d, %d\)" % (big, big)):
        mx.nd.sum(z, axis=0)
    # One element over the file's data is a truncated file, not an array that reads past it.
    open(path, "wb").write(data.replace(dims, struct.pack("<qqq", 1, big, 4)))
    with pytest.raises(mx.MXNetError, match=r"needs more data than the file holds"):
        mx.nd.load(path)


# Blocks of the sizes asked for are made and dropped on the asynchronous test device, whose memory
# this process alone uses: after each, how many bytes of it are taken (by arrays or the pool).
POOL = r"""
import json, os, mxplug as mx
mx.library.load(os.environ["TESTDEV"], verbose=False)
def used():
    free, total = mx.context.gpu_memory_info(0)
    return total - free
steps = []
for nbytes in json.loads(os.environ["SIZES"]):
    a = mx.nd.empty((nbytes,), ctx=mx.gpu(0), dtype="uint8")
    a.wait_to_read()
    taken = used()
    del a
    mx.nd.waitall()
    steps.append([taken, used()])
print(json.dumps(steps))
"""


def pool_steps(sizes, **env):
    env = dict(env, MXPLUG_GPU_BACKEND="testdev", SIZES=json.dumps(sizes),
               TESTDEV=str(TEST_PLUGINS / "devices" / "libtest_device.so"))
    p = run_python(POOL, extra_env=env)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_mxnets_gpu_pool_variables_class_sizes_and_return_blocks():
    """MXNET_GPU_MEM_POOL_TYPE (Note [Storage pool]): a 40,000-byte array takes whole pages
    (Naive), the next power of two (Round), or a multiple of 2^cutoff above the cutoff (Round with
    MXNET_GPU_MEM_POOL_ROUND_LINEAR_CUTOFF); a pooled block stays taken after its array is gone,
    an unpooled one goes back to the device."""
    assert pool_steps([40000]) == [[40960, 40960]]
    assert pool_steps([40000], MXNET_GPU_MEM_POOL_TYPE="Round") == [[65536, 65536]]
    assert pool_steps([40000], MXNET_GPU_MEM_POOL_TYPE="Round",
                      MXNET_GPU_MEM_POOL_ROUND_LINEAR_CUTOFF="14") == [[49152, 49152]]
    assert pool_steps([40000, 50000], MXNET_GPU_MEM_POOL_TYPE="Unpooled") == [[40960, 0], [53248, 0]]


def test_mxnets_gpu_pool_reserve_releases_idle_blocks_before_the_device_runs_short():
    """MXNET_GPU_MEM_POOL_RESERVE: the test device has 1 GiB. After a 400 MiB array is dropped the
    pool holds its block; a 200 MiB array then leaves 424 MiB free, under a 50% reserve, so the
    idle block goes back first; at the default 5% it stays."""
    mib = 1 << 20
    assert pool_steps([400 * mib, 200 * mib]) == [[400 * mib] * 2, [600 * mib] * 2]
    assert pool_steps([400 * mib, 200 * mib], MXNET_GPU_MEM_POOL_RESERVE="50") == \
        [[400 * mib] * 2, [200 * mib] * 2]


def test_a_bad_gpu_pool_variable_is_a_clear_error_and_the_cpu_works_on():
    code = POOL.replace('for nbytes in json.loads(os.environ["SIZES"]):', "for nbytes in []:") + r"""
try:
    mx.nd.zeros((3,), ctx=mx.gpu(0))
except mx.MXNetError as e:
    print("error:", e)
print(mx.nd.ones((2,)).asnumpy().sum())
"""
    for bad, message in [
            ({"MXNET_GPU_MEM_POOL_TYPE": "Huge"},
             "MXNET_GPU_MEM_POOL_TYPE=Huge: unknown pool type; expected Naive, Round or Unpooled"),
            ({"MXNET_GPU_MEM_POOL_TYPE": "Round", "MXNET_GPU_MEM_POOL_ROUND_LINEAR_CUTOFF": "50"},
             "MXNET_GPU_MEM_POOL_ROUND_LINEAR_CUTOFF=50: expected an integer from 12 to 40"),
            ({"MXNET_GPU_MEM_POOL_RESERVE": "5%"},
             "MXNET_GPU_MEM_POOL_RESERVE=5%: expected an integer from 0 to 100")]:
        env = dict(bad, MXPLUG_GPU_BACKEND="testdev",
                   TESTDEV=str(TEST_PLUGINS / "devices" / "libtest_device.so"))
        p = run_python(code, extra_env=env)
        assert p.returncode == 0, p.stderr
        assert "error: " + message in p.stdout, p.stdout
        assert p.stdout.strip().endswith("2.0"), p.stdout


# softmax_cross_entropy asks for (2n+1) doubles of temp space for n rows: three calls on views of
# growing length, then the device's bytes held past the arrays (Note [Temp-space copies]).
TEMP_SPACE = r"""
import os, mxplug as mx
mx.library.load(os.environ["TESTDEV"], verbose=False)
def used():
    free, total = mx.context.gpu_memory_info(0)
    return total - free
n = 1 << 18
x, label = mx.nd.zeros((n, 2), ctx=mx.gpu(0)), mx.nd.zeros((n,), ctx=mx.gpu(0))
mx.nd.waitall()
before = used()
for rows in (n // 4, n // 2, n):
    mx.nd.softmax_cross_entropy(x[:rows], label[:rows]).wait_to_read()
mx.nd.waitall()
print(used() - before)
"""


def test_temp_space_keeps_one_block_per_copy_and_frees_what_it_outgrew():
    """MXNET_GPU_TEMP_COPY (MXNet's, default 1): with one copy the temp space grows in place and
    hands each outgrown block back to the device, so only the largest stays; with three, the calls
    go round the copies and each keeps its own. Past the blocks: the 64-byte class of the results,
    kept by the pool."""
    def page(nbytes):
        return (nbytes + 4095) // 4096 * 4096

    def held(**env):
        env = dict(env, MXPLUG_GPU_BACKEND="testdev",
                   TESTDEV=str(TEST_PLUGINS / "devices" / "libtest_device.so"))
        p = run_python(TEMP_SPACE, extra_env=env)
        assert p.returncode == 0, p.stderr
        return int(p.stdout.strip().splitlines()[-1])

    n = 1 << 18
    blocks = [page((2 * rows + 1) * 8) for rows in (n // 4, n // 2, n)]
    assert held() == blocks[-1] + 64
    assert held(MXNET_GPU_TEMP_COPY="3") == sum(blocks) + 64


def test_a_bad_temp_copy_variable_is_a_clear_error_and_other_ops_work_on():
    code = r"""
import mxplug as mx
x, label = mx.nd.ones((4, 3)), mx.nd.zeros((4,))
for _ in range(2):
    try:
        mx.nd.softmax_cross_entropy(x, label).asnumpy()
    except mx.MXNetError as e:
        print("error:", e)
print((x + x).asnumpy().sum())
"""
    p = run_python(code, extra_env={"MXNET_CPU_TEMP_COPY": "0"})
    assert p.returncode == 0, p.stderr
    message = "error: softmax_cross_entropy: MXNET_CPU_TEMP_COPY=0: expected an integer from 1 to 64"
    assert p.stdout.count(message) == 2, p.stdout
    assert p.stdout.strip().endswith("24.0"), p.stdout


def test_compute_capability_is_what_the_gpu_backend_reports():
    # The test device says 9.0 (tests/plugins/test_device.cc); CUDA's is test_cuda.py's, against
    # PyTorch's.
    code = ("import os, mxplug as mx\nmx.library.load(os.environ['TESTDEV'], verbose=False)\n"
            "print(mx.util.get_cuda_compute_capability(mx.gpu(0)))\n"
            "try:\n    mx.util.get_cuda_compute_capability(mx.gpu(5))\nexcept mx.base.MXNetError as e:\n    print(e)\n")
    p = run_python(code, extra_env={"MXPLUG_GPU_BACKEND": "testdev",
                                    "TESTDEV": str(TEST_PLUGINS / "devices" / "libtest_device.so")})
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == "90" and "(5) does not exist" in lines[1], p.stdout


def test_gpu_memory_info_reports_free_and_total_bytes(mx):
    if mx.context.num_gpus() == 0:
        # MXNet raises for a device that is not there; so do we, naming it (or the backend, in a
        # build without the CUDA plugin).
        with pytest.raises(mx.base.MXNetError,
                           match=r"cuda\(0\) does not exist|no device backend for cuda is loaded"):
            mx.context.gpu_memory_info(0)
        return
    free, total = mx.context.gpu_memory_info(0)
    assert 0 < free <= total
    # A new block (a size no earlier test left idle in the pool) is taken from the free memory.
    nbytes = (8 << 20) + 3 * 4096
    a = mx.nd.zeros((nbytes // 4,), ctx=mx.gpu(0))
    a.wait_to_read()
    free_after, total_after = mx.context.gpu_memory_info(0)
    assert total_after == total
    if TEST_DEVICE:  # the test device's memory is used by this process alone
        assert free - free_after >= nbytes
    with pytest.raises(mx.base.MXNetError, match=r"\(%d\) does not exist" % mx.context.num_gpus()):
        mx.context.gpu_memory_info(mx.context.num_gpus())


# mx.cpu_pinned (Note [Pinned host memory] in core/src/registry/runtime.cc). The same script under
# MXNet 1.9.1 (without a GPU: ordinary memory) and here: where pinned arrays live, what ops on them
# make (a non-default context does not propagate), how a file saved from one records it, and what
# an executor bound to it makes.
PINNED_SCRIPT = r"""
import json, sys
out = {}
a = mx.nd.ones((2, 3), ctx=mx.cpu_pinned())
out["made"] = [str(a.context), a.context.device_typeid, a.context == mx.cpu(0)]
out["ops"] = [str((a * 2).context), str((a + mx.nd.ones((2, 3), ctx=mx.cpu())).context), (a * 2).asnumpy().tolist()]
out["copies"] = [str(a.copyto(mx.cpu()).context),
                 str(mx.nd.ones((2, 3), ctx=mx.cpu()).as_in_context(mx.cpu_pinned(0)).context)]
with mx.cpu_pinned(1):
    out["default"] = [str(mx.nd.zeros((2,)).context), str(mx.nd.array([1, 2]).context),
                      mx.nd.array([1, 2]).asnumpy().tolist()]
mx.nd.save(sys.argv[1], {"a": a})
out["file"] = [str(mx.nd.load(sys.argv[1])["a"].context), open(sys.argv[1], "rb").read().hex()]
x = mx.sym.Variable("x")
ex = (x * 2).simple_bind(mx.cpu_pinned(), x=(2, 3))
ex.arg_dict["x"][:] = 3
ex.forward()
out["executor"] = [str(ex.arg_dict["x"].context), str(ex.outputs[0].context), ex.outputs[0].asnumpy().tolist()]
print(json.dumps(out))
"""


def test_cpu_pinned_arrays_behave_as_in_mxnet(mx, tmp_path):
    from conftest import run_here, run_mxnet_script
    theirs = run_mxnet_script(PINNED_SCRIPT, [str(tmp_path / "theirs.params")])
    assert run_here(mx, PINNED_SCRIPT, [str(tmp_path / "ours.params")]) == theirs
    assert theirs["made"] == ["cpu_pinned(0)", 3, False]


# With an accelerator (here the asynchronous test device as `gpu`), pinned blocks come from its
# host_allocate: the test device fills new ones with 0xA0 + its device id, so the bytes of a new
# array (of a size no pooled block has: the idle device block of that size is not one) say whose
# block it got. Copies between pinned memory and the device go both ways through its streams.
PINNED_ON_ACCELERATOR = r"""
import json, os, numpy as np, mxplug as mx
mx.library.load(os.environ["TESTDEV"], verbose=False)
n = (3 << 20) + 7 * 4096 + 64
mx.nd.ones((n,), ctx=mx.gpu(0), dtype="uint8").wait_to_read()  # an idle device block of that size
out = {"fill": [np.unique(mx.nd.empty((n,), ctx=mx.cpu_pinned(i), dtype="uint8").asnumpy()).tolist()
                for i in (0, 1)]}
out["cpu_fill"] = np.unique(mx.nd.empty((n + 4096,), ctx=mx.cpu(), dtype="uint8").asnumpy()).tolist()
r = np.random.RandomState(0).randn(64, 33).astype(np.float32)
p = mx.nd.array(r, ctx=mx.cpu_pinned(1))
g = p.copyto(mx.gpu(1))
back = mx.nd.zeros(r.shape, ctx=mx.cpu_pinned(1))
(g * 2).copyto(back)
out["round_trip"] = [str(g.context), str(back.context), bool(np.array_equal(back.asnumpy(), r * 2))]
out["op_context"] = str((back + 1).context)
out["dlpack"] = [list(back.__dlpack_device__()), bool(np.array_equal(np.from_dlpack(back), r * 2))]
errors = []
for bad in (lambda: back + g, lambda: mx.nd.ones((2,), ctx=mx.cpu_pinned(4))):
    try:
        bad()
    except mx.MXNetError as e:
        errors.append(str(e).splitlines()[0])
out["errors"] = errors
print(json.dumps(out))
"""


def test_cpu_pinned_memory_comes_from_the_accelerator_and_copies_both_ways():
    # No CUDA device, even on a GPU machine: CUDA's backend would serve pinned memory before the
    # test device (test_cpu_pinned_memory_is_page_locked_by_cuda checks that one).
    p = run_python(PINNED_ON_ACCELERATOR, extra_env={
        "MXPLUG_GPU_BACKEND": "testdev", "TESTDEV": str(TEST_PLUGINS / "devices" / "libtest_device.so"),
        "CUDA_VISIBLE_DEVICES": ""})
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["fill"] == [[0xA0], [0xA1]]
    assert out["cpu_fill"] != [0xA0]  # ordinary CPU arrays' blocks are not the device's
    assert out["round_trip"] == ["gpu(1)", "cpu_pinned(1)", True]
    assert out["op_context"] == "cpu(1)"
    assert out["dlpack"] == [[1, 1], True]  # CPU memory, as PyTorch exports its pinned tensors
    assert out["errors"] == [
        "elemwise_add: input 'rhs' is on ext_dev(1) but the first is on cpu_pinned(1); all must be on one device",
        "context cpu_pinned(4) does not exist: testdev has 4 device(s)"]


def test_cpu_pinned_memory_is_page_locked_by_cuda(mx):
    """cudaPointerGetAttributes says a cpu_pinned array's memory is CUDA host memory, and an
    ordinary CPU array's is not CUDA's at all."""
    if TEST_DEVICE != "cuda":
        pytest.skip("needs a CUDA GPU (tools/gpu/run.sh python); the test device's pinned memory is "
                    "checked by test_cpu_pinned_memory_comes_from_the_accelerator_and_copies_both_ways")
    import ctypes
    import ctypes.util
    cudart = ctypes.CDLL(ctypes.util.find_library("cudart") or "libcudart.so.13")
    attributes = (ctypes.c_int * 64)()  # cudaPointerAttributes: enum cudaMemoryType type first

    def memory_type(array):
        pointer = ctypes.c_void_p(np.from_dlpack(array).ctypes.data)
        assert cudart.cudaPointerGetAttributes(attributes, pointer) == 0
        return attributes[0]

    host, unregistered = 1, 0  # cudaMemoryTypeHost, cudaMemoryTypeUnregistered
    r = rng.standard_normal((256, 100)).astype(np.float32)
    pinned = mx.nd.array(r, ctx=mx.cpu_pinned(0))
    assert memory_type(pinned) == host
    assert memory_type(mx.nd.array(r, ctx=mx.cpu())) == unregistered
    back = mx.nd.zeros(r.shape, ctx=mx.cpu_pinned(0))
    (pinned.copyto(mx.gpu(0)) * 2).copyto(back)
    np.testing.assert_array_equal(back.asnumpy(), r * 2)


def test_large_elementwise_ops_split_across_threads_equal_numpy(mx):
    """From 2^20 elements the same-shape binary ops run on an OpenMP team: every element is
    still the NumPy value, in each dtype, odd lengths and out= included."""
    rng = np.random.RandomState(5)
    n = (1 << 21) + 3
    for dtype in ("float32", "float64", "int32"):
        a = rng.uniform(-50, 50, n).astype(dtype)
        b = rng.uniform(1, 50, n).astype(dtype)
        x, y = mx.nd.array(a, dtype=dtype), mx.nd.array(b, dtype=dtype)
        np.testing.assert_array_equal((x + y).asnumpy(), a + b)
        np.testing.assert_array_equal((x * y).asnumpy(), a * b)
        out = mx.nd.zeros((n,), dtype=dtype)
        mx.nd.elemwise_sub(x, y, out=out)
        np.testing.assert_array_equal(out.asnumpy(), a - b)
        np.testing.assert_array_equal(mx.nd.maximum(x, y).asnumpy(), np.maximum(a, b))


def test_an_op_called_over_many_signatures_infers_each(mx):
    # Note [Inference cache]: inference results are kept for a few signatures per op; twelve
    # shapes and two dtypes in turn, twice over, each give their own result, and a given output
    # of the wrong shape is refused before and after its shape's call succeeded.
    import numpy as np
    for _ in range(2):
        for n in range(1, 13):
            for dtype in ("float32", "float64"):
                x = np.arange(2 * n, dtype=dtype).reshape(n, 2)
                y = mx.nd.elemwise_add(mx.nd.array(x, dtype=dtype), mx.nd.array(x, dtype=dtype))
                assert y.shape == (n, 2) and y.dtype == np.dtype(dtype)
                np.testing.assert_array_equal(y.asnumpy(), 2 * x)
    a = mx.nd.ones((3, 2))
    for _ in range(2):
        with pytest.raises(mx.MXNetError,
                           match=r"elemwise_add: lhs and rhs have shape \(3, 2\) but the output has shape \(2, 2\)"):
            mx.nd.elemwise_add(a, a, out=mx.nd.zeros((2, 2)))
        out = mx.nd.zeros((3, 2))
        mx.nd.elemwise_add(a, a, out=out)
        np.testing.assert_array_equal(out.asnumpy(), 2 * np.ones((3, 2)))
