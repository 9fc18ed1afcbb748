"""Gluon's recurrent cells (MXNet 1.9.1's ``mx.gluon.rnn``): one time step as a HybridBlock of
(inputs, states) -> (output, new states), and ``unroll`` over a sequence; the same parameter
names and gate layouts as MXNet's (LSTM gates i, f, c, o; GRU gates r, z, n)."""
from ... import ndarray as nd
from ... import symbol
from ..block import Block, HybridBlock
from ..nn import LeakyReLU
from ..parameter import _indent


def _as_list(obj):
    return list(obj) if isinstance(obj, (list, tuple)) else [obj]


def _is_tensor(x):
    return isinstance(x, (nd.NDArray, symbol.Symbol))


def _format_sequence(length, inputs, layout, merge, in_layout=None):
    """(inputs as a list of steps, or merged into one tensor along T; the T axis; F; batch size)."""
    if inputs is None:
        raise AssertionError("unroll(inputs=None) has been deprecated. Please create input variables outside unroll.")
    axis, batch_axis = layout.find('T'), layout.find('N')
    in_axis = in_layout.find('T') if in_layout is not None else axis
    batch_size = 0
    if isinstance(inputs, symbol.Symbol):
        F = symbol
        if merge is False:
            inputs = list(symbol.split(inputs, axis=in_axis, num_outputs=length, squeeze_axis=1))
    elif isinstance(inputs, nd.NDArray):
        F = nd
        batch_size = inputs.shape[batch_axis]
        if merge is False:
            if length is not None and length != inputs.shape[in_axis]:
                raise AssertionError("unroll: length %d but the inputs have %d steps" % (length, inputs.shape[in_axis]))
            inputs = _as_list(nd.split(inputs, axis=in_axis, num_outputs=inputs.shape[in_axis], squeeze_axis=1))
    else:
        if length is not None and len(inputs) != length:
            raise AssertionError("unroll: length %d but %d inputs" % (length, len(inputs)))
        F = symbol if isinstance(inputs[0], symbol.Symbol) else nd
        if F is nd:
            batch_size = inputs[0].shape[0]
        if merge is True:
            inputs = F.stack(*inputs, axis=axis)
            in_axis = axis
    if _is_tensor(inputs) and axis != in_axis:
        inputs = F.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis, F, batch_size


def _mask_sequence_variable_length(F, data, length, valid_length, time_axis, merge):
    if not _is_tensor(data):
        data = F.stack(*data, axis=time_axis)
    outputs = F.SequenceMask(data, sequence_length=valid_length, use_sequence_length=True, axis=time_axis)
    if not merge:
        outputs = _as_list(F.split(outputs, num_outputs=length, axis=time_axis, squeeze_axis=True))
    return outputs


def _reverse_sequences(sequences, unroll_step, valid_length=None):
    if valid_length is None:
        return list(reversed(sequences))
    F = symbol if isinstance(sequences[0], symbol.Symbol) else nd
    seq = F.stack(*sequences, axis=0)
    seq = F.SequenceReverse(seq, sequence_length=valid_length, use_sequence_length=True)
    if unroll_step > 1 or F is symbol:
        return _as_list(F.split(seq, axis=0, num_outputs=unroll_step, squeeze_axis=True))
    return [seq.squeeze(axis=0)]


def _get_begin_state(cell, F, begin_state, inputs, batch_size):
    if begin_state is not None:
        return begin_state
    if F is nd:
        ctx = inputs.context if _is_tensor(inputs) else inputs[0].context
        with ctx:
            return cell.begin_state(func=F.zeros, batch_size=batch_size)
    return cell.begin_state(func=F.zeros, batch_size=batch_size)


class RecurrentCell(Block):
    """The base of the cells: ``state_info``, ``begin_state``, ``unroll``, and a call per step."""

    def __init__(self, prefix=None, params=None):
        super(RecurrentCell, self).__init__(prefix=prefix, params=params)
        self._modified = False
        self.reset()

    def reset(self):
        """Resets the step counters (before a new sequence)."""
        self._init_counter = -1
        self._counter = -1
        for cell in self._children.values():
            cell.reset()

    def state_info(self, batch_size=0):
        """The shape and layout of each state."""
        raise NotImplementedError()

    def begin_state(self, batch_size=0, func=nd.zeros, **kwargs):
        """The initial states, each made by ``func(name=..., shape=..., **kwargs)``."""
        if self._modified:
            raise AssertionError("After applying modifier cells (e.g. ZoneoutCell) the base cell cannot be called "
                                 "directly. Call the modifier cell instead.")
        states = []
        for info in self.state_info(batch_size):
            self._init_counter += 1
            info = dict(info, **kwargs) if info is not None else dict(kwargs)
            info.pop('__layout__', None)
            states.append(func(name='%sbegin_state_%d' % (self._prefix, self._init_counter), **info))
        return states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None, valid_length=None):
        """Runs ``length`` steps over ``inputs`` (a tensor of layout ``layout`` or a list of
        steps); returns (outputs, last states). ``valid_length`` masks each sequence's padding."""
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, False)
        states = _get_begin_state(self, F, begin_state, inputs, batch_size)
        outputs, all_states = [], []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
            if valid_length is not None:
                all_states.append(states)
        if valid_length is not None:
            states = [F.SequenceLast(F.stack(*ele_list, axis=0), sequence_length=valid_length,
                                     use_sequence_length=True, axis=0) for ele_list in zip(*all_states)]
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis, True)
        outputs, _, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, F, inputs, activation, **kwargs):
        func = {'tanh': F.tanh, 'relu': F.relu, 'sigmoid': F.sigmoid, 'softsign': F.softsign}.get(activation)
        if func:
            return func(inputs, **kwargs)
        if isinstance(activation, str):
            return F.Activation(inputs, act_type=activation, **kwargs)
        if isinstance(activation, LeakyReLU):
            return F.LeakyReLU(inputs, act_type='leaky', slope=activation._alpha, **kwargs)
        return activation(inputs, **kwargs)

    def forward(self, inputs, states):
        self._counter += 1
        return super(RecurrentCell, self).forward(inputs, states)


class HybridRecurrentCell(RecurrentCell, HybridBlock):
    """A recurrent cell written with ``hybrid_forward``."""

    def __init__(self, prefix=None, params=None):
        super(HybridRecurrentCell, self).__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError


class _GatedCell(HybridRecurrentCell):
    """What RNNCell, LSTMCell and GRUCell share: i2h and h2h weights and biases of
    ``gates`` * hidden_size rows."""
    _gates = 1

    def __init__(self, hidden_size, i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                 h2h_bias_initializer, input_size, prefix, params):
        super(_GatedCell, self).__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._input_size = input_size
        rows = self._gates * hidden_size
        self.i2h_weight = self.params.get('i2h_weight', shape=(rows, input_size), init=i2h_weight_initializer,
                                          allow_deferred_init=True)
        self.h2h_weight = self.params.get('h2h_weight', shape=(rows, hidden_size), init=h2h_weight_initializer,
                                          allow_deferred_init=True)
        self.i2h_bias = self.params.get('i2h_bias', shape=(rows,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get('h2h_bias', shape=(rows,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def _projections(self, F, inputs, state, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = 't%d_' % self._counter
        rows = self._gates * self._hidden_size
        i2h = F.FullyConnected(data=inputs, weight=i2h_weight, bias=i2h_bias, num_hidden=rows, name=prefix + 'i2h')
        h2h = F.FullyConnected(data=state, weight=h2h_weight, bias=h2h_bias, num_hidden=rows, name=prefix + 'h2h')
        return prefix, i2h, h2h

    def __repr__(self):
        s = '{name}({mapping}'
        if hasattr(self, '_activation'):
            s += ', {_activation}'
        s += ')'
        shape = self.i2h_weight.shape
        mapping = '{0} -> {1}'.format(shape[1] if shape[1] else None, shape[0])
        return s.format(name=self.__class__.__name__, mapping=mapping, **self.__dict__)

    def _alias(self):
        return {1: 'rnn', 3: 'gru', 4: 'lstm'}[self._gates]


class RNNCell(_GatedCell):
    """h' = activation(W_i x + b_i + W_h h + b_h)."""
    _gates = 1

    def __init__(self, hidden_size, activation='tanh', i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros', input_size=0, prefix=None, params=None):
        self._activation = activation
        super(RNNCell, self).__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                                      i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)

    def state_info(self, batch_size=0):
        return [{'shape': (batch_size, self._hidden_size), '__layout__': 'NC'}]

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix, i2h, h2h = self._projections(F, inputs, states[0], i2h_weight, h2h_weight, i2h_bias, h2h_bias)
        output = self._get_activation(F, F.elemwise_add(i2h, h2h, name=prefix + 'plus0'), self._activation,
                                      name=prefix + 'out')
        return output, [output]


class LSTMCell(_GatedCell):
    """The LSTM step: gates i, f, c, o; c' = f c + i c~, h' = o tanh(c')."""
    _gates = 4

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros', input_size=0, prefix=None, params=None,
                 activation='tanh', recurrent_activation='sigmoid'):
        super(LSTMCell, self).__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                                       i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)
        self._activation = activation
        self._recurrent_activation = recurrent_activation

    def state_info(self, batch_size=0):
        return [{'shape': (batch_size, self._hidden_size), '__layout__': 'NC'},
                {'shape': (batch_size, self._hidden_size), '__layout__': 'NC'}]

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix, i2h, h2h = self._projections(F, inputs, states[0], i2h_weight, h2h_weight, i2h_bias, h2h_bias)
        gates = F.SliceChannel(F.elemwise_add(i2h, h2h, name=prefix + 'plus0'), num_outputs=4, name=prefix + 'slice')
        act, rec = self._activation, self._recurrent_activation
        in_gate = self._get_activation(F, gates[0], rec, name=prefix + 'i')
        forget_gate = self._get_activation(F, gates[1], rec, name=prefix + 'f')
        in_transform = self._get_activation(F, gates[2], act, name=prefix + 'c')
        out_gate = self._get_activation(F, gates[3], rec, name=prefix + 'o')
        next_c = F.elemwise_add(F.elemwise_mul(forget_gate, states[1], name=prefix + 'mul0'),
                                F.elemwise_mul(in_gate, in_transform, name=prefix + 'mul1'), name=prefix + 'state')
        next_h = F.elemwise_mul(out_gate, F.Activation(next_c, act_type=act, name=prefix + 'activation0'),
                                name=prefix + 'out')
        return next_h, [next_h, next_c]

    def __repr__(self):
        shape = self.i2h_weight.shape
        return '{name}({mapping})'.format(name=self.__class__.__name__,
                                          mapping='{0} -> {1}'.format(shape[1] if shape[1] else None, shape[0]))


class GRUCell(_GatedCell):
    """The GRU step: gates r, z and n = tanh(W_in x + b_in + r (W_hn h + b_hn)); h' = (1 - z) n + z h."""
    _gates = 3

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros', input_size=0, prefix=None, params=None):
        super(GRUCell, self).__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                                      i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)

    def state_info(self, batch_size=0):
        return [{'shape': (batch_size, self._hidden_size), '__layout__': 'NC'}]

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prev_h = states[0]
        prefix, i2h, h2h = self._projections(F, inputs, prev_h, i2h_weight, h2h_weight, i2h_bias, h2h_bias)
        i2h_r, i2h_z, i2h = F.SliceChannel(i2h, num_outputs=3, name=prefix + 'i2h_slice')
        h2h_r, h2h_z, h2h = F.SliceChannel(h2h, num_outputs=3, name=prefix + 'h2h_slice')
        reset_gate = F.Activation(F.elemwise_add(i2h_r, h2h_r), act_type="sigmoid", name=prefix + 'r_act')
        update_gate = F.Activation(F.elemwise_add(i2h_z, h2h_z), act_type="sigmoid", name=prefix + 'z_act')
        candidate = F.Activation(F.elemwise_add(i2h, F.elemwise_mul(reset_gate, h2h)), act_type="tanh",
                                 name=prefix + 'h_act')
        ones = F.ones_like(update_gate)
        next_h = F.elemwise_add(F.elemwise_mul(F.elemwise_sub(ones, update_gate), candidate),
                                F.elemwise_mul(update_gate, prev_h), name=prefix + 'out')
        return next_h, [next_h]

    def __repr__(self):
        return LSTMCell.__repr__(self)


class _CellGroup(RecurrentCell):
    """What SequentialRNNCell and BidirectionalCell share: their states are their children's,
    in order."""

    def state_info(self, batch_size=0):
        return sum([c.state_info(batch_size) for c in self._children.values()], [])

    def begin_state(self, **kwargs):
        if self._modified:
            raise AssertionError("After applying modifier cells (e.g. ZoneoutCell) the base cell cannot be called "
                                 "directly. Call the modifier cell instead.")
        return sum([c.begin_state(**kwargs) for c in self._children.values()], [])


class SequentialRNNCell(_CellGroup):
    """Cells stacked: each one's output is the next one's input."""

    def __init__(self, prefix=None, params=None):
        super(SequentialRNNCell, self).__init__(prefix=prefix, params=params)

    def __repr__(self):
        s = '{name}(\n{modstr}\n)'
        return s.format(name=self.__class__.__name__, modstr='\n'.join(
            ['({i}): {m}'.format(i=i, m=_indent(m.__repr__(), 2)) for i, m in self._children.items()]))

    def add(self, cell):
        """Appends a cell."""
        self.register_child(cell)

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None, valid_length=None):
        self.reset()
        inputs, _, F, batch_size = _format_sequence(length, inputs, layout, None)
        num_cells = len(self._children)
        begin_state = _get_begin_state(self, F, begin_state, inputs, batch_size)
        p, next_states = 0, []
        for i, cell in enumerate(self._children.values()):
            n = len(cell.state_info())
            states = begin_state[p:p + n]
            p += n
            inputs, states = cell.unroll(length, inputs=inputs, begin_state=states, layout=layout,
                                         merge_outputs=None if i < num_cells - 1 else merge_outputs,
                                         valid_length=valid_length)
            next_states.extend(states)
        return inputs, next_states

    def __call__(self, inputs, states):
        self._counter += 1
        next_states, p = [], 0
        for cell in self._children.values():
            if isinstance(cell, BidirectionalCell):
                raise AssertionError("a BidirectionalCell can only be unrolled, not stepped")
            n = len(cell.state_info())
            state = states[p:p + n]
            p += n
            inputs, state = cell(inputs, state)
            next_states.append(state)
        return inputs, sum(next_states, [])

    def __getitem__(self, i):
        return list(self._children.values())[i]

    def __len__(self):
        return len(self._children)

    def hybrid_forward(self, *args, **kwargs):
        raise NotImplementedError


class HybridSequentialRNNCell(SequentialRNNCell, HybridRecurrentCell):
    """SequentialRNNCell of hybridizable cells."""

    def __init__(self, prefix=None, params=None):
        super(HybridSequentialRNNCell, self).__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F, inputs, states):
        return SequentialRNNCell.__call__(self, inputs, states)


class DropoutCell(HybridRecurrentCell):
    """Dropout on the inputs (rate ``rate``), no states."""

    def __init__(self, rate, axes=(), prefix=None, params=None):
        super(DropoutCell, self).__init__(prefix, params)
        if not isinstance(rate, (int, float)):
            raise AssertionError("rate must be a number")
        self._rate = rate
        self._axes = axes

    def __repr__(self):
        return '{name}(rate={_rate}, axes={_axes})'.format(name=self.__class__.__name__, **self.__dict__)

    def state_info(self, batch_size=0):
        return []

    def _alias(self):
        return 'dropout'

    def hybrid_forward(self, F, inputs, states):
        if self._rate > 0:
            inputs = F.Dropout(data=inputs, p=self._rate, axes=self._axes, name='t%d_fwd' % self._counter)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None, valid_length=None):
        self.reset()
        inputs, _, F, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if _is_tensor(inputs):
            return self.hybrid_forward(F, inputs, begin_state if begin_state else [])
        return super(DropoutCell, self).unroll(length, inputs, begin_state=begin_state, layout=layout,
                                               merge_outputs=merge_outputs, valid_length=None)


class ModifierCell(HybridRecurrentCell):
    """A cell that wraps another (``base_cell``) and changes what it computes."""

    def __init__(self, base_cell):
        if base_cell._modified:
            raise AssertionError("Cell %s is already modified. One cell cannot be modified twice" % base_cell.name)
        base_cell._modified = True
        super(ModifierCell, self).__init__(prefix=base_cell.prefix + self._alias(), params=None)
        self.base_cell = base_cell

    @property
    def params(self):
        return self.base_cell.params

    def state_info(self, batch_size=0):
        return self.base_cell.state_info(batch_size)

    def begin_state(self, func=nd.zeros, **kwargs):
        if self._modified:
            raise AssertionError("After applying modifier cells (e.g. DropoutCell) the base cell cannot be called "
                                 "directly. Call the modifier cell instead.")
        self.base_cell._modified = False
        begin = self.base_cell.begin_state(func=func, **kwargs)
        self.base_cell._modified = True
        return begin

    def hybrid_forward(self, F, inputs, states):
        raise NotImplementedError

    def __repr__(self):
        return '{name}({base_cell})'.format(name=self.__class__.__name__, **self.__dict__)


class ResidualCell(ModifierCell):
    """Adds the input to the base cell's output."""

    def hybrid_forward(self, F, inputs, states):
        output, states = self.base_cell(inputs, states)
        output = F.elemwise_add(output, inputs, name='t%d_fwd' % self._counter)
        return output, states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None, valid_length=None):
        self.reset()
        self.base_cell._modified = False
        outputs, states = self.base_cell.unroll(length, inputs=inputs, begin_state=begin_state, layout=layout,
                                                merge_outputs=merge_outputs, valid_length=valid_length)
        self.base_cell._modified = True
        merge_outputs = _is_tensor(outputs) if merge_outputs is None else merge_outputs
        inputs, axis, F, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if valid_length is not None:
            inputs = _mask_sequence_variable_length(F, inputs, length, valid_length, axis, merge_outputs)
        if merge_outputs:
            outputs = F.elemwise_add(outputs, inputs)
        else:
            outputs = [F.elemwise_add(i, j) for i, j in zip(outputs, inputs)]
        return outputs, states


class ZoneoutCell(ModifierCell):
    """Zoneout (Krueger et al.): in training each output and state element keeps its previous
    value with probability ``zoneout_outputs`` / ``zoneout_states``."""

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        if isinstance(base_cell, BidirectionalCell):
            raise AssertionError("BidirectionalCell doesn't support zoneout since it doesn't support step. Please add "
                                 "ZoneoutCell to the cells underneath instead.")
        super(ZoneoutCell, self).__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self._prev_output = None

    def __repr__(self):
        return '{name}(p_out={zoneout_outputs}, p_state={zoneout_states}, {base_cell})'.format(
            name=self.__class__.__name__, **self.__dict__)

    def _alias(self):
        return 'zoneout'

    def reset(self):
        super(ZoneoutCell, self).reset()
        self._prev_output = None

    def hybrid_forward(self, F, inputs, states):
        next_output, next_states = self.base_cell(inputs, states)

        def keep(p, like):  # 1 where the new value is taken (Dropout scales kept ones by 1/(1-p): any nonzero)
            return F.Dropout(F.ones_like(like), p=p)
        prev_output = self._prev_output if self._prev_output is not None else F.zeros_like(next_output)
        output = (F.where(keep(self.zoneout_outputs, next_output), next_output, prev_output)
                  if self.zoneout_outputs != 0. else next_output)
        states = ([F.where(keep(self.zoneout_states, new), new, old) for new, old in zip(next_states, states)]
                  if self.zoneout_states != 0. else next_states)
        self._prev_output = output
        return output, states


class BidirectionalCell(_CellGroup, HybridRecurrentCell):
    """Runs ``l_cell`` forward and ``r_cell`` backward over the sequence and concatenates their
    outputs (unroll only)."""

    def __init__(self, l_cell, r_cell, output_prefix='bi_'):
        super(BidirectionalCell, self).__init__(prefix='', params=None)
        self.register_child(l_cell, 'l_cell')
        self.register_child(r_cell, 'r_cell')
        self._output_prefix = output_prefix

    def __call__(self, inputs, states):
        raise NotImplementedError("Bidirectional cannot be stepped. Please use unroll")

    def __repr__(self):
        s = '{name}(forward={l_cell}, backward={r_cell})'
        return s.format(name=self.__class__.__name__, l_cell=self._children['l_cell'],
                        r_cell=self._children['r_cell'])

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None, valid_length=None):
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, False)
        reversed_inputs = list(_reverse_sequences(inputs, length, valid_length))
        states = _get_begin_state(self, F, begin_state, inputs, batch_size)
        l_cell, r_cell = self._children.values()
        n_left = len(l_cell.state_info(batch_size))
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs, begin_state=states[:n_left], layout=layout,
                                            merge_outputs=merge_outputs, valid_length=valid_length)
        r_outputs, r_states = r_cell.unroll(length, inputs=reversed_inputs, begin_state=states[n_left:],
                                            layout=layout, merge_outputs=False, valid_length=valid_length)
        reversed_r_outputs = _reverse_sequences(r_outputs, length, valid_length)
        if merge_outputs is None:
            merge_outputs = _is_tensor(l_outputs)
            l_outputs, _, _, _ = _format_sequence(None, l_outputs, layout, merge_outputs)
            reversed_r_outputs, _, _, _ = _format_sequence(None, reversed_r_outputs, layout, merge_outputs)
        if merge_outputs:
            if not _is_tensor(reversed_r_outputs):
                reversed_r_outputs = F.stack(*reversed_r_outputs, axis=axis)
            outputs = F.concat(l_outputs, reversed_r_outputs, dim=2, name='%sout' % self._output_prefix)
        else:
            outputs = [F.concat(l_o, r_o, dim=1, name='%st%d' % (self._output_prefix, i))
                       for i, (l_o, r_o) in enumerate(zip(l_outputs, reversed_r_outputs))]
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis, merge_outputs)
        return outputs, l_states + r_states

    def hybrid_forward(self, F, *args, **kwargs):
        raise NotImplementedError
