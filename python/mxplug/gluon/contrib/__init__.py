"""The part of MXNet's ``mx.gluon.contrib`` that its model zoo builds on and its users import
(``contrib.nn``'s Concurrent, HybridConcurrent and Identity); the rest of contrib is excluded
(tests/python/mxnet_exclusions.txt)."""
from . import nn
