"""Gluon's vision data (MXNet 1.9.1's ``mx.gluon.data.vision``)."""
from . import transforms
from .datasets import CIFAR10, CIFAR100, FashionMNIST, ImageFolderDataset, ImageRecordDataset, MNIST
