"""Gluon's data loading (MXNet 1.9.1's ``mx.gluon.data``)."""
from . import vision
from .dataloader import DataLoader
from .dataset import ArrayDataset, Dataset, RecordFileDataset, SimpleDataset
from .sampler import BatchSampler, FilterSampler, RandomSampler, Sampler, SequentialSampler
