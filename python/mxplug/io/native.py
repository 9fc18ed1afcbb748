"""The core's C++ iterators (MXNet's MXDataIter): MNISTIter, CSVIter, ImageRecordIter and
ImageDetRecordIter, made by background threads ahead of the caller. Keyword arguments are MXNet's; an unknown one is an
error."""
import numpy as np

from .. import _core
from .base import DataBatch, DataDesc, DataIter

__all__ = ["MXDataIter"]


class MXDataIter(DataIter):
    """A core iterator. ``data_name``/``label_name`` name its arrays in ``provide_data`` and
    ``provide_label``."""

    def __init__(self, handle, data_name="data", label_name="softmax_label", **_):
        super(MXDataIter, self).__init__()
        self.handle = handle
        names = {"data": data_name, "softmax_label": label_name}
        self.provide_data = [DataDesc(names.get(n, n), s, np.dtype(t).type) for n, s, t in handle.data_shapes]
        self.provide_label = [DataDesc(names.get(n, n), s, np.dtype(t).type) for n, s, t in handle.label_shapes]
        self.batch_size = self.provide_data[0].shape[0]

    def reset(self):
        self.handle.reset()

    def next(self):
        if not self.handle.next():
            raise StopIteration
        return DataBatch(data=self.handle.data, label=self.handle.label, pad=self.getpad(),
                         index=self.getindex(), provide_data=self.provide_data,
                         provide_label=self.provide_label)

    def iter_next(self):
        return self.handle.next()

    def getdata(self):
        return self.handle.data[0]

    def getlabel(self):
        return self.handle.label[0]

    def getindex(self):
        return self.handle.index  # a uint64 NumPy array

    def getpad(self):
        return self.handle.pad


def _creator(name):
    def create(*args, **kwargs):
        if args:
            raise TypeError("%s takes keyword arguments only" % name)
        names = {k: kwargs.pop(k) for k in ("data_name", "label_name") if k in kwargs}
        return MXDataIter(_core.DataIter(name, kwargs), **names)
    create.__name__ = name
    create.__doc__ = "Makes the core's %s from MXNet's keyword arguments (see docs/python.md)." % name
    return create


def _define(namespace):
    for name in _core.list_data_iters():
        namespace[name] = _creator(name)
