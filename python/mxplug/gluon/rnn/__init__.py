"""Gluon's recurrent cells and layers (MXNet 1.9.1's ``mx.gluon.rnn``)."""
from .rnn_cell import (BidirectionalCell, DropoutCell, GRUCell, HybridRecurrentCell, HybridSequentialRNNCell,
                       LSTMCell, ModifierCell, RecurrentCell, ResidualCell, RNNCell, SequentialRNNCell, ZoneoutCell)
from .rnn_layer import GRU, LSTM, RNN
from . import rnn_cell, rnn_layer
