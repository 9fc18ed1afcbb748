"""Modules (MXNet's ``mx.mod``): a Symbol bound, initialised, trained and run as one model;
chains of modules; modules written in Python."""
from .base_module import BaseModule
from .module import Module
from .python_module import PythonLossModule, PythonModule
from .sequential_module import SequentialModule

__all__ = ["BaseModule", "Module", "SequentialModule", "PythonModule", "PythonLossModule"]
