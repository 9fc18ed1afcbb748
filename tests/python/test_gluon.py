"""Gluon (mx.gluon): the same snippets under MXNet 1.9.1 and under mxplug give the same parameter
names, shapes and reprs, the same outputs, losses and gradients, the same parameters after
training with a Trainer (one context and two), the same batches from a DataLoader, and the same
errors; files written by save_parameters and export on one side load on the other."""
import numpy as np
import pytest

from conftest import run_here, run_mxnet_script
from parity import assert_parity

# Seen by every case: `fill` sets a net's parameters from a seeded generator, in name order, so
# that both sides start from the same values (positive where a variance or scale must be).
PRE = """
gluon, nd, autograd = mx.gluon, mx.nd, mx.autograd
rs = np.random.RandomState(3)
def fill(net):
    for name, p in sorted(net.collect_params().items()):
        positive = name.endswith('running_var') or name.endswith('gamma')
        p.set_data(mx.nd.array(rs.uniform(0.5, 1.5, p.shape) if positive else rs.uniform(-0.5, 0.5, p.shape)))
def data(*shape):
    return mx.nd.array(rs.uniform(-1, 1, shape))
def params(net):
    return {k: v.data() for k, v in net.collect_params().items()}
def mlp():
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Dense(16, activation='relu'), gluon.nn.Dense(8, activation='tanh'), gluon.nn.Dense(3))
    return net
def cnn():
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Conv2D(4, kernel_size=3, padding=1, use_bias=False), gluon.nn.BatchNorm(), gluon.nn.Activation('relu'),
                gluon.nn.MaxPool2D(), gluon.nn.Conv2D(6, 3, strides=2, use_bias=False), gluon.nn.GlobalAvgPool2D(),
                gluon.nn.Flatten(), gluon.nn.Dense(5))
    return net
def train(net, x, y, optimizer, optimizer_params, steps=3, ctx=None, loss=None):
    net.initialize(ctx=ctx)
    net(x[:1] if ctx is None else x[:1].as_in_context(ctx[0]))
    fill(net)
    trainer = gluon.Trainer(net.collect_params(), optimizer, optimizer_params)
    loss = loss or gluon.loss.SoftmaxCrossEntropyLoss()
    losses = []
    for _ in range(steps):
        parts = [(x, y)] if ctx is None else list(zip(gluon.utils.split_and_load(x, ctx),
                                                    gluon.utils.split_and_load(y, ctx)))
        with autograd.record():
            ls = [loss(net(a), b) for a, b in parts]
        for l in ls:
            l.backward()
        trainer.step(x.shape[0])
        losses.append(float(sum(l.sum().asscalar() for l in ls)))
    return losses, {k: v.list_data()[0] for k, v in net.collect_params().items()}
"""


def cases(**snippets):
    return {name: PRE + code for name, code in snippets.items()}


def test_names_shapes_and_reprs_match_mxnet():
    assert_parity(cases(
        mlp="net = mlp(); net.initialize(); net(data(2, 7)); "
            "r = (sorted((k, v.shape, str(np.dtype(v.dtype))) for k, v in net.collect_params().items()), repr(net), "
            "net.name, net.prefix, net[1].name, len(net))",
        cnn="net = cnn(); net.initialize(); net(data(2, 3, 8, 8)); "
            "r = (sorted((k, v.shape, v.grad_req) for k, v in net.collect_params().items()), repr(net))",
        select="net = cnn(); r = sorted(net.collect_params('.*weight|.*gamma').keys())",
        nested="class Block2(gluon.HybridBlock):\n"
               "    def __init__(self, **kw):\n"
               "        super(Block2, self).__init__(**kw)\n"
               "        with self.name_scope():\n"
               "            self.a = gluon.nn.Dense(3, in_units=2)\n"
               "            self.b = gluon.nn.Dense(3, in_units=2, prefix='mine_')\n"
               "            self.c = self.params.get('scale', shape=(1,))\n"
               "    def hybrid_forward(self, F, x, c):\n"
               "        return F.broadcast_mul(self.a(x) + self.b(x), c)\n"
               "outer = Block2(); inner = Block2(prefix='second_', params=outer.collect_params())\n"
               "r = (sorted(outer.collect_params().keys()), sorted(inner.collect_params().keys()), "
               "sorted(outer._collect_params_with_prefix().keys()), repr(outer.collect_params()), repr(inner.a))",
        layers="r = [repr(b) for b in (gluon.nn.Dense(4, in_units=3), gluon.nn.Dropout(0.3), gluon.nn.BatchNorm(in_channels=2), "
               "gluon.nn.Conv2D(8, (3, 2), strides=2, padding=1, in_channels=3, activation='relu'), "
               "gluon.nn.Conv1DTranspose(2, 3, strides=2, output_padding=1), gluon.nn.MaxPool2D(3, 2, 1), gluon.nn.AvgPool1D(), "
               "gluon.nn.GlobalMaxPool3D(), gluon.nn.Embedding(10, 4), gluon.nn.LeakyReLU(0.1), gluon.nn.Flatten(), "
               "gluon.nn.LayerNorm(in_channels=3), gluon.nn.Activation('sigmoid'))]",
        parameter="p = gluon.Parameter('w', shape=(2, 0), allow_deferred_init=True); p.initialize(); "
                  "r = (repr(p), p.shape, p.grad_req, p.list_ctx())",
    ))


def test_layer_outputs_and_gradients_match_mxnet():
    layer = ("net = %s; net.initialize(); x = data(*%r); net(x); fill(net); x.attach_grad()\n"
             "with autograd.record():\n    y = net(x)\ny.backward(mx.nd.array(rs.uniform(-1, 1, y.shape)))\n"
             "r = (y, x.grad, {k: v.grad() for k, v in net.collect_params().items() if v.grad_req != 'null'})")
    nets = {
        "dense": ("gluon.nn.Dense(5, activation='sigmoid')", (3, 4)),
        "dense_no_flatten": ("gluon.nn.Dense(5, flatten=False, use_bias=False)", (2, 3, 4)),
        "conv1d": ("gluon.nn.Conv1D(3, 3, strides=2, padding=1, dilation=2)", (2, 2, 9)),
        "conv2d_groups": ("gluon.nn.Conv2D(4, (3, 3), groups=2, activation='tanh')", (2, 4, 6, 6)),
        "conv3d": ("gluon.nn.Conv3D(2, 2)", (1, 2, 4, 4, 4)),
        "conv2d_transpose": ("gluon.nn.Conv2DTranspose(3, 3, strides=2, padding=1, output_padding=1)", (2, 2, 4, 4)),
        "pools": ("gluon.nn.HybridSequential(); net.add(gluon.nn.MaxPool2D(3, 2, 1, ceil_mode=True), "
                  "gluon.nn.AvgPool2D(2, count_include_pad=False, padding=1), gluon.nn.GlobalMaxPool2D())", (2, 3, 9, 9)),
        "batchnorm": ("gluon.nn.BatchNorm(axis=1, momentum=0.8, epsilon=1e-3)", (4, 3, 2, 2)),
        "batchnorm_relu": ("gluon.nn.BatchNormReLU(momentum=0.8)", (4, 3, 2, 2)),
        "layernorm": ("gluon.nn.LayerNorm()", (3, 5)),
        "instancenorm": ("gluon.nn.InstanceNorm(scale=True)", (2, 3, 4)),
        "groupnorm": ("gluon.nn.GroupNorm(num_groups=2)", (2, 4, 3)),
        # (SELU apart: MXNet 1.9.1's SELU gradient is lambda * (y + alpha) for x < 0, not y + lambda * alpha)
        "activations": ("gluon.nn.HybridSequential(); net.add(gluon.nn.LeakyReLU(0.2), gluon.nn.ELU(0.5), "
                        "gluon.nn.GELU(), gluon.nn.Swish(), gluon.nn.PReLU())", (3, 4)),
        "embedding": ("gluon.nn.Embedding(6, 3)", (2, 4)),
    }
    snippets = {}
    for name, (net, shape) in nets.items():
        code = layer % (net, shape)
        if name.startswith(("pools", "activations")):  # a container: built in two statements
            code = code.replace("net = " + net + ";", "net = " + net.replace("; net.add", "\nnet.add") + ";", 1)
        if name == "embedding":
            code = code.replace("x = data(*%r)" % (shape,), "x = mx.nd.array(rs.randint(0, 6, %r))" % (shape,))
            code = code.replace("; x.attach_grad()\n", "\n").replace("x.grad, ", "")
        snippets[name] = code
    # BatchNorm in training updates its running statistics; in inference it uses them.
    snippets["batchnorm_running_stats"] = (
        "net = gluon.nn.BatchNorm(momentum=0.7); net.initialize(); x = data(5, 2, 3); net(x); fill(net)\n"
        "with autograd.record():\n    net(x)\nr = (net.running_mean.data(), net.running_var.data(), net(x))")
    snippets["batchnorm_relu_names"] = ("net = gluon.nn.BatchNormReLU(scale=False, in_channels=3)\n"
                                        "r = (repr(net), net.name, sorted(net.collect_params().keys()))")
    assert_parity(cases(**snippets), rtol=1e-5)


def test_selu_and_its_gradient(mx):
    lam, alpha = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717
    x = np.linspace(-2, 2, 9)
    a = mx.nd.array(x, dtype="float64")
    a.attach_grad()
    net = mx.gluon.nn.SELU()
    with mx.autograd.record():
        y = net(a)
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), np.where(x > 0, lam * x, lam * alpha * (np.exp(x) - 1)), rtol=1e-12)
    np.testing.assert_allclose(a.grad.asnumpy(), np.where(x > 0, lam, lam * alpha * np.exp(x)), rtol=1e-12)


def test_losses_match_mxnet():
    loss = ("pred, label = %s; pred.attach_grad(); L = %s\n"
            "with autograd.record():\n    l = L(pred, label%s)\nl.backward()\nr = (l, pred.grad)")
    losses = {
        "l2": ("data(4, 3), data(4, 3)", "gluon.loss.L2Loss()", ""),
        "l1_weighted": ("data(4, 3), data(4, 3)", "gluon.loss.L1Loss(weight=2.)", ", data(4, 1)"),
        "softmax_ce": ("data(4, 5), mx.nd.array([0, 4, 2, 1])", "gluon.loss.SoftmaxCrossEntropyLoss()", ""),
        "softmax_ce_dense": ("data(4, 5), mx.nd.softmax(data(4, 5))",
                             "gluon.loss.SoftmaxCELoss(sparse_label=False, axis=1)", ""),
        "sigmoid_bce": ("data(4, 3), mx.nd.array(rs.randint(0, 2, (4, 3)))", "gluon.loss.SigmoidBCELoss()", ""),
        "sigmoid_bce_pos_weight": ("data(4, 3), mx.nd.array(rs.randint(0, 2, (4, 3)))",
                                   "gluon.loss.SigmoidBinaryCrossEntropyLoss()", ", None, mx.nd.array([1., 2, 3])"),
        "sigmoid_bce_from_sigmoid": ("mx.nd.sigmoid(data(4, 3)), mx.nd.array(rs.randint(0, 2, (4, 3)))",
                                     "gluon.loss.SigmoidBCELoss(from_sigmoid=True)", ""),
        "kldiv": ("mx.nd.log_softmax(data(3, 4)), mx.nd.softmax(data(3, 4))", "gluon.loss.KLDivLoss()", ""),
        "huber": ("data(4, 3) * 3, data(4, 3)", "gluon.loss.HuberLoss(rho=0.5)", ""),
        "hinge": ("data(4, 3), mx.nd.array(rs.choice([-1, 1], (4, 3)))", "gluon.loss.HingeLoss()", ""),
        "squared_hinge": ("data(4, 3), mx.nd.array(rs.choice([-1, 1], (4, 3)))", "gluon.loss.SquaredHingeLoss(margin=.5)", ""),
        "logistic": ("data(4, 3), mx.nd.array(rs.randint(0, 2, (4, 3)))", "gluon.loss.LogisticLoss(label_format='binary')", ""),
        "poisson": ("data(4, 3), mx.nd.array(rs.randint(0, 4, (4, 3)))", "gluon.loss.PoissonNLLLoss()", ""),
        "poisson_from_rates": ("mx.nd.exp(data(4, 3)), mx.nd.array(rs.randint(0, 4, (4, 3)))",
                               "gluon.loss.PoissonNLLLoss(from_logits=False)", ""),
    }
    snippets = {name: loss % spec for name, spec in losses.items()}
    # (MXNet's compute_full multiplies in place, which its autograd refuses while recording.)
    snippets["poisson_full"] = ("r = gluon.loss.PoissonNLLLoss(compute_full=True)(data(4, 3), "
                                "mx.nd.array(rs.randint(0, 4, (4, 3))))")
    snippets["triplet"] = ("pred, pos, neg = data(3, 4), data(3, 4), data(3, 4); pred.attach_grad()\n"
                           "with autograd.record():\n    l = gluon.loss.TripletLoss(margin=.5)(pred, pos, neg)\n"
                           "l.backward()\nr = (l, pred.grad)")
    snippets["cosine"] = ("a, b = data(3, 4), data(3, 4); a.attach_grad()\n"
                          "with autograd.record():\n    l = gluon.loss.CosineEmbeddingLoss(margin=.2)(a, b, mx.nd.array([1, -1, 1]))\n"
                          "l.backward()\nr = (l, a.grad)")
    snippets["sdml"] = ("a, b = data(5, 3), data(5, 3); a.attach_grad(); b.attach_grad()\n"
                        "with autograd.record():\n    l = gluon.loss.SDMLLoss(smoothing_parameter=0.2)(a, b)\n"
                        "l.backward()\nr = (l, a.grad, b.grad)")
    snippets["ctc"] = ("pred, label = data(2, 6, 5), mx.nd.array([[1, 3, -1], [2, 2, 0]]); pred.attach_grad()\n"
                       "with autograd.record():\n    l = gluon.loss.CTCLoss()(pred, label)\nl.backward()\nr = (l, pred.grad)")
    snippets["ctc_lengths_tnc"] = ("pred, label = data(6, 2, 5), mx.nd.array([[1, 2], [3, 3], [0, 1]])\n"
                                   "r = gluon.loss.CTCLoss('TNC', 'TN', weight=0.5)(pred, label, mx.nd.array([5, 6]), "
                                   "mx.nd.array([2, 3]), mx.nd.array([1.0, 2.0]))")
    assert_parity(cases(**snippets), rtol=1e-5)


def test_training_with_a_trainer_matches_mxnet():
    assert_parity(cases(
        mlp_sgd="x, y = data(8, 7), mx.nd.array(rs.randint(0, 3, 8)); "
                "r = train(mlp(), x, y, 'sgd', {'learning_rate': 0.5, 'momentum': 0.9, 'wd': 0.01})",
        cnn_adam="x, y = data(6, 3, 8, 8), mx.nd.array(rs.randint(0, 5, 6)); "
                 "r = train(cnn(), x, y, 'adam', {'learning_rate': 0.01})",
        two_contexts="x, y = data(8, 7), mx.nd.array(rs.randint(0, 3, 8)); "
                     "r = train(mlp(), x, y, 'sgd', {'learning_rate': 0.5, 'momentum': 0.9}, ctx=[mx.cpu(0), mx.cpu(1)])",
        hybridized="net = mlp(); net.hybridize(); x, y = data(8, 7), mx.nd.array(rs.randint(0, 3, 8)); "
                   "r = train(net, x, y, 'nag', {'learning_rate': 0.1, 'momentum': 0.5}, loss=gluon.loss.SoftmaxCELoss())",
        lr_and_states="import tempfile, os\n"
                      "net = mlp(); x, y = data(8, 7), mx.nd.array(rs.randint(0, 3, 8)); net.initialize(); net(x); fill(net)\n"
                      "t = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.2, 'momentum': 0.9})\n"
                      "with autograd.record():\n    l = gluon.loss.L2Loss()(net(x), mx.nd.one_hot(y, 3))\n"
                      "l.backward(); t.step(8); t.set_learning_rate(0.05)\n"
                      "f = os.path.join(tempfile.mkdtemp(), 's'); t.save_states(f)\n"
                      "t2 = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.2, 'momentum': 0.9}); t2.load_states(f)\n"
                      "with autograd.record():\n    l = gluon.loss.L2Loss()(net(x), mx.nd.one_hot(y, 3))\n"
                      "l.backward(); t2.step(8)\n"
                      "r = (t.learning_rate, t2.learning_rate, params(net))",
        grad_req_add="net = gluon.nn.Dense(2, in_units=3); net.initialize(); fill(net); net.collect_params().setattr('grad_req', 'add')\n"
                     "x = data(4, 3)\n"
                     "for _ in range(2):\n    with autograd.record():\n        l = net(x).sum()\n    l.backward()\n"
                     "g = net.weight.grad().copy(); net.collect_params().zero_grad(); r = (g, net.weight.grad())",
    ), rtol=1e-5)


def test_recurrent_layers_and_cells_match_mxnet():
    layer = ("net = %s; net.initialize(); x = data(*%r); net(x); fill(net); x.attach_grad()\n"
             "states = net.begin_state(batch_size=x.shape[net._layout.find('N')])\n"
             "with autograd.record():\n    y, s = net(x, states)\n    l = (y * y).sum() + sum((t * t).sum() for t in s)\n"
             "l.backward()\n"
             "r = (y, s, x.grad, {k: v.grad() for k, v in net.collect_params().items()}, repr(net), "
             "sorted(net._collect_params_with_prefix().keys()))")
    cell = ("cell = %s; cell.initialize(); x = data(2, 4, 3); cell.unroll(4, x); fill(cell); x.attach_grad()\n"
            "with autograd.record():\n    out, st = cell.unroll(4, x, layout='NTC', merge_outputs=True)\n"
            "    l = (out * out).sum()\n"
            "l.backward()\nr = (out, st, x.grad, repr(cell), sorted(cell.collect_params().keys()))")
    assert_parity(cases(
        lstm=layer % ("gluon.rnn.LSTM(5, num_layers=2, bidirectional=True)", (4, 2, 3)),
        gru_ntc=layer % ("gluon.rnn.GRU(4, layout='NTC')", (2, 5, 3)),
        rnn_tanh=layer % ("gluon.rnn.RNN(3, num_layers=2, activation='tanh', input_size=3)", (4, 2, 3)),
        no_states="net = gluon.rnn.LSTM(3); net.initialize(); y = net(data(5, 2, 4)); r = (type(y).__name__, y.shape)",
        hybridized_lstm=(layer % ("gluon.rnn.LSTM(4, num_layers=2, layout='NTC')", (2, 5, 3))).replace(
            "fill(net);", "fill(net); net.hybridize();"),
        hybridized_gru_twice=(layer % ("gluon.rnn.GRU(3, bidirectional=True)", (6, 2, 3))).replace(
            "fill(net);", "fill(net); net.hybridize(); net(data(4, 2, 3), net.begin_state(2));"),
        lstm_in_predict_mode="net = gluon.rnn.LSTM(4, num_layers=3, dropout=0.5); net.initialize(); x = data(5, 2, 3); net(x); fill(net)\n"
                             "r = (net(x), net(x, net.begin_state(2))[1])",
        lstm_cell=cell % "gluon.rnn.LSTMCell(5)",
        gru_cell=cell % "gluon.rnn.GRUCell(4, input_size=3)",
        stacked=cell % "gluon.rnn.SequentialRNNCell(); cell.add(gluon.rnn.RNNCell(4, activation='relu')); "
                       "cell.add(gluon.rnn.ResidualCell(gluon.rnn.GRUCell(4)))",
        bidirectional=cell % "gluon.rnn.BidirectionalCell(gluon.rnn.LSTMCell(3), gluon.rnn.GRUCell(2))",
        zoneout_in_inference="cell = gluon.rnn.ZoneoutCell(gluon.rnn.GRUCell(3), zoneout_outputs=0.5, zoneout_states=0.5)\n"
                             "cell.initialize(); x = data(2, 4, 3); cell.unroll(4, x); fill(cell)\n"
                             "r = cell.unroll(4, x, merge_outputs=True) + (repr(cell),)",
        step="cell = gluon.rnn.LSTMCell(3, input_size=2); cell.initialize(); fill(cell)\n"
             "out, st = cell(data(4, 2), cell.begin_state(batch_size=4)); r = (out, st)",
    ), rtol=1e-5)


def test_model_zoo_matches_mxnet():
    # Weights scaled by their fan-in keep a deep net's activations near 1, where the two sides'
    # rounding stays within the tolerance (unscaled, Inception's outputs reach 1e35).
    zoo = ("net = gluon.model_zoo.vision.get_model(%r, classes=10); net.initialize(); x = data(1, 3, %d, %d)\n"
           "with autograd.predict_mode():\n    net(x)\nfill(net)\n"
           "for name, p in sorted(net.collect_params().items()):\n"
           "    if name.endswith('weight'):\n"
           "        p.set_data(p.data() * (3.0 / np.prod(p.shape[1:])) ** 0.5)\n"
           "r = (net(x), sorted((k, v.shape) for k, v in net.collect_params().items()), "
           "sorted(net._collect_params_with_prefix().keys()))")
    assert_parity(cases(
        resnet18_v1=zoo % ("resnet18_v1", 64, 64),
        resnet50_v2=zoo % ("resnet50_v2", 32, 32),
        vgg11_bn=zoo % ("vgg11_bn", 32, 32),
        densenet121=zoo % ("densenet121", 224, 224),
        squeezenet1_0=zoo % ("squeezenet1.0", 224, 224),
        squeezenet1_1=zoo % ("squeezenet1.1", 224, 224),
        inceptionv3=zoo % ("inceptionv3", 299, 299),
        mobilenet=zoo % ("mobilenet0.25", 64, 64),
        mobilenet_v2=zoo % ("mobilenetv2_0.5", 64, 64),
        other_widths="r = [sorted((k, v.shape) for k, v in gluon.model_zoo.vision.get_model(n, classes=3).collect_params().items()) "
                     "for n in ('mobilenet0.75', 'mobilenetv2_1.0', 'densenet161')]",
        alexnet_names="r = sorted(gluon.model_zoo.vision.alexnet(classes=5).collect_params().keys())",
        unknown="r = gluon.model_zoo.vision.get_model('resnet19_v1')",
        known_names="try:\n    gluon.model_zoo.vision.get_model('resnet19_v1')\nexcept ValueError as e:\n    r = str(e)",
        concurrent="Concurrent, HybridConcurrent, Identity = gluon.contrib.nn.Concurrent, gluon.contrib.nn.HybridConcurrent, gluon.contrib.nn.Identity\n"
                   "net = HybridConcurrent(axis=1)\nwith net.name_scope():\n    net.add(gluon.nn.Dense(3), Identity(), gluon.nn.Dense(2))\n"
                   "net.initialize(); x = data(2, 4); net(x); fill(net)\n"
                   "seq = Concurrent()\nseq.add(Identity(), Identity())\n"
                   "r = (net(x), seq(x), repr(net), sorted(net.collect_params().keys()))",
    ), rtol=1e-4)


def test_pretrained_parameters_from_mxnet_load(mx, tmp_path):
    # MXNet's model zoo files are save_parameters files named <model>-<hash>.params under root.
    script = """
import sys
net = mx.gluon.model_zoo.vision.resnet18_v2(classes=7)
rs = np.random.RandomState(2)
x = mx.nd.array(rs.uniform(-1, 1, (2, 3, 32, 32)))
if sys.argv[2] == 'write':
    net.initialize()
    net(x)
    for name, p in sorted(net.collect_params().items()):
        p.set_data(mx.nd.array(rs.uniform(0.5, 1.5, p.shape) if name.endswith('var') else rs.uniform(-.2, .2, p.shape)))
    net.save_parameters(sys.argv[1] + '/resnet18_v2-0123abcd.params')
else:
    net = mx.gluon.model_zoo.vision.get_model('resnet18_v2', classes=7, pretrained=True, root=sys.argv[1])
print(json.dumps(net(x).asnumpy().tolist()))
"""
    script = "import json, numpy as np\n" + script
    written = np.array(run_mxnet_script(script, [str(tmp_path), "write"]))
    loaded = np.array(run_here(mx, script, [str(tmp_path), "read"]))
    np.testing.assert_allclose(loaded, written, rtol=1e-4, atol=1e-5)
    with pytest.raises(IOError, match="resnet34_v1-<hash>.params"):
        mx.gluon.model_zoo.vision.resnet34_v1(pretrained=True, root=str(tmp_path))


def test_data_loading_matches_mxnet():
    assert_parity(cases(
        batches="ds = gluon.data.ArrayDataset(mx.nd.arange(20).reshape((10, 2)), np.arange(10) * 10)\n"
                "r = [[list(b) for b in gluon.data.DataLoader(ds, batch_size=4, last_batch=lb)] "
                "for lb in ('keep', 'discard', 'rollover')] + [len(gluon.data.DataLoader(ds, 3, last_batch='discard'))]",
        sample_types="ds = gluon.data.ArrayDataset(mx.nd.arange(6), [1, 2, 3, 4, 5, 6])\n"
                     "r = (type(ds[0][0]).__name__, ds[1], list(gluon.data.DataLoader(ds, 2))[0])",
        shuffled="np.random.seed(5); ds = gluon.data.SimpleDataset(list(range(10)))\n"
                 "r = [b for b in gluon.data.DataLoader(ds, batch_size=3, shuffle=True)]",
        transforms="ds = gluon.data.ArrayDataset(mx.nd.arange(8).reshape((4, 2)), np.arange(4))\n"
                   "t = ds.transform_first(lambda x: x * 2); f = ds.filter(lambda s: s[1] % 2 == 0)\n"
                   "r = (t[1], len(f), f[1], ds.take(2)[1], ds.shard(3, 1)[0], len(ds.shard(3, 2)), "
                   "ds.transform(lambda x, y: (y, x), lazy=False)[2])",
        samplers="r = (list(gluon.data.BatchSampler(gluon.data.SequentialSampler(7, 2), 3, 'keep')), "
                 "len(gluon.data.BatchSampler(gluon.data.SequentialSampler(7), 3, 'discard')))",
        to_tensor="x = mx.nd.array(rs.randint(0, 256, (4, 5, 3)), dtype='uint8')\n"
                  "t = gluon.data.vision.transforms.Compose([gluon.data.vision.transforms.ToTensor(), "
                  "gluon.data.vision.transforms.Normalize((0.5, 0.4, 0.3), (0.2, 0.3, 0.4))])\n"
                  "r = t(x)",
        split="r = (gluon.utils.split_data(mx.nd.arange(10), 3, even_split=False), "
              "gluon.utils.split_and_load(mx.nd.arange(12).reshape((4, 3)), [mx.cpu(0), mx.cpu(1)]))",
        clip="a, b = data(3, 2) * 4, data(5) * 4; n = gluon.utils.clip_global_norm([a, b], 1.0); r = (n, a, b)",
    ))


def test_bad_use_raises_as_mxnet():
    assert_parity(cases(
        uninitialized="net = gluon.nn.Dense(3, in_units=2); r = net.weight.data()",
        deferred="net = gluon.nn.Dense(3); net.initialize(); r = net.weight.data()",
        hybrid_child="net = gluon.nn.HybridSequential(); r = net.add(gluon.nn.Sequential())",
        shape_mismatch="d = gluon.ParameterDict('p_'); d.get('w', shape=(2, 3)); r = d.get('w', shape=(2, 4))",
        stale_gradient="net = gluon.nn.Dense(2, in_units=3); net.initialize(); t = gluon.Trainer(net.collect_params(), 'sgd')\n"
                       "r = t.step(1)",
        grad_of_null="p = gluon.Parameter('q', shape=(2,), grad_req='null'); p.initialize(); r = p.grad()",
        wrong_context="net = gluon.nn.Dense(2, in_units=3); net.initialize(ctx=mx.cpu(1)); r = net.weight.data(mx.cpu(0))",
        symbol_and_array="net = gluon.nn.Dense(2, in_units=3); net.initialize(); r = net(mx.nd.ones((1, 3)), mx.sym.var('x'))",
    ), messages={"hybrid_child": "Children of HybridBlock must also be HybridBlock",
                 "stale_gradient": "has not been updated by backward since last `step`",
                 "uninitialized": "has not been initialized",
                 "deferred": "initialization was deferred"})


SAVE = """
import sys
gluon = mx.gluon
net = gluon.nn.HybridSequential()
with net.name_scope():
    net.add(gluon.nn.Conv2D(3, 3, in_channels=2), gluon.nn.BatchNorm(in_channels=3), gluon.nn.Flatten(),
            gluon.nn.Dense(4, in_units=48))
net.initialize()
rs = np.random.RandomState(0)
for name, p in sorted(net.collect_params().items()):
    p.set_data(mx.nd.array(rs.uniform(0.5, 1.5, p.shape)))
x = mx.nd.array(rs.uniform(-1, 1, (2, 2, 6, 6)))
folder, mode = sys.argv[1], sys.argv[2]
if mode == 'write':
    net.save_parameters(folder + '/net.params')
    net.hybridize()
    net(x)
    net.export(folder + '/net')
    net.save(folder + '/whole')
    print(json.dumps(net(x).asnumpy().tolist()))
else:
    other = gluon.nn.HybridSequential()
    with other.name_scope():
        other.add(gluon.nn.Conv2D(3, 3, in_channels=2), gluon.nn.BatchNorm(in_channels=3), gluon.nn.Flatten(),
                  gluon.nn.Dense(4, in_units=48))
    other.load_parameters(folder + '/net.params')
    imported = gluon.SymbolBlock.imports(folder + '/net-symbol.json', ['data'], folder + '/net-0000.params')
    whole = gluon.nn.HybridSequential()
    with whole.name_scope():
        whole.add(gluon.nn.Conv2D(3, 3, in_channels=2), gluon.nn.BatchNorm(in_channels=3), gluon.nn.Flatten(),
                  gluon.nn.Dense(4, in_units=48))
    whole.load(folder + '/whole')
    print(json.dumps([other(x).asnumpy().tolist(), imported(x).asnumpy().tolist(), whole(x).asnumpy().tolist(),
                      sorted(whole.collect_params().keys())]))
"""


def test_saved_parameters_and_exported_models_cross_with_mxnet(mx, tmp_path):
    script = "import json, numpy as np\n" + SAVE
    run = {"mxplug": lambda argv: run_here(mx, script, argv), "mxnet": lambda argv: run_mxnet_script(script, argv)}
    saved = []
    for writer, reader in (("mxplug", "mxnet"), ("mxnet", "mxplug")):
        folder = tmp_path / writer
        folder.mkdir()
        written = np.array(run[writer]([str(folder), "write"]))
        loaded, imported, whole, names = run[reader]([str(folder), "read"])
        loaded, imported, whole = np.array(loaded), np.array(imported), np.array(whole)
        saved.append(names)
        # (the two frameworks' float32 convolutions round differently: 1e-4)
        np.testing.assert_allclose(loaded, written, rtol=1e-4, err_msg="%s read %s's save_parameters" % (reader, writer))
        np.testing.assert_allclose(imported, written, rtol=1e-4, err_msg="%s imported %s's export" % (reader, writer))
        np.testing.assert_allclose(whole, written, rtol=1e-4, err_msg="%s loaded %s's Block.save" % (reader, writer))
    assert saved[0] == saved[1]  # Block.load renames the parameters after the saved blocks, on both
