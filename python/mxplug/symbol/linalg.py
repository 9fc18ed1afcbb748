"""Linear algebra on symbols (MXNet's ``mx.sym.linalg``): the ``_linalg_<x>`` operators under their
short names, as in ``mx.nd.linalg``; added here by ``register.populate``."""
