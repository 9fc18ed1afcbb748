"""NDArrayIter: batches of arrays held in memory, as MXNet 1.9.1's (same batches, padding,
roll-over and shuffling order for the same ``np.random`` state)."""
from collections import OrderedDict

import numpy as np

from .. import ndarray as nd
from ..ndarray import NDArray
from .base import DataBatch, DataDesc, DataIter

__all__ = ["NDArrayIter"]

_LAST_BATCH_HANDLES = ("pad", "discard", "roll_over")


def _named_arrays(data, default_name, what, allow_empty):
    """MXNet's canonical form of an iterator input: a sorted list of (name, NDArray). One array
    takes ``default_name``; a list of n arrays is named '_0_<default_name>' ... ; a dict keeps
    its names. NumPy arrays and lists become float32 NDArrays as nd.array makes them."""
    if data is None:
        if not allow_empty:
            raise ValueError("NDArrayIter: %s is required" % what)
        data = []
    if isinstance(data, (np.ndarray, NDArray)):
        data = [data]
    if isinstance(data, (list, tuple)):
        if not data and not allow_empty:
            raise ValueError("NDArrayIter: %s is an empty list" % what)
        if len(data) == 1:
            data = OrderedDict([(default_name, data[0])])
        else:
            data = OrderedDict(("_%d_%s" % (i, default_name), d) for i, d in enumerate(data))
    if not isinstance(data, dict):
        raise TypeError("NDArrayIter: %s must be an NDArray, a numpy.ndarray, a list of them or a "
                        "dict of name to array, got %s" % (what, type(data).__name__))
    named = []
    for name, value in sorted(data.items()):
        if not isinstance(value, NDArray):
            try:
                value = nd.array(value)
            except (TypeError, ValueError) as err:
                raise TypeError("NDArrayIter: %s '%s' is a %s, expected an NDArray or a "
                                "numpy.ndarray (%s)" % (what, name, type(value).__name__, err))
        if value.ndim == 0:
            raise ValueError("NDArrayIter: %s '%s' is a scalar; its first axis must count the "
                             "examples" % (what, name))
        named.append((name, value))
    return named


class NDArrayIter(DataIter):
    """Iterates over arrays (``data`` and ``label``: an array, a list of arrays or a dict of name
    to array) in batches of ``batch_size`` along the layout's 'N' axis.

    ``last_batch_handle`` says what happens to the examples left after the last full batch:
    'pad' fills the last batch from the beginning and reports the count in ``DataBatch.pad``;
    'discard' drops them; 'roll_over' keeps them for the first batch of the next epoch (whose
    ``pad`` is the number of examples carried over). ``shuffle`` reorders the examples with
    ``np.random`` at every reset.

    Batches are copies, as in MXNet. A shuffled epoch gathers each batch's rows from the arrays
    as given (``take``) instead of reordering the whole arrays at reset as MXNet does (through
    NumPy: 0.5 s an epoch for Fashion-MNIST's images, a third of a fast MLP's epoch); the
    batches are the same. ``data`` and ``label`` still give the reordered arrays, made when read.
    """

    def __init__(self, data, label=None, batch_size=1, shuffle=False, last_batch_handle="pad",
                 data_name="data", label_name="softmax_label", layout="NCHW"):
        super(NDArrayIter, self).__init__(batch_size)
        if last_batch_handle not in _LAST_BATCH_HANDLES:
            raise ValueError("NDArrayIter: last_batch_handle must be one of %s, got %r"
                             % (", ".join(_LAST_BATCH_HANDLES), last_batch_handle))
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError("NDArrayIter: batch_size must be a positive int, got %r" % (batch_size,))
        self._data = _named_arrays(data, data_name, "data", allow_empty=False)
        self._label = _named_arrays(label, label_name, "label", allow_empty=True)
        self.num_data = self._data[0][1].shape[0]
        for name, value in self._data + self._label:
            if value.shape[0] < self.num_data:
                raise ValueError("NDArrayIter: '%s' has %d examples, fewer than the %d of '%s'"
                                 % (name, value.shape[0], self.num_data, self._data[0][0]))
        # The example order of the epoch: None (as given), or the row of the given arrays that
        # each position of MXNet's reordered arrays holds.
        self._order = None
        self.idx = np.arange(self.num_data)
        self.shuffle = shuffle
        self.last_batch_handle = last_batch_handle
        self.layout = layout
        self.cursor = -batch_size
        self._cache_data = None
        self._cache_label = None
        self.reset()
        self.num_source = len(self._data) + len(self._label)

    def _reordered(self, named):
        if self._order is None:
            return named
        return [(k, nd.take(v, self._order_on(v), axis=0)) for k, v in named]

    @property
    def data(self):
        """The (name, array) pairs of the data, in the epoch's order."""
        return self._reordered(self._data)

    @property
    def label(self):
        """The (name, array) pairs of the labels, in the epoch's order."""
        return self._reordered(self._label)

    @property
    def data_list(self):
        """The data arrays, then the label arrays, in the epoch's order."""
        return [v for _, v in self.data + self.label]

    def _descs(self, named):
        axis = self.layout.find("N")
        return [DataDesc(name, v.shape[:axis] + (self.batch_size,) + v.shape[axis + 1:], v.dtype,
                         layout=self.layout) for name, v in named]

    @property
    def provide_data(self):
        """DataDescs of the data, with the batch size on the batch axis."""
        return self._descs(self._data)

    @property
    def provide_label(self):
        """DataDescs of the labels, with the batch size on the batch axis."""
        return self._descs(self._label)

    def hard_reset(self):
        """Starts over, dropping any examples kept for roll-over."""
        if self.shuffle:
            self._shuffle_data()
        self.cursor = -self.batch_size
        self._cache_data = None
        self._cache_label = None

    def reset(self):
        if self.shuffle:
            self._shuffle_data()
        if (self.last_batch_handle == "roll_over"
                and self.num_data - self.batch_size < self.cursor < self.num_data):
            # The incomplete last batch (num_data - cursor examples) starts the next epoch.
            self.cursor = self.cursor - self.num_data - self.batch_size
        else:
            self.cursor = -self.batch_size

    def iter_next(self):
        self.cursor += self.batch_size
        return self.cursor < self.num_data

    def next(self):
        if not self.iter_next():
            raise StopIteration
        data = self.getdata()
        label = self.getlabel()
        if data[0].shape[self.layout.find("N")] != self.batch_size:
            # An incomplete last batch ends the epoch; roll_over uses it in the next one.
            self._cache_data = data
            self._cache_label = label
            raise StopIteration
        return DataBatch(data=data, label=label, pad=self.getpad(), index=None)

    def _order_on(self, array, start=0, end=None):
        """The epoch's order as an index array on `array`'s device, copied there once an epoch:
        nd.array waits for the engine, which would make every batch wait for the last step."""
        order = self._order_arrays.get(array.context)
        if order is None:
            order = self._order_arrays[array.context] = nd.array(self._order, array.context, "int64")
        return order if start == 0 and end is None else order[start:end]

    def _slice(self, named, start=0, end=None):
        axis = self.layout.find("N")
        end = self.num_data if end is None else end
        if self._order is None:
            return [nd.slice_axis(v, axis=axis, begin=start, end=end) for _, v in named]
        if axis == 0:
            return [nd.take(v, self._order_on(v, start, end), axis=0) for _, v in named]
        # MXNet reorders along the first axis and batches along N.
        return [nd.take(nd.slice_axis(v, axis=axis, begin=start, end=end), self._order_on(v), axis=0)
                for _, v in named]

    def _concat(self, first, second):
        if not first or not second:
            return first or second
        return [nd.concat(a, b, dim=self.layout.find("N")) for a, b in zip(first, second)]

    def _batchify(self, named):
        if self.cursor >= self.num_data:
            raise RuntimeError("NDArrayIter: the epoch has ended; call reset()")
        if self.last_batch_handle == "roll_over" and -self.batch_size < self.cursor < 0:
            carried = self._cache_data if self._cache_data is not None else self._cache_label
            if carried is None:
                raise RuntimeError("NDArrayIter: roll_over has no examples kept from the last epoch")
            if self._cache_data is not None:
                self._cache_data = None
            else:
                self._cache_label = None
            return self._concat(carried, self._slice(named, end=self.cursor + self.batch_size))
        if self.last_batch_handle == "pad" and self.cursor + self.batch_size > self.num_data:
            pad = self.batch_size - self.num_data + self.cursor
            filler, rest = [], pad
            if pad > self.num_data:  # a batch larger than the data repeats all of it
                filler = [nd.tile(v, reps=(pad // self.num_data,) + (1,) * (v.ndim - 1))
                          for v in self._slice(named)]
                rest = pad % self.num_data
            if rest:
                filler = self._concat(filler, self._slice(named, end=rest))
            return self._concat(self._slice(named, start=self.cursor), filler)
        return self._slice(named, self.cursor, min(self.cursor + self.batch_size, self.num_data))

    def getdata(self):
        return self._batchify(self._data)

    def getlabel(self):
        return self._batchify(self._label)

    def getpad(self):
        if self.last_batch_handle == "pad" and self.cursor + self.batch_size > self.num_data:
            return self.cursor + self.batch_size - self.num_data
        if self.last_batch_handle == "roll_over" and -self.batch_size < self.cursor < 0:
            return -self.cursor
        return 0

    def _shuffle_data(self):
        np.random.shuffle(self.idx)
        # MXNet re-orders the already shuffled arrays by the shuffled index (arrays[idx]); the
        # same composition of orders gives its order for the same np.random state. Unlike MXNet,
        # the dtype is kept.
        self._order = self.idx.copy() if self._order is None else self._order[self.idx]
        self._order_arrays = {}
