"""Gluon, MXNet 1.x's imperative layer API (``mx.gluon``): Parameters and Blocks, layers
(``nn``), losses, the Trainer, data loading and helpers, with MXNet 1.9.1's names, defaults,
parameter naming and file formats (docs/python.md, "Gluon")."""
from . import contrib, data, loss, model_zoo, nn, rnn, utils
from .block import Block, HybridBlock, SymbolBlock
from .parameter import Constant, DeferredInitializationError, Parameter, ParameterDict
from .trainer import Trainer
from . import block, parameter, trainer
