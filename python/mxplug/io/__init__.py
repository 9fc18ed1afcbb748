"""Data iterators (MXNet's ``mx.io``): batches of data and labels for training and inference.

``DataDesc``/``DataBatch``/``DataIter`` are the protocol; ``NDArrayIter`` batches arrays in
memory; ``ResizeIter`` and ``PrefetchingIter`` wrap other iterators; ``MNISTIter``,
``CSVIter``, ``ImageRecordIter`` and ``ImageDetRecordIter`` are the core's C++ iterators, which
read, decode and batch in background threads.
"""
from .base import DataDesc, DataBatch, DataIter
from .ndarray_iter import NDArrayIter
from .wrappers import ResizeIter, PrefetchingIter
from .native import MXDataIter, _define

_define(globals())  # MNISTIter, CSVIter, ImageRecordIter, ImageDetRecordIter...

__all__ = ["DataDesc", "DataBatch", "DataIter", "NDArrayIter", "ResizeIter", "PrefetchingIter",
           "MXDataIter", "MNISTIter", "CSVIter"]
