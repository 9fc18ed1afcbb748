"""Image operators on symbols (MXNet's ``mx.sym.image``): the registered ``_image_<x>``
operators under their short names (as in ``mx.nd.image``); added here by ``register.populate``."""
