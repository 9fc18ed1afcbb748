"""Helpers for tests (MXNet's ``mx.test_utils``), which MXNet users' own tests import: tolerances
by dtype, array comparison with a report of the worst element, numeric and symbolic gradient
checks, random data, statistical checks of samplers, and environment scopes.

Tolerances, defaults and messages follow MXNet 1.9.1 (tests/python/test_test_utils.py runs the
same checks under both). What differs: dense storage only (``rand_ndarray`` refuses a sparse
``stype``), and float32 never counts as float16 for tolerances (MXNet does so for TF32 GPUs;
mxplug's GPU float32 runs without TF32)."""
import contextlib
import functools
import json
import numbers
import os
import random as _py_random
import sys
import time

import numpy as np

from . import ndarray as nd
from .context import Context, current_context, num_gpus
from .io import DataIter
from .util import getenv, setenv

# ---- Contexts, dtypes and tolerances --------------------------------------------------------

_INTEGERS = ("bool", "int8", "uint8", "int32", "uint32", "int64", "uint64")


def default_context():
    """The context tests run on: the current one (``set_default_context`` sets it)."""
    return current_context()


def set_default_context(ctx):
    """Makes ``ctx`` this thread's context outside ``with`` blocks."""
    Context._default.base = Context(ctx)


def default_dtype():
    """The dtype tests use unless told: float32."""
    return np.float32


def _by_dtype(float16, float32, float64):
    table = {np.dtype(t): 0 for t in _INTEGERS}
    table.update({np.dtype(np.float16): float16, np.dtype(np.float32): float32, np.dtype(np.float64): float64})
    return table


def default_rtols():
    """The relative tolerance of each dtype (0 for integers)."""
    return _by_dtype(1e-2, 1e-4, 1e-5)


def default_atols():
    """The absolute tolerance of each dtype (0 for integers)."""
    return _by_dtype(1e-1, 1e-3, 1e-20)


def default_numeric_eps():
    """The finite-difference step of each floating dtype."""
    return {np.dtype(np.float16): 1.0 / 2 ** 6, np.dtype(np.float32): 1.0 / 2 ** 9,
            np.dtype(np.float64): 1.0 / 2 ** 14}


def effective_dtype(dat):
    """The dtype whose tolerances apply to ``dat``: its own."""
    return np.dtype(dat.dtype)


def get_tolerance(dat, tol, default_tol):
    """``tol`` if a number; else ``tol[dtype]`` (a dict) or ``default_tol[dtype]`` for dat's dtype."""
    if isinstance(tol, numbers.Number):
        return tol
    dtype = effective_dtype(dat)
    return (tol or {}).get(dtype, default_tol[dtype])


def get_rtol(rtol=None, dtype=np.dtype(np.float64)):
    """rtol, or the default of ``dtype`` (a NumPy dtype object, as MXNet's table is keyed)."""
    return default_rtols()[dtype] if rtol is None else rtol


def get_atol(atol=None, dtype=np.dtype(np.float64)):
    """atol, or the default of ``dtype`` (a NumPy dtype object, as MXNet's table is keyed)."""
    return default_atols()[dtype] if atol is None else atol


def get_etol(etol=None):
    """The fraction of elements allowed to miss (assert_almost_equal_with_err): 0 unless given."""
    return 0 if etol is None else etol


def get_tols(x, y, rtol, atol):
    """(rtol, atol) to compare x and y: given ones, else the larger default of their dtypes."""
    x = np.array(x) if isinstance(x, numbers.Number) else x
    y = np.array(y) if isinstance(y, numbers.Number) else y
    return (max(get_tolerance(x, rtol, default_rtols()), get_tolerance(y, rtol, default_rtols())),
            max(get_tolerance(x, atol, default_atols()), get_tolerance(y, atol, default_atols())))


# ---- Comparing arrays -----------------------------------------------------------------------

def _numpy(a):
    return a.asnumpy() if isinstance(a, nd.NDArray) else np.asarray(a)


def checkShapes(a, b):  # noqa: N802 (MXNet's name)
    """Asserts that a and b have one shape."""
    assert a.shape == b.shape, "Shapes differ: %s vs %s" % (a.shape, b.shape)


def same(a, b):
    """Whether two arrays are equal element for element (and in shape)."""
    return np.array_equal(_numpy(a), _numpy(b))


def same_array(array1, array2):
    """Whether two NDArrays are one memory: a write to one is seen by the other (restored after)."""
    array1[:] += 1
    if not same(array1, array2):
        array1[:] -= 1
        return False
    array1[:] -= 1
    return same(array1, array2)


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False, use_broadcast=True):
    """Whether |a - b| <= atol + rtol * |b| everywhere (NumPy's allclose; defaults as float64's)."""
    if not use_broadcast:
        checkShapes(a, b)
    return np.allclose(_numpy(a), _numpy(b), rtol=get_rtol(rtol), atol=get_atol(atol), equal_nan=equal_nan)


def locationError(a, b, index, names, maxError=False):  # noqa: N802,N803 (MXNet's names)
    """The text naming where a and b differ and their values there."""
    return "Location of %serror: %s, %s=%.8f, %s=%.8f" % ("maximum " if maxError else "", str(index), names[0],
                                                          a[index], names[1], b[index])


def _worst(a, b, rtol, atol):
    """(index, how many times over the tolerance) of the element that misses most."""
    miss = np.where(np.equal(a, b), 0, np.abs(a - b)) / (atol + rtol * np.abs(b) + 1e-20)
    index = np.unravel_index(np.argmax(miss), miss.shape)
    return index, np.max(miss)


def assert_almost_equal(a, b, rtol=None, atol=None, names=("a", "b"), equal_nan=False, use_broadcast=True,
                        mismatches=(10, 10)):
    """Asserts almost_equal(a, b) with the tolerances of their dtypes (or those given: a number or
    a dict by dtype). On a miss, prints up to mismatches[0] of the worst elements and raises
    AssertionError naming the worst one, its error and the share of elements that miss (counted
    up to mismatches[1])."""
    if not use_broadcast:
        checkShapes(a, b)
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _numpy(a), _numpy(b)
    if a.dtype == np.bool_ and b.dtype == np.bool_:
        np.testing.assert_equal(a, b)
        return
    if almost_equal(a, b, rtol, atol, equal_nan=equal_nan):
        return
    a, b = np.broadcast_arrays(a, b)
    index, error = _worst(a, b, rtol, atol)
    print("\n*** Maximum errors for vector of size {}:  rtol={}, atol={}\n".format(a.size, rtol, atol))
    rest_a, rest_b = a.copy(), b.copy()
    count, at, worst = 1, index, error
    while count <= a.size:
        if count <= mismatches[0]:
            print("%3d: Error %f  %s" % (count, worst, locationError(a, b, at, names)))
        rest_a[at] = rest_b[at] = 0
        if almost_equal(rest_a, rest_b, rtol, atol, equal_nan=equal_nan):
            break
        count += 1
        if mismatches[1] > 0 and count > mismatches[1]:
            break
        at, worst = _worst(rest_a, rest_b, rtol, atol)
    at_least = "at least " if mismatches[1] > 0 and count > mismatches[1] else ""
    message = "Error %f exceeds tolerance rtol=%e, atol=%e (mismatch %s%f%%).\n%s" % (
        error, rtol, atol, at_least, 100.0 * count / a.size, locationError(a, b, index, names, maxError=True))
    np.set_printoptions(threshold=4, suppress=True)
    raise AssertionError(np.testing.build_err_msg([a, b], err_msg=message))


def assert_almost_equal_with_err(a, b, rtol=None, atol=None, etol=None, names=("a", "b"), equal_nan=False,
                                 mismatches=(10, 10)):
    """Like assert_almost_equal, but a share ``etol`` of the elements may miss."""
    etol = get_etol(etol)
    if etol <= 0:
        return assert_almost_equal(a, b, rtol, atol, names, equal_nan, mismatches=mismatches)
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _numpy(a), _numpy(b)
    close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    share = 1.0 - np.count_nonzero(close) / float(close.size)
    if share > etol:
        index, error = _worst(*np.broadcast_arrays(a, b), rtol, atol)
        raise AssertionError(np.testing.build_err_msg(
            [a, b], err_msg="Error %f exceeds tolerance rtol=%e, atol=%e, etol=%e. Error_rate=%f. %s" % (
                error, rtol, atol, etol, share, locationError(*np.broadcast_arrays(a, b), index, names))))


def assert_almost_equal_ignore_nan(a, b, rtol=None, atol=None, names=("a", "b")):
    """assert_almost_equal where a NaN on either side matches anything."""
    a, b = np.copy(_numpy(a)), np.copy(_numpy(b))
    nan = np.logical_or(np.isnan(a), np.isnan(b))
    a[nan] = 0
    b[nan] = 0
    assert_almost_equal(a, b, rtol, atol, names)


def assert_allclose(a, b, rtol=1e-07, atol=0, equal_nan=True):
    """NumPy's assert_allclose on arrays or NDArrays."""
    np.testing.assert_allclose(_numpy(a), _numpy(b), rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_exception(f, exception_type, *args, **kwargs):
    """Asserts that f(*args, **kwargs) raises exception_type."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError("%s did not raise %s" % (getattr(f, "__name__", f), exception_type.__name__))


def compare_optimizer(opt1, opt2, shape, dtype, w_stype='default', g_stype='default',
                      rtol=1e-4, atol=1e-5, compare_states=True, ntensors=1):
    """One step of opt1 and of opt2 from the same uniform random weights and gradients (on
    default_context()) gives the same weights and, with compare_states, states. With `shape` a
    list of shapes, opt2 steps the `ntensors` weights in one aggregated call (indices a list) and
    opt1 one by one."""
    from . import random as mx_random
    if w_stype != 'default' or g_stype != 'default':
        raise ValueError("compare_optimizer: only dense ('default') weights and gradients, got "
                         "w_stype=%r, g_stype=%r" % (w_stype, g_stype))
    ctx = default_context()

    def uniform(s):
        return mx_random.uniform(shape=s, ctx=ctx, dtype=dtype)
    if not isinstance(shape, list):
        if ntensors != 1:
            raise ValueError("compare_optimizer: ntensors=%d needs a list of shapes" % ntensors)
        w2, g2 = uniform(shape), uniform(shape)
        w1, g1 = w2.copyto(ctx), g2.copyto(ctx)
        state1 = opt1.create_state_multi_precision(0, w1)
        state2 = opt2.create_state_multi_precision(0, w2)
        if compare_states:
            compare_ndarray_tuple(state1, state2)
        opt1.update_multi_precision(0, w1, g1, state1)
        opt2.update_multi_precision(0, w2, g2, state2)
        if compare_states:
            compare_ndarray_tuple(state1, state2, rtol=rtol, atol=atol)
        assert_almost_equal(w1, w2, rtol=rtol, atol=atol)
        return
    w1 = [uniform(s) for s in shape]
    g1 = [uniform(s) for s in shape]
    w2 = [w.copyto(ctx) for w in w1]
    g2 = [g.copyto(ctx) for g in g1]
    state2 = [opt2.create_state_multi_precision(0, w2[i]) for i in range(ntensors)]
    opt2.update_multi_precision(list(range(ntensors)), w2[:ntensors], g2[:ntensors], state2)
    for i in range(ntensors):
        state1 = opt1.create_state_multi_precision(i, w1[i])
        opt1.update_multi_precision(i, w1[i], g1[i], state1)
        if compare_states:
            compare_ndarray_tuple(state1, state2[i], rtol, atol)
        compare_ndarray_tuple(w1[i], w2[i], rtol, atol)


def compare_ndarray_tuple(t1, t2, rtol=None, atol=None):
    """assert_almost_equal over two nests of tuples of arrays (None matches anything)."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        for s1, s2 in zip(t1, t2):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


# ---- Random data ----------------------------------------------------------------------------

def rand_shape_2d(dim0=10, dim1=10, allow_zero_size=False):
    low = 0 if allow_zero_size else 1
    return _py_random.randint(low, dim0), _py_random.randint(low, dim1)


def rand_shape_3d(dim0=10, dim1=10, dim2=10, allow_zero_size=False):
    low = 0 if allow_zero_size else 1
    return _py_random.randint(low, dim0), _py_random.randint(low, dim1), _py_random.randint(low, dim2)


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False):
    """A random shape of num_dim axes, each at most dim (as int or per axis)."""
    low = 0 if allow_zero_size else 1
    return tuple(np.random.randint(low, np.asarray(dim) + 1, size=num_dim).tolist())


def rand_coord_2d(x_low, x_high, y_low, y_high):
    return _py_random.randint(x_low, x_high), _py_random.randint(y_low, y_high)


def random_arrays(*shapes):
    """Standard normal arrays of the default dtype, one per shape (a float for a shape ())."""
    arrays = [np.array(np.random.randn(), dtype=default_dtype()) if len(s) == 0
              else np.random.randn(*s).astype(default_dtype()) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_uniform_arrays(*shapes, **kwargs):
    """A list of uniform arrays on [low, high) (keywords, default [0, 1)) of ``dtype``, one per
    shape (a list even for one shape, as MXNet gives it)."""
    low, high = kwargs.pop("low", 0.0), kwargs.pop("high", 1.0)
    dtype = kwargs.pop("dtype", default_dtype())
    if kwargs:
        raise TypeError("random_uniform_arrays got unexpected keyword arguments %s" % sorted(kwargs))
    return [np.random.uniform(low, high, size=s).astype(dtype) for s in shapes]


def random_sample(population, k):
    """k elements of population, drawn without replacement."""
    assert 0 <= k <= len(population)
    shuffled = list(population)
    _py_random.shuffle(shuffled)
    return shuffled[:k]


def rand_ndarray(shape, stype="default", density=None, dtype=None, modifier_func=None,
                 shuffle_csr_indices=False, distribution=None, ctx=None):
    """A random dense NDArray: standard normal values (modifier_func, density and distribution
    apply to sparse arrays only, as in MXNet)."""
    if stype != "default":
        raise ValueError("rand_ndarray: storage type %r is not supported: mxplug stores every array dense" % stype)
    return nd.array(random_arrays(shape), ctx=ctx or default_context(), dtype=dtype)


def create_vector(size, dtype=np.int64):
    """0, 1, ..., size - 1."""
    return nd.arange(0, size, dtype=dtype)


def create_2d_tensor(rows, columns, dtype=np.int64):
    """rows x columns, row i holding i."""
    return nd.broadcast_to(nd.arange(0, rows, dtype=dtype).reshape((rows, 1)), shape=(rows, columns))


def get_identity_mat(size):
    """The size x size identity as a float32 NDArray."""
    return nd.array(np.eye(size, dtype=np.float32))


def get_identity_mat_batch(size):
    """Two size x size identities, shape (2, size, size)."""
    return nd.array(np.stack([np.eye(size, dtype=np.float32)] * 2))


# ---- Matrices for the linear-algebra operators' tests (NumPy float64, from np.random) ---------

def new_orthonormal_matrix_2d(n):
    """An n x n orthonormal matrix: the Q of a random symmetric matrix's QR."""
    x = np.random.randn(n, n)
    return np.linalg.qr(np.matmul(x.T, x))[0]


def new_sym_matrix_with_real_eigvals_2d(n):
    """A symmetric n x n matrix Q^T D Q with eigenvalues uniform in [-10, 10)."""
    q = new_orthonormal_matrix_2d(n)
    return np.matmul(np.matmul(q.T, np.diag(np.random.uniform(-10.0, 10.0, n))), q)


def _batch_of(make_2d, shape):
    """make_2d(n) for each of the shape[:-2] matrices of `shape` (n = shape[-1])."""
    count = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([make_2d(shape[-1]) for _ in range(count)]).reshape(shape)


def new_sym_matrix_with_real_eigvals_nd(shape):
    """A batch (shape[:-2]) of symmetric matrices with real eigenvalues."""
    return _batch_of(new_sym_matrix_with_real_eigvals_2d, shape)


def new_matrix_with_real_eigvals_2d(n):
    """A non-symmetric n x n matrix Q^-1 D Q with eigenvalues uniform in [-10, 10): Q a
    Householder reflection times a diagonal, drawn until its 2-norm condition number is below 3,
    so that the eigenvalues are well conditioned."""
    while True:  # the draws in MXNet's order, so that a seed gives MXNet's matrix
        scale = np.diag(np.random.uniform(-1.0, 1.0, n))
        v = np.random.uniform(-1.0, 1.0, (n, 1))
        v /= np.linalg.norm(v)
        q = np.matmul(np.eye(n) - 2 * np.matmul(v, v.T), scale)
        if np.linalg.cond(q, 2) < 3:
            break
    d = np.diag(np.random.uniform(-10.0, 10.0, n))
    return np.matmul(np.matmul(np.linalg.inv(q), d), q)


def new_matrix_with_real_eigvals_nd(shape):
    """A batch (shape[:-2]) of matrices with real eigenvalues."""
    return _batch_of(new_matrix_with_real_eigvals_2d, shape)


def get_im2rec_path(home_env="MXNET_HOME"):
    """The path of im2rec.py: under $MXNET_HOME (home_env) when it is set, else beside the package
    (mxplug/tools/im2rec.py, installed with it), else in the checkout the package runs from
    (tools/im2rec/im2rec.py); IOError when there is none."""
    import mxplug
    home = os.environ.get(home_env) or os.path.dirname(mxplug.__file__)
    for path in (os.path.join(home, 'tools', 'im2rec.py'),
                 os.path.join(home, '..', '..', 'tools', 'im2rec', 'im2rec.py'),
                 os.path.join(home, '..', '..', 'tools', 'im2rec.py')):
        if os.path.isfile(path):
            return path
    raise IOError('Could not find path to tools/im2rec.py (looked under %s)' % home)


def np_reduce(dat, axis, keepdims, numpy_reduce_func):
    """numpy_reduce_func over the axes ``axis`` (None: all), keeping them with keepdims."""
    if axis is None:
        axis = tuple(range(dat.ndim))
    axes = sorted((axis,) if isinstance(axis, int) else axis, reverse=True)
    out = dat
    for a in axes:
        out = numpy_reduce_func(out, axis=a)
        if keepdims:
            out = np.expand_dims(out, axis=a)
    return out


def collapse_sum_like(a, shape):
    """a summed down to ``shape`` (a shape it broadcasts from)."""
    assert len(a.shape) >= len(shape)
    if np.prod(shape) == 0 or a.size == 0:
        return np.zeros(shape, dtype=a.dtype)
    lead = len(a.shape) - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape) if d == 1 and a.shape[lead + i] != 1)
    return np.sum(a, axis=axes, keepdims=True).reshape(shape)


def assign_each(the_input, function):
    """function applied to each element of a NumPy array (a new array)."""
    return np.vectorize(function)(the_input) if function is not None else np.array(the_input)


def assign_each2(input1, input2, function):
    """function applied to each pair of elements of two NumPy arrays of one shape."""
    return np.vectorize(function)(input1, input2) if function is not None else np.array(input1)


# ---- Running symbols, and gradients ---------------------------------------------------------

def _as_nd(value, ctx, dtype):
    """A NumPy array as an NDArray of ``dtype`` ("asnumpy": its own); anything else as it is."""
    if isinstance(value, np.ndarray):
        return nd.array(value, ctx=ctx, dtype=value.dtype if dtype == "asnumpy" else dtype)
    return value


def _by_name(what, given, names, ctx, dtype):
    """``given`` (a dict that names exactly ``names``, or a list in their order) as NDArrays by name;
    None stays None."""
    if given is None:
        return None
    if isinstance(given, dict):
        if set(given) != set(names):
            raise ValueError("%s: the names %s do not match the symbol's %s" % (what, sorted(given), sorted(names)))
    else:
        given = dict(zip(names, given))
    return {k: _as_nd(v, ctx, dtype) for k, v in sorted(given.items())}


def simple_forward(sym, ctx=None, is_train=False, **inputs):
    """sym's outputs as NumPy arrays (one array for one output) for the given arguments."""
    exe = sym.bind(ctx or default_context(), args={k: nd.array(v) for k, v in inputs.items()})
    exe.forward(is_train=is_train)
    outputs = [o.asnumpy() for o in exe.outputs]
    return outputs[0] if len(outputs) == 1 else outputs


def numeric_grad(executor, location, aux_states=None, eps=1e-4, use_forward_train=True, dtype=default_dtype()):
    """Central differences of the sum of output 0 with respect to each floating argument in
    ``location`` (NumPy arrays by name), one element at a time, in ``dtype``."""
    assert dtype in (np.float16, np.float32, np.float64)
    grads = {k: np.zeros(v.shape, dtype=dtype) for k, v in location.items()}
    location = {k: np.array(v, order="C") for k, v in location.items()}
    for k, v in location.items():
        executor.arg_dict[k][:] = nd.array(v, dtype=dtype)

    def output_at(k, values):
        executor.arg_dict[k][:] = nd.array(values, dtype=dtype)
        for key, value in (aux_states or {}).items():
            executor.aux_dict[key][:] = value
        executor.forward(is_train=use_forward_train)
        return executor.outputs[0].asnumpy()

    for k, v in location.items():
        if v.dtype.kind != "f":
            continue
        original = v.copy()
        for i in range(v.size):
            v.ravel()[i] = original.ravel()[i] + eps / 2.0
            above = output_at(k, v)
            v.ravel()[i] = original.ravel()[i] - eps / 2.0
            below = output_at(k, v)
            grads[k].ravel()[i] = (above - below).sum() / eps
            v.ravel()[i] = original.ravel()[i]
        executor.arg_dict[k][:] = nd.array(original, dtype=dtype)
    return grads


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=None, rtol=None, atol=None,
                           grad_nodes=None, use_forward_train=True, ctx=None, grad_stype_dict=None,
                           dtype=default_dtype()):
    """Checks sym's gradients against central differences, as MXNet does: the outputs times a
    random projection make a loss; its backward must match the finite differences for each of
    ``grad_nodes`` (all arguments, a list, or a dict of grad_req: 'write', 'add' or 'null')."""
    from . import symbol as _sym
    assert dtype in (np.float16, np.float32, np.float64)
    ctx = ctx or default_context()
    location = _by_name("location", location, sym.list_arguments(), ctx, dtype)
    location_np = {k: v.asnumpy() for k, v in location.items()}
    aux = _by_name("aux_states", aux_states, sym.list_auxiliary_states(), ctx, dtype)
    aux_np = None if aux is None else {k: v.asnumpy() for k, v in aux.items()}
    if grad_nodes is None:
        grad_req = {k: "write" for k in sym.list_arguments()}
    elif isinstance(grad_nodes, (list, tuple)):
        grad_req = {k: "write" for k in grad_nodes}
    elif isinstance(grad_nodes, dict):
        grad_req = dict(grad_nodes)
    else:
        raise ValueError("grad_nodes must be None, a list or a dict, got %r" % (grad_nodes,))
    _, out_shapes, _ = sym.infer_shape(**{k: v.shape for k, v in location.items()})
    loss = _sym.make_loss(sym * _sym.Variable("__random_proj"))
    location["__random_proj"] = nd.array(np.random.rand(*out_shapes[0]) + 0.1, ctx=ctx, dtype=dtype)
    grads_np = {k: np.random.normal(0, 0.01, size=location[k].shape) for k in grad_req}
    grads_np["__random_proj"] = np.random.normal(0, 0.01, size=out_shapes[0])
    args_grad = {k: nd.array(v, ctx=ctx, dtype=dtype) for k, v in grads_np.items()}
    exe = loss.bind(ctx, args=location, args_grad=args_grad, grad_req=grad_req, aux_states=aux)
    exe.forward(is_train=True)
    eps = get_tolerance(exe.outputs[0], numeric_eps, default_numeric_eps())
    if dtype in (np.float32, np.float16):
        assert eps >= 1e-5
    exe.backward()
    symbolic = exe.grad_dict
    numeric = numeric_grad(exe, location_np, aux_np, eps=eps, use_forward_train=use_forward_train, dtype=dtype)
    for name, req in grad_req.items():
        names = ("NUMERICAL_%s" % name, "BACKWARD_%s" % name)
        if req == "write":
            assert_almost_equal(numeric[name], symbolic[name], rtol, atol, names)
        elif req == "add":
            assert_almost_equal(numeric[name], symbolic[name].asnumpy() - grads_np[name], rtol, atol, names)
        elif req == "null":
            assert_almost_equal(grads_np[name], symbolic[name], rtol, atol, names)
        else:
            raise ValueError("Invalid grad_req %s for argument %s" % (req, name))


def check_symbolic_forward(sym, location, expected, rtol=None, atol=None, aux_states=None, ctx=None,
                           equal_nan=False, dtype=default_dtype()):
    """Runs sym's forward (inference) on ``location`` and asserts its outputs almost equal
    ``expected`` (a list in list_outputs order, or a dict); returns the outputs."""
    assert dtype == "asnumpy" or dtype in (np.float16, np.float32, np.float64)
    ctx = ctx or default_context()
    location = _by_name("location", location, sym.list_arguments(), ctx, dtype)
    aux = _by_name("aux_states", aux_states, sym.list_auxiliary_states(), ctx, dtype)
    if isinstance(expected, dict):
        expected = [expected[k] for k in sym.list_outputs()]
    args_grad = {k: nd.zeros(v.shape, ctx=ctx, dtype=v.dtype if dtype == "asnumpy" else dtype)
                 for k, v in location.items()}
    exe = sym.bind(ctx=ctx, args=location, args_grad=args_grad, aux_states=aux)
    exe.forward(is_train=False)
    for name, want, got in zip(sym.list_outputs(), expected, exe.outputs):
        assert_almost_equal(want, got, rtol, atol, ("EXPECTED_%s" % name, "FORWARD_%s" % name), equal_nan=equal_nan)
    return exe.outputs


def check_symbolic_backward(sym, location, out_grads, expected, rtol=None, atol=None, aux_states=None,
                            grad_req="write", ctx=None, grad_stypes=None, equal_nan=False, dtype=default_dtype()):
    """Runs sym's forward (training) and backward with ``out_grads`` and asserts the argument
    gradients almost equal ``expected`` (a list in list_arguments order, or a dict) under each
    argument's grad_req; returns the gradient arrays."""
    assert dtype == "asnumpy" or dtype in (np.float16, np.float32, np.float64)
    ctx = ctx or default_context()
    location = _by_name("location", location, sym.list_arguments(), ctx, dtype)
    aux = _by_name("aux_states", aux_states, sym.list_auxiliary_states(), ctx, dtype)
    if isinstance(expected, (list, tuple)):
        expected = dict(zip(sym.list_arguments(), expected))
    grads_np = {k: np.random.normal(size=v.shape) for k, v in sorted(expected.items())}
    for k, stype in (grad_stypes or {}).items():
        if stype not in (None, "default"):
            raise ValueError("check_symbolic_backward: gradient storage %r is not supported: mxplug stores "
                             "every array dense" % stype)
    args_grad = {k: nd.array(v, ctx=ctx, dtype=expected[k].dtype if dtype == "asnumpy" else dtype)
                 for k, v in grads_np.items()}
    if isinstance(grad_req, str):
        grad_req = {k: grad_req for k in sym.list_arguments()}
    elif isinstance(grad_req, (list, tuple)):
        grad_req = dict(zip(sym.list_arguments(), grad_req))
    exe = sym.bind(ctx=ctx, args=location, args_grad=args_grad, aux_states=aux, grad_req=grad_req)
    exe.forward(is_train=True)
    if isinstance(out_grads, dict):
        out_grads = [_as_nd(out_grads[k], ctx, dtype) for k in sym.list_outputs()]
    elif out_grads is not None:
        out_grads = [_as_nd(g, ctx, dtype) for g in out_grads]
    exe.backward(out_grads)
    for name in expected:
        names = ("EXPECTED_%s" % name, "BACKWARD_%s" % name)
        if grad_req[name] == "write":
            assert_almost_equal(expected[name], args_grad[name], rtol, atol, names, equal_nan=equal_nan)
        elif grad_req[name] == "add":
            assert_almost_equal(expected[name], args_grad[name].asnumpy() - grads_np[name], rtol, atol, names,
                                equal_nan=equal_nan)
        elif grad_req[name] == "null":
            assert_almost_equal(grads_np[name], args_grad[name], rtol, atol, names, equal_nan=equal_nan)
        else:
            raise ValueError("Invalid grad_req %s for argument %s" % (grad_req[name], name))
    return args_grad


def check_speed(sym, location=None, ctx=None, N=20, grad_req=None, typ="whole", **kwargs):  # noqa: N803
    """Seconds per run of sym: forward and backward (typ 'whole') or forward alone ('forward'),
    averaged over N runs after one to warm up; ``location`` random when not given (shapes from
    kwargs)."""
    ctx = ctx or default_context()
    grad_req = grad_req or "write"
    if location is None:
        exe = sym.simple_bind(grad_req=grad_req, ctx=ctx, **kwargs)
        location = {k: np.random.normal(size=arr.shape, scale=1.0) for k, arr in exe.arg_dict.items()}
    else:
        assert isinstance(location, dict), "Expect dict, get \"location\"=%s" % str(location)
        exe = sym.simple_bind(grad_req=grad_req, ctx=ctx, **{k: v.shape for k, v in location.items()})
    for name, value in location.items():
        exe.arg_dict[name][:] = value
    if typ not in ("whole", "forward"):
        raise ValueError('typ can only be "whole" or "forward".')

    def run():
        exe.forward(is_train=typ == "whole")
        if typ == "whole":
            exe.backward(out_grads=exe.outputs)
        for output in exe.outputs:
            output.wait_to_read()

    run()
    start = time.time()
    for _ in range(N):
        run()
    nd.waitall()
    return (time.time() - start) / N


def check_consistency(sym, ctx_list, scale=1.0, grad_req="write", arg_params=None, aux_params=None, rtol=None,
                      atol=None, raise_on_err=True, ground_truth=None, equal_nan=False, use_uniform=False,
                      rand_type=np.float64):
    """Runs sym under each of ``ctx_list`` (dicts of 'ctx', input shapes and 'type_dict') on the
    same random values and asserts that outputs and gradients agree with the most precise run's
    (or ``ground_truth``), at the looser tolerance of each pair's dtypes; returns that reference."""
    syms = sym if isinstance(sym, list) else [sym] * len(ctx_list)
    assert len(syms) == len(ctx_list)
    exes = []
    for s, spec in zip(syms, ctx_list):
        spec = dict(spec)
        ctx, type_dict = spec.pop("ctx"), spec.pop("type_dict", None)
        exes.append(s.simple_bind(ctx, grad_req=grad_req, type_dict=type_dict, **spec))
    names = exes[0]._arg_names
    arg_params = dict(arg_params or {})
    aux_params = dict(aux_params or {})
    for name, arr in exes[0].arg_dict.items():
        if name not in arg_params:
            arg_params[name] = (np.random.uniform(-0.5 * scale, 0.5 * scale, arr.shape) if use_uniform
                                else np.random.normal(size=arr.shape, scale=scale)).astype(rand_type)
    for name, arr in exes[0].aux_dict.items():
        if name not in aux_params:
            aux_params[name] = 0
    for exe in exes:
        for name, arr in exe.arg_dict.items():
            arr[:] = arg_params[name]
        for name, arr in exe.aux_dict.items():
            arr[:] = aux_params[name]
    precision = [max(np.dtype(a.dtype).itemsize for a in exe.outputs) for exe in exes]
    reference = ground_truth is None and int(np.argmax(precision))
    failures = 0

    def compare(got, want, what):
        nonlocal failures
        try:
            assert_almost_equal(got, want, rtol, atol, equal_nan=equal_nan, names=(what, "reference"))
        except AssertionError:
            failures += 1
            if raise_on_err:
                raise
            print("Predict Err: ctx %s vs ctx %s at %s" % (what, "reference", what))

    for exe in exes:
        exe.forward(is_train=False)
    truth = ground_truth or {}
    if ground_truth is None:
        truth = dict(zip(syms[reference].list_outputs(), [o.asnumpy() for o in exes[reference].outputs]))
    for i, exe in enumerate(exes):
        for name, out in zip(syms[i].list_outputs(), exe.outputs):
            compare(out, truth[name].astype(out.dtype) if hasattr(truth[name], "astype") else truth[name], name)
    if grad_req != "null":
        for exe in exes:
            exe.forward(is_train=True)
            exe.backward([nd.array(np.ones(o.shape), ctx=o.context, dtype=o.dtype) for o in exe.outputs])
        if ground_truth is None:
            truth.update({n: g.asnumpy() for n, g in exes[reference].grad_dict.items() if g is not None})
        for exe in exes:
            for n in names:
                g = exe.grad_dict.get(n)
                if g is not None and n in truth:
                    compare(g, truth[n].astype(g.dtype), n)
    return truth


# ---- Samplers: statistical checks -----------------------------------------------------------

def mean_check(generator, mu, sigma, nsamples=1000000):
    """Whether the mean of generator(nsamples) is within 3 standard errors of mu."""
    sample = generator(nsamples)
    return abs(np.mean(sample) - mu) < 3.0 * sigma / np.sqrt(nsamples)


def var_check(generator, sigma, nsamples=1000000):
    """Whether the sample variance (ddof 1) of generator(nsamples) is within 3 standard errors of
    sigma^2 (those of a normal sample's variance)."""
    sample = np.asarray(generator(nsamples))
    return abs(sample.var(ddof=1) - sigma ** 2) < 3.0 * np.sqrt(2.0 * sigma ** 4 / (nsamples - 1))


def gen_buckets_probs_with_ppf(ppf, nbuckets):
    """nbuckets buckets of equal probability from a distribution's inverse CDF:
    ([(low, high)...], [1 / nbuckets...])."""
    probs = [1.0 / nbuckets] * nbuckets
    edges = [ppf(i / float(nbuckets)) for i in range(nbuckets + 1)]
    return [(edges[i], edges[i + 1]) for i in range(nbuckets)], probs


def chi_square_check(generator, buckets, probs, nsamples=1000000):
    """Pearson's chi-square test of generator(nsamples) against the buckets' probabilities:
    (p-value, observed count per bucket, expected count per bucket). Buckets are [low, high)
    ranges in increasing order, or the values of a discrete distribution."""
    import scipy.stats
    assert isinstance(buckets, list) and len(buckets) == len(probs)
    sample = np.asarray(generator(nsamples))
    if isinstance(buckets[0], (tuple, list)):
        observed = np.array([np.count_nonzero((sample >= low) & (sample < high)) for low, high in buckets])
    else:
        observed = np.array([np.count_nonzero(sample == value) for value in buckets])
    expected = (nsamples * np.array(probs, dtype=np.float32)).astype(np.int32)
    _, p = scipy.stats.chisquare(f_obs=observed, f_exp=expected)
    return p, observed, expected


def verify_generator(generator, buckets, probs, nsamples=1000000, nrepeat=5, success_rate=0.2, alpha=0.05):
    """Runs chi_square_check nrepeat times and asserts that at least ``success_rate`` of them keep
    the distribution at level alpha; returns the p-values."""
    runs = [chi_square_check(generator, buckets, probs, nsamples) for _ in range(nrepeat)]
    pvalues = [r[0] for r in runs]
    if sum(p > alpha for p in pvalues) < nrepeat * success_rate:
        raise AssertionError("Generator test fails, Chi-square p=%s, obs_freq=%s, expected_freq=%s.\nbuckets=%s, "
                             "probs=%s" % (pvalues, [r[1] for r in runs], [r[2] for r in runs], buckets, probs))
    return pvalues


# ---- Scopes and decorators ------------------------------------------------------------------

@contextlib.contextmanager
def environment(*args):
    """A scope with environment variables set: environment(name, value) or environment({name:
    value...}); None unsets. The previous values come back after it (pushed work waited for)."""
    if len(args) == 1 and isinstance(args[0], dict):
        changes = args[0]
    else:
        assert len(args) == 2, "Expecting one dict arg or two args: env var name and value"
        changes = {args[0]: args[1]}
    saved = {name: os.environ.get(name) for name in changes}
    for name, value in changes.items():
        setenv(name, value)
    try:
        yield
    finally:
        nd.waitall()
        for name, value in saved.items():
            setenv(name, value)


def retry(n):
    """A decorator that runs a test up to n times until it passes an assertion."""
    assert n > 0

    def decorate(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            for i in range(n):
                try:
                    return f(*args, **kwargs)
                except AssertionError:
                    if i == n - 1:
                        raise
        return wrapper
    return decorate


@contextlib.contextmanager
def discard_stderr():
    """A scope in which what is written to file descriptor 2 (C and Python alike) is dropped."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)


def list_gpus():
    """The ids of the GPUs there are (a range)."""
    return range(num_gpus())


def is_op_runnable():
    """Whether ops can run on the default context (always, where it exists)."""
    return True


def same_symbol_structure(sym1, sym2):
    """Whether two symbols' nodes, in order, have the same ops (over the shorter of the two, as
    MXNet compares them)."""
    ops = [[n["op"] for n in json.loads(s.tojson())["nodes"]] for s in (sym1, sym2)]
    return all(a == b for a, b in zip(*ops))


class DummyIter(DataIter):
    """The first batch of ``real_iter``, given again and again (for speed tests)."""

    def __init__(self, real_iter):
        super().__init__()
        self.real_iter = real_iter
        self.provide_data = real_iter.provide_data
        self.provide_label = real_iter.provide_label
        self.batch_size = real_iter.batch_size
        self.the_batch = next(real_iter)

    def __iter__(self):
        return self

    def next(self):
        return self.the_batch


__all__ = [name for name in dir() if not name.startswith("_") and name not in (
    "contextlib", "functools", "json", "numbers", "os", "sys", "time", "np", "nd", "Context", "DataIter")]
