"""Automatic names for symbols (MXNet's ``mx.name``): ``fullyconnected0``, ``fullyconnected1``...
per op, and ``Prefix`` to put a prefix before every name made in a ``with`` block."""
import threading


class NameManager(object):
    """Gives a symbol without a name one made from a hint (the op's lower-case name) and a counter."""
    _current = threading.local()

    def __init__(self):
        self._counter = {}
        self._old_manager = None

    def get(self, name, hint):
        """``name`` when given, else ``hint`` followed by how many names this hint has had."""
        if name:
            return name
        count = self._counter.get(hint, 0)
        self._counter[hint] = count + 1
        return "%s%d" % (hint, count)

    def __enter__(self):
        self._old_manager = NameManager.current
        NameManager._current.value = self
        return self

    def __exit__(self, ptype, value, trace):
        NameManager._current.value = self._old_manager


class Prefix(NameManager):
    """Puts ``prefix`` before every name made in the block, given names included."""

    def __init__(self, prefix):
        super(Prefix, self).__init__()
        self._prefix = prefix

    def get(self, name, hint):
        return self._prefix + super(Prefix, self).get(name, hint)


def _current():
    if not hasattr(NameManager._current, "value"):
        NameManager._current.value = NameManager()
    return NameManager._current.value


class _CurrentDescriptor(object):
    def __get__(self, obj, owner):
        return _current()


NameManager.current = _CurrentDescriptor()
