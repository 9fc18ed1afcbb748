"""Images (MXNet 1.9.1's ``mx.image``): decoding, resizing, cropping and colour functions on
(height, width, channels) NDArrays, the Augmenters, CreateAugmenter and ImageIter, and object
detection's augmenters and ImageDetIter (``mx.image.detection``)."""
from .image import *  # noqa: F401,F403
from .detection import *  # noqa: F401,F403
from . import image
from . import detection
