"""mxplug: MXNet 1.x's programming model on a plugin-based runtime.

Use it as MXNet: ``import mxplug as mx``. Operators and devices come from plugins found in the
default plugin folder and on ``MXPLUG_PLUGIN_PATH``; ``mx.library.load(path)`` adds more.
"""
import os as _os


def _share_the_cores_of_this_host():
    """In a process of a distributed job, OpenMP's threads default to this process's share of the
    cores it may run on (Open MPI says how many of the job's processes this host runs): OpenMP's
    default, every core, would have the workers' and servers' threads spin against each other
    (4x slower for 2 workers and 2 servers on 2 cores). Set before the kernels' libraries load;
    OMP_NUM_THREADS, when given, wins."""
    local = _os.environ.get("OMPI_COMM_WORLD_LOCAL_SIZE")
    if local and local.isdigit() and int(local) > 1 and "OMP_NUM_THREADS" not in _os.environ:
        _os.environ["OMP_NUM_THREADS"] = str(max(1, len(_os.sched_getaffinity(0)) // int(local)))


_share_the_cores_of_this_host()

from . import _core  # noqa: E402
from ._core import __version__
from .base import MXPlugError, MXNetError

_core.load_default_plugins()

from . import library  # noqa: E402
from . import engine  # noqa: E402
from . import operator  # noqa: E402
from . import profiler  # noqa: E402
from .context import Context, cpu, gpu, cpu_pinned, current_context, num_gpus  # noqa: E402
from . import ndarray  # noqa: E402
from . import ndarray as nd  # noqa: E402
from . import random  # noqa: E402
from . import random as rnd  # noqa: E402
from . import autograd  # noqa: E402
from . import name  # noqa: E402
from .attribute import AttrScope  # noqa: E402
from . import symbol  # noqa: E402
from . import symbol as sym  # noqa: E402
from . import executor  # noqa: E402
from . import visualization  # noqa: E402
from . import visualization as viz  # noqa: E402
from . import lr_scheduler  # noqa: E402
from . import optimizer  # noqa: E402
from . import kvstore  # noqa: E402
from . import kvstore as kv  # noqa: E402
from . import initializer  # noqa: E402
from . import initializer as init  # noqa: E402
from . import metric  # noqa: E402
from . import model  # noqa: E402
from . import callback  # noqa: E402
from . import io  # noqa: E402
from . import recordio  # noqa: E402
from . import module  # noqa: E402
from . import module as mod  # noqa: E402
from . import util  # noqa: E402
from . import runtime  # noqa: E402
from . import test_utils  # noqa: E402
from . import monitor  # noqa: E402
from . import monitor as mon  # noqa: E402
from . import image  # noqa: E402
from . import image as img  # noqa: E402
from . import gluon  # noqa: E402
from . import rnn  # noqa: E402

# A process of a distributed job: a server serves from here until the workers finish (MXNet's
# kvstore_server); a worker tells the servers when it ends.
import atexit as _atexit  # noqa: E402
from . import kvstore_server  # noqa: E402
_atexit.register(_core.kvstore_finish)
# Before that (atexit runs last-registered first), and before the interpreter and the C exit
# handlers destroy what running kernels use, the pushed work is finished (Engine::FinishAtExit).
_atexit.register(_core.engine_finish_at_exit)
kvstore_server._init_kvstore_server_module()

__all__ = ["MXPlugError", "MXNetError", "library", "engine", "operator", "profiler", "Context", "cpu", "gpu",
           "cpu_pinned", "current_context", "num_gpus", "nd", "ndarray", "random", "name", "AttrScope", "symbol", "sym", "executor",
           "visualization", "viz", "lr_scheduler", "optimizer", "kvstore", "kv", "initializer", "init", "metric", "model", "callback", "io", "module", "mod", "util", "test_utils", "autograd", "image", "img", "gluon", "rnn",
           "__version__"]
