"""Concurrent blocks: every child sees the same input and their outputs are concatenated
along ``axis`` (the branches of Inception, DenseNet and SqueezeNet); Identity passes its input
through."""
from ... import nn
from ...block import HybridBlock


class Concurrent(nn.Sequential):
    """Calls each child on the input and concatenates the outputs along ``axis``."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super(Concurrent, self).__init__(prefix=prefix, params=params)
        self.axis = axis

    def forward(self, x):
        from .... import ndarray
        return ndarray.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class HybridConcurrent(nn.HybridSequential):
    """Concurrent of HybridBlocks, itself hybridizable."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super(HybridConcurrent, self).__init__(prefix=prefix, params=params)
        self.axis = axis

    def hybrid_forward(self, F, x):
        return F.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class Identity(HybridBlock):
    """Returns its input."""

    def hybrid_forward(self, F, x):
        return x
