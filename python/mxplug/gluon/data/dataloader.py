"""Gluon's DataLoader (MXNet 1.9.1's ``mx.gluon.data.DataLoader``): batches of a dataset, made
by ``batchify_fn`` from the samples a BatchSampler picks. With ``num_workers`` > 0 the batches are
made by that many threads ahead of the consumer (MXNet forks processes; mxplug's arrays are made by
the calling process either way)."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ... import ndarray as nd
from . import sampler as _sampler


def default_batchify_fn(data):
    """Stacks samples: NDArrays with ``nd.stack``, tuples element by element, anything else
    through NumPy."""
    if isinstance(data[0], nd.NDArray):
        return nd.stack(*data)
    if isinstance(data[0], tuple):
        return [default_batchify_fn(i) for i in zip(*data)]
    data = np.asarray(data)
    return nd.array(data, dtype=data.dtype)


default_mp_batchify_fn = default_batchify_fn


class DataLoader(object):
    """Loads ``dataset`` in batches: ``batch_size`` with ``shuffle`` and ``last_batch``
    ('keep', 'discard', 'rollover'), or a ``sampler``, or a ``batch_sampler``."""

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None, last_batch=None, batch_sampler=None,
                 batchify_fn=None, num_workers=0, pin_memory=False, pin_device_id=0, prefetch=None,
                 thread_pool=False, timeout=120, auto_reload=False):
        self._dataset = dataset
        self._pin_memory = pin_memory
        self._timeout = timeout
        if batch_sampler is None:
            if batch_size is None:
                raise ValueError("batch_size must be specified unless batch_sampler is specified")
            if sampler is None:
                sampler = (_sampler.RandomSampler(len(dataset)) if shuffle
                           else _sampler.SequentialSampler(len(dataset)))
            elif shuffle:
                raise ValueError("shuffle must not be specified if sampler is specified")
            batch_sampler = _sampler.BatchSampler(sampler, batch_size, last_batch if last_batch else 'keep')
        elif batch_size is not None or shuffle or sampler is not None or last_batch is not None:
            raise ValueError("batch_size, shuffle, sampler and last_batch must not be specified if batch_sampler is "
                             "specified.")
        self._batch_sampler = batch_sampler
        self._num_workers = num_workers if num_workers >= 0 else 0
        self._prefetch = max(0, int(prefetch) if prefetch is not None else 2 * self._num_workers)
        self._batchify_fn = batchify_fn if batchify_fn is not None else default_batchify_fn

    def _batch(self, indices):
        batch = self._batchify_fn([self._dataset[idx] for idx in indices])
        if self._pin_memory:
            batch = _as_pinned(batch)
        return batch

    def __iter__(self):
        if self._num_workers == 0:
            for batch in self._batch_sampler:
                yield self._batch(batch)
            return
        with ThreadPoolExecutor(self._num_workers) as pool:
            pending = []
            for indices in self._batch_sampler:
                pending.append(pool.submit(self._batch, indices))
                if len(pending) > max(self._prefetch, 1):
                    yield pending.pop(0).result(timeout=self._timeout)
            for f in pending:
                yield f.result(timeout=self._timeout)

    def __len__(self):
        return len(self._batch_sampler)

    def refresh(self):
        """Nothing to do: each iteration makes its batches anew (MXNet's restarts its prefetch)."""

    def clean(self):
        """Nothing to do: no batches are made ahead outside an iteration."""


def _as_pinned(batch):
    from ...context import cpu_pinned
    if isinstance(batch, nd.NDArray):
        return batch.as_in_context(cpu_pinned())
    if isinstance(batch, (list, tuple)):
        return [_as_pinned(b) for b in batch]
    return batch
