"""Attribute scopes (MXNet's ``mx.AttrScope``): attributes given to every symbol made in a
``with`` block, such as ``ctx_group`` or ``lr_mult``."""
import threading


class AttrScope(object):
    """``with mx.AttrScope(ctx_group='dev1'):`` gives each symbol made inside these attributes."""
    _current = threading.local()

    def __init__(self, **kwargs):
        self._old_scope = None
        for value in kwargs.values():
            if not isinstance(value, str):
                raise ValueError("Attributes need to be string")
        self._attr = kwargs

    def get(self, attr):
        """The scope's attributes updated with ``attr`` (which wins)."""
        if self._attr:
            ret = self._attr.copy()
            if attr:
                ret.update(attr)
            return ret
        return attr if attr else {}

    def __enter__(self):
        self._old_scope = AttrScope.current
        attr = AttrScope.current._attr.copy()
        attr.update(self._attr)
        self._attr = attr
        AttrScope._current.value = self
        return self

    def __exit__(self, ptype, value, trace):
        AttrScope._current.value = self._old_scope


class _CurrentDescriptor(object):
    def __get__(self, obj, owner):
        if not hasattr(AttrScope._current, "value"):
            AttrScope._current.value = AttrScope()
        return AttrScope._current.value


AttrScope.current = _CurrentDescriptor()
