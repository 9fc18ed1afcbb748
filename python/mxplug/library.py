"""Loading plugin libraries at run time (MXNet's ``mx.library``)."""
import os

from . import _core
from .base import MXPlugError


def load(path, verbose=True, probe=True):
    """Loads a plugin library: its operators, kernels and devices become available at once.

    As in MXNet, ``path`` must be an absolute path to an existing ``.so`` file. Besides mxplug
    plugins, it loads MXNet 1.9 custom-op libraries (built against MXNet's ``lib_api.h``) through
    the adapter plugin ``mxnet_lib``, unrebuilt: their ops become ``mx.nd.<op>``/``mx.sym.<op>``.
    A plugin that is refused
    (another ABI major, a failing init, a name that is already registered...) raises
    ``MXPlugError`` naming the file and the reason, and changes nothing. A file not seen before
    is first loaded in a child process (``mxplug-probe``, verdicts cached by file identity and
    content), so one that crashes or hangs in its static constructors or init is refused without
    being opened here; ``probe=False`` loads it in this process directly.
    """
    if not isinstance(path, str):
        raise MXPlugError("load path %r is not a string" % (path,))
    if not os.path.exists(path):
        raise MXPlugError("load path %s does NOT exist" % path)
    if not os.path.isabs(path):
        raise MXPlugError("load path %s is not an absolute path" % path)
    if os.path.splitext(path)[1] not in (".so", ".dll"):
        raise MXPlugError("load path %s is NOT a library file" % path)
    record = _core.load_library(path, probe)
    # Its operators appear as mx.nd.<name> and mx.sym.<name> at once, as MXNet's library.load does.
    from . import ndarray, symbol
    ndarray._register.populate(vars(ndarray))
    symbol._register.populate(vars(symbol))
    if verbose:
        print("loaded plugin %s %s from %s: %d operator(s), %d kernel(s), %d device(s)" % (
            record["name"], record["version"], path, len(record["ops"]),
            len(record["kernels"]), len(record["devices"])))
    return record


def operators():
    """Every registered operator: name, plugin, and the devices that have kernels (``devices``,
    their names; ``device_types``, their DLPack device types, as ``Context`` maps to them)."""
    return _core.operators()


def plugins():
    """Every plugin file seen: loaded or refused and why, versions, what it registered."""
    return _core.plugins()
