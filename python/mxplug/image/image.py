"""mx.image's functions, Augmenters and ImageIter, with MXNet 1.9.1's names, defaults and random
draws (Python's ``random`` and NumPy's, in MXNet's order, so that a seeded script crops, flips and
jitters as it does under MXNet).

Decoding and resizing are host functions over the core's (``mxplug/image.h``: libjpeg-turbo and
libpng; OpenCV's interpolations computed in float, which can differ from OpenCV's fixed point by
1), not graph operators: MXNet's ``_cvimdecode``, ``_cvimresize`` and ``_cvcopyMakeBorder`` are
CPU-only NDArray functions too."""
import json
import logging
import os
import random
import warnings
from numbers import Number

import numpy as np

from .. import _core
from .. import io
from .. import ndarray as nd
from .. import recordio
from ..base import MXNetError, numeric_types
# RGB luma weights (ITU-R 601) and ImageNet's RGB PCA, as MXNet's augmenters use them.
_LUMA = np.array([0.299, 0.587, 0.114])
_EIGVAL = np.array([55.46, 4.794, 1.148])
_EIGVEC = np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140], [-0.5836, -0.6948, 0.4203]])

__all__ = ["imread", "imresize", "imdecode", "scale_down", "copyMakeBorder", "resize_short", "fixed_crop",
           "random_crop", "center_crop", "color_normalize", "random_size_crop", "imrotate", "random_rotate",
           "Augmenter", "SequentialAug",
           "ResizeAug", "ForceResizeAug", "RandomCropAug", "RandomSizedCropAug", "CenterCropAug", "RandomOrderAug",
           "BrightnessJitterAug", "ContrastJitterAug", "SaturationJitterAug", "HueJitterAug", "ColorJitterAug",
           "LightingAug", "ColorNormalizeAug", "RandomGrayAug", "HorizontalFlipAug", "CastAug", "CreateAugmenter",
           "ImageIter"]


def _finish(array, out):
    result = nd.array(array, dtype=array.dtype)
    if out is None:
        return result
    out[:] = result
    return out


def _decode(buf, flag, to_rgb, where):
    if flag not in (0, 1):
        raise MXNetError("%s: flag is %r; expected 0 (grayscale) or 1 (color)" % (where, flag))
    pixels = _core.imdecode(bytes(buf), 3 if flag else 1, not to_rgb)
    return pixels.reshape(pixels.shape[:2] + (-1,))  # a gray image has one channel too


def imdecode(buf, flag=1, to_rgb=True, out=None):
    """Decodes a JPEG or PNG (bytes, bytearray, a uint8 NumPy array or NDArray) to a uint8
    (height, width, channels) NDArray: color (flag 1; RGB, or BGR with to_rgb=False) or gray
    (flag 0, one channel)."""
    if isinstance(buf, nd.NDArray):
        buf = buf.asnumpy().astype(np.uint8).tobytes()
    elif isinstance(buf, np.ndarray):
        buf = buf.tobytes()
    elif not isinstance(buf, (bytes, bytearray)):
        raise ValueError('buf must be of type bytes, bytearray or numpy.ndarray,'
                         'if you would like to input type str, please convert to bytes')
    return _finish(_decode(buf, flag, to_rgb, "imdecode"), out)


def imread(filename, flag=1, to_rgb=True, out=None):
    """Reads and decodes an image file (imdecode's flag and to_rgb)."""
    try:
        with open(filename, 'rb') as f:
            buf = f.read()
    except OSError as e:
        raise MXNetError("imread: '%s' couldn't open file: %s" % (filename, e.strerror))
    return _finish(_decode(buf, flag, to_rgb, "imread"), out)


def imresize(src, w, h, interp=1, out=None):
    """``src`` (height, width, channels) resized to width ``w`` and height ``h`` with OpenCV's
    interpolation ``interp`` (0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 Lanczos)."""
    if interp not in (0, 1, 2, 3, 4):
        raise MXNetError("imresize: unknown interpolation method %r" % (interp,))
    return nd.image.resize(src, (int(w), int(h)), interp=interp, out=out)


# OpenCV's border types by number, as NumPy's pad modes.
_BORDERS = {0: 'constant', 1: 'edge', 2: 'symmetric', 3: 'wrap', 4: 'reflect'}


def copyMakeBorder(src, top, bot, left, right, type=0, value=0.0, values=(), out=None):  # noqa: A002
    """``src`` (height, width, channels) with a border: ``type`` 0 constant (``value``, or one per
    channel in ``values``), 1 replicate, 2 reflect, 3 wrap, 4 reflect-101 (OpenCV's; OpenCV's
    flag 16, BORDER_ISOLATED, may be added and changes nothing for a whole image)."""
    if isinstance(type, int) and type & 16:
        type &= ~16  # noqa: A001
    if type not in _BORDERS:
        raise MXNetError("copyMakeBorder: type is %r; expected 0 to 4 (OpenCV's border types)" % (type,))
    pixels = src.asnumpy()
    pad = ((top, bot), (left, right), (0, 0))
    if type == 0:
        fill = np.asarray(values if len(values) else [value] * pixels.shape[2], dtype=np.float64)
        result = np.empty((pixels.shape[0] + top + bot, pixels.shape[1] + left + right, pixels.shape[2]),
                          dtype=pixels.dtype)
        result[...] = fill.astype(pixels.dtype)
        result[top:top + pixels.shape[0], left:left + pixels.shape[1]] = pixels
    else:
        result = np.pad(pixels, pad, mode=_BORDERS[type])
    return _finish(result, out)


def scale_down(src_size, size):
    """``size`` (w, h) scaled down to fit in ``src_size`` (w, h), keeping its aspect ratio."""
    w, h = size
    sw, sh = src_size
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


def _get_interp_method(interp, sizes=()):
    """interp, or for 9 the one that suits the resize (old h, old w, new h, new w): area to
    shrink, bicubic to enlarge, else bilinear; for 10 a random one."""
    if interp == 9:
        if not sizes:
            return 2
        assert len(sizes) == 4
        oh, ow, nh, nw = sizes
        if nh > oh and nw > ow:
            return 2
        return 3 if nh < oh and nw < ow else 1
    if interp == 10:
        return random.randint(0, 4)
    if interp not in (0, 1, 2, 3, 4):
        raise ValueError('Unknown interp method %d' % interp)
    return interp


def resize_short(src, size, interp=2):
    """``src`` resized so that its shorter edge is ``size``."""
    h, w, _ = src.shape
    new_h, new_w = (size * h // w, size) if h > w else (size, size * w // h)
    return imresize(src, new_w, new_h, interp=_get_interp_method(interp, (h, w, new_h, new_w)))


def fixed_crop(src, x0, y0, w, h, size=None, interp=2):
    """The (w, h) window of ``src`` at (x0, y0), resized to ``size`` (w, h) if given."""
    out = src[y0:y0 + h, x0:x0 + w]
    if size is not None and (w, h) != size:
        out = imresize(out, *size, interp=_get_interp_method(interp, (h, w, size[1], size[0])))
    return out


def random_crop(src, size, interp=2):
    """A random window of ``size``'s shape (scaled down to fit), resized to ``size``: (the crop,
    (x0, y0, w, h))."""
    h, w, _ = src.shape
    new_w, new_h = scale_down((w, h), size)
    x0 = random.randint(0, w - new_w)
    y0 = random.randint(0, h - new_h)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def center_crop(src, size, interp=2):
    """The centred window of ``size``'s shape (scaled down to fit), resized to ``size``."""
    h, w, _ = src.shape
    new_w, new_h = scale_down((w, h), size)
    x0, y0 = int((w - new_w) / 2), int((h - new_h) / 2)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def color_normalize(src, mean, std=None):
    """``(src - mean) / std``, in place."""
    if mean is not None:
        src -= mean
    if std is not None:
        src /= std
    return src


def random_size_crop(src, size, area, ratio, interp=2, **kwargs):
    """A random window covering ``area`` (a fraction, or a (min, max) range) of ``src`` with an
    aspect ratio in ``ratio``, resized to ``size``; after 10 failed draws, center_crop."""
    h, w, _ = src.shape
    if 'min_area' in kwargs:
        warnings.warn('`min_area` is deprecated. Please use `area` instead.', DeprecationWarning)
        area = kwargs.pop('min_area')
    assert not kwargs, "unexpected keyword arguments for `random_size_crop`."
    if isinstance(area, numeric_types):
        area = (area, 1.0)
    for _ in range(10):
        target_area = random.uniform(area[0], area[1]) * h * w
        new_ratio = np.exp(random.uniform(np.log(ratio[0]), np.log(ratio[1])))
        new_w = int(round(np.sqrt(target_area * new_ratio)))
        new_h = int(round(np.sqrt(target_area / new_ratio)))
        if new_w <= w and new_h <= h:
            x0 = random.randint(0, w - new_w)
            y0 = random.randint(0, h - new_h)
            return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)
    return center_crop(src, size, interp)


def imrotate(src, rotation_degrees, zoom_in=False, zoom_out=False):
    """Rotates float32 images (C, H, W) or a batch (N, C, H, W) by ``rotation_degrees`` (a number,
    or one per image) about their centres, sampling bilinearly (BilinearSampler: 0 outside).
    ``zoom_in`` scales so that no empty corner shows; ``zoom_out`` so that the whole image does."""
    if zoom_in and zoom_out:
        raise ValueError("`zoom_in` and `zoom_out` cannot be both True")
    if src.dtype is not np.float32:
        raise TypeError("Only `float32` images are supported by this function")
    single = src.ndim == 3
    if single:
        src = src.expand_dims(axis=0)
        if not isinstance(rotation_degrees, Number):
            raise TypeError("When a single image is passed the rotation angle is required to be a scalar.")
    elif src.ndim != 4:
        raise ValueError("Only 3D and 4D are supported by this function")
    if isinstance(rotation_degrees, Number):
        rotation_degrees = [rotation_degrees] * len(src)
    degrees = np.asarray(rotation_degrees.asnumpy() if isinstance(rotation_degrees, nd.NDArray)
                         else rotation_degrees, dtype=np.float32).ravel()
    if len(src) != len(degrees):
        raise ValueError("The number of images must be equal to the number of rotation angles")
    _, _, h, w = src.shape
    rad = (np.float32(np.pi) * degrees / np.float32(180)).reshape(-1, 1, 1)
    # Each output pixel's offset from the centre, rotated, in units of the half-size.
    hscale, wscale = np.float32((h - 1) / 2.0), np.float32((w - 1) / 2.0)
    ys = (np.arange(h, dtype=np.float32).reshape(h, 1) - hscale) * np.ones((1, w), np.float32)
    xs = (np.arange(w, dtype=np.float32).reshape(1, w) - wscale) * np.ones((h, 1), np.float32)
    cos, sin = np.cos(rad), np.sin(rad)
    x_rot = (xs * cos - ys * sin) / wscale
    y_rot = (xs * sin + ys * cos) / hscale
    scale = np.float32(1)
    if zoom_in or zoom_out:
        rho = np.sqrt(np.float32(h * h + w * w))
        corner = np.arctan(np.float32(h) / np.float32(w))
        turned = np.abs(rad)
        max_x = np.maximum(np.abs(rho * np.cos(corner + turned)), np.abs(rho * np.cos(corner - turned)))
        max_y = np.maximum(np.abs(rho * np.sin(corner + turned)), np.abs(rho * np.sin(corner - turned)))
        scale = (np.maximum(max_x / w, max_y / h) if zoom_out else np.minimum(w / max_x, h / max_y))
        scale = scale.astype(np.float32).reshape(-1, 1, 1, 1)
    grid = np.stack([x_rot, y_rot], axis=1).astype(np.float32) * scale
    rotated = nd.BilinearSampler(src, nd.array(grid, ctx=src.context))
    return rotated[0] if single else rotated


def random_rotate(src, angle_limits, zoom_in=False, zoom_out=False):
    """imrotate by angles drawn from NumPy's uniform(*angle_limits), one per image."""
    if src.ndim == 3:
        degrees = np.random.uniform(*angle_limits)
    else:
        degrees = nd.array(np.random.uniform(*angle_limits, size=src.shape[0]))
    return imrotate(src, degrees, zoom_in=zoom_in, zoom_out=zoom_out)


# ---- Augmenters: callables from an image to an image, described by dumps() ----

class Augmenter(object):
    """An image augmenter; its keyword arguments are what ``dumps`` writes."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        for k, v in self._kwargs.items():
            if isinstance(v, nd.NDArray):
                v = v.asnumpy()
            if isinstance(v, np.ndarray):
                self._kwargs[k] = v.tolist()

    def dumps(self):
        """[name, kwargs] as JSON."""
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])

    def __call__(self, src):
        raise NotImplementedError("Must override implementation.")


class SequentialAug(Augmenter):
    """Its augmenters in order."""

    def __init__(self, ts):
        super(SequentialAug, self).__init__()
        self.ts = ts

    def dumps(self):
        return [self.__class__.__name__.lower(), [x.dumps() for x in self.ts]]

    def __call__(self, src):
        for aug in self.ts:
            src = aug(src)
        return src


class RandomOrderAug(SequentialAug):
    """Its augmenters in a random order (shuffled in place each call)."""

    def __call__(self, src):
        random.shuffle(self.ts)
        return super(RandomOrderAug, self).__call__(src)


class _SizedAug(Augmenter):
    def __init__(self, size, interp=2):
        super(_SizedAug, self).__init__(size=size, interp=interp)
        self.size = size
        self.interp = interp


class ResizeAug(_SizedAug):
    """Resizes the shorter edge to ``size``."""

    def __call__(self, src):
        return resize_short(src, self.size, self.interp)


class ForceResizeAug(_SizedAug):
    """Resizes to ``size`` (w, h), whatever the aspect ratio."""

    def __call__(self, src):
        sizes = (src.shape[0], src.shape[1], self.size[1], self.size[0])
        return imresize(src, *self.size, interp=_get_interp_method(self.interp, sizes))


class RandomCropAug(_SizedAug):
    """random_crop to ``size``."""

    def __call__(self, src):
        return random_crop(src, self.size, self.interp)[0]


class CenterCropAug(_SizedAug):
    """center_crop to ``size``."""

    def __call__(self, src):
        return center_crop(src, self.size, self.interp)[0]


class RandomSizedCropAug(Augmenter):
    """random_size_crop to ``size``."""

    def __init__(self, size, area, ratio, interp=2, **kwargs):
        super(RandomSizedCropAug, self).__init__(size=size, area=area, ratio=ratio, interp=interp)
        self.size = size
        if 'min_area' in kwargs:
            warnings.warn('`min_area` is deprecated. Please use `area` instead.', DeprecationWarning)
            area = kwargs.pop('min_area')
        self.area = area
        self.ratio = ratio
        self.interp = interp
        assert not kwargs, "unexpected keyword arguments for `RandomSizedCropAug`."

    def __call__(self, src):
        return random_size_crop(src, self.size, self.area, self.ratio, self.interp)[0]




class BrightnessJitterAug(Augmenter):
    """Multiplies by 1 + a uniform draw in [-brightness, brightness]."""

    def __init__(self, brightness):
        super(BrightnessJitterAug, self).__init__(brightness=brightness)
        self.brightness = brightness

    def __call__(self, src):
        src *= 1.0 + random.uniform(-self.brightness, self.brightness)
        return src


class ContrastJitterAug(Augmenter):
    """Blends with the image's mean luma by a factor 1 + uniform(-contrast, contrast)."""

    def __init__(self, contrast):
        super(ContrastJitterAug, self).__init__(contrast=contrast)
        self.contrast = contrast
        self.coef = nd.array(_LUMA.reshape(1, 1, 3))

    def __call__(self, src):
        alpha = 1.0 + random.uniform(-self.contrast, self.contrast)
        gray = src * self.coef
        gray = (3.0 * (1.0 - alpha) / gray.size) * nd.sum(gray)
        src *= alpha
        src += gray
        return src


class SaturationJitterAug(Augmenter):
    """Blends with each pixel's luma by a factor 1 + uniform(-saturation, saturation)."""

    def __init__(self, saturation):
        super(SaturationJitterAug, self).__init__(saturation=saturation)
        self.saturation = saturation
        self.coef = nd.array(_LUMA.reshape(1, 1, 3))

    def __call__(self, src):
        alpha = 1.0 + random.uniform(-self.saturation, self.saturation)
        gray = nd.sum(src * self.coef, axis=2, keepdims=True)
        gray *= (1.0 - alpha)
        src *= alpha
        src += gray
        return src


class HueJitterAug(Augmenter):
    """Rotates the hue by uniform(-hue, hue) half turns, in YIQ space."""

    _TO_YIQ = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.321], [0.211, -0.523, 0.311]])
    _FROM_YIQ = np.array([[1.0, 0.956, 0.621], [1.0, -0.272, -0.647], [1.0, -1.107, 1.705]])

    def __init__(self, hue):
        super(HueJitterAug, self).__init__(hue=hue)
        self.hue = hue
        self.tyiq, self.ityiq = self._TO_YIQ, self._FROM_YIQ

    def __call__(self, src):
        alpha = random.uniform(-self.hue, self.hue)
        u, w = np.cos(alpha * np.pi), np.sin(alpha * np.pi)
        rotation = np.array([[1.0, 0.0, 0.0], [0.0, u, -w], [0.0, w, u]])
        t = np.dot(np.dot(self.ityiq, rotation), self.tyiq).T
        return nd.dot(src, nd.array(t))


class ColorJitterAug(RandomOrderAug):
    """Brightness, contrast and saturation jitters (those > 0) in a random order."""

    def __init__(self, brightness, contrast, saturation):
        ts = []
        if brightness > 0:
            ts.append(BrightnessJitterAug(brightness))
        if contrast > 0:
            ts.append(ContrastJitterAug(contrast))
        if saturation > 0:
            ts.append(SaturationJitterAug(saturation))
        super(ColorJitterAug, self).__init__(ts)


class LightingAug(Augmenter):
    """AlexNet's PCA lighting noise: adds eigvec * (normal(0, alphastd) * eigval)."""

    def __init__(self, alphastd, eigval, eigvec):
        super(LightingAug, self).__init__(alphastd=alphastd, eigval=eigval, eigvec=eigvec)
        self.alphastd = alphastd
        self.eigval = eigval
        self.eigvec = eigvec

    def __call__(self, src):
        alpha = np.random.normal(0, self.alphastd, size=(3,))
        src += nd.array(np.dot(self.eigvec * alpha, self.eigval))
        return src


class ColorNormalizeAug(Augmenter):
    """color_normalize by ``mean`` and ``std``."""

    def __init__(self, mean, std):
        super(ColorNormalizeAug, self).__init__(mean=mean, std=std)
        self.mean = mean if mean is None or isinstance(mean, nd.NDArray) else nd.array(mean)
        self.std = std if std is None or isinstance(std, nd.NDArray) else nd.array(std)

    def __call__(self, src):
        return color_normalize(src, self.mean, self.std)


class RandomGrayAug(Augmenter):
    """With probability ``p``, gray (0.21 R + 0.72 G + 0.07 B in every channel)."""

    def __init__(self, p):
        super(RandomGrayAug, self).__init__(p=p)
        self.p = p
        self.mat = nd.array([[0.21, 0.21, 0.21], [0.72, 0.72, 0.72], [0.07, 0.07, 0.07]])

    def __call__(self, src):
        if random.random() < self.p:
            src = nd.dot(src, self.mat)
        return src


class HorizontalFlipAug(Augmenter):
    """With probability ``p``, mirrored left to right."""

    def __init__(self, p):
        super(HorizontalFlipAug, self).__init__(p=p)
        self.p = p

    def __call__(self, src):
        if random.random() < self.p:
            src = nd.flip(src, axis=1)
        return src


class CastAug(Augmenter):
    """Cast to ``typ``."""

    def __init__(self, typ='float32'):
        super(CastAug, self).__init__(type=typ)
        self.typ = typ

    def __call__(self, src):
        return src.astype(self.typ)


# ImageNet's mean and std, as CreateAugmenter uses them.
_IMAGENET_MEAN, _IMAGENET_STD = [123.68, 116.28, 103.53], [58.395, 57.12, 57.375]


def CreateAugmenter(data_shape, resize=0, rand_crop=False, rand_resize=False, rand_mirror=False, mean=None,
                    std=None, brightness=0, contrast=0, saturation=0, hue=0, pca_noise=0, rand_gray=0,
                    inter_method=2):
    """MXNet's default augmenter list for images of ``data_shape`` (channels, height, width):
    resize, a centre, random or random-sized crop, mirror, cast to float32, colour jitters, PCA
    noise, random gray and normalization (``mean``/``std`` True for ImageNet's)."""
    auglist = []
    if resize > 0:
        auglist.append(ResizeAug(resize, inter_method))
    crop_size = (data_shape[2], data_shape[1])
    if rand_resize:
        assert rand_crop
        auglist.append(RandomSizedCropAug(crop_size, 0.08, (3.0 / 4.0, 4.0 / 3.0), inter_method))
    elif rand_crop:
        auglist.append(RandomCropAug(crop_size, inter_method))
    else:
        auglist.append(CenterCropAug(crop_size, inter_method))
    if rand_mirror:
        auglist.append(HorizontalFlipAug(0.5))
    auglist.append(CastAug())
    if brightness or contrast or saturation:
        auglist.append(ColorJitterAug(brightness, contrast, saturation))
    if hue:
        auglist.append(HueJitterAug(hue))
    if pca_noise > 0:
        auglist.append(LightingAug(pca_noise, _EIGVAL, _EIGVEC))
    if rand_gray > 0:
        auglist.append(RandomGrayAug(rand_gray))
    if mean is True:
        mean = nd.array(_IMAGENET_MEAN)
    elif mean is not None:
        assert isinstance(mean, (np.ndarray, nd.NDArray)) and mean.shape[0] in [1, 3]
    if std is True:
        std = nd.array(_IMAGENET_STD)
    elif std is not None:
        assert isinstance(std, (np.ndarray, nd.NDArray)) and std.shape[0] in [1, 3]
    if mean is not None or std is not None:
        auglist.append(ColorNormalizeAug(mean, std))
    return auglist


class ImageIter(io.DataIter):
    """Batches of augmented images, (batch, channels, height, width) float32, from a RecordIO
    file (``path_imgrec``, with ``path_imgidx`` to shuffle or shard it), an image list file
    (``path_imglist``: index, labels and path per tab-separated line, under ``path_root``) or a
    list ``imglist`` of [label(s)..., path]. ``aug_list`` defaults to CreateAugmenter(data_shape,
    **kwargs); ``last_batch_handle`` is 'pad', 'discard' or 'roll_over', as MXNet's."""

    def __init__(self, batch_size, data_shape, label_width=1, path_imgrec=None, path_imglist=None, path_root=None,
                 path_imgidx=None, shuffle=False, part_index=0, num_parts=1, aug_list=None, imglist=None,
                 data_name='data', label_name='softmax_label', dtype='float32', last_batch_handle='pad',
                 **kwargs):
        super(ImageIter, self).__init__()
        assert path_imgrec or path_imglist or (isinstance(imglist, list))
        assert dtype in ['int32', 'float32', 'int64', 'float64'], dtype + ' label not supported'
        name = self.__class__.__name__
        self.imgrec, self.imgidx = None, None
        if path_imgrec:
            logging.info('%s: loading recordio %s...', name, path_imgrec)
            if path_imgidx:
                self.imgrec = recordio.MXIndexedRecordIO(path_imgidx, path_imgrec, 'r')
                self.imgidx = list(self.imgrec.keys)
            else:
                self.imgrec = recordio.MXRecordIO(path_imgrec, 'r')
        self.imglist, keys = None, None
        if path_imglist:
            logging.info('%s: loading image list %s...', name, path_imglist)
            self.imglist, keys = {}, []
            with open(path_imglist) as fin:
                for line in iter(fin.readline, ''):
                    fields = line.strip().split('\t')
                    key = int(fields[0])
                    self.imglist[key] = (nd.array(fields[1:-1], dtype=dtype), fields[-1])
                    keys.append(key)
        elif isinstance(imglist, list):
            logging.info('%s: loading image list...', name)
            self.imglist, keys = {}, []
            for number, img in enumerate(imglist, 1):
                if len(img) > 2:
                    label = nd.array(img[:-1], dtype=dtype)
                elif isinstance(img[0], numeric_types):
                    label = nd.array([img[0]], dtype=dtype)
                else:
                    label = nd.array(img[0], dtype=dtype)
                self.imglist[str(number)] = (label, img[-1])
                keys.append(str(number))
        self.path_root = path_root
        self.check_data_shape(data_shape)
        self.provide_data = [(data_name, (batch_size,) + data_shape)]
        self.provide_label = [(label_name, (batch_size, label_width) if label_width > 1 else (batch_size,))]
        self.batch_size = batch_size
        self.data_shape = data_shape
        self.label_width = label_width
        self.shuffle = shuffle
        if self.imgrec is None:
            self.seq = keys
        elif shuffle or num_parts > 1 or path_imgidx:
            assert self.imgidx is not None
            self.seq = self.imgidx
        else:
            self.seq = None  # the record file in order
        if num_parts > 1:
            assert part_index < num_parts
            part = len(self.seq) // num_parts
            self.seq = self.seq[part_index * part:(part_index + 1) * part]
        self.auglist = CreateAugmenter(data_shape, **kwargs) if aug_list is None else aug_list
        self.cur = 0
        self._allow_read = True
        self.last_batch_handle = last_batch_handle
        self.num_image = len(self.seq) if self.seq is not None else None
        self._cache_data = self._cache_label = self._cache_idx = None
        self.reset()

    def reset(self):
        """Starts again (shuffled anew); 'roll_over' keeps the partial batch it holds."""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.last_batch_handle != 'roll_over' or self._cache_data is None:
            if self.imgrec is not None:
                self.imgrec.reset()
            self.cur = 0
            self._allow_read = True

    def hard_reset(self):
        """Starts again and drops a rolled-over partial batch."""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.imgrec is not None:
            self.imgrec.reset()
        self.cur = 0
        self._allow_read = True
        self._cache_data = self._cache_label = self._cache_idx = None

    def next_sample(self):
        """(label, encoded image) of the next image."""
        if self._allow_read is False:
            raise StopIteration
        if self.seq is None:
            s = self.imgrec.read()
            if s is None:
                if self.last_batch_handle != 'discard':
                    self.imgrec.reset()
                raise StopIteration
            header, img = recordio.unpack(s)
            return header.label, img
        if self.cur >= self.num_image:
            if self.last_batch_handle != 'discard':
                self.cur = 0
            raise StopIteration
        idx = self.seq[self.cur]
        self.cur += 1
        if self.imgrec is not None:
            header, img = recordio.unpack(self.imgrec.read_idx(idx))
            return (header.label if self.imglist is None else self.imglist[idx][0]), img
        label, fname = self.imglist[idx]
        return label, self.read_image(fname)

    def _batchify(self, batch_data, batch_label, start=0):
        i = start
        try:
            while i < self.batch_size:
                label, s = self.next_sample()
                data = self.imdecode(s)
                try:
                    self.check_valid_image(data)
                except RuntimeError as e:
                    logging.debug('Invalid image, skipping:  %s', str(e))
                    continue
                data = self.augmentation_transform(data)
                assert i < self.batch_size, 'Batch size must be multiples of augmenter output length'
                batch_data[i] = self.postprocess_data(data)
                batch_label[i] = label
                i += 1
        except StopIteration:
            if not i:
                raise StopIteration
        return i

    def next(self):
        c, h, w = self.data_shape
        if self._cache_data is not None:
            batch_data, batch_label, i = self._cache_data, self._cache_label, self._cache_idx
        else:
            batch_data = nd.zeros((self.batch_size, c, h, w))
            batch_label = self._label_batch()
            i = self._batchify(batch_data, batch_label)
        pad = self.batch_size - i
        if pad != 0:
            if self.last_batch_handle == 'discard':
                raise StopIteration
            if self.last_batch_handle == 'roll_over' and self._cache_data is None:
                self._cache_data, self._cache_label, self._cache_idx = batch_data, batch_label, i
                raise StopIteration
            self._batchify(batch_data, batch_label, i)
            if self.last_batch_handle == 'pad':
                self._allow_read = False
            else:
                self._cache_data = self._cache_label = self._cache_idx = None
        return io.DataBatch([batch_data], [batch_label], pad=pad)

    def _label_batch(self):
        """The array a batch's labels are written into."""
        return nd.empty(self.provide_label[0][1])

    def check_data_shape(self, data_shape):
        """Refuses a data_shape that is not (3, height, width)."""
        if not len(data_shape) == 3:
            raise ValueError('data_shape should have length 3, with dimensions CxHxW')
        if not data_shape[0] == 3:
            raise ValueError('This iterator expects inputs to have 3 channels.')

    def check_valid_image(self, data):
        """Raises RuntimeError for an image with no pixels."""
        if len(data[0].shape) == 0:
            raise RuntimeError('Data shape is wrong')

    def imdecode(self, s):
        """Decodes an image, naming the record or file in the error."""
        try:
            return imdecode(s)
        except Exception as e:
            if self.seq is not None:
                idx = self.seq[(self.cur % self.num_image) - 1]
            else:
                idx = (self.cur % self.num_image) - 1 if self.num_image else self.cur - 1
            where = ("filename: {}".format(self.imglist[idx][1]) if self.imglist is not None
                     else "index: {}".format(idx))
            raise RuntimeError("Broken image {}, {}".format(where, e))

    def read_image(self, fname):
        """The bytes of image file ``fname`` under path_root."""
        with open(os.path.join(self.path_root, fname), 'rb') as fin:
            return fin.read()

    def augmentation_transform(self, data):
        """The augmenters, in order."""
        for aug in self.auglist:
            data = aug(data)
        return data

    def postprocess_data(self, datum):
        """(height, width, channels) to (channels, height, width)."""
        return nd.transpose(datum, axes=(2, 0, 1))
