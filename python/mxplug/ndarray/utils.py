"""Saving and loading arrays in MXNet's binary ``.params`` format (see ``mxplug.serialization``)."""
from .. import _core


def save(fname, data):
    """Saves an NDArray, a list of NDArrays or a dict of str to NDArray to ``fname``."""
    _core.save(fname, data)


def load(fname):
    """Loads what ``save`` (ours or MXNet's) wrote: a list, or a dict when names were saved."""
    return _core.load(fname)


def load_frombuffer(buf):
    """Same as ``load``, from bytes in memory."""
    return _core.load_frombuffer(bytes(buf))
