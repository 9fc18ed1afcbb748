"""Object detection's augmenters and iterator (MXNet 1.9.1's ``mx.image.detection``).

A label is an (objects, width) array of rows [class, xmin, ymin, xmax, ymax, extra...], corners
relative to the image (0 to 1); a detection augmenter maps (image, label) to (image, label), moving
the boxes with the pixels. ImageDetIter reads images and their packed labels ([header width,
object width, header extras..., objects...], as MXNet's im2rec writes them) and gives batches of
labels padded with -1 rows to the most objects of any image.

The random choices are drawn from Python's ``random`` in MXNet's order, so that a script seeded
alike augments alike."""
import json
import logging
import random
import warnings
from math import sqrt

import numpy as np

from .. import ndarray as nd
from .image import (Augmenter, CastAug, ColorJitterAug, ColorNormalizeAug, ForceResizeAug, HueJitterAug, ImageIter,
                    LightingAug, RandomGrayAug, ResizeAug, copyMakeBorder, fixed_crop)

__all__ = ["DetAugmenter", "DetBorrowAug", "DetRandomSelectAug", "DetHorizontalFlipAug", "DetRandomCropAug",
           "DetRandomPadAug", "CreateMultiRandCropAugmenter", "CreateDetAugmenter", "ImageDetIter"]

_numbers = (int, float, np.integer, np.floating)


def _as_range(value, what, where):
    """A (low, high) pair from a pair or one number (then both ends)."""
    if isinstance(value, (tuple, list)):
        return value
    assert isinstance(value, _numbers)
    logging.info('Using fixed %s: %s in %s', what, str(value), where)
    return (value, value)


class DetAugmenter(object):
    """The base of the detection augmenters: ``__call__(src, label)`` gives (src, label)."""

    def __init__(self, **kwargs):
        self._kwargs = {}
        for k, v in kwargs.items():
            if isinstance(v, nd.NDArray):
                v = v.asnumpy()
            self._kwargs[k] = v.tolist() if isinstance(v, np.ndarray) else v

    def dumps(self):
        """The augmenter as JSON: [its lower-case class name, its arguments]."""
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])

    def __call__(self, src, label):
        raise NotImplementedError("Must override implementation.")


class DetBorrowAug(DetAugmenter):
    """An image-only Augmenter (mx.image's) used where the label does not change."""

    def __init__(self, augmenter):
        if not isinstance(augmenter, Augmenter):
            raise TypeError('Borrowing from invalid Augmenter')
        super(DetBorrowAug, self).__init__(augmenter=augmenter.dumps())
        self.augmenter = augmenter

    def dumps(self):
        return [self.__class__.__name__.lower(), self.augmenter.dumps()]

    def __call__(self, src, label):
        return (self.augmenter(src), label)


class DetRandomSelectAug(DetAugmenter):
    """One of ``aug_list`` at random, or none with probability ``skip_prob`` (always none for an
    empty list)."""

    def __init__(self, aug_list, skip_prob=0):
        super(DetRandomSelectAug, self).__init__(skip_prob=skip_prob)
        aug_list = list(aug_list) if isinstance(aug_list, (list, tuple)) else [aug_list]
        if any(not isinstance(a, DetAugmenter) for a in aug_list):
            raise ValueError('Allow DetAugmenter in list only')
        self.aug_list = aug_list
        self.skip_prob = skip_prob if aug_list else 1

    def dumps(self):
        return [self.__class__.__name__.lower(), [a.dumps() for a in self.aug_list]]

    def __call__(self, src, label):
        if random.random() < self.skip_prob:
            return (src, label)
        random.shuffle(self.aug_list)
        return self.aug_list[0](src, label)


class DetHorizontalFlipAug(DetAugmenter):
    """Mirrors the image left to right, and the boxes with it, with probability ``p``."""

    def __init__(self, p):
        super(DetHorizontalFlipAug, self).__init__(p=p)
        self.p = p

    def __call__(self, src, label):
        if random.random() < self.p:
            src = nd.flip(src, axis=1)
            self._flip_label(label)
        return (src, label)

    def _flip_label(self, label):
        """xmin, xmax = 1 - xmax, 1 - xmin, in place."""
        left = 1.0 - label[:, 3]
        label[:, 3] = 1.0 - label[:, 1]
        label[:, 1] = left


def _areas(boxes):
    """The areas of rows [xmin, ymin, xmax, ymax, ...] (0 for an empty box)."""
    return np.maximum(0, boxes[:, 3] - boxes[:, 1]) * np.maximum(0, boxes[:, 2] - boxes[:, 0])


def _clipped(boxes, xmin, ymin, xmax, ymax):
    """Each box cut to the window; rows of zeros where nothing is left."""
    out = boxes.copy()
    out[:, 0] = np.maximum(boxes[:, 0], xmin)
    out[:, 1] = np.maximum(boxes[:, 1], ymin)
    out[:, 2] = np.minimum(boxes[:, 2], xmax)
    out[:, 3] = np.minimum(boxes[:, 3], ymax)
    out[(out[:, 0] >= out[:, 2]) | (out[:, 1] >= out[:, 3]), :] = 0
    return out


def _attempts(aug, height, width):
    """A crop's or pad's proposals (none when it is disabled): per attempt, the areas allowed, an
    aspect ratio drawn from its range, and the heights of the smallest and largest areas at it."""
    if not aug.enabled or height <= 0 or width <= 0:
        return
    min_area = aug.area_range[0] * height * width
    max_area = aug.area_range[1] * height * width
    for _ in range(aug.max_attempts):
        ratio = random.uniform(*aug.aspect_ratio_range)
        if ratio <= 0:
            continue
        yield min_area, max_area, ratio, int(round(sqrt(min_area / ratio))), int(round(sqrt(max_area / ratio)))


class DetRandomCropAug(DetAugmenter):
    """A random crop of the image that keeps at least ``min_object_covered`` of every object it
    touches, of an aspect ratio in ``aspect_ratio_range`` and a fraction ``area_range`` of the
    image; objects left with less than ``min_eject_coverage`` of their area are dropped. After
    ``max_attempts`` proposals that fail, the image stays whole."""

    def __init__(self, min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33), area_range=(0.05, 1.0),
                 min_eject_coverage=0.3, max_attempts=50):
        aspect_ratio_range = _as_range(aspect_ratio_range, 'aspect ratio', 'DetRandomCropAug')
        area_range = _as_range(area_range, 'area range', 'DetRandomCropAug')
        super(DetRandomCropAug, self).__init__(min_object_covered=min_object_covered,
                                               aspect_ratio_range=aspect_ratio_range, area_range=area_range,
                                               min_eject_coverage=min_eject_coverage, max_attempts=max_attempts)
        self.min_object_covered = min_object_covered
        self.min_eject_coverage = min_eject_coverage
        self.max_attempts = max_attempts
        self.aspect_ratio_range = aspect_ratio_range
        self.area_range = area_range
        self.enabled = False
        if area_range[1] <= 0 or area_range[0] > area_range[1]:
            warnings.warn('Skip DetRandomCropAug due to invalid area_range: %s' % (area_range,))
        elif aspect_ratio_range[0] > aspect_ratio_range[1] or aspect_ratio_range[0] <= 0:
            warnings.warn('Skip DetRandomCropAug due to invalid aspect_ratio_range: %s' % (aspect_ratio_range,))
        else:
            self.enabled = True

    def __call__(self, src, label):
        crop = self._random_crop_proposal(label, src.shape[0], src.shape[1])
        if crop:
            x, y, w, h, label = crop
            src = fixed_crop(src, x, y, w, h, None)
        return (src, label)

    def _satisfied(self, label, xmin, ymin, xmax, ymax, width, height):
        """Whether the window (pixels) keeps enough of every object it touches."""
        if (xmax - xmin) * (ymax - ymin) < 2:
            return False  # a pixel
        areas = _areas(label[:, 1:])
        kept = np.where(areas * width * height > 2)[0]
        if kept.size < 1:
            return False
        cut = _clipped(label[kept, 1:], float(xmin) / width, float(ymin) / height, float(xmax) / width,
                       float(ymax) / height)
        coverage = _areas(cut) / areas[kept]
        coverage = coverage[coverage > 0]
        return coverage.size > 0 and np.amin(coverage) > self.min_object_covered

    def _update_labels(self, label, crop_box, height, width):
        """The boxes relative to the crop (x, y, w, h in pixels), clipped to it; those left with
        too little of themselves dropped (None when none is left)."""
        x, y = float(crop_box[0]) / width, float(crop_box[1]) / height
        w, h = float(crop_box[2]) / width, float(crop_box[3]) / height
        out = label.copy()
        out[:, (1, 3)] = (out[:, (1, 3)] - x) / w
        out[:, (2, 4)] = (out[:, (2, 4)] - y) / h
        out[:, 1:5] = np.clip(out[:, 1:5], 0, 1)
        coverage = _areas(out[:, 1:]) * w * h / _areas(label[:, 1:])
        valid = (out[:, 3] > out[:, 1]) & (out[:, 4] > out[:, 2]) & (coverage > self.min_eject_coverage)
        if not valid.any():
            return None
        return out[valid, :]

    def _random_crop_proposal(self, label, height, width):
        """(x, y, w, h, new label) of an acceptable crop, or () when none was found."""
        for min_area, max_area, ratio, h, max_h in _attempts(self, height, width):
            if round(max_h * ratio) > width:
                max_h = int((width + 0.4999999) / ratio)  # the widest that still fits
            max_h = min(max_h, height)
            h = min(h, max_h)
            if h < max_h:
                h = random.randint(h, max_h)
            w = int(round(h * ratio))
            assert w <= width
            area = w * h
            if area < min_area:
                h += 1
                w = int(round(h * ratio))
                area = w * h
            if area > max_area:
                h -= 1
                w = int(round(h * ratio))
                area = w * h
            if not (min_area <= area <= max_area and 0 <= w <= width and 0 <= h <= height):
                continue
            y = random.randint(0, max(0, height - h))
            x = random.randint(0, max(0, width - w))
            if self._satisfied(label, x, y, x + w, y + h, width, height):
                new_label = self._update_labels(label, (x, y, w, h), height, width)
                if new_label is not None:
                    return (x, y, w, h, new_label)
        return ()


class DetRandomPadAug(DetAugmenter):
    """The image placed at random on a larger canvas filled with ``pad_val`` (an area
    ``area_range`` times the image's, an aspect ratio in ``aspect_ratio_range``), the boxes moved
    with it; unchanged after ``max_attempts`` proposals that fail."""

    def __init__(self, aspect_ratio_range=(0.75, 1.33), area_range=(1.0, 3.0), max_attempts=50,
                 pad_val=(128, 128, 128)):
        if not isinstance(pad_val, (list, tuple)):
            assert isinstance(pad_val, _numbers)
        aspect_ratio_range = _as_range(aspect_ratio_range, 'aspect ratio', 'DetRandomPadAug')
        area_range = _as_range(area_range, 'area range', 'DetRandomPadAug')
        super(DetRandomPadAug, self).__init__(aspect_ratio_range=aspect_ratio_range, area_range=area_range,
                                              max_attempts=max_attempts, pad_val=pad_val)
        self.pad_val = pad_val
        self.aspect_ratio_range = aspect_ratio_range
        self.area_range = area_range
        self.max_attempts = max_attempts
        self.enabled = False
        if area_range[1] <= 1.0 or area_range[0] > area_range[1]:
            warnings.warn('Skip DetRandomPadAug due to invalid parameters: %s' % (area_range,))
        elif aspect_ratio_range[0] <= 0 or aspect_ratio_range[0] > aspect_ratio_range[1]:
            warnings.warn('Skip DetRandomPadAug due to invalid aspect_ratio_range: %s' % (aspect_ratio_range,))
        else:
            self.enabled = True

    def __call__(self, src, label):
        height, width, _ = src.shape
        pad = self._random_pad_proposal(label, height, width)
        if pad:
            x, y, w, h, label = pad
            values = self.pad_val if isinstance(self.pad_val, (list, tuple)) else (self.pad_val,) * src.shape[2]
            src = copyMakeBorder(src, y, h - y - height, x, w - x - width, 16, values=values)
        return (src, label)

    def _update_labels(self, label, pad_box, height, width):
        out = label.copy()
        out[:, (1, 3)] = (out[:, (1, 3)] * width + pad_box[0]) / pad_box[2]
        out[:, (2, 4)] = (out[:, (2, 4)] * height + pad_box[1]) / pad_box[3]
        return out

    def _random_pad_proposal(self, label, height, width):
        """(x, y, w, h, new label): the canvas's size and the image's place on it, or ()."""
        for _, _, ratio, h, max_h in _attempts(self, height, width):
            if round(h * ratio) < width:
                h = int((width + 0.499999) / ratio)  # at least as wide as the image
            h = max(h, height)
            h = min(h, max_h)
            if h < max_h:
                h = random.randint(h, max_h)
            w = int(round(h * ratio))
            if (h - height) < 2 or (w - width) < 2:
                continue  # a border this thin is no help
            y = random.randint(0, max(0, h - height))
            x = random.randint(0, max(0, w - width))
            return (x, y, w, h, self._update_labels(label, (x, y, w, h), height, width))
        return ()


def CreateMultiRandCropAugmenter(min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33), area_range=(0.05, 1.0),
                                 min_eject_coverage=0.3, max_attempts=50, skip_prob=0):
    """A DetRandomSelectAug over DetRandomCropAugs: each argument may be a list, one crop
    augmenter per position (the single values repeated)."""
    params = [p if isinstance(p, list) else [p]
              for p in (min_object_covered, aspect_ratio_range, area_range, min_eject_coverage, max_attempts)]
    count = max(len(p) for p in params)
    for p in params:
        assert len(p) in (1, count), "CreateMultiRandCropAugmenter: lists of different lengths"
    params = [p * count if len(p) == 1 else p for p in params]
    augs = [DetRandomCropAug(min_object_covered=moc, aspect_ratio_range=arr, area_range=ar,
                             min_eject_coverage=mec, max_attempts=ma) for moc, arr, ar, mec, ma in zip(*params)]
    return DetRandomSelectAug(augs, skip_prob=skip_prob)


def CreateDetAugmenter(data_shape, resize=0, rand_crop=0, rand_pad=0, rand_gray=0, rand_mirror=False, mean=None,
                       std=None, brightness=0, contrast=0, saturation=0, pca_noise=0, hue=0, inter_method=2,
                       min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33), area_range=(0.05, 3.0),
                       min_eject_coverage=0.3, max_attempts=50, pad_val=(127, 127, 127)):
    """MXNet's standard detection augmenters, in its order: resize, random crop (probability
    ``rand_crop``), mirror, random pad (``rand_pad``), the forced resize to ``data_shape``,
    float32, colour jitter, hue, lighting (``pca_noise``), gray (``rand_gray``) and normalisation
    (``mean``/``std``, True for ImageNet's)."""
    augs = []
    if resize > 0:
        augs.append(DetBorrowAug(ResizeAug(resize, inter_method)))
    if rand_crop > 0:
        augs.append(CreateMultiRandCropAugmenter(min_object_covered, aspect_ratio_range, area_range,
                                                 min_eject_coverage, max_attempts, skip_prob=(1 - rand_crop)))
    if rand_mirror > 0:
        augs.append(DetHorizontalFlipAug(0.5))
    if rand_pad > 0:  # as late as it can be: the canvas costs pixels
        pad = DetRandomPadAug(aspect_ratio_range, (1.0, area_range[1]), max_attempts, pad_val)
        augs.append(DetRandomSelectAug([pad], 1 - rand_pad))
    augs.append(DetBorrowAug(ForceResizeAug((data_shape[2], data_shape[1]), inter_method)))
    augs.append(DetBorrowAug(CastAug()))
    if brightness or contrast or saturation:
        augs.append(DetBorrowAug(ColorJitterAug(brightness, contrast, saturation)))
    if hue:
        augs.append(DetBorrowAug(HueJitterAug(hue)))
    if pca_noise > 0:
        from .image import _EIGVAL, _EIGVEC
        augs.append(DetBorrowAug(LightingAug(pca_noise, _EIGVAL, _EIGVEC)))
    if rand_gray > 0:
        augs.append(DetBorrowAug(RandomGrayAug(rand_gray)))
    if mean is True:
        mean = np.array([123.68, 116.28, 103.53])
    elif mean is not None:
        assert isinstance(mean, np.ndarray) and mean.shape[0] in [1, 3]
    if std is True:
        std = np.array([58.395, 57.12, 57.375])
    elif std is not None:
        assert isinstance(std, np.ndarray) and std.shape[0] in [1, 3]
    if mean is not None or std is not None:
        augs.append(DetBorrowAug(ColorNormalizeAug(mean, std)))
    return augs


class ImageDetIter(ImageIter):
    """Batches of augmented images and their object labels, (batch, objects, width), padded
    with -1 rows; ``aug_list`` defaults to CreateDetAugmenter(data_shape, **kwargs). The label
    shape is the most objects of any image (read once at construction)."""

    def __init__(self, batch_size, data_shape, path_imgrec=None, path_imglist=None, path_root=None,
                 path_imgidx=None, shuffle=False, part_index=0, num_parts=1, aug_list=None, imglist=None,
                 data_name='data', label_name='label', last_batch_handle='pad', **kwargs):
        super(ImageDetIter, self).__init__(batch_size=batch_size, data_shape=data_shape, path_imgrec=path_imgrec,
                                           path_imglist=path_imglist, path_root=path_root, path_imgidx=path_imgidx,
                                           shuffle=shuffle, part_index=part_index, num_parts=num_parts, aug_list=[],
                                           imglist=imglist, data_name=data_name, label_name=label_name,
                                           last_batch_handle=last_batch_handle)
        self.auglist = CreateDetAugmenter(data_shape, **kwargs) if aug_list is None else aug_list
        label_shape = self._estimate_label_shape()
        self.provide_label = [(label_name, (self.batch_size, label_shape[0], label_shape[1]))]
        self.label_shape = label_shape

    def _check_valid_label(self, label):
        """Raises RuntimeError unless some row is an object with a box."""
        if len(label.shape) != 2 or label.shape[1] < 5:
            raise RuntimeError("Label with shape (1+, 5+) required, %s received." % str(label))
        if not ((label[:, 0] >= 0) & (label[:, 3] > label[:, 1]) & (label[:, 4] > label[:, 2])).any():
            raise RuntimeError('Invalid label occurs.')

    def _estimate_label_shape(self):
        """(the most objects of any image, the object width), from one pass over the data."""
        most, width = 0, 0
        self.reset()
        try:
            while True:
                label, _ = self.next_sample()
                label = self._parse_label(label)
                most, width = max(most, label.shape[0]), label.shape[1]
        except StopIteration:
            pass
        self.reset()
        return (most, width)

    def _parse_label(self, label):
        """The (objects, width) rows of a packed label, those with a box."""
        if isinstance(label, nd.NDArray):
            label = label.asnumpy()
        raw = np.asarray(label).ravel()
        if raw.size < 7:
            raise RuntimeError("Label shape is invalid: " + str(raw.shape))
        header_width, obj_width = int(raw[0]), int(raw[1])
        if (raw.size - header_width) % obj_width != 0:
            raise RuntimeError("Label shape %s inconsistent with annotation width %d." % (str(raw.shape), obj_width))
        out = np.reshape(raw[header_width:], (-1, obj_width))
        valid = (out[:, 3] > out[:, 1]) & (out[:, 4] > out[:, 2])
        if not valid.any():
            raise RuntimeError('Encounter sample with no valid label.')
        return out[valid, :]

    def reshape(self, data_shape=None, label_shape=None):
        """Changes the data shape (channels, height, width) and the label shape (objects,
        width); the objects may only grow."""
        if data_shape is not None:
            self.check_data_shape(data_shape)
            self.provide_data = [(self.provide_data[0][0], (self.batch_size,) + data_shape)]
            self.data_shape = data_shape
        if label_shape is not None:
            self.check_label_shape(label_shape)
            self.provide_label = [(self.provide_label[0][0], (self.batch_size,) + label_shape)]
            self.label_shape = label_shape

    def _batchify(self, batch_data, batch_label, start=0):
        i = start
        try:
            while i < self.batch_size:
                label, s = self.next_sample()
                data = self.imdecode(s)
                try:
                    self.check_valid_image([data])
                    label = self._parse_label(label)
                    data, label = self.augmentation_transform(data, label)
                    self._check_valid_label(label)
                except RuntimeError as e:
                    logging.debug('Invalid image, skipping:  %s', str(e))
                    continue
                batch_data[i] = self.postprocess_data(data)
                count = label.shape[0]
                batch_label[i][0:count] = nd.array(label)
                if count < batch_label[i].shape[0]:
                    batch_label[i][count:] = -1
                i += 1
        except StopIteration:
            if not i:
                raise StopIteration
        return i

    def _label_batch(self):
        labels = nd.empty(self.provide_label[0][1])
        labels[:] = -1  # rows past an image's objects
        return labels

    def augmentation_transform(self, data, label):  # pylint: disable=arguments-differ
        for aug in self.auglist:
            data, label = aug(data, label)
        return (data, label)

    def check_label_shape(self, label_shape):
        """Refuses a label shape that is not (objects, width), has fewer objects than now, or
        another width."""
        if not len(label_shape) == 2:
            raise ValueError('label_shape should have length 2')
        if label_shape[0] < self.label_shape[0]:
            raise ValueError('Attempts to reduce label count from %d to %d, not allowed.'
                             % (self.label_shape[0], label_shape[0]))
        if label_shape[1] != self.provide_label[0][1][2]:
            raise ValueError('label_shape object width inconsistent: %d vs %d.'
                             % (self.provide_label[0][1][2], label_shape[1]))

    def draw_next(self, color=None, thickness=2, mean=None, std=None, clip=True, waitKey=None,
                  window_name='draw_next', id2labels=None):
        """Images with their boxes drawn (needs OpenCV's cv2, as MXNet's does; without it, a
        warning and nothing)."""
        try:
            import cv2
        except ImportError as e:
            warnings.warn('Unable to import cv2, skip drawing: %s' % str(e))
            return
        while True:
            try:
                label, s = self.next_sample()
            except StopIteration:
                return
            data = self.imdecode(s)
            try:
                self.check_valid_image([data])
                label = self._parse_label(label)
            except RuntimeError as e:
                logging.debug('Invalid image, skipping:  %s', str(e))
                continue
            data, label = self.augmentation_transform(data, label)
            image = data.asnumpy()
            if std is True:
                std = np.array([58.395, 57.12, 57.375])
            if std is not None:
                image = image * std
            if mean is True:
                mean = np.array([123.68, 116.28, 103.53])
            if mean is not None:
                image = image + mean
            image = image[:, :, ::-1]  # RGB to OpenCV's BGR
            if clip:
                image = np.clip(image, 0, 255)
            bgr = color[::-1] if color else None
            image = np.ascontiguousarray(image.astype(np.uint8))
            height, width, _ = image.shape
            for row in label:
                x1 = int(row[1] * width)
                if x1 < 0:
                    continue
                y1, x2, y2 = int(row[2] * height), int(row[3] * width), int(row[4] * height)
                cv2.rectangle(image, (x1, y1), (x2, y2), bgr or np.random.rand(3) * 255, thickness)
                if id2labels is not None and int(row[0]) in id2labels:
                    text = "{:s}".format(id2labels[int(row[0])])
                    size = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.5, 2)[0][1]
                    cv2.putText(image, text, (x1 + 5, y1 + size + 5), cv2.FONT_HERSHEY_SIMPLEX, 0.5,
                                (255, 255, 255), 2)
            if waitKey is not None:
                cv2.imshow(window_name, image)
                cv2.waitKey(waitKey)
            yield image

    def sync_label_shape(self, it, verbose=False):
        """Gives this iterator and ``it`` (another ImageDetIter, e.g. validation) the same label
        shape, the larger object count; returns ``it``."""
        assert isinstance(it, ImageDetIter), 'Synchronize with invalid iterator.'
        mine, theirs = self.label_shape, it.label_shape
        assert mine[1] == theirs[1], "object width mismatch."
        most = max(mine[0], theirs[0])
        if most > mine[0]:
            self.reshape(None, (most, mine[1]))
        if most > theirs[0]:
            it.reshape(None, (most, theirs[1]))
        if verbose and most > min(mine[0], theirs[0]):
            logging.info('Resized label_shape to (%d, %d).', most, mine[1])
        return it
