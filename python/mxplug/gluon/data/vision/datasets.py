"""Gluon's image datasets (MXNet 1.9.1's ``MNIST``, ``FashionMNIST``, ``CIFAR10``, ``CIFAR100``,
read from the files MXNet downloads, found under ``root``; ``ImageRecordDataset`` and
``ImageFolderDataset``, decoded by mx.image). mxplug downloads nothing (the project's
machines have no network): put the files there (the IDX files raw or gzip-compressed; Debian's
``dataset-fashion-mnist`` has Fashion-MNIST's in /usr/share/datasets/fashion-mnist)."""
import gzip
import os
import struct
import warnings

import numpy as np

from .... import image, recordio
from .... import ndarray as nd
from ..dataset import Dataset, RecordFileDataset


class _DownloadedDataset(Dataset):
    def __init__(self, root, transform):
        self._root = os.path.expanduser(root)
        self._transform = transform
        self._data = None
        self._label = None
        self._get_data()

    def __getitem__(self, idx):
        if self._transform is not None:
            return self._transform(self._data[idx], self._label[idx])
        return self._data[idx], self._label[idx]

    def __len__(self):
        return len(self._label)

    def _find(self, name):
        for candidate in (name, name[:-3] if name.endswith('.gz') else name + '.gz'):
            path = os.path.join(self._root, candidate)
            if os.path.exists(path):
                return path
        raise IOError("%s: %s not found in %s; mxplug does not download data sets (no network): put MXNet's "
                      "files there" % (type(self).__name__, name, self._root))


def _open(path):
    with open(path, 'rb') as f:
        gzipped = f.read(2) == b'\x1f\x8b'
    return gzip.open(path, 'rb') if gzipped else open(path, 'rb')


class MNIST(_DownloadedDataset):
    """The MNIST digits: (28, 28, 1) uint8 images and int32 labels."""

    def __init__(self, root=os.path.join('~', '.mxnet', 'datasets', 'mnist'), train=True, transform=None):
        self._train = train
        self._train_data = 'train-images-idx3-ubyte.gz'
        self._train_label = 'train-labels-idx1-ubyte.gz'
        self._test_data = 't10k-images-idx3-ubyte.gz'
        self._test_label = 't10k-labels-idx1-ubyte.gz'
        super(MNIST, self).__init__(root, transform)

    def _get_data(self):
        data_name, label_name = ((self._train_data, self._train_label) if self._train
                                 else (self._test_data, self._test_label))
        with _open(self._find(label_name)) as fin:
            struct.unpack(">II", fin.read(8))
            label = np.frombuffer(fin.read(), dtype=np.uint8).astype(np.int32)
        with _open(self._find(data_name)) as fin:
            struct.unpack(">IIII", fin.read(16))
            data = np.frombuffer(fin.read(), dtype=np.uint8)
            data = data.reshape(len(label), 28, 28, 1)
        self._data = nd.array(data, dtype=data.dtype)
        self._label = label


class FashionMNIST(MNIST):
    """Fashion-MNIST: MNIST's format, ten classes of clothing."""

    def __init__(self, root=os.path.join('~', '.mxnet', 'datasets', 'fashion-mnist'), train=True, transform=None):
        super(FashionMNIST, self).__init__(root, train, transform)


class CIFAR10(_DownloadedDataset):
    """CIFAR-10: (32, 32, 3) uint8 images and int32 labels, from cifar-10-batches-bin."""

    def __init__(self, root=os.path.join('~', '.mxnet', 'datasets', 'cifar10'), train=True, transform=None):
        self._train = train
        self._archive_dir = 'cifar-10-batches-bin'
        self._label_bytes = 1
        super(CIFAR10, self).__init__(root, transform)

    def _read_batch(self, filename):
        with open(filename, 'rb') as fin:
            data = np.frombuffer(fin.read(), dtype=np.uint8).reshape(-1, 3072 + self._label_bytes)
        return data[:, self._label_bytes:].reshape(-1, 3, 32, 32), data[:, self._label_bytes - 1].astype(np.int32)

    def _files(self):
        if self._train:
            return ['data_batch_%d.bin' % i for i in range(1, 6)]
        return ['test_batch.bin']

    def _get_data(self):
        folder = os.path.join(self._root, self._archive_dir)
        paths = [os.path.join(folder, name) for name in self._files()]
        for path in paths:
            if not os.path.exists(path):
                raise IOError("%s: %s not found; mxplug does not download data sets (no network): put MXNet's "
                              "files there" % (type(self).__name__, path))
        data, label = zip(*(self._read_batch(p) for p in paths))
        data = np.concatenate(data).transpose((0, 2, 3, 1))
        self._data = nd.array(data, dtype=data.dtype)
        self._label = np.concatenate(label)


class CIFAR100(CIFAR10):
    """CIFAR-100: the fine labels (or the coarse ones with ``fine_label=False``)."""

    def __init__(self, root=os.path.join('~', '.mxnet', 'datasets', 'cifar100'), fine_label=False, train=True,
                 transform=None):
        self._fine_label = fine_label
        super(CIFAR100, self).__init__(root, train, transform)
        self._archive_dir = 'cifar-100-binary'

    def _get_data(self):
        self._archive_dir = 'cifar-100-binary'
        self._label_bytes = 2 if self._fine_label else 1
        super(CIFAR100, self)._get_data()

    def _read_batch(self, filename):
        with open(filename, 'rb') as fin:
            data = np.frombuffer(fin.read(), dtype=np.uint8).reshape(-1, 3072 + 2)
        label = data[:, 1 if self._fine_label else 0].astype(np.int32)
        return data[:, 2:].reshape(-1, 3, 32, 32), label

    def _files(self):
        return ['train.bin'] if self._train else ['test.bin']


class ImageRecordDataset(RecordFileDataset):
    """(image, label) of each record of a RecordIO file of images (with its .idx beside it),
    decoded with ``flag`` (1 color, 0 gray); ``transform(image, label)`` if given."""

    def __init__(self, filename, flag=1, transform=None):
        super(ImageRecordDataset, self).__init__(filename)
        self._flag = flag
        self._transform = transform

    def __getitem__(self, idx):
        header, img = recordio.unpack(super(ImageRecordDataset, self).__getitem__(idx))
        img = image.imdecode(img, self._flag)
        return self._transform(img, header.label) if self._transform is not None else (img, header.label)


class ImageFolderDataset(Dataset):
    """(image, label) of the .jpg, .jpeg and .png files in ``root``'s folders, one label per
    folder in sorted order (``synsets``); ``items`` lists (path, label). Other files are skipped
    with a warning, as MXNet's."""

    def __init__(self, root, flag=1, transform=None):
        self._root = os.path.expanduser(root)
        self._flag = flag
        self._transform = transform
        self._exts = ['.jpg', '.jpeg', '.png']
        self._list_images(self._root)

    def _list_images(self, root):
        self.synsets, self.items = [], []
        for folder in sorted(os.listdir(root)):
            path = os.path.join(root, folder)
            if not os.path.isdir(path):
                warnings.warn('Ignoring %s, which is not a directory.' % path, stacklevel=3)
                continue
            label = len(self.synsets)
            self.synsets.append(folder)
            for filename in sorted(os.listdir(path)):
                filename = os.path.join(path, filename)
                ext = os.path.splitext(filename)[1]
                if ext.lower() not in self._exts:
                    warnings.warn('Ignoring %s of type %s. Only support %s' % (filename, ext, ', '.join(self._exts)))
                    continue
                self.items.append((filename, label))

    def __getitem__(self, idx):
        img = image.imread(self.items[idx][0], self._flag)
        label = self.items[idx][1]
        return self._transform(img, label) if self._transform is not None else (img, label)

    def __len__(self):
        return len(self.items)
