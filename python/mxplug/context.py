"""Devices (MXNet's ``mx.Context``, ``mx.cpu()``, ``mx.gpu()``).

A context names a device type and an index. ``'gpu'`` is an accelerator of the CUDA backend
(DLPack ``kDLCUDA``), or of the HIP backend (``kDLROCM``) where only HIP reports devices or only
HIP is loaded, or of the backend that ``MXPLUG_GPU_BACKEND`` names (``cuda``, ``hip``, or any
loaded device backend, such as the asynchronous test device ``testdev`` on which CI runs the GPU
tests).
"""
import os
import threading

from . import _core

# DLPack device type codes (dlpack.h), and MXNet's device type ids (Context.devtype2str).
_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_ROCM, _DL_ROCM_HOST = 1, 2, 3, 10, 11
_MXNET_TYPEID = {"cpu": 1, "gpu": 2, "cpu_pinned": 3, "cpu_shared": 5}


class Context:
    """A device: ``Context('cpu', 0)``, ``Context('gpu', 1)``, or a Context to copy.

    Usable as a ``with`` block to make it the default context of array creation.
    """

    _default = threading.local()

    def __init__(self, device_type, device_id=0):
        if isinstance(device_type, Context):
            self.device_type, self.device_id = device_type.device_type, device_type.device_id
            return
        if isinstance(device_type, int):
            device_type = {v: k for k, v in _MXNET_TYPEID.items()}.get(device_type, device_type)
        if device_type not in ("cpu", "gpu", "cpu_pinned", "cpu_shared"):
            raise ValueError("unknown device type %r: expected 'cpu' or 'gpu'" % (device_type,))
        self.device_type = device_type
        self.device_id = int(device_id)

    @property
    def device_typeid(self):
        return _MXNET_TYPEID[self.device_type]

    def _dl(self):
        """(DLPack device type, index) as the core takes it."""
        if self.device_type == "gpu":
            return (_gpu_device_type(), self.device_id)
        if self.device_type == "cpu_pinned":
            # Page-locked by the accelerator `gpu` means where it has devices, else ordinary CPU
            # memory, as in MXNet without a GPU (the core's Note [Pinned host memory]).
            return (_DL_ROCM_HOST if _gpu_device_type() == _DL_ROCM else _DL_CUDA_HOST, self.device_id)
        return (_DL_CPU, self.device_id)

    def __eq__(self, other):
        return (isinstance(other, Context) and self.device_type == other.device_type
                and self.device_id == other.device_id)

    def __hash__(self):
        return hash((self.device_type, self.device_id))

    def __repr__(self):
        return "%s(%d)" % (self.device_type, self.device_id)

    __str__ = __repr__

    def __enter__(self):
        stack = getattr(Context._default, "stack", None)
        if stack is None:
            stack = Context._default.stack = []
        stack.append(self)
        return self

    def __exit__(self, *exc):
        Context._default.stack.pop()

    @staticmethod
    def default_ctx():
        """The innermost ``with`` block's context; outside every block the thread's default
        (``mx.test_utils.set_default_context``), cpu(0) unless set."""
        stack = getattr(Context._default, "stack", None)
        if stack:
            return stack[-1]
        return getattr(Context._default, "base", None) or Context("cpu", 0)

    def empty_cache(self):
        """Kept for MXNet compatibility: the CPU backend keeps no cache to release."""


def _gpu_device_type():
    chosen = os.environ.get("MXPLUG_GPU_BACKEND")
    if chosen:
        dev_type = _core.device_type_of(chosen)
        if dev_type < 0:
            raise ValueError("MXPLUG_GPU_BACKEND=%s names no loaded device backend (loaded: %s)"
                             % (chosen, ", ".join(_core.device_names())))
        return dev_type
    kinds = _core.device_types()
    if _DL_ROCM not in kinds:
        return _DL_CUDA
    if _DL_CUDA not in kinds:
        return _DL_ROCM
    # Both loaded (a build with both plugins): the one that has devices, CUDA where both have.
    if _core.device_count(_DL_CUDA) == 0 and _core.device_count(_DL_ROCM) > 0:
        return _DL_ROCM
    return _DL_CUDA


def _from_dl(dl):
    dev_type, dev_id = dl
    if dev_type in (_DL_CUDA_HOST, _DL_ROCM_HOST):
        return Context("cpu_pinned", dev_id)
    if dev_type in (_DL_CUDA, _DL_ROCM) or (dev_type != _DL_CPU and dev_type == _gpu_device_type()):
        return Context("gpu", dev_id)
    return Context("cpu", dev_id)


def cpu(device_id=0):
    """The CPU context (MXNet ignores the index for computation; so do we)."""
    return Context("cpu", device_id)


def cpu_pinned(device_id=0):
    """Host memory page-locked for the ``device_id``-th accelerator, so that copies between it and
    the accelerator run asynchronously; ordinary CPU memory where there is no accelerator (as in
    MXNet). Ops run on the CPU, and ops with inputs here put their outputs on ``cpu()``."""
    return Context("cpu_pinned", device_id)


def gpu(device_id=0):
    """The ``device_id``-th accelerator."""
    return Context("gpu", device_id)


def num_gpus():
    """How many accelerators the loaded device backends report."""
    return _core.device_count(_gpu_device_type())


def gpu_memory_info(device_id=0):
    """``(free, total)`` bytes of the ``device_id``-th accelerator's memory (MXNet's). Blocks the
    memory pool keeps for reuse count as used, as in MXNet."""
    return tuple(_core.memory_info(_gpu_device_type(), device_id))


def current_context():
    """The innermost ``with Context`` block's context, or the thread's default (cpu(0))."""
    return Context.default_ctx()
