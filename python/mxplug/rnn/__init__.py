"""MXNet 1.x's legacy symbolic recurrent API (``mx.rnn``): cells that build unrolled Symbol
graphs, BucketSentenceIter for BucketingModule, and checkpoints with per-gate weights."""
from . import io, rnn, rnn_cell
from .io import BucketSentenceIter, encode_sentences
from .rnn import do_rnn_checkpoint, load_rnn_checkpoint, save_rnn_checkpoint
from .rnn_cell import (BaseConvRNNCell, BaseRNNCell, BidirectionalCell, ConvGRUCell, ConvLSTMCell, ConvRNNCell,
                       DropoutCell, FusedRNNCell, GRUCell, LSTMCell, ModifierCell, ResidualCell,
                       RNNCell, RNNParams, SequentialRNNCell, ZoneoutCell, rnn_unroll)
