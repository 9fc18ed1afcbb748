"""Blocks that run their children side by side (MXNet 1.9.1's ``gluon.contrib.nn``)."""
from .basic_layers import Concurrent, HybridConcurrent, Identity
