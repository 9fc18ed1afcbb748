"""Image operators on symbols (MXNet's ``mx.sym.image``): the registered ``_image_<x>``
operators under their short names (``to_tensor``, ``normalize``, the flips, ``crop``); added here
by ``register.populate``."""
