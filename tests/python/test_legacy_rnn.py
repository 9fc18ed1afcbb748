"""MXNet 1.x's legacy symbolic recurrent API (mx.rnn): the same scripts under MXNet 1.9.1 and
under mxplug give the same unrolled graphs (arguments, outputs and values, forward and backward),
the same packed and unpacked weights, the same encoded sentences and buckets, and the same
parameters after training an LSTM language model with BucketingModule, as MXNet's
lstm_bucketing example does."""
from parity import assert_parity

PRE = """
rs = np.random.RandomState(4)
def run(sym, shapes, grad=True):
    ex = sym.simple_bind(mx.cpu(), **shapes)
    for name in sorted(ex.arg_dict):
        ex.arg_dict[name][:] = rs.uniform(-0.5, 0.5, ex.arg_dict[name].shape)
    ex.forward(is_train=grad)
    outs = [o.copy() for o in ex.outputs]
    if grad:
        ex.backward([mx.nd.array(rs.uniform(-1, 1, o.shape)) for o in ex.outputs])
        return outs, {k: v for k, v in sorted(ex.grad_dict.items())}
    return outs
"""


def cases(**snippets):
    return {name: PRE + code for name, code in snippets.items()}


def test_unrolled_cells_match_mxnet():
    unroll = ("cell = %s\nx = mx.sym.var('data')\n"
              "outs, states = cell.unroll(3, x, layout='%s', merge_outputs=%s)\n"
              # (unmerged, an RNN cell's last output is its state: grouped once, for MXNet keeps
              # only the last head gradient of an output grouped twice where mxplug sums them)
              "sym = mx.sym.Group(list(outs)) if not isinstance(outs, mx.sym.Symbol) else "
              "mx.sym.Group([outs] + [s for s in states if isinstance(s, mx.sym.Symbol)])\n"
              "r = (sym.list_arguments(), sym.list_outputs(), run(sym, {'data': %r}))")
    assert_parity(cases(
        lstm=unroll % ("mx.rnn.LSTMCell(4, prefix='l_')", "NTC", True, (2, 3, 5)),
        gru_tnc=unroll % ("mx.rnn.GRUCell(3)", "TNC", True, (3, 2, 4)),
        rnn_list=unroll % ("mx.rnn.RNNCell(3, activation='relu')", "NTC", False, (2, 3, 4)),
        stacked=unroll % ("mx.rnn.SequentialRNNCell()\ncell.add(mx.rnn.LSTMCell(4, prefix='a_'))\n"
                          "cell.add(mx.rnn.ResidualCell(mx.rnn.GRUCell(4, prefix='b_')))", "NTC", True, (2, 3, 5)),
        bidirectional="cell = mx.rnn.BidirectionalCell(mx.rnn.LSTMCell(3, prefix='f_'), mx.rnn.GRUCell(2, prefix='b_'))\n"
                      "outs, states = cell.unroll(3, mx.sym.var('data'), merge_outputs=True)\n"
                      "sym = mx.sym.Group([outs] + states[0] + states[1])\n"
                      "r = (sym.list_arguments(), run(sym, {'data': (2, 3, 4)}))",
    ), rtol=1e-5)


def test_weights_sentences_and_checkpoints_match_mxnet():
    assert_parity(cases(
        pack="cell = mx.rnn.SequentialRNNCell(); cell.add(mx.rnn.LSTMCell(2, prefix='l_')); "
             "cell.add(mx.rnn.GRUCell(2, prefix='g_'))\n"
             "args = {'l_i2h_weight': mx.nd.arange(24).reshape((8, 3)), 'l_i2h_bias': mx.nd.arange(8), "
             "'l_h2h_weight': mx.nd.arange(16).reshape((8, 2)), 'l_h2h_bias': mx.nd.arange(8) + 1, "
             "'g_i2h_weight': mx.nd.arange(12).reshape((6, 2)), 'g_i2h_bias': mx.nd.arange(6), "
             "'g_h2h_weight': mx.nd.arange(12).reshape((6, 2)) * 2, 'g_h2h_bias': mx.nd.arange(6) * 3}\n"
             "un = cell.unpack_weights(args); back = cell.pack_weights(un); r = (un, back)",
        lstm_bias="a = mx.nd.zeros((8,)); mx.init.LSTMBias(forget_bias=2.5)('x_i2h_bias', a); r = a",
        encode="r = mx.rnn.encode_sentences([['a', 'b', 'c'], ['b', 'd'], ['a']], invalid_label=0, start_label=0)",
        buckets="import random\nrandom.seed(1); np.random.seed(1)\n"
                "sents = [list(rs.randint(1, 9, n)) for n in (3, 5, 4, 3, 5, 2, 4, 3, 5, 4, 3, 2)]\n"
                "it = mx.rnn.BucketSentenceIter(sents, 2, buckets=[3, 5], invalid_label=0)\n"
                "r = (it.buckets, it.default_bucket_key, [(b.bucket_key, b.data[0], b.label[0], b.provide_data[0].shape) "
                "for b in it])",
        checkpoint="import tempfile, os\ncell = mx.rnn.LSTMCell(2, prefix='l_')\n"
                   "out, _ = cell.unroll(2, mx.sym.var('data'), merge_outputs=True)\n"
                   "args = {'l_i2h_weight': mx.nd.arange(24).reshape((8, 3)), 'l_i2h_bias': mx.nd.arange(8), "
                   "'l_h2h_weight': mx.nd.arange(16).reshape((8, 2)), 'l_h2h_bias': mx.nd.arange(8) + 1}\n"
                   "p = os.path.join(tempfile.mkdtemp(), 'm'); mx.rnn.save_rnn_checkpoint(cell, p, 3, out, args, {})\n"
                   "saved = sorted(mx.nd.load(p + '-0003.params').keys()); sym, a, aux = mx.rnn.load_rnn_checkpoint(cell, p, 3)\n"
                   "r = (saved, a, sym.list_arguments())",
    ))


def test_bucketing_lstm_language_model_trains_as_mxnet():
    script = """
import random
random.seed(0); np.random.seed(0)
sents = [list(rs.randint(1, 12, n)) for n in rs.randint(3, 9, 40)]
it = mx.rnn.BucketSentenceIter(sents, 4, buckets=[4, 6, 8], invalid_label=0)
stack = mx.rnn.SequentialRNNCell()
stack.add(mx.rnn.LSTMCell(6, prefix='lstm_l0_'))
stack.add(mx.rnn.LSTMCell(6, prefix='lstm_l1_'))
def sym_gen(seq_len):
    data, label = mx.sym.var('data'), mx.sym.var('softmax_label')
    embed = mx.sym.Embedding(data=data, input_dim=12, output_dim=5, name='embed')
    stack.reset()
    outputs, states = stack.unroll(seq_len, inputs=embed, merge_outputs=True)
    pred = mx.sym.FullyConnected(mx.sym.Reshape(outputs, shape=(-1, 6)), num_hidden=12, name='pred')
    pred = mx.sym.SoftmaxOutput(pred, mx.sym.Reshape(label, shape=(-1,)), name='softmax')
    return pred, ('data',), ('softmax_label',)
mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=it.default_bucket_key)
mod.bind(it.provide_data, it.provide_label)
mod.init_params(mx.init.Uniform(0.1))
args, auxs = mod.get_params()
mod.set_params({k: mx.nd.array(rs.uniform(-0.3, 0.3, v.shape)) for k, v in sorted(args.items())}, auxs)
mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.5, 'momentum': 0.9})
metric = mx.metric.Perplexity(0)
for epoch in range(2):
    it.reset(); metric.reset()
    for batch in it:
        mod.forward(batch, is_train=True); mod.backward(); mod.update(); mod.update_metric(metric, batch.label)
r = (metric.get(), {k: v for k, v in sorted(mod.get_params()[0].items())})
"""
    assert_parity(cases(lm=script), rtol=1e-4)


def test_fused_rnn_cell_matches_mxnet():
    # FusedRNNCell is one RNN operator over the sequence: its graph, values and gradients; its
    # weights unpacked to the unfused cells' names and packed back; mx.init.FusedRNN (with a
    # deterministic inner initialiser, so both sides fill the same numbers); and the unfused stack
    # fed the unpacked weights gives the fused cell's outputs.
    fused = ("cell = mx.rnn.FusedRNNCell(3, num_layers=%d, mode=%r, bidirectional=%s, get_next_state=True, prefix='f_')\n"
             "outs, states = cell.unroll(4, mx.sym.var('data'), layout=%r, merge_outputs=True)\n"
             "sym = mx.sym.Group([outs] + states)\n"
             "r = (sym.list_arguments(), sym.list_outputs(), run(sym, {'data': %r}))")
    assert_parity(cases(
        lstm=fused % (2, "lstm", True, "TNC", (4, 2, 5)),
        gru_ntc=fused % (1, "gru", False, "NTC", (2, 4, 5)),
        rnn_relu=fused % (2, "rnn_relu", False, "TNC", (4, 3, 2)),
        no_next_state="cell = mx.rnn.FusedRNNCell(4, mode='gru')\n"
                      "outs, states = cell.unroll(3, mx.sym.var('data'), layout='TNC')\n"
                      "r = (len(outs), states, outs[0].list_outputs(), cell.state_info)",
        unpack="cell = mx.rnn.FusedRNNCell(2, num_layers=2, mode='lstm', bidirectional=True, prefix='x_')\n"
               "n = 2 * (4 * 2 * (3 + 2 + 2)) + 2 * (4 * 2 * (4 + 2 + 2))\n"
               "un = cell.unpack_weights({'x_parameters': mx.nd.arange(n)})\n"
               "r = (un, cell.pack_weights(un))",
        # (as a variable's __init__ attribute calls it: by _init_weight, whatever the name)
        init="a = mx.nd.zeros((2 * (3 * 4 * (5 + 4 + 2)),))\n"
             "mx.init.FusedRNN(mx.init.Constant(0.25), 4, 1, 'gru', True)._init_weight(mx.init.InitDesc('f_parameters'), a)\n"
             "b = mx.nd.zeros((4 * 3 * (2 + 3 + 2),))\n"
             "mx.init.FusedRNN(None, 3, 1, 'lstm', forget_bias=2.0)._init_weight(mx.init.InitDesc('g_parameters', global_init=mx.init.One()), b)\n"
             "r = (a, b, mx.init.FusedRNN(mx.init.One(), 3, 1, 'lstm').dumps())",
        init_by_name="mx.init.FusedRNN(None, 3, 1, 'lstm')('f_parameters', mx.nd.zeros((84,)))",
        module="cell = mx.rnn.FusedRNNCell(3, mode='lstm', prefix='m_')\n"
               "outs, _ = cell.unroll(2, mx.sym.var('data'), layout='TNC', merge_outputs=True)\n"
               "mod = mx.mod.Module(mx.sym.MakeLoss(outs), label_names=None)\n"
               "mod.bind([('data', (2, 2, 4))]); mod.init_params(mx.init.Constant(0.1))\n"
               "r = mod.get_params()[0]",
        unfused_equals_fused="cell = mx.rnn.FusedRNNCell(3, num_layers=2, mode='lstm', prefix='f_')\n"
                             "x = mx.sym.var('data')\nouts, _ = cell.unroll(4, x, layout='TNC', merge_outputs=True)\n"
                             "ex = outs.simple_bind(mx.cpu(), data=(4, 2, 5))\n"
                             "for k in sorted(ex.arg_dict): ex.arg_dict[k][:] = rs.uniform(-0.5, 0.5, ex.arg_dict[k].shape)\n"
                             "fused_out = ex.forward()[0].copy()\n"
                             "stack = cell.unfuse(); u_outs, _ = stack.unroll(4, x, layout='TNC', merge_outputs=True)\n"
                             "args = stack.pack_weights(cell.unpack_weights({'f_parameters': ex.arg_dict['f_parameters']}))\n"
                             "args['data'] = ex.arg_dict['data']\n"
                             "u = u_outs.bind(mx.cpu(), {k: args[k] for k in u_outs.list_arguments()}).forward()[0]\n"
                             "r = (fused_out, u, sorted(args))",
    ), rtol=1e-5)


def test_convolutional_cells_match_mxnet():
    conv = ("cell = %s\nx = mx.sym.var('data')\n"
            "outs, states = cell.unroll(3, x, layout='NTC', merge_outputs=True)\n"
            "sym = mx.sym.Group([outs] + states)\n"
            "r = (sym.list_arguments(), sym.list_outputs(), cell.state_info, run(sym, {'data': (2, 3, 2, 5, 4)}))")
    assert_parity(cases(
        rnn=conv % "mx.rnn.ConvRNNCell((2, 2, 5, 4), 3)",
        lstm=conv % "mx.rnn.ConvLSTMCell((2, 2, 5, 4), 2, h2h_kernel=(3, 1), i2h_kernel=(1, 3), i2h_pad=(0, 1), prefix='cl_')",
        gru=conv % "mx.rnn.ConvGRUCell((2, 2, 5, 4), 2, activation='tanh', i2h_stride=(2, 1), i2h_pad=(1, 1))",
        dilated=conv % "mx.rnn.ConvRNNCell((2, 2, 5, 4), 2, h2h_dilate=(2, 1), i2h_dilate=(1, 2), i2h_pad=(1, 2), activation='relu')",
        unpack="cell = mx.rnn.ConvLSTMCell((2, 2, 5, 4), 2, prefix='c_')\n"
               "args = {'c_i2h_weight': mx.nd.arange(8 * 2 * 9).reshape((8, 2, 3, 3)), 'c_i2h_bias': mx.nd.arange(8), "
               "'c_h2h_weight': mx.nd.arange(8 * 2 * 9).reshape((8, 2, 3, 3)) * 2, 'c_h2h_bias': mx.nd.arange(8) + 1}\n"
               "un = cell.unpack_weights(args); r = (un, cell.pack_weights(un))",
        even_kernel="mx.rnn.ConvRNNCell((2, 2, 5, 4), 3, h2h_kernel=(2, 3))",
    ), rtol=1e-5)
