"""NDArray: MXNet's imperative array, as methods on the core's ``_core.NDArray``.

Every operation is an engine push: it returns at once, and the values are computed in the
background in dependency order. ``asnumpy``, ``asscalar``, ``wait_to_read`` and ``waitall`` wait,
and raise ``MXNetError`` for a failure of the work they waited for.
"""
import numbers
import types
import warnings

import numpy as np

from .. import _core
from .. import autograd
from ..base import MXNetError, integer_types
from ..context import Context, current_context, _from_dl

NDArray = _core.NDArray
# Whether backward wrote this array's gradient since gluon.Trainer's last step (autograd sets it).
NDArray._fresh_grad = False

_DTYPES = ("float32", "float64", "float16", "uint8", "int8", "int32", "int64", "bool")


def _dtype_name(dtype):
    if dtype is None:
        return "float32"
    name = np.dtype(dtype).name
    if name not in _DTYPES:
        raise TypeError("dtype %s is not supported: expected one of %s" % (name, ", ".join(_DTYPES)))
    return name


def _ctx(ctx):
    return Context(ctx) if ctx is not None else current_context()


def _invoke(op, inputs, out=None, ctx=None, **kwargs):
    return _core.run_op(op, inputs, kwargs, out, None if ctx is None else ctx._dl())


# ---- Creation ------------------------------------------------------------------------------

def empty(shape, ctx=None, dtype=None):
    """An uninitialised array."""
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    return _core.empty(tuple(shape), _ctx(ctx)._dl(), _dtype_name(dtype))


def zeros(shape, ctx=None, dtype=None, **kwargs):
    """An array of zeros (``dtype`` float32 unless given)."""
    return full(shape, 0, ctx, dtype, **kwargs)


def ones(shape, ctx=None, dtype=None, **kwargs):
    return full(shape, 1, ctx, dtype, **kwargs)


def full(shape, val, ctx=None, dtype=None, out=None, name=None, stype=None):
    """An array filled with ``val`` (``name`` is accepted and unused, as in MXNet's generated
    functions; ``stype`` may only be 'default')."""
    if stype not in (None, 'default'):
        raise ValueError("stype %r: mxplug's arrays are dense ('default' storage only)" % (stype,))
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    if out is not None:
        return _invoke("_full", [], out=out, shape=out.shape, value=float(val), dtype=out.dtype)
    return _invoke("_full", [], ctx=_ctx(ctx), shape=tuple(shape), value=float(val),
                   dtype=_dtype_name(dtype))


def array(source_array, ctx=None, dtype=None):
    """An array with a copy of ``source_array`` (a NumPy array, a list, a scalar or an NDArray).

    As in MXNet, the dtype is float32 unless given or taken from an NDArray source (a NumPy
    source of another dtype is converted to float32 too).
    """
    if isinstance(source_array, NDArray):
        dtype = dtype or source_array.dtype
        result = empty(source_array.shape, ctx or source_array.context, dtype)
        if np.dtype(dtype) == np.dtype(source_array.dtype):
            source_array.copyto(result)
        else:
            source_array.astype(dtype).copyto(result)
        return result
    if dtype is None:
        dtype = np.float32
    src = np.ascontiguousarray(np.asarray(source_array, dtype=_dtype_name(dtype)))
    result = empty(src.shape, ctx, src.dtype)
    result._sync_copyfrom(src)
    return result


def arange(start, stop=None, step=1.0, repeat=1, infer_range=None, ctx=None, dtype=None):
    """Evenly spaced values in [start, stop) (MXNet's arange, with ``repeat``)."""
    kwargs = dict(start=float(start), step=float(step), repeat=int(repeat), dtype=_dtype_name(dtype))
    if stop is not None:
        kwargs["stop"] = float(stop)
    return _invoke("_arange", [], ctx=_ctx(ctx), **kwargs)


def linspace(start, stop, num, endpoint=True, ctx=None, dtype=None):
    """num evenly spaced values from start to stop (MXNet's linspace): stop included with
    endpoint, else the first num of num + 1."""
    return _invoke("_linspace", [], ctx=_ctx(ctx), start=float(start), stop=float(stop), num=int(num),
                   endpoint=bool(endpoint), dtype=_dtype_name(dtype))


def _split_v2_indices(ary, indices_or_sections, axis):
    """MXNet's split_v2 argument as the _split_v2 op's starting indices."""
    if isinstance(indices_or_sections, int):
        size = ary.shape[axis]
        if size % indices_or_sections:
            raise ValueError("array split does not result in an equal division")
        step = size // indices_or_sections
        return [i * step for i in range(indices_or_sections)]
    if isinstance(indices_or_sections, tuple):
        return [0] + list(indices_or_sections)
    raise ValueError("indices_or_sections must either int or tuple of ints")


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False):
    """Splits ary along axis into equal pieces (an int) or at the given indices (a tuple), as
    NumPy's split."""
    return _invoke("_split_v2", [ary], indices=tuple(_split_v2_indices(ary, indices_or_sections, axis)),
                   axis=int(axis), squeeze_axis=bool(squeeze_axis))


def eye(N, M=0, k=0, ctx=None, dtype=None):
    """A 2-D array with ones on the k-th diagonal."""
    return _invoke("_eye", [], ctx=_ctx(ctx), N=int(N), M=int(M), k=int(k), dtype=_dtype_name(dtype))


def zeros_like(data, out=None):
    return _invoke("zeros_like", [data], out=out)


def ones_like(data, out=None):
    return _invoke("ones_like", [data], out=out)


def full_like(data, fill_value, dtype=None, ctx=None):
    return full(data.shape, fill_value, ctx or data.context, dtype or data.dtype)


def empty_like(data, dtype=None, ctx=None):
    return empty(data.shape, ctx or data.context, dtype or data.dtype)


def from_dlpack(dlpack):
    """An NDArray sharing memory with a DLPack capsule or any object with ``__dlpack__``
    (a PyTorch tensor, a NumPy array), without a copy."""
    return _core.from_dlpack(dlpack)


def from_numpy(ndarray, zero_copy=True, array_cls=None):
    """An NDArray of a NumPy array (MXNet's ``mx.nd.from_numpy``). With ``zero_copy`` (the
    default) it shares the array's memory through DLPack; the array must be C-contiguous and is
    made read-only, as MXNet makes it, since the NDArray now owns what it holds. Without, a copy."""
    if not zero_copy:
        return array(ndarray, dtype=ndarray.dtype)
    if not ndarray.flags['C_CONTIGUOUS']:
        raise ValueError("Only c-contiguous arrays are supported for zero-copy")
    capsule = ndarray.__dlpack__()  # NumPy exports only writable arrays
    ndarray.flags['WRITEABLE'] = False
    return from_dlpack(capsule)


def to_dlpack_for_read(data):
    """A DLPack capsule of ``data`` for a consumer that only reads (waits for pending writes)."""
    return data.to_dlpack_for_read()


def to_dlpack_for_write(data):
    """A DLPack capsule of ``data`` for a consumer that may write (waits for all pending use)."""
    return data.to_dlpack_for_write()


def waitall():
    """Waits for all pushed work; raises the first error it left (and clears them all)."""
    _core.waitall()


def concatenate(arrays, axis=0, always_copy=True):
    """Joins arrays along an existing axis."""
    return _invoke("Concat", list(arrays), dim=axis, num_args=len(arrays))


def histogram(a, bins=10, range=None):
    """Counts of a's elements in bins: ``bins`` equal bins of ``range`` (an int; without a range,
    NumPy's histogram of the data, as MXNet gives), or the bins whose edges the array ``bins``
    holds. Returns (counts, edges)."""
    if isinstance(bins, NDArray):
        return _invoke("_histogram", [a, bins])
    if isinstance(bins, integer_types):
        if range is None:
            warnings.warn("range is not specified, using numpy's result to ensure consistency with numpy")
            counts, edges = np.histogram(a.asnumpy(), bins=bins)
            return array(counts, ctx=a.context), array(edges, ctx=a.context)
        return _invoke("_histogram", [a], bin_cnt=int(bins), range=tuple(float(x) for x in range))
    raise ValueError("bins argument should be either an integer or an NDArray")


def onehot_encode(indices, out):
    """One-hot rows into ``out`` (N, K): row i has a one at column indices[i] (deprecated in MXNet:
    use one_hot)."""
    return _invoke("_onehot_encode", [indices, out], out=out)


def moveaxis(tensor, source, destination):
    axes = list(range(tensor.ndim))
    src, dst = source % tensor.ndim, destination % tensor.ndim
    axes.pop(src)
    axes.insert(dst, src)
    return tensor.transpose(axes=tuple(axes))


# ---- Functions of two operands (MXNet's mx.nd.add, mx.nd.maximum...) --------------------------
# Each takes arrays (broadcasting) or numbers on either side, as MXNet's: its op for two arrays,
# for array and number, for number and array, and what two numbers give.

def _binary_function(name, array_op, scalar_op, rscalar_op, numbers_fn):
    def function(lhs, rhs):
        if isinstance(lhs, numbers.Number) and isinstance(rhs, numbers.Number):
            return numbers_fn(lhs, rhs)
        if isinstance(lhs, NDArray) and isinstance(rhs, numbers.Number):
            return _invoke(scalar_op, [lhs], scalar=float(rhs))
        if isinstance(lhs, numbers.Number) and isinstance(rhs, NDArray):
            return _invoke(rscalar_op, [rhs], scalar=float(lhs))
        if isinstance(lhs, NDArray) and isinstance(rhs, NDArray):
            return _invoke(array_op, [lhs, rhs])
        raise TypeError("%s: type %s and %s not supported" % (name, type(lhs).__name__, type(rhs).__name__))
    function.__name__ = function.__qualname__ = name
    function.__doc__ = ("%s of two arrays (broadcasting), or of an array and a number, element-wise (MXNet's "
                        "mx.nd.%s)." % (name, name))
    return function


def _truth(test):
    return lambda a, b: 1 if test(a, b) else 0


_BINARY_FUNCTIONS = {  # name: (two arrays, array and number, number and array, two numbers)
    "add": ("broadcast_add", "_plus_scalar", "_plus_scalar", lambda a, b: a + b),
    "subtract": ("broadcast_sub", "_minus_scalar", "_rminus_scalar", lambda a, b: a - b),
    "multiply": ("broadcast_mul", "_mul_scalar", "_mul_scalar", lambda a, b: a * b),
    "divide": ("broadcast_div", "_div_scalar", "_rdiv_scalar", lambda a, b: a / b),
    "modulo": ("broadcast_mod", "_mod_scalar", "_rmod_scalar", lambda a, b: a % b),
    "power": ("broadcast_power", "_power_scalar", "_rpower_scalar", lambda a, b: a ** b),
    "maximum": ("broadcast_maximum", "_maximum_scalar", "_maximum_scalar", lambda a, b: a if a > b else b),
    "minimum": ("broadcast_minimum", "_minimum_scalar", "_minimum_scalar", lambda a, b: a if a < b else b),
    "equal": ("broadcast_equal", "_equal_scalar", "_equal_scalar", _truth(lambda a, b: a == b)),
    "not_equal": ("broadcast_not_equal", "_not_equal_scalar", "_not_equal_scalar", _truth(lambda a, b: a != b)),
    "greater": ("broadcast_greater", "_greater_scalar", "_lesser_scalar", _truth(lambda a, b: a > b)),
    "greater_equal": ("broadcast_greater_equal", "_greater_equal_scalar", "_lesser_equal_scalar",
                      _truth(lambda a, b: a >= b)),
    "lesser": ("broadcast_lesser", "_lesser_scalar", "_greater_scalar", _truth(lambda a, b: a < b)),
    "lesser_equal": ("broadcast_lesser_equal", "_lesser_equal_scalar", "_greater_equal_scalar",
                     _truth(lambda a, b: a <= b)),
    "logical_and": ("broadcast_logical_and", "_logical_and_scalar", "_logical_and_scalar",
                    _truth(lambda a, b: a and b)),
    "logical_or": ("broadcast_logical_or", "_logical_or_scalar", "_logical_or_scalar", _truth(lambda a, b: a or b)),
    "logical_xor": ("broadcast_logical_xor", "_logical_xor_scalar", "_logical_xor_scalar",
                    _truth(lambda a, b: bool(a) != bool(b))),
}
for _name, _spec in _BINARY_FUNCTIONS.items():
    globals()[_name] = _binary_function(_name, *_spec)
true_divide = divide  # noqa: F821 (made above)


# ---- Properties and conversion ---------------------------------------------------------------

def _dtype(self):
    """The element type, as a NumPy type (``numpy.float32``)."""
    return np.dtype(self._dtype_name).type


def _context(self):
    return _from_dl(self._ctx)


def _repr(self):
    shape = "x".join(str(d) for d in self.shape) if self.shape else "1"
    return "\n%s\n<NDArray %s @%s>" % (str(self.asnumpy()), shape, self.context)


def _asscalar(self):
    if self.size != 1:
        raise ValueError("The current array is not a scalar")
    return self.asnumpy().reshape(())[()]


def _bool(self):
    n = self.size
    if n == 0:
        return False
    if n == 1:
        return bool(self.asscalar())
    raise ValueError("The truth value of an NDArray with multiple elements is ambiguous.")


def _len(self):
    if not self.shape:
        raise TypeError("len() of a 0-d array")
    return self.shape[0]


def _iter(self):
    for i in range(len(self)):
        yield self[i]


def _copy(self):
    return self.copyto(self.context)


def _copyto(self, other):
    """Copies into an NDArray (any device) or to a new array on a Context."""
    if isinstance(other, NDArray):
        if other._shares_storage(self) and other._data_address() == self._data_address():
            return other
        if other.shape != self.shape:
            raise ValueError("copyto: shape %s does not match the destination's %s"
                             % (self.shape, other.shape))
        if other._dtype_name != self._dtype_name:  # MXNet's copyto converts the type
            return _invoke("Cast", [self], out=other, dtype=other._dtype_name)
        self._copyto(other)
        return other
    if isinstance(other, Context):
        return self._copy_to_ctx(other._dl())
    raise TypeError("copyto does not support type " + str(type(other)))


def _as_in_context(self, context):
    if self.context == context:
        return self
    return self.copyto(context)


def _astype(self, dtype, copy=True):
    name = _dtype_name(dtype)
    if not copy and name == self._dtype_name:
        return self
    return _invoke("Cast", [self], dtype=name)


# ---- Shape -----------------------------------------------------------------------------------

def _reshape(self, *shape, **kwargs):
    """A view with a new shape; MXNet's special values 0, -1, -2, -3, -4 and ``reverse``."""
    if len(shape) == 1 and not isinstance(shape[0], numbers.Integral):
        shape = shape[0]
    shape = kwargs.pop("shape", shape)
    reverse = kwargs.pop("reverse", False)
    if kwargs:
        raise TypeError("reshape got unexpected keyword arguments %s" % sorted(kwargs))
    if autograd.is_recording():  # recorded as the op (a copy), so that gradients flow through it
        return _invoke("Reshape", [self], shape=tuple(shape), reverse=reverse)
    target = _core.infer_shapes("Reshape", {"shape": tuple(shape), "reverse": reverse},
                                [self.shape])[0]
    return self._reshape_view(tuple(target))


def _reshape_like(self, other):
    return self.reshape(other.shape)


# flatten, expand_dims and squeeze give a copy (their ops), or with inplace=True a view, as in
# MXNet.

def _flatten(self, inplace=False):
    if not inplace:
        return _invoke("Flatten", [self])
    return self.reshape((self.shape[0], -1) if self.ndim > 0 else (1, 1))


def _expand_dims(self, axis, inplace=False):
    if not inplace:
        return _invoke("expand_dims", [self], axis=axis)
    nd = self.ndim
    if axis < -nd - 1 or axis > nd:
        raise ValueError("axis %d is out of range for an array of %d dimensions" % (axis, nd))
    axis = axis % (nd + 1)
    return self.reshape(self.shape[:axis] + (1,) + self.shape[axis:])


def _squeeze(self, axis=None, inplace=False):
    if not inplace:
        return _invoke("squeeze", [self], **({} if axis is None else {"axis": axis}))
    shape = self.shape
    if axis is None:
        axes = [i for i, d in enumerate(shape) if d == 1]
    else:
        axes = [a % len(shape) for a in (axis if isinstance(axis, (tuple, list)) else (axis,))]
        for a in axes:
            if shape[a] != 1:
                raise MXNetError("squeeze: axis %d has size %d, not 1" % (a, shape[a]))
    new = tuple(d for i, d in enumerate(shape) if i not in axes)
    return self.reshape(new if new else ())


def _stype(self):
    """The storage type: 'default' (dense), the only one mxplug has."""
    return "default"


def _tostype(self, stype):
    """A copy in storage type ``stype``; only 'default' (dense) exists in mxplug."""
    if stype != "default":
        raise MXNetError("tostype: storage type %r is not supported: mxplug stores every array dense "
                         "('default')" % (stype,))
    return self.copy()


def _slice_assign(self, rhs, begin, end, step):
    """Writes ``rhs`` into the region begin:end:step of this array (in place); returns it."""
    return _invoke("_slice_assign", [self, rhs], out=self, begin=begin, end=end, step=step)


def _slice_assign_scalar(self, value, begin, end, step):
    """Sets the region begin:end:step of this array to ``value`` (in place); returns it."""
    return _invoke("_slice_assign_scalar", [self], out=self, scalar=float(value), begin=begin, end=end,
                   step=step)


def _T(self):
    if self.ndim > 2:
        raise ValueError("Only 2D matrix is allowed to be transposed")
    return self.transpose() if self.ndim == 2 else self


# ---- Indexing --------------------------------------------------------------------------------

def _is_basic(key):
    return isinstance(key, (numbers.Integral, slice)) or key is Ellipsis or key is None


def _expand_key(key, ndim):
    """The key as one entry per axis (ints, slices, index arrays), plus where None adds axes."""
    if not isinstance(key, tuple):
        key = (key,)
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if n_real > ndim:
        raise IndexError("too many indices (%d) for an array of %d dimensions" % (n_real, ndim))
    out, new_axes = [], []
    for k in key:
        if k is Ellipsis:
            out.extend([slice(None)] * (ndim - n_real))
        elif k is None:
            new_axes.append(len(out))
        else:
            out.append(k)
    out.extend([slice(None)] * (ndim - len(out)))
    return out, new_axes


def _normalize_index(i, n, axis):
    i = int(i)
    if i < -n or i >= n:
        raise IndexError("index %d is out of bounds for axis %d with size %d" % (i, axis, n))
    return i + n if i < 0 else i


def _getitem(self, key):
    """Basic indexing (ints, slices, Ellipsis, None) and NumPy's advanced indexing with lists,
    NumPy arrays and NDArrays. An int or a step-1 slice on the first axis alone is a view, as in
    MXNet."""
    shape = self.shape
    if isinstance(key, numbers.Integral) and len(shape) == 1:
        i = _normalize_index(key, shape[0], 0)  # MXNet 1.x has no 0-d arrays: a view of shape (1,)
        return self._slice(i, i + 1)
    if isinstance(key, numbers.Integral) and shape:
        return self._at(_normalize_index(key, shape[0], 0))
    if isinstance(key, slice) and shape and key.step in (None, 1):
        start, stop, _ = key.indices(shape[0])
        return self._slice(start, max(start, stop))
    if _is_index_array(key) or (isinstance(key, tuple) and any(_is_index_array(k) for k in key)):
        return _getitem_advanced(self, key)
    axes, new_axes = _expand_key(key, len(shape))
    begin, end, step, drop = [], [], [], []
    for axis, k in enumerate(axes):
        if isinstance(k, numbers.Integral):
            i = _normalize_index(k, shape[axis], axis)
            begin.append(i), end.append(i + 1), step.append(1), drop.append(axis)
        else:
            b, e, s = k.indices(shape[axis])
            if s < 0 and e < 0:
                e = None
            begin.append(b), end.append(e), step.append(s)
    result = _invoke("slice", [self], begin=tuple(begin), end=tuple(end), step=tuple(step))
    out_shape = [d for axis, d in enumerate(result.shape) if axis not in drop]
    # A None placed after k key entries stands after the axes those entries leave in the result.
    for offset, pos in enumerate(new_axes):
        out_shape.insert(pos - sum(1 for a in drop if a < pos) + offset, 1)
    return result.reshape(tuple(out_shape) or (1,))  # an element is shape (1,), as in MXNet 1.x


def _is_index_array(k):
    return isinstance(k, (NDArray, np.ndarray, list))


def _getitem_advanced(self, key):
    """NumPy's advanced indexing, which MXNet 1.9.1 follows: the index arrays (and the ints
    beside them) broadcast together to one shape B and pick elements pointwise; B stands where
    the indexed axes stood when they are adjacent, and first otherwise."""
    key = key if isinstance(key, tuple) else (key,)
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if n_real > self.ndim:
        raise IndexError("too many indices (%d) for an array of %d dimensions" % (n_real, self.ndim))
    # One entry per axis; a None becomes an axis of size 1 that a full slice keeps.
    keys, shape, dims = [], [], iter(self.shape)
    for k in key:
        if k is Ellipsis:
            for _ in range(self.ndim - n_real):
                keys.append(slice(None)), shape.append(next(dims))
        elif k is None:
            keys.append(slice(None)), shape.append(1)
        else:
            keys.append(k), shape.append(next(dims))
    for d in dims:
        keys.append(slice(None)), shape.append(d)
    data = self.reshape(tuple(shape)) if tuple(shape) != self.shape else self
    # Slices first (every axis kept), then the advanced axes gathered as one flattened axis.
    begin, end, step, picked, indices = [], [], [], [], []
    for axis, k in enumerate(keys):
        if isinstance(k, slice):
            b, e, s = k.indices(shape[axis])
            begin.append(b), end.append(None if s < 0 and e < 0 else e), step.append(s)
            continue
        begin.append(None), end.append(None), step.append(None)
        index = k.asnumpy() if isinstance(k, NDArray) else np.asarray(k)
        if index.dtype.kind not in "iuf" and index.size:
            raise IndexError("index arrays must hold integers, got dtype %s on axis %d" % (index.dtype, axis))
        index = index.astype(np.int64)
        if index.size and (index.min() < -shape[axis] or index.max() >= shape[axis]):
            bad = index[(index < -shape[axis]) | (index >= shape[axis])].ravel()[0]
            raise IndexError("index %d is out of bounds for axis %d with size %d" % (bad, axis, shape[axis]))
        picked.append(axis), indices.append(np.where(index < 0, index + shape[axis], index))
    try:
        indices = np.broadcast_arrays(*indices)
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with shapes "
                         + " ".join(str(i.shape) for i in indices)) from None
    sliced = _invoke("slice", [data], begin=tuple(begin), end=tuple(end), step=tuple(step))
    rest = [a for a in range(sliced.ndim) if a not in picked]
    perm = picked + rest
    moved = sliced if perm == list(range(sliced.ndim)) else _invoke("transpose", [sliced], axes=tuple(perm))
    picked_dims = tuple(sliced.shape[a] for a in picked)
    rest_dims = tuple(sliced.shape[a] for a in rest)
    flat = np.ravel_multi_index(tuple(indices), picked_dims) if indices[0].size else indices[0]
    b_shape = flat.shape
    flat_index = array(flat.reshape(-1) if flat.ndim else flat.reshape(1), ctx=self.context, dtype=np.int64)
    gathered = _invoke("take", [moved.reshape((int(np.prod(picked_dims)),) + rest_dims), flat_index],
                       axis=0, mode="raise")
    result = gathered.reshape(b_shape + rest_dims if b_shape + rest_dims else (1,))
    adjacent = picked == list(range(picked[0], picked[0] + len(picked)))
    if adjacent and picked[0] > 0 and rest_dims:
        nb, before = len(b_shape), picked[0]
        axes = list(range(nb, nb + before)) + list(range(nb)) + list(range(nb + before, nb + len(rest_dims)))
        result = _invoke("transpose", [result], axes=tuple(axes))
    return result


def _setitem(self, key, value):
    """``x[key] = value`` for a scalar, an NDArray or a NumPy array (broadcast to the target)."""
    if not self.writable:
        self._check_writable("NDArray.__setitem__: the array")  # ValueError, as MXNet raises
    if isinstance(key, slice) and key == slice(None) or key is Ellipsis:
        target = self
    elif isinstance(key, numbers.Integral) and self.shape or (
            isinstance(key, slice) and self.shape and key.step in (None, 1)):
        target = self[key]
    else:
        target = None
    if target is not None:
        if isinstance(value, numbers.Number):
            _invoke("_full", [], out=target, shape=target.shape, value=float(value),
                    dtype=target._dtype_name)
        else:
            value = _as_array_like(value, target)
            # Leading axes of length 1 beyond the target's go (MXNet and NumPy take [[5]] for a
            # single element), then the rest broadcasts.
            while value.ndim > len(target.shape) and value.shape[0] == 1:
                value = value.reshape(value.shape[1:])
            if value.shape != target.shape:
                if len(value.shape) > len(target.shape) or any(
                        v not in (1, t) for v, t in zip(value.shape[::-1], target.shape[::-1])):
                    raise ValueError("operands could not be broadcast together with remapped shapes"
                                     "[original->remapped]: %s and requested shape %s" % (value.shape, target.shape))
                value = value.broadcast_to(target.shape)
            value.copyto(target)
        return
    if isinstance(key, (NDArray, np.ndarray, list)) or (
            isinstance(key, tuple) and any(isinstance(k, (NDArray, np.ndarray, list)) for k in key)):
        _setitem_advanced(self, key, value)
        return
    axes, new_axes = _expand_key(key, self.ndim)
    begin, end, step, int_axes = [], [], [], []
    for axis, k in enumerate(axes):
        if isinstance(k, numbers.Integral):
            i = _normalize_index(k, self.shape[axis], axis)
            begin.append(i), end.append(i + 1), step.append(1), int_axes.append(axis)
        else:
            b, e, s = k.indices(self.shape[axis])
            if s < 0 and e < 0:
                e = None
            begin.append(b), end.append(e), step.append(s)
    if isinstance(value, numbers.Number):
        _invoke("_slice_assign_scalar", [self], out=self, scalar=float(value), begin=tuple(begin),
                end=tuple(end), step=tuple(step))
        return
    region = _core.infer_shapes("slice", {"begin": tuple(begin), "end": tuple(end),
                                          "step": tuple(step)}, [self.shape])[0]
    value = _as_array_like(value, self)
    if value.shape != tuple(region):
        # The value broadcasts to the indexed shape, where integer indices drop their axes.
        visible = tuple(d for axis, d in enumerate(region) if axis not in int_axes)
        if value.shape != visible:
            value = value.reshape(_broadcastable(value.shape, visible)).broadcast_to(visible)
        value = value.reshape(tuple(region))
    _invoke("_slice_assign", [self, value], out=self, begin=tuple(begin), end=tuple(end),
            step=tuple(step))


def _setitem_advanced(self, key, value):
    # Through NumPy: read, assign with NumPy's rules, write back (ordered by the engine waits).
    host = self.asnumpy()
    if isinstance(key, tuple):
        key = tuple(k.asnumpy() if isinstance(k, NDArray) else k for k in key)
    elif isinstance(key, NDArray):
        key = key.asnumpy()
    host[key] = value.asnumpy() if isinstance(value, NDArray) else value
    self._sync_copyfrom(host)


def _broadcastable(shape, target):
    shape = tuple(shape)
    return (1,) * (len(target) - len(shape)) + shape


def _as_array_like(value, like):
    if isinstance(value, NDArray):
        return value.as_in_context(like.context) if value.dtype == like.dtype else \
            value.astype(like.dtype).as_in_context(like.context)
    return array(np.asarray(value, dtype=like.dtype), ctx=like.context, dtype=like.dtype)


# ---- Arithmetic not defined in C++ -------------------------------------------------------------

def _neg(self):
    return _invoke("negative", [self])


def _abs(self):
    return _invoke("abs", [self])


def _pos(self):
    return self


def _rpow(self, other):
    if isinstance(other, numbers.Number):
        return _invoke("_rpower_scalar", [self], scalar=float(other))
    return NotImplemented


def _rmod(self, other):
    if isinstance(other, numbers.Number):
        return _invoke("_rmod_scalar", [self], scalar=float(other))
    return NotImplemented


# ---- Pickle ----------------------------------------------------------------------------------

def _reduce(self):
    return (_unpickle, (self.asnumpy(), self.context.device_type, self.context.device_id))


def _unpickle(data, device_type, device_id):
    return array(data, ctx=Context(device_type, device_id), dtype=data.dtype)


# The arithmetic operators are C++ (python/src/ndarray_bindings.cc); inside autograd.record() they
# are the two-operand functions above instead (mx.nd.add...), whose calls autograd records. The C++
# ones call them themselves (Note [Autograd state]); the reflected forms defined in Python here
# (__rpow__, __rmod__) are wrapped.
_RECORDED_ARITHMETIC = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
                        "mod": "modulo", "pow": "power"}


def _recorded(name, function, reflected):
    dunder = "__%s%s__" % ("r" if reflected else "", name)
    original = NDArray.__dict__[dunder]

    def method(self, other):
        if not autograd.is_recording():
            return original(self, other)
        if not isinstance(other, (NDArray, numbers.Number)):
            return NotImplemented
        return function(other, self) if reflected else function(self, other)
    method.__name__ = dunder
    return method


def _record_arithmetic():
    in_cpp = {}
    for name, function in _RECORDED_ARITHMETIC.items():
        for reflected in (False, True):
            dunder = "__%s%s__" % ("r" if reflected else "", name)
            if dunder not in NDArray.__dict__:
                continue
            if isinstance(NDArray.__dict__[dunder], types.FunctionType):
                setattr(NDArray, dunder, _recorded(name, globals()[function], reflected))
            else:
                in_cpp[dunder] = globals()[function]
    _core._set_recorded_arithmetic(in_cpp)


def _extend():
    props = {"dtype": _dtype, "context": _context, "ctx": _context, "T": _T, "stype": _stype}
    for name, fn in props.items():
        setattr(NDArray, name, property(fn))
    methods = {
        "__repr__": _repr, "__bool__": _bool, "__len__": _len, "__iter__": _iter,
        "__getitem__": _getitem, "__setitem__": _setitem, "__neg__": _neg, "__abs__": _abs,
        "__pos__": _pos, "__rpow__": _rpow, "__rmod__": _rmod, "__reduce__": _reduce,
        "asscalar": _asscalar, "copy": _copy, "copyto": _copyto, "as_in_context": _as_in_context,
        "astype": _astype, "reshape": _reshape, "reshape_like": _reshape_like,
        "flatten": _flatten, "expand_dims": _expand_dims, "squeeze": _squeeze, "tostype": _tostype,
        "slice_assign": _slice_assign, "slice_assign_scalar": _slice_assign_scalar,
        "split_v2": split_v2,
        "__copy__": _copy, "__deepcopy__": lambda self, memo: _copy(self),
    }
    for name, fn in methods.items():
        setattr(NDArray, name, fn)
    # The fluent methods of the ops (a.sum(axis=1)) come with the ops: register.populate.
    _record_arithmetic()
    NDArray.__module__ = "mxplug.ndarray"
    NDArray.__array_priority__ = 1000.0  # numpy scalar * NDArray uses NDArray's __rmul__


_extend()
