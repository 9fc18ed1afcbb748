"""Gluon's image transforms (MXNet 1.9.1's ``mx.gluon.data.vision.transforms``): ``ToTensor``,
``Normalize`` and ``Cast`` over operators (they hybridize), ``Compose``; the resizing, cropping,
flipping and colour ones over ``mx.image`` and ``mx.nd.image`` (imperative only)."""
import random

import numpy as np

from .... import image
from ....base import numeric_types
from ...block import Block, HybridBlock
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
    [0, 1] (the _image_to_tensor operator)."""

    def hybrid_forward(self, F, x):
        return F.image.to_tensor(x)


class Normalize(HybridBlock):
    """(x - mean) / std per channel of (C, H, W) or (N, C, H, W) data (the _image_normalize
    operator)."""

    def __init__(self, mean=0.0, std=1.0):
        super(Normalize, self).__init__()
        self._mean = mean
        self._std = std

    def hybrid_forward(self, F, x):
        return F.image.normalize(x, self._mean, self._std)


class RandomResizedCrop(Block):
    """A random window covering ``scale`` of the image's area with an aspect ratio in ``ratio``,
    resized to ``size`` (w, h) or (size, size) (mx.image.random_size_crop)."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=1):
        super(RandomResizedCrop, self).__init__()
        if isinstance(size, numeric_types):
            size = (size, size)
        self._args = (size, scale, ratio, interpolation)

    def forward(self, x):
        return image.random_size_crop(x, *self._args)[0]


class CenterCrop(Block):
    """The centred window of ``size`` (w, h) or (size, size), resized to it where the image is
    smaller (mx.image.center_crop)."""

    def __init__(self, size, interpolation=1):
        super(CenterCrop, self).__init__()
        if isinstance(size, numeric_types):
            size = (size, size)
        self._args = (size, interpolation)

    def forward(self, x):
        return image.center_crop(x, *self._args)[0]


class CropResize(HybridBlock):
    """The (width, height) window at (x, y), resized to ``size`` if given."""

    def __init__(self, x, y, width, height, size=None, interpolation=None):
        super(CropResize, self).__init__()
        self._x, self._y, self._width, self._height = x, y, width, height
        self._size = size
        self._interpolation = interpolation

    def hybrid_forward(self, F, x):
        out = F.image.crop(x, self._x, self._y, self._width, self._height)
        if self._size:
            out = F.image.resize(out, self._size, False,
                                 1 if self._interpolation is None else self._interpolation)
        return out


class Resize(HybridBlock):
    """Resizes to ``size`` (w, h) or (size, size); ``keep_ratio`` with one number sets the
    shorter edge."""

    def __init__(self, size, keep_ratio=False, interpolation=1):
        super(Resize, self).__init__()
        self._keep = keep_ratio
        self._size = size
        self._interpolation = interpolation

    def hybrid_forward(self, F, x):
        return F.image.resize(x, self._size, self._keep, self._interpolation)


class _ImageOp(HybridBlock):
    """F.image.<op>(x, *args)."""

    _op = None

    def __init__(self, *args):
        super(_ImageOp, self).__init__()
        self._args = args

    def hybrid_forward(self, F, x):
        return getattr(F.image, self._op)(x, *self._args)


class RandomFlipLeftRight(_ImageOp):
    """Mirrors left to right with probability 0.5."""
    _op = 'random_flip_left_right'

    def __init__(self):
        super(RandomFlipLeftRight, self).__init__()


class RandomFlipTopBottom(_ImageOp):
    """Flips upside down with probability 0.5."""
    _op = 'random_flip_top_bottom'

    def __init__(self):
        super(RandomFlipTopBottom, self).__init__()


class _FactorJitter(_ImageOp):
    def __init__(self, amount):
        super(_FactorJitter, self).__init__(max(0, 1 - amount), 1 + amount)


class RandomBrightness(_FactorJitter):
    """Brightness times a factor in [max(0, 1 - brightness), 1 + brightness]."""
    _op = 'random_brightness'


class RandomContrast(_FactorJitter):
    """Contrast by a factor in [max(0, 1 - contrast), 1 + contrast]."""
    _op = 'random_contrast'


class RandomSaturation(_FactorJitter):
    """Saturation by a factor in [max(0, 1 - saturation), 1 + saturation]."""
    _op = 'random_saturation'


class RandomHue(_FactorJitter):
    """Hue turned by a factor in [max(0, 1 - hue), 1 + hue] minus 1 turns."""
    _op = 'random_hue'


class RandomColorJitter(_ImageOp):
    """Brightness, contrast, saturation and hue jitters in a random order."""
    _op = 'random_color_jitter'

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super(RandomColorJitter, self).__init__(brightness, contrast, saturation, hue)


class RandomLighting(_ImageOp):
    """AlexNet's PCA lighting noise of standard deviation ``alpha``."""
    _op = 'random_lighting'

    def __init__(self, alpha):
        super(RandomLighting, self).__init__(alpha)


class RandomApply(Sequential):
    """``transforms`` with probability ``p`` (drawn from Python's random, as MXNet's)."""

    def __init__(self, transforms, p=0.5):
        super(RandomApply, self).__init__()
        self.transforms = transforms
        self.p = p

    def forward(self, x):
        if self.p < random.random():
            return x
        return self.transforms(x)


def _float32_only(x):
    if x.dtype is not np.float32:
        raise TypeError("This transformation only supports float32. Consider calling it after ToTensor")


class Rotate(Block):
    """Rotates (C, H, W) float32 images by ``rotation_degrees`` (mx.image.imrotate)."""

    def __init__(self, rotation_degrees, zoom_in=False, zoom_out=False):
        super(Rotate, self).__init__()
        self._args = (rotation_degrees, zoom_in, zoom_out)

    def forward(self, x):
        _float32_only(x)
        return image.imrotate(x, *self._args)


class RandomRotation(Block):
    """With probability ``rotate_with_proba`` (NumPy's draw), rotates by an angle drawn from
    ``angle_limits`` (mx.image.random_rotate)."""

    def __init__(self, angle_limits, zoom_in=False, zoom_out=False, rotate_with_proba=1.0):
        super(RandomRotation, self).__init__()
        lower, upper = angle_limits
        if lower >= upper:
            raise ValueError("`angle_limits` must be an ordered tuple")
        if rotate_with_proba < 0 or rotate_with_proba > 1:
            raise ValueError("Probability of rotating the image should be between 0 and 1")
        self._args = (angle_limits, zoom_in, zoom_out)
        self._rotate_with_proba = rotate_with_proba

    def forward(self, x):
        if np.random.random() > self._rotate_with_proba:
            return x
        _float32_only(x)
        return image.random_rotate(x, *self._args)
