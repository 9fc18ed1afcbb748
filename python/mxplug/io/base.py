"""The iterator protocol shared by every data iterator: DataDesc, DataBatch and DataIter."""
from collections import namedtuple

import numpy as np

__all__ = ["DataDesc", "DataBatch", "DataIter"]


class DataDesc(namedtuple("DataDesc", ["name", "shape"])):
    """Name and shape of one input (a namedtuple, so ``name, shape = desc`` works), with its
    ``dtype`` and ``layout``; the layout's 'N' marks the batch axis."""

    def __new__(cls, name, shape, dtype=np.float32, layout="NCHW"):
        desc = super(DataDesc, cls).__new__(cls, name, shape)
        desc.dtype = dtype
        desc.layout = layout
        return desc

    def __repr__(self):
        return "DataDesc[%s,%s,%s,%s]" % (self.name, self.shape, self.dtype, self.layout)

    @staticmethod
    def get_batch_axis(layout):
        """The batch axis of a layout ('N'); 0 without a layout, -1 when it has no 'N'."""
        return 0 if layout is None else layout.find("N")

    @staticmethod
    def get_list(shapes, types):
        """DataDescs from (name, shape) pairs and optional (name, dtype) pairs."""
        if types is None:
            return [DataDesc(name, shape) for name, shape in shapes]
        dtypes = dict(types)
        return [DataDesc(name, shape, dtypes[name]) for name, shape in shapes]


class DataBatch(object):
    """One batch: lists of data and label arrays, the number of padding examples at its end
    (to be ignored in prediction), optional example indices, bucket key and descriptions."""

    def __init__(self, data, label=None, pad=None, index=None, bucket_key=None,
                 provide_data=None, provide_label=None):
        if data is not None and not isinstance(data, (list, tuple)):
            raise TypeError("DataBatch: data must be a list of NDArrays, got %s" % type(data).__name__)
        if label is not None and not isinstance(label, (list, tuple)):
            raise TypeError("DataBatch: label must be a list of NDArrays, got %s" % type(label).__name__)
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self):
        label_shapes = [l.shape for l in self.label] if self.label else None
        return "%s: data shapes: %s label shapes: %s" % (
            type(self).__name__, [d.shape for d in self.data], label_shapes)


class DataIter(object):
    """Base of all iterators: ``next()`` returns a DataBatch or raises StopIteration at the end
    of an epoch; ``reset()`` starts the next epoch. Subclasses give ``iter_next`` and the
    ``getdata``/``getlabel``/``getpad``/``getindex`` of the current batch, or override ``next``."""

    def __init__(self, batch_size=0):
        self.batch_size = batch_size

    def __iter__(self):
        return self

    def reset(self):
        """Goes back to the beginning of the data."""

    def next(self):
        """The next batch; StopIteration at the end of the data."""
        if not self.iter_next():
            raise StopIteration
        return DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(),
                         index=self.getindex())

    def __next__(self):
        return self.next()

    def iter_next(self):
        """Moves to the next batch; False at the end of the data."""
        raise NotImplementedError("%s.iter_next" % type(self).__name__)

    def getdata(self):
        """The data arrays of the current batch."""
        raise NotImplementedError("%s.getdata" % type(self).__name__)

    def getlabel(self):
        """The label arrays of the current batch."""
        raise NotImplementedError("%s.getlabel" % type(self).__name__)

    def getindex(self):
        """The example indices of the current batch, or None."""
        return None

    def getpad(self):
        """How many examples at the end of the current batch are padding."""
        raise NotImplementedError("%s.getpad" % type(self).__name__)
