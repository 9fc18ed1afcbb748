"""Gluon's image transforms that need no image decoding (MXNet 1.9.1's ``ToTensor``,
``Normalize``, ``Cast``, ``Compose``), as blocks over plain operators; the resizing, cropping and
colour ones wait for mx.image."""
import numpy as np

from ...block import HybridBlock
from ...nn import Sequential


class Compose(Sequential):
    """Applies transforms in order."""

    def __init__(self, transforms):
        super(Compose, self).__init__()
        for t in transforms:
            self.add(t)


class Cast(HybridBlock):
    """Casts to ``dtype``."""

    def __init__(self, dtype='float32'):
        super(Cast, self).__init__()
        self._dtype = dtype

    def hybrid_forward(self, F, *args):
        if len(args) == 1:
            return F.cast(args[0], self._dtype)
        return tuple(F.cast(x, self._dtype) for x in args)


class ToTensor(HybridBlock):
    """(H, W, C) or (N, H, W, C) values in [0, 255] to (C, H, W) or (N, C, H, W) float32 in
    [0, 1]."""

    def hybrid_forward(self, F, x):
        x = F.cast(x, 'float32') / 255.0
        if len(x.shape) == 4:
            return F.transpose(x, axes=(0, 3, 1, 2))
        return F.transpose(x, axes=(2, 0, 1))


class Normalize(HybridBlock):
    """(x - mean) / std per channel of (C, H, W) or (N, C, H, W) data."""

    def __init__(self, mean=0.0, std=1.0):
        super(Normalize, self).__init__()
        self._mean = mean
        self._std = std

    def hybrid_forward(self, F, x):
        channels = x.shape[-3]
        mean = np.broadcast_to(np.asarray(self._mean, dtype=np.float32), (channels,))
        std = np.broadcast_to(np.asarray(self._std, dtype=np.float32), (channels,))
        shape = (channels, 1, 1)
        m = F.array(mean.reshape(shape), ctx=x.context, dtype=x.dtype)
        s = F.array(std.reshape(shape), ctx=x.context, dtype=x.dtype)
        return F.broadcast_div(F.broadcast_sub(x, m), s)
