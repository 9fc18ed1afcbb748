"""Utilities (MXNet's ``mx.util``): the process environment as the C runtime sees it, and GPU
counts, memory and compute capability."""
import os

from . import _core
from .context import num_gpus, gpu_memory_info


def getenv(name):
    """The value of environment variable ``name`` as the runtime reads it, or None."""
    return os.environ.get(name)


def setenv(name, value):
    """Sets (or with None removes) environment variable ``name`` for the runtime too: Python's
    os.environ writes through to the C runtime's environment."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def get_gpu_count():
    """The number of GPUs the GPU backend reports."""
    return num_gpus()


def get_gpu_memory(gpu_dev_id):
    """(free, total) bytes of GPU ``gpu_dev_id``."""
    return gpu_memory_info(gpu_dev_id)



def get_cuda_compute_capability(ctx):
    """The compute capability of GPU context ``ctx`` as an int (90 for sm_90), as its backend
    reports it. \raises ValueError for a context that is not a GPU's (MXNet's message)."""
    if ctx.device_type != 'gpu':
        raise ValueError('Expecting a gpu context to get cuda compute capability, '
                         'while received ctx {}'.format(str(ctx)))
    major, minor = _core.device_attributes(*ctx._dl())["compute_capability"]
    return major * 10 + minor
