"""Images (MXNet 1.9.1's ``mx.image``): decoding, resizing, cropping and colour functions on
(height, width, channels) NDArrays, the Augmenters, CreateAugmenter and ImageIter."""
from .image import *  # noqa: F401,F403
from . import image
