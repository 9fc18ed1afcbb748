"""MXNet 1.x's symbolic recurrent cells (``mx.rnn``): each call adds one time step to a Symbol
graph; ``unroll`` adds a whole sequence. Weights are Variables named ``<prefix>i2h_weight``...,
shared through RNNParams; LSTM gates i, f, c, o and GRU gates r, z, n, as MXNet's."""
import warnings

from .. import initializer as init
from .. import ndarray
from .. import symbol


class RNNParams(object):
    """The variables of a cell by name (with ``prefix``), made on first ``get``."""

    def __init__(self, prefix=''):
        self._prefix = prefix
        self._params = {}

    def get(self, name, **kwargs):
        name = self._prefix + name
        if name not in self._params:
            self._params[name] = symbol.Variable(name, **kwargs)
        return self._params[name]


def _normalize_sequence(length, inputs, layout, merge, in_layout=None):
    """(the inputs as a list of steps, or merged along T; the T axis)."""
    if inputs is None:
        raise AssertionError("unroll(inputs=None) has been deprecated. Please create input variables outside unroll.")
    axis = layout.find('T')
    in_axis = in_layout.find('T') if in_layout is not None else axis
    if isinstance(inputs, symbol.Symbol):
        if merge is False:
            if len(inputs.list_outputs()) != 1:
                raise AssertionError("unroll doesn't allow grouped symbol as input. Please convert to list with "
                                     "list(inputs) first or let unroll handle splitting.")
            inputs = list(symbol.split(inputs, axis=in_axis, num_outputs=length, squeeze_axis=1))
    else:
        if length is not None and len(inputs) != length:
            raise AssertionError("unroll: length %d but %d inputs" % (length, len(inputs)))
        if merge is True:
            inputs = symbol.Concat(*[symbol.expand_dims(i, axis=axis) for i in inputs], dim=axis)
            in_axis = axis
    if isinstance(inputs, symbol.Symbol) and axis != in_axis:
        inputs = symbol.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis


class BaseRNNCell(object):
    """The base of the symbolic cells: ``state_info``, ``begin_state``, ``unroll``, and
    ``unpack_weights``/``pack_weights`` between fused i2h/h2h weights and per-gate ones."""

    def __init__(self, prefix='', params=None):
        if params is None:
            params = RNNParams(prefix)
            self._own_params = True
        else:
            self._own_params = False
        self._prefix = prefix
        self._params = params
        self._modified = False
        self.reset()

    def reset(self):
        """Resets the step counters (before a new sequence)."""
        self._init_counter = -1
        self._counter = -1
        if hasattr(self, '_cells'):
            for cell in self._cells:
                cell.reset()

    def __call__(self, inputs, states):
        raise NotImplementedError()

    @property
    def params(self):
        """This cell's RNNParams (its variables)."""
        self._own_params = False
        return self._params

    @property
    def state_info(self):
        raise NotImplementedError()

    @property
    def state_shape(self):
        return [ele['shape'] for ele in self.state_info]

    @property
    def _gate_names(self):
        return ()

    def begin_state(self, func=symbol.zeros, **kwargs):
        """The initial states, each made by ``func(name=..., **state_info, **kwargs)``."""
        if self._modified:
            raise AssertionError("After applying modifier cells (e.g. DropoutCell) the base cell cannot be called "
                                 "directly. Call the modifier cell instead.")
        states = []
        for info in self.state_info:
            self._init_counter += 1
            if info is not None:
                kwargs.update(info)
            states.append(func(name='%sbegin_state_%d' % (self._prefix, self._init_counter), **kwargs))
        return states

    def unpack_weights(self, args):
        """``args`` with each fused i2h/h2h weight and bias split into per-gate arrays."""
        args = args.copy()
        if not self._gate_names:
            return args
        h = self._num_hidden
        for group_name in ['i2h', 'h2h']:
            weight = args.pop('%s%s_weight' % (self._prefix, group_name))
            bias = args.pop('%s%s_bias' % (self._prefix, group_name))
            for j, gate in enumerate(self._gate_names):
                args['%s%s%s_weight' % (self._prefix, group_name, gate)] = weight[j * h:(j + 1) * h].copy()
                args['%s%s%s_bias' % (self._prefix, group_name, gate)] = bias[j * h:(j + 1) * h].copy()
        return args

    def pack_weights(self, args):
        """The inverse of ``unpack_weights``."""
        args = args.copy()
        if not self._gate_names:
            return args
        for group_name in ['i2h', 'h2h']:
            weight, bias = [], []
            for gate in self._gate_names:
                weight.append(args.pop('%s%s%s_weight' % (self._prefix, group_name, gate)))
                bias.append(args.pop('%s%s%s_bias' % (self._prefix, group_name, gate)))
            args['%s%s_weight' % (self._prefix, group_name)] = ndarray.concatenate(weight)
            args['%s%s_bias' % (self._prefix, group_name)] = ndarray.concatenate(bias)
        return args

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        """The graph of ``length`` steps over ``inputs``: (outputs, last states)."""
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, False)
        states = self.begin_state() if begin_state is None else begin_state
        outputs = []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, inputs, activation, **kwargs):
        if isinstance(activation, str):
            return symbol.Activation(inputs, act_type=activation, **kwargs)
        return activation(inputs, **kwargs)


class _GatedCell(BaseRNNCell):
    """What RNNCell, LSTMCell and GRUCell share: i2h and h2h weights and biases, ``_num_states``
    states of (batch, num_hidden), and the per-gate names of unpack_weights (``_gates``)."""
    _num_states = 1
    _gates = ()

    def _gate_weights(self, num_hidden, **i2h_bias):
        """The i2h and h2h weights and biases (``i2h_bias``: the i2h bias variable's kwargs)."""
        self._num_hidden = num_hidden
        self._iW = self.params.get('i2h_weight')
        self._iB = self.params.get('i2h_bias', **i2h_bias)
        self._hW = self.params.get('h2h_weight')
        self._hB = self.params.get('h2h_bias')

    @property
    def state_info(self):
        return [{'shape': (0, self._num_hidden), '__layout__': 'NC'} for _ in range(self._num_states)]

    @property
    def _gate_names(self):
        return self._gates


class RNNCell(_GatedCell):
    """h' = activation(W_i x + b_i + W_h h + b_h)."""
    _num_states = 1
    _gates = ('',)

    def __init__(self, num_hidden, activation='tanh', prefix='rnn_', params=None):
        super(RNNCell, self).__init__(prefix=prefix, params=params)
        self._activation = activation
        self._gate_weights(num_hidden)

    def __call__(self, inputs, states):
        self._counter += 1
        name = '%st%d_' % (self._prefix, self._counter)
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB, num_hidden=self._num_hidden,
                                    name='%si2h' % name)
        h2h = symbol.FullyConnected(data=states[0], weight=self._hW, bias=self._hB, num_hidden=self._num_hidden,
                                    name='%sh2h' % name)
        output = self._get_activation(i2h + h2h, self._activation, name='%sout' % name)
        return output, [output]


class LSTMCell(_GatedCell):
    """The LSTM step (gates i, f, c, o); the i2h bias starts at ``forget_bias`` for the forget
    gate (mx.init.LSTMBias)."""
    _num_states = 2
    _gates = ['_i', '_f', '_c', '_o']

    def __init__(self, num_hidden, prefix='lstm_', params=None, forget_bias=1.0):
        super(LSTMCell, self).__init__(prefix=prefix, params=params)
        self._gate_weights(num_hidden, init=init.LSTMBias(forget_bias=forget_bias))

    def __call__(self, inputs, states):
        self._counter += 1
        name = '%st%d_' % (self._prefix, self._counter)
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB, num_hidden=self._num_hidden * 4,
                                    name='%si2h' % name)
        h2h = symbol.FullyConnected(data=states[0], weight=self._hW, bias=self._hB,
                                    num_hidden=self._num_hidden * 4, name='%sh2h' % name)
        gates = symbol.SliceChannel(i2h + h2h, num_outputs=4, name="%sslice" % name)
        in_gate = symbol.Activation(gates[0], act_type="sigmoid", name='%si' % name)
        forget_gate = symbol.Activation(gates[1], act_type="sigmoid", name='%sf' % name)
        in_transform = symbol.Activation(gates[2], act_type="tanh", name='%sc' % name)
        out_gate = symbol.Activation(gates[3], act_type="sigmoid", name='%so' % name)
        next_c = symbol._internal._plus(forget_gate * states[1], in_gate * in_transform, name='%sstate' % name)
        next_h = symbol._internal._mul(out_gate, symbol.Activation(next_c, act_type="tanh"), name='%sout' % name)
        return next_h, [next_h, next_c]


class GRUCell(_GatedCell):
    """The GRU step: gates r, z; n = tanh(W_in x + b_in + r (W_hn h + b_hn)); h' = (1 - z) n + z h."""
    _num_states = 1
    _gates = ['_r', '_z', '_o']

    def __init__(self, num_hidden, prefix='gru_', params=None):
        super(GRUCell, self).__init__(prefix=prefix, params=params)
        self._gate_weights(num_hidden)

    def __call__(self, inputs, states):
        self._counter += 1
        seq_idx = self._counter
        name = '%st%d_' % (self._prefix, seq_idx)
        prev_h = states[0]
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB, num_hidden=self._num_hidden * 3,
                                    name="%s_i2h" % name)
        h2h = symbol.FullyConnected(data=prev_h, weight=self._hW, bias=self._hB, num_hidden=self._num_hidden * 3,
                                    name="%s_h2h" % name)
        i2h_r, i2h_z, i2h = symbol.SliceChannel(i2h, num_outputs=3, name="%s_i2h_slice" % name)
        h2h_r, h2h_z, h2h = symbol.SliceChannel(h2h, num_outputs=3, name="%s_h2h_slice" % name)
        reset_gate = symbol.Activation(i2h_r + h2h_r, act_type="sigmoid", name="%s_r_act" % name)
        update_gate = symbol.Activation(i2h_z + h2h_z, act_type="sigmoid", name="%s_z_act" % name)
        candidate = symbol.Activation(i2h + reset_gate * h2h, act_type="tanh", name="%s_h_act" % name)
        next_h = symbol._internal._plus((1. - update_gate) * candidate, update_gate * prev_h, name='%sout' % name)
        return next_h, [next_h]


class FusedRNNCell(BaseRNNCell):
    """Several layers of one kind of cell over a whole sequence as one fused RNN operator
    (mx.sym.RNN): its weights one variable, ``<prefix>parameters``, initialised through
    mx.init.FusedRNN; ``unpack_weights`` splits it into the per-gate arrays the unfused cells
    (``unfuse``) name, so a checkpoint crosses between the two. It cannot be stepped."""

    def __init__(self, num_hidden, num_layers=1, mode='lstm', bidirectional=False, dropout=0., get_next_state=False,
                 forget_bias=1.0, prefix=None, params=None):
        super(FusedRNNCell, self).__init__(prefix='%s_' % mode if prefix is None else prefix, params=params)
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._dropout = dropout
        self._get_next_state = get_next_state
        self._directions = ['l', 'r'] if bidirectional else ['l']
        self._parameter = self.params.get('parameters', init=init.FusedRNN(
            None, num_hidden, num_layers, mode, bidirectional, forget_bias))

    @property
    def state_info(self):
        shape = ((self._bidirectional + 1) * self._num_layers, 0, self._num_hidden)
        return [{'shape': shape, '__layout__': 'LNC'} for _ in range((self._mode == 'lstm') + 1)]

    @property
    def _gate_names(self):
        return {'rnn_relu': [''], 'rnn_tanh': [''], 'lstm': ['_i', '_f', '_c', '_o'], 'gru': ['_r', '_z', '_o']}[self._mode]

    def _slice_weights(self, arr, num_input, h):
        """Views of the fused vector ``arr`` per layer, direction, gate: every weight (i2h then
        h2h), then every bias, the operator's order."""
        views, at = {}, 0
        dirs = len(self._directions)

        def take(name, shape):
            nonlocal at
            size = 1
            for d in shape:
                size *= d
            views[name] = arr[at:at + size].reshape(shape)
            at += size
        for kind in ('weight', 'bias'):
            for layer in range(self._num_layers):
                for direction in self._directions:
                    for group, width in (('i2h', num_input if layer == 0 else dirs * h), ('h2h', h)):
                        for gate in self._gate_names:
                            take('%s%s%d_%s%s_%s' % (self._prefix, direction, layer, group, gate, kind),
                                 (h, width) if kind == 'weight' else (h,))
        if at != arr.size:
            raise AssertionError("Invalid parameters size for FusedRNNCell")
        return views

    def unpack_weights(self, args):
        args = args.copy()
        arr = args.pop(self._parameter.name)
        dirs, gates, h = len(self._directions), len(self._gate_names), self._num_hidden
        num_input = arr.size // dirs // h // gates - (self._num_layers - 1) * (h + dirs * h + 2) - h - 2
        args.update({name: view.copy() for name, view in self._slice_weights(arr, num_input, h).items()})
        return args

    def pack_weights(self, args):
        args = args.copy()
        dirs, gates, h = len(self._directions), len(self._gate_names), self._num_hidden
        first = args['%sl0_i2h%s_weight' % (self._prefix, self._gate_names[0])]
        num_input = first.shape[1]
        total = (num_input + h + 2) * h * gates * dirs + (self._num_layers - 1) * gates * h * (h + dirs * h + 2) * dirs
        arr = ndarray.zeros((total,), ctx=first.context, dtype=first.dtype)
        for name, view in self._slice_weights(arr, num_input, h).items():
            view[:] = args.pop(name)
        args[self._parameter.name] = arr
        return args

    def __call__(self, inputs, states):
        raise NotImplementedError("FusedRNNCell cannot be stepped. Please use unroll")

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, True)
        if axis == 1:
            warnings.warn("NTC layout detected. Consider using TNC for FusedRNNCell for faster speed")
            inputs = symbol.swapaxes(inputs, dim1=0, dim2=1)
        elif axis != 0:
            raise AssertionError("Unsupported layout %s" % layout)
        states = self.begin_state() if begin_state is None else begin_state
        named = {'state': states[0]}
        if self._mode == 'lstm':
            named['state_cell'] = states[1]
        rnn = symbol.RNN(data=inputs, parameters=self._parameter, state_size=self._num_hidden,
                         num_layers=self._num_layers, bidirectional=self._bidirectional, p=self._dropout,
                         state_outputs=self._get_next_state, mode=self._mode, name=self._prefix + 'rnn', **named)
        if not self._get_next_state:
            outputs, states = rnn, []
        else:
            states = [rnn[i] for i in range(1, 3 if self._mode == 'lstm' else 2)]
            for state in states:
                state._set_attr(__layout__='LNC')
            outputs = rnn[0]
        if axis == 1:
            outputs = symbol.swapaxes(outputs, dim1=0, dim2=1)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def unfuse(self):
        """The same layers as a SequentialRNNCell of unfused cells (which can be stepped), named
        as unpack_weights names the weights."""
        make = {'rnn_relu': lambda prefix: RNNCell(self._num_hidden, activation='relu', prefix=prefix),
                'rnn_tanh': lambda prefix: RNNCell(self._num_hidden, activation='tanh', prefix=prefix),
                'lstm': lambda prefix: LSTMCell(self._num_hidden, prefix=prefix),
                'gru': lambda prefix: GRUCell(self._num_hidden, prefix=prefix)}[self._mode]
        stack = SequentialRNNCell()
        for i in range(self._num_layers):
            if self._bidirectional:
                stack.add(BidirectionalCell(make('%sl%d_' % (self._prefix, i)), make('%sr%d_' % (self._prefix, i)),
                                            output_prefix='%sbi_l%d_' % (self._prefix, i)))
            else:
                stack.add(make('%sl%d_' % (self._prefix, i)))
            if self._dropout > 0 and i != self._num_layers - 1:
                stack.add(DropoutCell(self._dropout, prefix='%s_dropout%d_' % (self._prefix, i)))
        return stack


class _CellGroup(BaseRNNCell):
    """What SequentialRNNCell and BidirectionalCell share: cells (``_cells``) whose states,
    begin states and weights are theirs, in order; ``params`` given to the group are the cells'."""

    def _adopt(self, cells):
        for cell in cells:
            if self._override_cell_params:
                if not cell._own_params:
                    raise AssertionError("Either specify params for %s or child cells, not both."
                                         % type(self).__name__)
                cell.params._params.update(self.params._params)
            self.params._params.update(cell.params._params)
        self._cells.extend(cells)

    @property
    def state_info(self):
        return sum([c.state_info for c in self._cells], [])

    def begin_state(self, **kwargs):
        if self._modified:
            raise AssertionError("After applying modifier cells (e.g. ZoneoutCell) the base cell cannot be called "
                                 "directly. Call the modifier cell instead.")
        return sum([c.begin_state(**kwargs) for c in self._cells], [])

    def unpack_weights(self, args):
        for cell in self._cells:
            args = cell.unpack_weights(args)
        return args

    def pack_weights(self, args):
        for cell in self._cells:
            args = cell.pack_weights(args)
        return args


class SequentialRNNCell(_CellGroup):
    """Cells stacked: each one's output is the next one's input."""

    def __init__(self, params=None):
        super(SequentialRNNCell, self).__init__(prefix='', params=params)
        self._override_cell_params = params is not None
        self._cells = []

    def add(self, cell):
        """Appends a cell."""
        self._adopt([cell])

    def __call__(self, inputs, states):
        self._counter += 1
        next_states, p = [], 0
        for cell in self._cells:
            if isinstance(cell, BidirectionalCell):
                raise AssertionError("a BidirectionalCell can only be unrolled, not stepped")
            n = len(cell.state_info)
            state = states[p:p + n]
            p += n
            inputs, state = cell(inputs, state)
            next_states.append(state)
        return inputs, sum(next_states, [])

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        num_cells = len(self._cells)
        if begin_state is None:
            begin_state = self.begin_state()
        p, next_states = 0, []
        for i, cell in enumerate(self._cells):
            n = len(cell.state_info)
            states = begin_state[p:p + n]
            p += n
            inputs, states = cell.unroll(length, inputs=inputs, begin_state=states, layout=layout,
                                         merge_outputs=None if i < num_cells - 1 else merge_outputs)
            next_states.extend(states)
        return inputs, next_states


class DropoutCell(BaseRNNCell):
    """Dropout on the inputs, no states."""

    def __init__(self, dropout, prefix='dropout_', params=None):
        super(DropoutCell, self).__init__(prefix, params)
        if not isinstance(dropout, (int, float)):
            raise AssertionError("dropout probability must be a number")
        self.dropout = dropout

    @property
    def state_info(self):
        return []

    def __call__(self, inputs, states):
        if self.dropout > 0:
            inputs = symbol.Dropout(data=inputs, p=self.dropout)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, symbol.Symbol):
            return self(inputs, [])
        return super(DropoutCell, self).unroll(length, inputs, begin_state=begin_state, layout=layout,
                                               merge_outputs=merge_outputs)


class ModifierCell(BaseRNNCell):
    """A cell that wraps another (``base_cell``) and changes what it computes."""

    def __init__(self, base_cell):
        super(ModifierCell, self).__init__()
        base_cell._modified = True
        self.base_cell = base_cell

    @property
    def params(self):
        self._own_params = False
        return self.base_cell.params

    @property
    def state_info(self):
        return self.base_cell.state_info

    def begin_state(self, init_sym=symbol.zeros, **kwargs):
        if self._modified:
            raise AssertionError("After applying modifier cells (e.g. DropoutCell) the base cell cannot be called "
                                 "directly. Call the modifier cell instead.")
        self.base_cell._modified = False
        begin = self.base_cell.begin_state(func=init_sym, **kwargs)
        self.base_cell._modified = True
        return begin

    def unpack_weights(self, args):
        return self.base_cell.unpack_weights(args)

    def pack_weights(self, args):
        return self.base_cell.pack_weights(args)

    def __call__(self, inputs, states):
        raise NotImplementedError


class ZoneoutCell(ModifierCell):
    """Zoneout: each output and state element keeps its previous value with probability
    ``zoneout_outputs`` / ``zoneout_states`` (in training)."""

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        if isinstance(base_cell, BidirectionalCell):
            raise AssertionError("BidirectionalCell doesn't support zoneout since it doesn't support step. Please "
                                 "add ZoneoutCell to the cells underneath instead.")
        super(ZoneoutCell, self).__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self.prev_output = None

    def reset(self):
        super(ZoneoutCell, self).reset()
        self.prev_output = None

    def __call__(self, inputs, states):
        next_output, next_states = self.base_cell(inputs, states)

        def keep(p, like):
            return symbol.Dropout(symbol.ones_like(like), p=p)
        prev_output = self.prev_output if self.prev_output is not None else symbol.zeros((0, 0))
        output = (symbol.where(keep(self.zoneout_outputs, next_output), next_output, prev_output)
                  if self.zoneout_outputs != 0. else next_output)
        states = ([symbol.where(keep(self.zoneout_states, new), new, old) for new, old in zip(next_states, states)]
                  if self.zoneout_states != 0. else next_states)
        self.prev_output = output
        return output, states


class ResidualCell(ModifierCell):
    """Adds the input to the base cell's output."""

    def __call__(self, inputs, states):
        output, states = self.base_cell(inputs, states)
        output = symbol.elemwise_add(output, inputs, name="%s_plus_residual" % output.name)
        return output, states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        self.base_cell._modified = False
        outputs, states = self.base_cell.unroll(length, inputs=inputs, begin_state=begin_state, layout=layout,
                                                merge_outputs=merge_outputs)
        self.base_cell._modified = True
        merge_outputs = isinstance(outputs, symbol.Symbol) if merge_outputs is None else merge_outputs
        inputs, _ = _normalize_sequence(length, inputs, layout, merge_outputs)
        if merge_outputs:
            outputs = symbol.elemwise_add(outputs, inputs, name="%s_plus_residual" % outputs.name)
        else:
            outputs = [symbol.elemwise_add(output_sym, input_sym, name="%s_plus_residual" % output_sym.name)
                       for output_sym, input_sym in zip(outputs, inputs)]
        return outputs, states


class BidirectionalCell(_CellGroup):
    """Runs ``l_cell`` forward and ``r_cell`` backward over the sequence and concatenates their
    outputs (unroll only)."""

    def __init__(self, l_cell, r_cell, params=None, output_prefix='bi_'):
        super(BidirectionalCell, self).__init__('', params=params)
        self._output_prefix = output_prefix
        self._override_cell_params = params is not None
        self._cells = []
        self._adopt([l_cell, r_cell])

    def __call__(self, inputs, states):
        raise NotImplementedError("Bidirectional cannot be stepped. Please use unroll")

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, False)
        if begin_state is None:
            begin_state = self.begin_state()
        states = begin_state
        l_cell, r_cell = self._cells
        n_left = len(l_cell.state_info)
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs, begin_state=states[:n_left], layout=layout,
                                            merge_outputs=merge_outputs)
        r_outputs, r_states = r_cell.unroll(length, inputs=list(reversed(inputs)), begin_state=states[n_left:],
                                            layout=layout, merge_outputs=merge_outputs)
        if merge_outputs is None:
            merge_outputs = (isinstance(l_outputs, symbol.Symbol) and isinstance(r_outputs, symbol.Symbol))
            if not merge_outputs:
                if isinstance(l_outputs, symbol.Symbol):
                    l_outputs = list(symbol.SliceChannel(l_outputs, axis=axis, num_outputs=length, squeeze_axis=1))
                if isinstance(r_outputs, symbol.Symbol):
                    r_outputs = list(symbol.SliceChannel(r_outputs, axis=axis, num_outputs=length, squeeze_axis=1))
        if merge_outputs:
            l_outputs = [l_outputs]
            r_outputs = [symbol.reverse(r_outputs, axis=axis)]
        else:
            r_outputs = list(reversed(r_outputs))
        outputs = [symbol.Concat(l_o, r_o, dim=1 + merge_outputs, name=('%sout' % self._output_prefix
                                                                          if merge_outputs else
                                                                          '%st%d' % (self._output_prefix, i)))
                   for i, (l_o, r_o) in enumerate(zip(l_outputs, r_outputs))]
        if merge_outputs:
            outputs = outputs[0]
        return outputs, [l_states, r_states]


class BaseConvRNNCell(BaseRNNCell):
    """What the convolutional cells share: the i2h and h2h transforms are convolutions (the h2h
    one padded to keep the state's size, so its kernel must be odd), and a state shape that the
    i2h convolution gives ``input_shape`` (a step's input), batch axis 0 as in every cell's
    begin state."""

    def __init__(self, input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel, i2h_stride, i2h_pad, i2h_dilate,
                 i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                 activation, prefix='', params=None, conv_layout='NCHW'):
        super(BaseConvRNNCell, self).__init__(prefix=prefix, params=params)
        if h2h_kernel[0] % 2 != 1 or h2h_kernel[1] % 2 != 1:
            raise AssertionError("Only support odd number, get h2h_kernel= %s" % str(h2h_kernel))
        self._h2h_kernel = h2h_kernel
        self._h2h_pad = (h2h_dilate[0] * (h2h_kernel[0] - 1) // 2, h2h_dilate[1] * (h2h_kernel[1] - 1) // 2)
        self._h2h_dilate = h2h_dilate
        self._i2h_kernel = i2h_kernel
        self._i2h_stride = i2h_stride
        self._i2h_pad = i2h_pad
        self._i2h_dilate = i2h_dilate
        self._num_hidden = num_hidden
        self._input_shape = input_shape
        self._conv_layout = conv_layout
        self._activation = activation
        probe = symbol.Convolution(data=symbol.Variable('data'), num_filter=num_hidden, kernel=i2h_kernel,
                                   stride=i2h_stride, pad=i2h_pad, dilate=i2h_dilate, layout=conv_layout)
        self._state_shape = (0,) + tuple(probe.infer_shape(data=input_shape)[1][0][1:])
        self._iW = self.params.get('i2h_weight', init=i2h_weight_initializer)
        self._hW = self.params.get('h2h_weight', init=h2h_weight_initializer)
        self._iB = self.params.get('i2h_bias', init=i2h_bias_initializer)
        self._hB = self.params.get('h2h_bias', init=h2h_bias_initializer)

    @property
    def _num_gates(self):
        return len(self._gate_names)

    @property
    def state_info(self):
        return [{'shape': self._state_shape, '__layout__': self._conv_layout}
                for _ in range(self._num_states)]

    def _conv_forward(self, inputs, states, name):
        filters = self._num_hidden * self._num_gates
        i2h = symbol.Convolution(name='%si2h' % name, data=inputs, num_filter=filters, kernel=self._i2h_kernel,
                                 stride=self._i2h_stride, pad=self._i2h_pad, dilate=self._i2h_dilate,
                                 weight=self._iW, bias=self._iB, layout=self._conv_layout)
        h2h = symbol.Convolution(name='%sh2h' % name, data=states[0], num_filter=filters, kernel=self._h2h_kernel,
                                 dilate=self._h2h_dilate, pad=self._h2h_pad, stride=(1, 1), weight=self._hW,
                                 bias=self._hB, layout=self._conv_layout)
        return i2h, h2h

    def __call__(self, inputs, states):
        raise NotImplementedError("BaseConvRNNCell is abstract class for convolutional RNN")


def _leaky(inputs, **kwargs):
    """The convolutional cells' default activation: LeakyReLU with slope 0.2."""
    return symbol.LeakyReLU(inputs, act_type='leaky', slope=0.2, **kwargs)


def _conv_cell(base_prefix):
    """A convolutional cell class's constructor, with MXNet's defaults."""
    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1), i2h_kernel=(3, 3),
                 i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1), i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer='zeros', h2h_bias_initializer='zeros',
                 activation=_leaky, prefix=base_prefix, params=None, conv_layout='NCHW'):
        BaseConvRNNCell.__init__(self, input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel, i2h_stride,
                                 i2h_pad, i2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                                 i2h_bias_initializer, h2h_bias_initializer, activation, prefix=prefix,
                                 params=params, conv_layout=conv_layout)
    return __init__


class ConvRNNCell(BaseConvRNNCell):
    """h' = activation(conv_i(x) + conv_h(h))."""
    __init__ = _conv_cell('ConvRNN_')
    _num_states = 1

    @property
    def _gate_names(self):
        return ('',)

    def __call__(self, inputs, states):
        self._counter += 1
        name = '%st%d_' % (self._prefix, self._counter)
        i2h, h2h = self._conv_forward(inputs, states, name)
        output = self._get_activation(i2h + h2h, self._activation, name='%sout' % name)
        return output, [output]


class ConvLSTMCell(BaseConvRNNCell):
    """The LSTM step with convolutions (Xingjian et al., NIPS 2015); the cell input and output
    use ``activation`` where LSTMCell uses tanh."""
    __init__ = _conv_cell('ConvLSTM_')
    _num_states = 2

    @property
    def _gate_names(self):
        return ['_i', '_f', '_c', '_o']

    def __call__(self, inputs, states):
        self._counter += 1
        name = '%st%d_' % (self._prefix, self._counter)
        i2h, h2h = self._conv_forward(inputs, states, name)
        gates = symbol.SliceChannel(i2h + h2h, num_outputs=4, axis=self._conv_layout.find('C'),
                                    name="%sslice" % name)
        in_gate = symbol.Activation(gates[0], act_type="sigmoid", name='%si' % name)
        forget_gate = symbol.Activation(gates[1], act_type="sigmoid", name='%sf' % name)
        in_transform = self._get_activation(gates[2], self._activation, name='%sc' % name)
        out_gate = symbol.Activation(gates[3], act_type="sigmoid", name='%so' % name)
        next_c = symbol._internal._plus(forget_gate * states[1], in_gate * in_transform, name='%sstate' % name)
        next_h = symbol._internal._mul(out_gate, self._get_activation(next_c, self._activation), name='%sout' % name)
        return next_h, [next_h, next_c]


class ConvGRUCell(BaseConvRNNCell):
    """The GRU step with convolutions; the candidate uses ``activation``."""
    __init__ = _conv_cell('ConvGRU_')
    _num_states = 1

    @property
    def _gate_names(self):
        return ['_r', '_z', '_o']

    def __call__(self, inputs, states):
        self._counter += 1
        name = '%st%d_' % (self._prefix, self._counter)
        i2h, h2h = self._conv_forward(inputs, states, name)
        i2h_r, i2h_z, i2h = symbol.SliceChannel(i2h, num_outputs=3, name="%s_i2h_slice" % name)
        h2h_r, h2h_z, h2h = symbol.SliceChannel(h2h, num_outputs=3, name="%s_h2h_slice" % name)
        reset_gate = symbol.Activation(i2h_r + h2h_r, act_type="sigmoid", name="%s_r_act" % name)
        update_gate = symbol.Activation(i2h_z + h2h_z, act_type="sigmoid", name="%s_z_act" % name)
        candidate = self._get_activation(i2h + reset_gate * h2h, self._activation, name="%s_h_act" % name)
        next_h = symbol._internal._plus((1. - update_gate) * candidate, update_gate * states[0], name='%sout' % name)
        return next_h, [next_h]


def rnn_unroll(cell, length, inputs=None, begin_state=None, input_prefix='', layout='NTC'):
    """Deprecated (MXNet's too): ``cell.unroll``."""
    warnings.warn('rnn_unroll is deprecated. Please call cell.unroll directly.')
    return cell.unroll(length=length, inputs=inputs, begin_state=begin_state, layout=layout)
