"""DLPack exchange with NumPy and PyTorch: zero-copy both ways, synchronised with the engine."""
import gc

import numpy as np
import pytest

import torch  # Debian's python3-torch, installed by tools/install-deps.sh
from torch.utils import dlpack as torch_dlpack

DTYPES = ["float32", "float64", "float16", "uint8", "int8", "int32", "int64"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trips_with_torch_share_memory(mx, dtype):
    src = np.arange(12).reshape(3, 4).astype(dtype)
    a = mx.nd.array(src, dtype=dtype)
    t = torch_dlpack.from_dlpack(a.to_dlpack_for_write())
    assert t.dtype == getattr(torch, dtype) and tuple(t.shape) == (3, 4)
    np.testing.assert_array_equal(t.numpy(), src)
    t[0, 0] = 7  # the consumer writes through the shared memory
    assert a.asnumpy()[0, 0] == 7
    x = torch.arange(6).reshape(2, 3).to(getattr(torch, dtype))
    b = mx.nd.from_dlpack(torch_dlpack.to_dlpack(x))
    assert b.dtype == np.dtype(dtype).type and b.shape == (2, 3)
    b[1, 1] = 9  # and ours write through to the producer's memory
    b.wait_to_read()
    assert x[1, 1].item() == 9


def test_numpy_reads_our_arrays_and_we_read_numpys(mx):
    a = mx.nd.array([[1, 2], [3, 4]])
    n = np.from_dlpack(a)
    np.testing.assert_array_equal(n, [[1, 2], [3, 4]])
    assert not n.flags.writeable  # NumPy imports read-only, and will not re-export such an array
    assert mx.nd.from_dlpack(n.copy()).asnumpy().tolist() == [[1, 2], [3, 4]]
    y = np.arange(5, dtype=np.int64)
    m = mx.nd.from_dlpack(y)
    del y
    gc.collect()  # our array keeps the producer's memory alive
    assert (m * 2).asnumpy().tolist() == [0, 2, 4, 6, 8]
    assert a.__dlpack_device__() == (1, 0)


def host_pinned_capsule(array):
    """A DLPack capsule over a NumPy array's memory that says kDLCUDAHost (pinned host memory), as
    a producer of such tensors (CuPy's pinned arrays) hands out. `array` must outlive it."""
    import ctypes

    class DLTensor(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                    ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                    ("lanes", ctypes.c_uint16), ("shape", ctypes.POINTER(ctypes.c_int64)),
                    ("strides", ctypes.c_void_p), ("byte_offset", ctypes.c_uint64)]

    class DLManagedTensor(ctypes.Structure):
        _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]

    assert array.dtype == np.float32 and array.flags.c_contiguous
    shape = (ctypes.c_int64 * array.ndim)(*array.shape)
    managed = DLManagedTensor(DLTensor(array.ctypes.data, 3, 0, array.ndim, 2, 32, 1, shape, None, 0), None, None)
    new_capsule = ctypes.pythonapi.PyCapsule_New
    new_capsule.restype, new_capsule.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    capsule = new_capsule(ctypes.addressof(managed), b"dltensor", None)
    host_pinned_capsule.alive = (managed, shape)  # what the capsule points into
    return capsule


def test_pinned_arrays_cross_as_host_memory(mx):
    """Ours go out as CPU memory, as PyTorch's pinned tensors do, and PyTorch and NumPy take them
    sharing memory; a kDLCUDAHost tensor comes in as a cpu_pinned array over the same memory."""
    src = np.arange(12, dtype=np.float32).reshape(3, 4)
    a = mx.nd.array(src, ctx=mx.cpu_pinned(0))
    assert a.__dlpack_device__() == (1, 0)
    t = torch.from_dlpack(a)
    assert t.device.type == "cpu"
    np.testing.assert_array_equal(t.numpy(), src)
    t[2, 3] = -1
    assert a.asnumpy()[2, 3] == -1
    np.testing.assert_array_equal(np.from_dlpack(a), t.numpy())
    theirs = np.random.RandomState(1).randn(5, 6).astype(np.float32)
    b = mx.nd.from_dlpack(host_pinned_capsule(theirs))
    assert b.context == mx.cpu_pinned(0)
    np.testing.assert_array_equal((b * 2).asnumpy(), theirs * 2)
    b[0, 0] = 42
    b.wait_to_read()
    assert theirs[0, 0] == 42


def test_export_waits_for_pending_work(mx):
    a = mx.nd.zeros((500, 500))
    for _ in range(30):
        a += 1  # queued on the engine
    t = torch_dlpack.from_dlpack(a.to_dlpack_for_read())
    assert torch.all(t == 30).item()
    b = a * 2
    t2 = torch_dlpack.from_dlpack(mx.nd.to_dlpack_for_read(b))
    assert torch.all(t2 == 60).item()


def test_import_keeps_memory_until_pushed_work_is_done(mx):
    x = torch.ones(1000, 100)
    m = mx.nd.from_dlpack(torch_dlpack.to_dlpack(x))
    del x
    gc.collect()
    out = m
    for _ in range(20):
        out = out + m  # every push reads m's memory
    del m
    assert out.asnumpy()[0, 0] == 21


def test_strided_and_foreign_inputs_are_refused_clearly(mx):
    x = torch.arange(6.0).reshape(2, 3).t()
    with pytest.raises(mx.MXNetError, match="strided"):
        mx.nd.from_dlpack(torch_dlpack.to_dlpack(x))
    with pytest.raises(mx.MXNetError, match="capsule"):
        mx.nd.from_dlpack(42)
    c = mx.nd.ones(2).to_dlpack_for_read()
    mx.nd.from_dlpack(c)
    with pytest.raises(mx.MXNetError, match="capsule"):
        mx.nd.from_dlpack(c)  # a capsule is consumed once


def cuda_for_both(mx):
    """gpu(0) of mxplug's CUDA backend and PyTorch's cuda:0, or a skip saying which is missing."""
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device (torch %s)" % torch.__version__)
    if mx.context._gpu_device_type() != 2 or mx.context.num_gpus() == 0:
        pytest.skip("mxplug's gpu is not a CUDA device here")
    return mx.gpu(0)


def test_cuda_tensors_cross_to_torch_when_our_work_is_done(mx):
    ctx = cuda_for_both(mx)
    x = np.random.default_rng(0).random((2048, 2048), dtype=np.float32)
    a = mx.nd.array(x, ctx=ctx)
    assert a.__dlpack_device__() == (2, 0)
    b = mx.nd.dot(a, a)  # pushed: still running when exported
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):  # a consumer on a stream of its own passes it to __dlpack__
        t = torch.from_dlpack(b)
        doubled = t * 2
    side.synchronize()
    assert t.device == torch.device("cuda", 0)
    expected = x.astype(np.float64) @ x.astype(np.float64)
    np.testing.assert_allclose(doubled.cpu().numpy(), 2 * expected, rtol=1e-4)
    t[0, 0] = -1  # the same memory
    torch.cuda.synchronize()
    assert b[0, 0].asscalar() == -1


def test_cuda_tensors_cross_from_torch_after_torchs_pending_work(mx):
    ctx = cuda_for_both(mx)
    t = torch.rand(4096, 4096, device="cuda", generator=torch.Generator("cuda").manual_seed(0))
    u = t @ t  # queued on PyTorch's stream: without a wait, our kernels would read it unfinished
    u_plus = mx.nd.from_dlpack(u) + 1
    assert u_plus.context == ctx
    np.testing.assert_allclose(u_plus.asnumpy(), (u + 1).cpu().numpy(), rtol=1e-5)
    m = mx.nd.from_dlpack(u)
    m[:] = 3  # ours write through to PyTorch's memory
    m.wait_to_read()
    assert u[5, 7].item() == 3
