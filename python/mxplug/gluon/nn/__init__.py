"""Gluon's layers (MXNet 1.9.1's ``mx.gluon.nn``)."""
from ..block import Block, HybridBlock, SymbolBlock
from .activations import ELU, GELU, LeakyReLU, PReLU, SELU, Swish
from .basic_layers import (Activation, BatchNorm, BatchNormReLU, Dense, Dropout, Embedding, Flatten, GroupNorm, HybridLambda,
                           HybridSequential, InstanceNorm, Lambda, LayerNorm, Sequential)
from .conv_layers import (AvgPool1D, AvgPool2D, AvgPool3D, Conv1D, Conv1DTranspose, Conv2D, Conv2DTranspose, Conv3D,
                          Conv3DTranspose, GlobalAvgPool1D, GlobalAvgPool2D, GlobalAvgPool3D, GlobalMaxPool1D,
                          GlobalMaxPool2D, GlobalMaxPool3D, MaxPool1D, MaxPool2D, MaxPool3D, ReflectionPad2D)
from . import activations, basic_layers, conv_layers
