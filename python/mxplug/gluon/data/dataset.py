"""Gluon's datasets (MXNet 1.9.1's ``mx.gluon.data.Dataset``, ``SimpleDataset``,
``ArrayDataset``, ``RecordFileDataset``): indexable collections of samples."""
from ... import ndarray as nd
from ... import recordio


class Dataset(object):
    """A collection of samples: ``__getitem__(i)`` and ``__len__``."""

    def __getitem__(self, idx):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def filter(self, fn):
        """The samples for which ``fn(sample)`` is true."""
        from .sampler import FilterSampler
        return _SampledDataset(self, FilterSampler(fn, self))

    def shard(self, num_shards, index):
        """Part ``index`` of ``num_shards`` contiguous parts (the first parts one longer when the
        length does not divide)."""
        if index >= num_shards:
            raise AssertionError('Shard index of out bound: %d out of %d' % (index, num_shards))
        if num_shards <= 0:
            raise AssertionError('Number of shards must be greater than 0')
        if index < 0:
            raise AssertionError('Index must be non-negative')
        length = len(self)
        shard_len = length // num_shards
        rest = length % num_shards
        start = shard_len * index + min(index, rest)
        end = start + shard_len + (index < rest)
        from .sampler import SequentialSampler
        return _SampledDataset(self, SequentialSampler(end - start, start))

    def take(self, count):
        """The first ``count`` samples (all of them for None)."""
        if count is None or count > len(self):
            count = len(self)
        from .sampler import SequentialSampler
        return _SampledDataset(self, SequentialSampler(count))

    def sample(self, sampler):
        """The samples at the indices ``sampler`` gives."""
        return _SampledDataset(self, sampler)

    def transform(self, fn, lazy=True):
        """Each sample (unpacked when a tuple) passed through ``fn``, on access (``lazy``) or
        now."""
        trans = _LazyTransformDataset(self, fn)
        if lazy:
            return trans
        return SimpleDataset([i for i in trans])

    def transform_first(self, fn, lazy=True):
        """The first element of each sample passed through ``fn`` (the data, not the label)."""
        return self.transform(_TransformFirstClosure(fn), lazy)


class SimpleDataset(Dataset):
    """A dataset over a list (or anything with len and indexing)."""

    def __init__(self, data):
        self._data = data

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        return self._data[idx]


class _LazyTransformDataset(Dataset):
    def __init__(self, data, fn):
        self._data = data
        self._fn = fn

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        item = self._data[idx]
        if isinstance(item, tuple):
            return self._fn(*item)
        return self._fn(item)


class _TransformFirstClosure(object):
    def __init__(self, fn):
        self._fn = fn

    def __call__(self, x, *args):
        if args:
            return (self._fn(x),) + args
        return self._fn(x)


class _SampledDataset(Dataset):
    def __init__(self, dataset, sampler):
        self._dataset = dataset
        self._sampler = sampler
        self._indices = list(iter(sampler))

    def __len__(self):
        return len(self._sampler)

    def __getitem__(self, idx):
        return self._dataset[self._indices[idx]]


class ArrayDataset(Dataset):
    """Samples made of the i-th elements of several arrays (NDArrays, NumPy arrays, lists) of
    the same length; a 1-D NDArray gives NumPy scalars, as MXNet's."""

    def __init__(self, *args):
        if len(args) == 0:
            raise AssertionError("Needs at least 1 arrays")
        self._length = len(args[0])
        self._data = []
        for i, data in enumerate(args):
            if len(data) != self._length:
                raise AssertionError("All arrays must have the same length; array[0] has length %d while array[%d] "
                                     "has %d." % (self._length, i + 1, len(data)))
            if isinstance(data, nd.NDArray) and len(data.shape) == 1:
                data = data.asnumpy()
            self._data.append(data)

    def __getitem__(self, idx):
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(data[idx] for data in self._data)

    def __len__(self):
        return self._length


class RecordFileDataset(Dataset):
    """The records of a RecordIO file with its index (``filename``.idx beside it), as bytes."""

    def __init__(self, filename):
        self.idx_file = filename[:filename.rfind('.')] + '.idx' if '.' in filename else filename + '.idx'
        self.filename = filename
        self._record = recordio.MXIndexedRecordIO(self.idx_file, self.filename, 'r')

    def __getitem__(self, idx):
        return self._record.read_idx(self._record.keys[idx])

    def __len__(self):
        return len(self._record.keys)
