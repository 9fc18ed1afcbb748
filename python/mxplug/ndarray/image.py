"""Image operators on arrays (MXNet 1.9.1's ``mx.nd.image``): the registered ``_image_<x>``
operators under their short names, added here by ``register.populate``: ``to_tensor``,
``normalize``, ``crop``, ``resize``, ``flip_left_right``, ``flip_top_bottom``,
``adjust_lighting`` and the random ones (``random_flip_left_right``, ``random_flip_top_bottom``,
``random_brightness``, ``random_contrast``, ``random_saturation``, ``random_hue``,
``random_color_jitter``, ``random_lighting``), which draw from the device's random stream
(``mx.random.seed``). Images are (height, width, channels); ``to_tensor``, ``resize`` and ``crop``
also take a batch (N, H, W, C), and ``normalize`` takes (C, H, W) or (N, C, H, W). The same
operators are in ``mx.sym.image``."""
