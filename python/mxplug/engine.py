"""The engine's knobs (MXNet's ``mx.engine``).

In MXNet the bulk size joins consecutive imperative operations into one engine function. mxplug
pushes imperative calls one by one; an executor joins its steps on an accelerator as the
MXNET_EXEC_BULK_EXEC_* variables say when it is bound (Note [Segments] in the core). So the bulk
size is recorded and returned as MXNet does, and changes nothing else.
"""
import contextlib

_bulk_size = 0  # what MXNet 1.9.1's first set_bulk_size returns


def set_bulk_size(size):
    """Sets the bulk size; returns the previous one."""
    global _bulk_size
    previous, _bulk_size = _bulk_size, int(size)
    return previous


@contextlib.contextmanager
def bulk(size):
    """A scope with bulk size ``size`` (restored after)."""
    previous = set_bulk_size(size)
    try:
        yield
    finally:
        set_bulk_size(previous)
