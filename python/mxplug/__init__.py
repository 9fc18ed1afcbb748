"""mxplug: MXNet 1.x's programming model on a plugin-based runtime.

Use it as MXNet: ``import mxplug as mx``. Operators and devices come from plugins found in the
default plugin folder and on ``MXPLUG_PLUGIN_PATH``; ``mx.library.load(path)`` adds more.
"""
from . import _core
from ._core import MXPlugError, __version__

#: MXNet's name for the same exception, so that ``except mx.MXNetError`` keeps working.
MXNetError = MXPlugError

from . import library  # noqa: E402
from . import profiler  # noqa: E402

_core.load_default_plugins()

__all__ = ["MXPlugError", "MXNetError", "library", "profiler", "__version__"]
