"""Gluon's helpers (MXNet 1.9.1's ``mx.gluon.utils``): split a batch over contexts, clip
gradients by their global norm, check a file's SHA-1. ``download`` is excluded: the project's
machines have no network."""
import hashlib
import warnings

import numpy as np

from .. import ndarray as nd
from .block import HookHandle  # noqa: F401 (MXNet's mx.gluon.utils.HookHandle)


def split_data(data, num_slice, batch_axis=0, even_split=True):
    """``data`` split in ``num_slice`` parts along ``batch_axis`` (the last part takes the rest
    unless ``even_split``, which requires the size to divide)."""
    size = data.shape[batch_axis]
    if even_split and size % num_slice != 0:
        raise ValueError("data with shape %s cannot be evenly split into %d slices along axis %d. Use a batch "
                         "size that's multiple of %d or set even_split=False to allow uneven partitioning of data."
                         % (str(data.shape), num_slice, batch_axis, num_slice))
    n_each_section, extras = divmod(size, num_slice)
    section_sizes = [0] + (extras * [n_each_section + 1] + (num_slice - extras) * [n_each_section])
    div_points = np.array(section_sizes).cumsum()
    if size < num_slice:
        raise ValueError("Too many slices for data with shape %s. Arguments are num_slice=%d and batch_axis=%d."
                         % (str(data.shape), num_slice, batch_axis))
    slices = []
    if batch_axis != 0:
        for i in range(num_slice):
            st, end = int(div_points[i]), int(div_points[i + 1])
            slices.append(nd.slice_axis(data, axis=batch_axis, begin=st, end=end))
    elif isinstance(data, np.ndarray):
        slices = [data[int(div_points[i]):int(div_points[i + 1])] for i in range(num_slice)]
    else:
        slices = [data[int(div_points[i]):int(div_points[i + 1])] if num_slice > 1 else data
                  for i in range(num_slice)]
    return slices


def split_and_load(data, ctx_list, batch_axis=0, even_split=True):
    """``data`` (an NDArray or NumPy array) split over ``ctx_list``, each part on its context."""
    if isinstance(data, np.ndarray):
        data = nd.array(data, ctx=ctx_list[0])
    if len(ctx_list) == 1:
        return [data.as_in_context(ctx_list[0])]
    slices = split_data(data, len(ctx_list), batch_axis, even_split)
    return [i.as_in_context(ctx) for i, ctx in zip(slices, ctx_list)]


def clip_global_norm(arrays, max_norm, check_isfinite=True):
    """Scales ``arrays`` in place so that their joint 2-norm is at most ``max_norm``; returns
    the norm before (a float, or with ``check_isfinite=False`` an NDArray)."""
    def _norm(array):
        x = array.reshape((-1,))
        return nd.dot(x, x)
    if len(arrays) == 0:
        raise AssertionError("clip_global_norm needs at least one array")
    ctx = arrays[0].context
    total_norm = nd.add_n(*[_norm(arr).as_in_context(ctx) for arr in arrays])
    total_norm = nd.sqrt(total_norm)
    if check_isfinite:
        if not np.isfinite(total_norm.asscalar()):
            warnings.warn(UserWarning('nan or inf is detected. Clipping results will be undefined.'), stacklevel=2)
    scale = max_norm / (total_norm + 1e-8)
    scale = nd.min(nd.concat(scale, nd.ones(1, ctx=ctx), dim=0))
    for arr in arrays:
        arr *= scale.as_in_context(arr.context)
    if check_isfinite:
        return total_norm.asscalar()
    return total_norm


def check_sha1(filename, sha1_hash):
    """Whether ``filename``'s SHA-1 is ``sha1_hash``."""
    sha1 = hashlib.sha1()
    with open(filename, 'rb') as f:
        while True:
            data = f.read(1048576)
            if not data:
                break
            sha1.update(data)
    return sha1.hexdigest() == sha1_hash


def shape_is_known(shape):
    """Whether every dimension of ``shape`` is known (MXNet 1.x: none is 0)."""
    if shape is None:
        return False
    return all(d > 0 for d in shape)


def is_np_array():
    """False: mxplug has no NumPy-array mode (mx.np is excluded)."""
    return False


def is_np_shape():
    """False: MXNet 1.x's legacy shapes."""
    return False


def replace_file(src, dst):
    """Moves ``src`` over ``dst`` atomically."""
    import os
    os.replace(src, dst)

