"""Modules (MXNet's ``mx.mod``): a Symbol bound, initialised, trained and run as one model;
one Module per bucket of a sequence length; chains of modules; modules written in Python."""
from .base_module import BaseModule
from .bucketing_module import BucketingModule
from .module import Module
from .python_module import PythonLossModule, PythonModule
from .sequential_module import SequentialModule

__all__ = ["BaseModule", "Module", "BucketingModule", "SequentialModule", "PythonModule", "PythonLossModule"]
