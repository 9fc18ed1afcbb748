"""Gluon's recurrent layers (MXNet 1.9.1's ``mx.gluon.rnn.RNN``, ``LSTM``, ``GRU``): several
layers, optionally bidirectional, over a whole sequence, with MXNet's parameter names
(``l0_i2h_weight``... ``r1_h2h_bias``), state layout (layers x directions, N, hidden) and
``save_parameters`` names.

Note [Fused recurrent layers]: as MXNet's, a layer runs as the fused RNN operator (plugins/nn/rnn.h):
its parameters joined into one vector by ``_rnn_param_concat`` in MXNet's order, its states
passed and returned as (layers x directions, N, hidden) arrays, and a hybridized layer's graph
holds one RNN node whatever the sequence length. ``_unfuse`` gives the equivalent stack of cells
(MXNet's own), which is also what ``save_parameters`` names the parameters after.
"""
import re

from ... import ndarray as nd
from ... import symbol
from ..block import HybridBlock
from . import rnn_cell


class _RNNLayer(HybridBlock):
    def __init__(self, hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                 i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                 mode, projection_size, h2r_weight_initializer, lstm_state_clip_min, lstm_state_clip_max,
                 lstm_state_clip_nan, dtype, use_sequence_length=False, **kwargs):
        super(_RNNLayer, self).__init__(**kwargs)
        if layout not in ('TNC', 'NTC'):
            raise AssertionError("Invalid layout %s; must be one of ['TNC' or 'NTC']" % layout)
        if projection_size:
            raise NotImplementedError("%s: projection_size is not supported (MXNet 1.9.1 has it only with cuDNN)"
                                      % type(self).__name__)
        self._hidden_size = hidden_size
        self._projection_size = None
        self._num_layers = num_layers
        self._mode = mode
        self._layout = layout
        self._dropout = dropout
        self._dir = 2 if bidirectional else 1
        self._input_size = input_size
        self._i2h_weight_initializer = i2h_weight_initializer
        self._h2h_weight_initializer = h2h_weight_initializer
        self._i2h_bias_initializer = i2h_bias_initializer
        self._h2h_bias_initializer = h2h_bias_initializer
        self._lstm_state_clip_min = lstm_state_clip_min
        self._lstm_state_clip_max = lstm_state_clip_max
        self._lstm_state_clip_nan = lstm_state_clip_nan
        self._dtype = dtype
        self._use_sequence_length = use_sequence_length
        self.skip_states = None
        self._gates = {'rnn_relu': 1, 'rnn_tanh': 1, 'lstm': 4, 'gru': 3}[mode]
        ng, ni, nh = self._gates, input_size, hidden_size
        for i in range(num_layers):
            for j in ['l', 'r'][:self._dir]:
                self._register_param('{}{}_i2h_weight'.format(j, i), (ng * nh, ni), i2h_weight_initializer, dtype)
                self._register_param('{}{}_h2h_weight'.format(j, i), (ng * nh, nh), h2h_weight_initializer, dtype)
                self._register_param('{}{}_i2h_bias'.format(j, i), (ng * nh,), i2h_bias_initializer, dtype)
                self._register_param('{}{}_h2h_bias'.format(j, i), (ng * nh,), h2h_bias_initializer, dtype)
            ni = nh * self._dir

    def _register_param(self, name, shape, init, dtype):
        p = self.params.get(name, shape=shape, init=init, allow_deferred_init=True, dtype=dtype)
        setattr(self, name, p)
        return p

    def __repr__(self):
        s = '{name}({mapping}, {_layout}'
        if self._num_layers != 1:
            s += ', num_layers={_num_layers}'
        if self._dropout != 0:
            s += ', dropout={_dropout}'
        if self._dir == 2:
            s += ', bidirectional'
        s += ')'
        shape = self.l0_i2h_weight.shape
        mapping = '{0} -> {1}'.format(shape[1] if shape[1] else None, shape[0] // self._gates)
        return s.format(name=self.__class__.__name__, mapping=mapping, **self.__dict__)

    def _collect_params_with_prefix(self, prefix=''):
        # MXNet's names for a layer's parameters in save_parameters files: those of its unfused cells.
        if prefix:
            prefix += '.'
        pattern = re.compile(r'(l|r)(\d)_(i2h|h2h|h2r)_(weight|bias)\Z')

        def convert_key(m, bidirectional):
            d, l, g, t = [m.group(i) for i in range(1, 5)]
            if bidirectional:
                return '_unfused.{}.{}_cell.{}_{}'.format(l, d, g, t)
            return '_unfused.{}.{}_{}'.format(l, g, t)
        bidirectional = any(pattern.match(k).group(1) == 'r' for k in self._reg_params)
        return {prefix + convert_key(pattern.match(key), bidirectional): val for key, val in self._reg_params.items()}

    def state_info(self, batch_size=0):
        raise NotImplementedError

    def _unfuse(self):
        """The stack of cells this layer computes (Note [Fused recurrent layers])."""
        get_cell = {'rnn_relu': lambda **kw: rnn_cell.RNNCell(self._hidden_size, activation='relu', **kw),
                    'rnn_tanh': lambda **kw: rnn_cell.RNNCell(self._hidden_size, activation='tanh', **kw),
                    'lstm': lambda **kw: rnn_cell.LSTMCell(self._hidden_size, **kw),
                    'gru': lambda **kw: rnn_cell.GRUCell(self._hidden_size, **kw)}[self._mode]
        stack = rnn_cell.HybridSequentialRNNCell(prefix=self.prefix, params=self.params)
        with stack.name_scope():
            ni = self._input_size
            for i in range(self._num_layers):
                kwargs = {'input_size': ni, 'i2h_weight_initializer': self._i2h_weight_initializer,
                          'h2h_weight_initializer': self._h2h_weight_initializer,
                          'i2h_bias_initializer': self._i2h_bias_initializer,
                          'h2h_bias_initializer': self._h2h_bias_initializer}
                if self._dir == 2:
                    stack.add(rnn_cell.BidirectionalCell(get_cell(prefix='l%d_' % i, **kwargs),
                                                         get_cell(prefix='r%d_' % i, **kwargs)))
                else:
                    stack.add(get_cell(prefix='l%d_' % i, **kwargs))
                if self._dropout > 0 and i != self._num_layers - 1:
                    stack.add(rnn_cell.DropoutCell(self._dropout))
                ni = self._hidden_size * self._dir
        return stack

    def cast(self, dtype):
        super(_RNNLayer, self).cast(dtype)
        self._dtype = dtype

    def begin_state(self, batch_size=0, func=nd.zeros, **kwargs):
        """The initial states: (layers x directions, batch_size, hidden) each."""
        states = []
        for i, info in enumerate(self.state_info(batch_size)):
            info = dict(info, **kwargs) if info is not None else dict(kwargs)
            info.pop('__layout__', None)
            states.append(func(name='%sh0_%d' % (self.prefix, i), **info))
        return states

    def __call__(self, inputs, states=None, sequence_length=None, **kwargs):
        self.skip_states = states is None
        if states is None:
            if isinstance(inputs, nd.NDArray):
                batch_size = inputs.shape[self._layout.find('N')]
                states = self.begin_state(batch_size, ctx=inputs.context, dtype=inputs.dtype)
            else:
                states = self.begin_state(0, func=symbol.zeros)
        if isinstance(states, (nd.NDArray, symbol.Symbol)):
            states = [states]
        if self._use_sequence_length:
            return super(_RNNLayer, self).__call__(inputs, states, sequence_length, **kwargs)
        return super(_RNNLayer, self).__call__(inputs, states, **kwargs)

    def infer_shape(self, inputs, *args):
        # Only the first layer's input weights wait for the input size.
        ni = inputs.shape[2]
        for j in ['l', 'r'][:self._dir]:
            getattr(self, '{}0_i2h_weight'.format(j)).shape = (self._gates * self._hidden_size, ni)

    def hybrid_forward(self, F, inputs, states, sequence_length=None, **kwargs):
        if F is nd:
            batch_size = inputs.shape[self._layout.find('N')]
            for state, info in zip(states, self.state_info(batch_size)):
                if state.shape != info['shape']:
                    raise ValueError("Invalid recurrent state shape. Expecting %s, got %s."
                                     % (str(info['shape']), str(state.shape)))
        out = self._forward_kernel(F, inputs, states, sequence_length, **kwargs)
        return out[0] if self.skip_states else out

    def _forward_kernel(self, F, inputs, states, sequence_length, **kwargs):
        """The fused RNN operator over the whole sequence (Note [Fused recurrent layers])."""
        if self._layout == 'NTC':
            inputs = F.swapaxes(inputs, dim1=0, dim2=1)
        params = [kwargs['{}{}_{}_{}'.format(d, l, g, t)].reshape(-1)
                  for t in ['weight', 'bias']
                  for l in range(self._num_layers)
                  for d in ['l', 'r'][:self._dir]
                  for g in ['i2h', 'h2h']]
        params = F._internal._rnn_param_concat(*params, dim=0)
        rnn_args = list(states) + ([sequence_length] if self._use_sequence_length else [])
        rnn = F.RNN(inputs, params, *rnn_args, use_sequence_length=self._use_sequence_length,
                    state_size=self._hidden_size, num_layers=self._num_layers,
                    bidirectional=self._dir == 2, p=self._dropout, state_outputs=True, mode=self._mode,
                    lstm_state_clip_min=self._lstm_state_clip_min, lstm_state_clip_max=self._lstm_state_clip_max,
                    lstm_state_clip_nan=self._lstm_state_clip_nan)
        if self._mode == 'lstm':
            outputs, states = rnn[0], [rnn[1], rnn[2]]
        else:
            outputs, states = rnn[0], [rnn[1]]
        if self._layout == 'NTC':
            outputs = F.swapaxes(outputs, dim1=0, dim2=1)
        return outputs, states


class RNN(_RNNLayer):
    """Elman recurrent layers: h' = activation(W_i x + b_i + W_h h + b_h), activation 'relu' or
    'tanh'."""

    def __init__(self, hidden_size, num_layers=1, activation='relu', layout='TNC', dropout=0, bidirectional=False,
                 i2h_weight_initializer=None, h2h_weight_initializer=None, i2h_bias_initializer='zeros',
                 h2h_bias_initializer='zeros', input_size=0, dtype='float32', **kwargs):
        super(RNN, self).__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                                  i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                                  h2h_bias_initializer, 'rnn_' + activation, None, None, None, None, False, dtype,
                                  **kwargs)

    def state_info(self, batch_size=0):
        return [{'shape': (self._num_layers * self._dir, batch_size, self._hidden_size), '__layout__': 'LNC',
                 'dtype': self._dtype}]


class LSTM(_RNNLayer):
    """Long short-term memory layers (states h and c)."""

    def __init__(self, hidden_size, num_layers=1, layout='TNC', dropout=0, bidirectional=False, input_size=0,
                 i2h_weight_initializer=None, h2h_weight_initializer=None, i2h_bias_initializer='zeros',
                 h2h_bias_initializer='zeros', projection_size=None, h2r_weight_initializer=None,
                 state_clip_min=None, state_clip_max=None, state_clip_nan=False, dtype='float32', **kwargs):
        super(LSTM, self).__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                                   i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                                   h2h_bias_initializer, 'lstm', projection_size, h2r_weight_initializer,
                                   state_clip_min, state_clip_max, state_clip_nan, dtype, **kwargs)

    def state_info(self, batch_size=0):
        shape = (self._num_layers * self._dir, batch_size, self._hidden_size)
        return [{'shape': shape, '__layout__': 'LNC', 'dtype': self._dtype},
                {'shape': shape, '__layout__': 'LNC', 'dtype': self._dtype}]


class GRU(_RNNLayer):
    """Gated recurrent unit layers."""

    def __init__(self, hidden_size, num_layers=1, layout='TNC', dropout=0, bidirectional=False, input_size=0,
                 i2h_weight_initializer=None, h2h_weight_initializer=None, i2h_bias_initializer='zeros',
                 h2h_bias_initializer='zeros', dtype='float32', **kwargs):
        super(GRU, self).__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                                  i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                                  h2h_bias_initializer, 'gru', None, None, None, None, False, dtype, **kwargs)

    def state_info(self, batch_size=0):
        return [{'shape': (self._num_layers * self._dir, batch_size, self._hidden_size), '__layout__': 'LNC',
                 'dtype': self._dtype}]
