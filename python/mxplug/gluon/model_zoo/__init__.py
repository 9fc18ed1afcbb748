"""Gluon's model zoo (MXNet 1.9.1's ``mx.gluon.model_zoo``): the architectures, with MXNet's
block structure, so that its parameter files load (``vision``)."""
from . import model_store, vision
