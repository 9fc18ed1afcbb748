"""Modules (MXNet's ``mx.mod``): a Symbol bound, initialised, trained and run as one model."""
from .base_module import BaseModule
from .module import Module

__all__ = ["BaseModule", "Module"]
