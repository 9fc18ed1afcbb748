"""Image transforms on arrays (MXNet 1.9.1's ``mx.nd.image``): ``to_tensor``, ``normalize``,
``resize``, ``crop``, the flips, ``adjust_lighting`` and the random brightness, contrast,
saturation, flips and lighting, on (height, width, channels) images (``to_tensor``, ``resize`` and
``crop`` take a batch (N, H, W, C) too; ``normalize`` takes (C, H, W) or (N, C, H, W)).

``to_tensor``, ``normalize``, the flips and ``crop`` are the registered ``_image_*`` operators
(also in ``mx.sym.image``); ``resize``, ``adjust_lighting`` and the random ones are Python
functions over other operators and the core's resampler, so they run imperatively only and the
random ones draw from mxplug's generator (``mx.random.seed``). uint8 images stay uint8: results are clipped to
[0, 255] and truncated, as MXNet's."""
import numpy as np

from ..base import MXNetError
from . import ndarray as _nd
from .ndarray import _invoke

__all__ = ["to_tensor", "normalize", "resize", "crop", "flip_left_right", "flip_top_bottom",
           "random_flip_left_right", "random_flip_top_bottom", "random_brightness", "random_contrast",
           "random_saturation", "random_hue", "random_color_jitter", "adjust_lighting", "random_lighting"]

# RGB luma weights (ITU-R 601) and ImageNet's RGB PCA, as MXNet's image operators use them.
_LUMA = np.array([0.299, 0.587, 0.114])
_EIGVAL = np.array([55.46, 4.794, 1.148])
_EIGVEC = np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140], [-0.5836, -0.6948, 0.4203]])


def _op(name, *args, **kwargs):
    return _invoke(name, list(args), **kwargs)


def _image(data, where, batch=False):
    if data.ndim != 3 and not (batch and data.ndim == 4):
        raise MXNetError("%s: the image has shape %s; expected (height, width, channels)%s"
                             % (where, data.shape, " or (N, height, width, channels)" if batch else ""))


def _finish(values, like, out=None):
    """``values`` (float) as ``like``'s dtype: clipped and truncated for uint8."""
    if like.dtype == np.uint8:
        values = _op("clip", values, a_min=0.0, a_max=255.0)
    result = values.astype(like.dtype) if values.dtype != like.dtype else values
    if out is not None:
        out[:] = result
        return out
    return result


def to_tensor(data, out=None):
    """(H, W, C) or (N, H, W, C) in [0, 255] to (C, H, W) or (N, C, H, W) float32 in [0, 1]."""
    return _invoke("_image_to_tensor", [data], out=out)


def normalize(data, mean=(0.0, 0.0, 0.0, 0.0), std=(1.0, 1.0, 1.0, 1.0), out=None):
    """(x - mean[c]) / std[c] for (C, H, W) or (N, C, H, W) data; one mean or std serves every
    channel."""
    as_tuple = (lambda v: tuple(float(e) for e in np.asarray(v, dtype=np.float64).ravel()))
    return _invoke("_image_normalize", [data], out=out, mean=as_tuple(mean), std=as_tuple(std))


def _resize_one(pixels, w, h, interp):
    from ..image.image import _resized
    return _resized(pixels, w, h, interp)


def resize(data, size=(), keep_ratio=False, interp=1, out=None):
    """Resizes (H, W, C) or (N, H, W, C) images to ``size``: (width, height), or one number for
    both, or with ``keep_ratio`` the shorter edge (the other edge scaled and truncated)."""
    _image(data, "resize", batch=True)
    h, w = data.shape[-3:-1]
    size = tuple(size) if isinstance(size, (tuple, list)) else (size,)
    if len(size) == 1:
        if keep_ratio:
            new_h, new_w = (size[0], int(w * size[0] / h)) if h <= w else (int(h * size[0] / w), size[0])
        else:
            new_h, new_w = size[0], size[0]
    elif len(size) == 2:
        new_w, new_h = size
    else:
        raise MXNetError("resize: size is %s; expected (width, height) or one number" % (size,))
    pixels = data.asnumpy()
    if data.ndim == 3:
        result = _resize_one(pixels, new_w, new_h, interp)
    else:
        result = np.stack([_resize_one(p, new_w, new_h, interp) for p in pixels])
    return _finish(_nd.array(result, ctx=data.context, dtype=data.dtype), data, out)


def crop(data, x, y, width, height, out=None):
    """The (width, height) window at column x, row y of (H, W, C) or (N, H, W, C) images."""
    return _invoke("_image_crop", [data], out=out, x=x, y=y, width=width, height=height)


def flip_left_right(data, out=None):
    """The image mirrored left to right."""
    return _invoke("_image_flip_left_right", [data], out=out)


def flip_top_bottom(data, out=None):
    """The image upside down."""
    return _invoke("_image_flip_top_bottom", [data], out=out)


def _uniform(low, high):
    from . import random as _random
    return float(_random.uniform(low, high, shape=(1,)).asscalar())


def random_flip_left_right(data, out=None):
    """flip_left_right with probability 0.5."""
    _image(data, "random_flip_left_right")
    return flip_left_right(data, out) if _uniform(0, 1) < 0.5 else _finish(data.copy(), data, out)


def random_flip_top_bottom(data, out=None):
    """flip_top_bottom with probability 0.5."""
    _image(data, "random_flip_top_bottom")
    return flip_top_bottom(data, out) if _uniform(0, 1) < 0.5 else _finish(data.copy(), data, out)


def _brightness(x, alpha):
    return x * alpha


def _contrast(x, alpha):
    # blended with the image's mean luma
    gray = float((x.asnumpy().astype(np.float64) * _LUMA).sum(axis=2).mean())
    return x * alpha + (1 - alpha) * gray


def _saturation(x, alpha):
    # blended with each pixel's luma (MXNet 1.9.1's kernel takes 0.114 * blue alone as the luma,
    # a bug not copied: docs/python.md)
    gray = _op("sum", _op("broadcast_mul", x, _nd.array(_LUMA.reshape(1, 1, 3), ctx=x.context)), axis=2,
               keepdims=True)
    return _op("broadcast_add", x * alpha, gray * (1 - alpha))


def _hue(x, alpha):
    # Each pixel's hue turned by alpha - 1 turns, in HLS space (as MXNet's: a factor of 1.1 turns
    # red 36 degrees towards yellow); lightness and saturation kept.
    rgb = x.asnumpy().astype(np.float64) / 255.0
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    hi, lo = rgb.max(axis=-1), rgb.min(axis=-1)
    light = (hi + lo) / 2
    span = hi - lo
    grey = span == 0
    safe = np.where(grey, 1.0, span)
    sat = np.where(grey, 0.0, np.where(light <= 0.5, span / np.where(grey, 1.0, hi + lo),
                                       span / np.where(grey, 1.0, 2.0 - hi - lo)))
    rc, gc, bc = (hi - r) / safe, (hi - g) / safe, (hi - b) / safe
    hue = np.where(r == hi, bc - gc, np.where(g == hi, 2.0 + rc - bc, 4.0 + gc - rc))
    hue = np.where(grey, 0.0, (hue / 6.0) % 1.0)
    hue = (hue + (alpha - 1.0)) % 1.0
    m2 = np.where(light <= 0.5, light * (1.0 + sat), light + sat - light * sat)
    m1 = 2.0 * light - m2

    def channel(h):
        h = h % 1.0
        return np.where(h < 1 / 6.0, m1 + (m2 - m1) * h * 6.0,
                        np.where(h < 0.5, m2, np.where(h < 2 / 3.0, m1 + (m2 - m1) * (2 / 3.0 - h) * 6.0, m1)))
    out = np.stack([channel(hue + 1 / 3.0), channel(hue), channel(hue - 1 / 3.0)], axis=-1)
    out = np.where(grey[..., None], light[..., None], out) * 255.0
    return _nd.array(out, ctx=x.context, dtype='float32')


def _jitter(data, where, step, min_factor, max_factor, out):
    _image(data, where)
    return _finish(step(data.astype('float32'), _uniform(min_factor, max_factor)), data, out)


def random_brightness(data, min_factor, max_factor, out=None):
    """The image times a factor drawn from [min_factor, max_factor]."""
    return _jitter(data, "random_brightness", _brightness, min_factor, max_factor, out)


def random_contrast(data, min_factor, max_factor, out=None):
    """alpha * image + (1 - alpha) * its mean luma, alpha drawn from [min_factor, max_factor]."""
    return _jitter(data, "random_contrast", _contrast, min_factor, max_factor, out)


def random_saturation(data, min_factor, max_factor, out=None):
    """alpha * image + (1 - alpha) * each pixel's luma, alpha from [min_factor, max_factor]."""
    return _jitter(data, "random_saturation", _saturation, min_factor, max_factor, out)


def random_hue(data, min_factor, max_factor, out=None):
    """Each pixel's hue turned by alpha - 1 turns, alpha drawn from [min_factor, max_factor]."""
    return _jitter(data, "random_hue", _hue, min_factor, max_factor, out)


def random_color_jitter(data, brightness, contrast, saturation, hue, out=None):
    """Brightness, contrast, saturation and hue jitters (factors in [max(0, 1 - v), 1 + v] for
    each v > 0) in a random order."""
    _image(data, "random_color_jitter")
    steps = [(s, v) for s, v in ((_brightness, brightness), (_contrast, contrast), (_saturation, saturation),
                                 (_hue, hue)) if v > 0]
    x = data.astype('float32')
    for i in np.argsort([_uniform(0, 1) for _ in steps], kind='stable'):
        step, v = steps[i]
        x = step(x, _uniform(max(0.0, 1 - v), 1 + v))
    return _finish(x, data, out)


def adjust_lighting(data, alpha, out=None):
    """AlexNet's lighting: the image plus ImageNet's RGB eigenvectors weighted by alpha (three
    numbers) times their eigenvalues."""
    _image(data, "adjust_lighting")
    shift = np.dot(_EIGVEC * np.asarray(alpha, dtype=np.float64), _EIGVAL)
    shifted = _op("broadcast_add", data.astype('float32'), _nd.array(shift.reshape(1, 1, 3), ctx=data.context))
    return _finish(shifted, data, out)


def random_lighting(data, alpha_std=0.05, out=None):
    """adjust_lighting with alpha drawn from normal(0, alpha_std)."""
    from . import random as _random
    alpha = _random.normal(0, alpha_std, shape=(3,)).asnumpy()
    return adjust_lighting(data, alpha, out)
