"""Data iterators (MXNet's ``mx.io``): batches of data and labels for training and inference.

``DataDesc``/``DataBatch``/``DataIter`` are the protocol; ``NDArrayIter`` batches arrays in
memory; ``ResizeIter`` and ``PrefetchingIter`` wrap other iterators.
"""
from .base import DataDesc, DataBatch, DataIter
from .ndarray_iter import NDArrayIter
from .wrappers import ResizeIter, PrefetchingIter

__all__ = ["DataDesc", "DataBatch", "DataIter", "NDArrayIter", "ResizeIter", "PrefetchingIter"]
