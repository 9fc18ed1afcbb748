"""Iterators over other iterators: ResizeIter (a fixed number of batches per epoch) and
PrefetchingIter (reads the next batch of each iterator in a background thread)."""
import threading

from .base import DataBatch, DataDesc, DataIter

__all__ = ["ResizeIter", "PrefetchingIter"]


class _CurrentBatch(DataIter):
    """An iterator whose getters read ``self.current_batch``."""

    def getdata(self):
        return self.current_batch.data

    def getlabel(self):
        return self.current_batch.label

    def getindex(self):
        return self.current_batch.index

    def getpad(self):
        return self.current_batch.pad


class ResizeIter(_CurrentBatch):
    """Gives ``size`` batches per epoch from ``data_iter``, resetting it when it runs out early;
    ``reset_internal`` says whether ``reset`` also resets ``data_iter``."""

    def __init__(self, data_iter, size, reset_internal=True):
        super(ResizeIter, self).__init__(data_iter.batch_size)
        self.data_iter = data_iter
        self.size = size
        self.reset_internal = reset_internal
        self.cur = 0
        self.current_batch = None
        self.provide_data = data_iter.provide_data
        self.provide_label = data_iter.provide_label
        if hasattr(data_iter, "default_bucket_key"):
            self.default_bucket_key = data_iter.default_bucket_key

    def reset(self):
        self.cur = 0
        if self.reset_internal:
            self.data_iter.reset()

    def iter_next(self):
        if self.cur == self.size:
            return False
        try:
            self.current_batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            self.current_batch = self.data_iter.next()
        self.cur += 1
        return True


def _renamed(descs, renames):
    if renames is None:
        return list(descs)
    return [DataDesc(renames[d.name], d.shape, d.dtype) if isinstance(d, DataDesc) else
            DataDesc(renames[d[0]], d[1]) for d in descs]


class PrefetchingIter(_CurrentBatch):
    """Reads ahead one batch of each of ``iters`` in background threads and joins them into one
    batch (data and labels concatenated in order). ``rename_data``/``rename_label`` are one
    {old name: new name} dict per iterator. An error in a reading thread is raised by ``next``."""

    def __init__(self, iters, rename_data=None, rename_label=None):
        super(PrefetchingIter, self).__init__()
        self.iters = iters if isinstance(iters, list) else [iters]
        if not self.iters:
            raise ValueError("PrefetchingIter: iters is empty")
        self.n_iter = len(self.iters)
        self.rename_data = rename_data
        self.rename_label = rename_label
        self.batch_size = self.provide_data[0][1][0]
        self.current_batch = None
        self._next = [None] * self.n_iter  # a DataBatch, None at the end, or an exception
        self._ready = [threading.Event() for _ in self.iters]
        self._taken = [threading.Event() for _ in self.iters]
        self._running = True
        for taken in self._taken:
            taken.set()
        self._threads = [threading.Thread(target=self._prefetch, args=(i,), daemon=True,
                                          name="PrefetchingIter-%d" % i) for i in range(self.n_iter)]
        for thread in self._threads:
            thread.start()

    def _prefetch(self, i):
        while True:
            self._taken[i].wait()
            if not self._running:
                return
            try:
                self._next[i] = self.iters[i].next()
            except StopIteration:
                self._next[i] = None
            except Exception as err:  # pylint: disable=broad-except
                self._next[i] = err  # raised in the caller's thread by iter_next
            self._taken[i].clear()
            self._ready[i].set()

    def close(self):
        """Stops the reading threads."""
        if getattr(self, "_running", False):
            self._running = False
            for taken in self._taken:
                taken.set()
            for thread in self._threads:
                thread.join()

    def __del__(self):
        self.close()

    @property
    def provide_data(self):
        renames = self.rename_data or [None] * len(self.iters)
        return sum((_renamed(it.provide_data, r) for r, it in zip(renames, self.iters)), [])

    @property
    def provide_label(self):
        renames = self.rename_label or [None] * len(self.iters)
        return sum((_renamed(it.provide_label, r) for r, it in zip(renames, self.iters)), [])

    def _read_next(self):
        """Lets every reading thread read its next batch."""
        for ready in self._ready:
            ready.clear()
        for taken in self._taken:
            taken.set()

    def reset(self):
        for ready in self._ready:
            ready.wait()
        for it in self.iters:
            it.reset()
        self._read_next()

    def iter_next(self):
        for ready in self._ready:
            ready.wait()
        batches = list(self._next)
        for batch in batches:
            if isinstance(batch, Exception):
                self._read_next()  # the next call reads again
                raise batch
        ended = [b is None for b in batches]
        if any(ended) and not all(ended):
            raise ValueError("PrefetchingIter: the iterators have different numbers of batches "
                             "(iterator %d has ended, iterator %d has not)"
                             % (ended.index(True), ended.index(False)))
        if all(ended):
            return False
        if any(b.pad != batches[0].pad for b in batches):
            raise ValueError("PrefetchingIter: the iterators' batches have different padding (%s)"
                             % [b.pad for b in batches])
        self.current_batch = DataBatch(sum((b.data for b in batches), []),
                                       sum((b.label or [] for b in batches), []),
                                       batches[0].pad, batches[0].index,
                                       provide_data=self.provide_data,
                                       provide_label=self.provide_label)
        self._read_next()
        return True

    def next(self):
        if not self.iter_next():
            raise StopIteration
        return self.current_batch
