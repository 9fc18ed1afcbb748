"""mx.mod.BucketingModule, SequentialModule, PythonModule and PythonLossModule, and Module's
state arrays (state_names, get_states, set_states): the same script under MXNet 1.9.1 and under
mxplug gives the same parameters, outputs, input gradients, metrics and shapes; MXNet loads a
bucketing checkpoint mxplug wrote; bad calls are refused with what was expected."""
import numpy as np
import pytest

from conftest import run_here, run_mxnet_script

# `mx` is MXNet or mxplug; prints one JSON line.
CHAINS = """
import json, numpy as np
rs = np.random.RandomState(0)
X = rs.randn(40, 6).astype('float32')
Y = (X[:, 0] > 0).astype('float32')
start = {'fc1_weight': rs.randn(5, 6) * .3, 'fc1_bias': rs.randn(5) * .1,
         'fc2_weight': rs.randn(2, 5) * .3, 'fc2_bias': rs.randn(2) * .1,
         'fc3_weight': rs.randn(1, 6) * .3, 'fc3_bias': np.zeros(1)}
start = {k: mx.nd.array(v) for k, v in start.items()}
out = {}

# Two Modules chained: the first one's tanh output is the second one's data (auto_wiring renames
# it), the labels go to the second; a momentum SGD, two epochs.
first = mx.mod.Module(mx.sym.Activation(mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=5,
                                                              name='fc1'), act_type='tanh'),
                      label_names=None)
second = mx.mod.Module(mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.var('hidden'),
                                                                  num_hidden=2, name='fc2'),
                                            name='softmax'), data_names=['hidden'])
seq = mx.mod.SequentialModule().add(first).add(second, take_labels=True, auto_wiring=True)
it = mx.io.NDArrayIter(X, Y, batch_size=10)
seq.bind(it.provide_data, it.provide_label, inputs_need_grad=True)
out['names'] = [seq.data_names, seq.output_names, [list(d[:2]) for d in seq.output_shapes],
                [list(d[:2]) for d in seq.label_shapes], [list(d[:2]) for d in second.data_shapes]]
seq.init_params(arg_params=start, aux_params={}, allow_extra=True)
seq.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.5, 'momentum': 0.9})
metric = mx.metric.create('acc')
for epoch in range(2):
    it.reset()
    metric.reset()
    for batch in it:
        seq.forward(batch, is_train=True)
        seq.backward()
        seq.update()
        seq.update_metric(metric, batch.label)
out['train_acc'] = metric.get()[1]
# MXNet's SequentialModule.get_input_grads refuses (bind never sets inputs_need_grad): the first
# module's are the chain's.
out['input_grad'] = first.get_input_grads()[0].asnumpy().tolist()
args, auxs = seq.get_params()
out['params'] = {k: v.asnumpy().tolist() for k, v in sorted(args.items())}
out['pred'] = seq.predict(mx.io.NDArrayIter(X, Y, batch_size=10)).asnumpy().tolist()
out['score'] = seq.score(mx.io.NDArrayIter(X, Y, batch_size=10), 'acc')[0][1]

# A Python loss at the end: the gradient of the squared error, from NumPy.
def grad(scores, labels):
    return 2 * (scores.asnumpy() - labels.asnumpy().reshape(-1, 1))
loss = mx.mod.PythonLossModule(grad_func=grad)
body = mx.mod.Module(mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=1, name='fc3'),
                     label_names=None)
seq = mx.mod.SequentialModule().add(body).add(loss, take_labels=True, auto_wiring=True)
seq.bind(it.provide_data, it.provide_label)
seq.init_params(arg_params=start, aux_params={}, allow_extra=True)
seq.init_optimizer(optimizer_params={'learning_rate': 0.05})
mse = mx.metric.create('mse')
it.reset()
for batch in it:
    seq.forward(batch)
    seq.backward()
    seq.update()
    seq.update_metric(mse, batch.label)
out['loss'] = {'fc3': seq.get_params()[0]['fc3_weight'].asnumpy().tolist(), 'mse': mse.get()[1],
               'shapes': [[list(d[:2]) for d in loss.data_shapes],
                          [list(d[:2]) for d in loss.output_shapes]],
               'grad': loss.get_input_grads()[0].asnumpy().tolist()}

# State arrays: an input that is neither data nor a parameter, on two devices.
net = mx.sym.FullyConnected(mx.sym.var('data') + mx.sym.var('state'), num_hidden=3, name='fc')
mod = mx.mod.Module(net, label_names=None, state_names=['state'], context=[mx.cpu(0), mx.cpu(1)])
mod.bind([('data', (4, 2))], for_training=False)
mod.init_params(mx.init.One())
states = mod.get_states(merge_multi_context=False)
out['states'] = [len(states), len(states[0]), list(states[0][0].shape)]
mod.set_states(value=2)
mod.forward(mx.io.DataBatch([mx.nd.ones((4, 2))]))
out['by_value'] = mod.get_outputs()[0].asnumpy().tolist()
mod.set_states(states=[[mx.nd.ones((2, 2)) * 5, mx.nd.ones((2, 2)) * -1]])
mod.forward(mx.io.DataBatch([mx.nd.ones((4, 2))]))
out['by_arrays'] = mod.get_outputs()[0].asnumpy().tolist()
plain = mx.mod.Module(mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=2), label_names=None)
plain.bind([('data', (4, 2))])
plain.init_params()
out['no_states'] = plain.get_states(merge_multi_context=False)
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def chains(mx):
    return run_here(mx, CHAINS, []), run_mxnet_script(CHAINS, [])


def test_sequential_module_trains_as_mxnet(chains):
    got, want = chains
    assert got["names"] == want["names"] == [
        ["data"], ["softmax_output"], [["softmax_output", [10, 2]]], [["softmax_label", [10]]],
        [["hidden", [10, 5]]]]
    assert sorted(got["params"]) == sorted(want["params"]) == [
        "fc1_bias", "fc1_weight", "fc2_bias", "fc2_weight"]
    for name in want["params"]:
        np.testing.assert_allclose(got["params"][name], want["params"][name], rtol=1e-4,
                                   atol=1e-5, err_msg=name)
    np.testing.assert_allclose(got["input_grad"], want["input_grad"], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(got["pred"], want["pred"], rtol=1e-4, atol=1e-6)
    assert got["train_acc"] == pytest.approx(want["train_acc"])
    assert got["score"] == pytest.approx(want["score"])


def test_python_loss_module_takes_its_gradient_from_grad_func_as_mxnet(chains):
    got, want = chains[0]["loss"], chains[1]["loss"]
    assert got["shapes"] == want["shapes"] == [[["data", [10, 1]]], [["pyloss_output", [10, 1]]]]
    np.testing.assert_allclose(got["fc3"], want["fc3"], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(got["grad"], want["grad"], rtol=1e-4, atol=1e-6)
    assert got["mse"] == pytest.approx(want["mse"], rel=1e-4)


def test_module_state_arrays_as_mxnet(chains):
    got, want = chains
    for key in ("states", "by_value", "by_arrays", "no_states"):
        assert got[key] == want[key], key
    # Each output is the sum over 2 inputs of (1 + state) with weights of one and a zero bias
    # (mx.init.One leaves biases at 0): device 0's half of the batch read state 5, device 1's -1.
    assert got["by_arrays"] == [[12.0] * 3] * 2 + [[0.0] * 3] * 2


def test_chains_refuse_bad_calls(mx):
    with pytest.raises(ValueError, match="unknown meta 'take_label'"):
        mx.mod.SequentialModule().add(mx.mod.PythonLossModule(), take_label=True)
    with pytest.raises(ValueError, match="the chain is empty"):
        mx.mod.SequentialModule().bind([('data', (2, 3))])
    loss = mx.mod.PythonLossModule(grad_func=lambda s, l: s)
    with pytest.raises(ValueError, match=r"data_shapes name \['x'\], the module's data_names "
                                         r"are \['data'\]"):
        loss.bind([('x', (2, 3))])
    with pytest.raises(ValueError, match="only writes its gradients"):
        loss.bind([('data', (2, 3))], grad_req='add')
    with pytest.raises(TypeError, match="grad_func must be callable"):
        mx.mod.PythonLossModule(grad_func=3)
    with pytest.raises(NotImplementedError, match="give grad_func"):
        no_grad = mx.mod.PythonLossModule()
        no_grad.bind([('data', (2, 3))], [('softmax_label', (2,))])
        no_grad.forward(mx.io.DataBatch([mx.nd.ones((2, 3))], [mx.nd.ones((2,))]))
        no_grad.backward()
    # Two chained modules may not share a parameter name.
    a = mx.mod.Module(mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=3, name='fc'),
                      label_names=None)
    b = mx.mod.Module(mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=3, name='fc'),
                      label_names=None)
    seq = mx.mod.SequentialModule().add(a).add(b, auto_wiring=True)
    seq.bind([('data', (2, 3))])
    with pytest.raises(ValueError, match='name "fc_weight" in layer 1 .* already used in layer 0'):
        seq.init_params()
    # A step before the optimizer is there names the module and what to call.
    single = mx.mod.SequentialModule().add(a)
    single.bind([('data', (2, 3))], force_rebind=True)
    single.init_params()
    with pytest.raises(RuntimeError, match="SequentialModule.update: call init_optimizer first"):
        single.update()
    # States: exactly one of states and value, of the bound shapes.
    mod = mx.mod.Module(mx.sym.var('data') * mx.sym.var('state'), label_names=None,
                        state_names=['state'])
    mod.bind([('data', (2, 3))], for_training=False)
    mod.init_params()
    with pytest.raises(ValueError, match="merge_multi_context=True is not supported"):
        mod.get_states()
    with pytest.raises(ValueError, match="exactly one of states and value"):
        mod.set_states()
    with pytest.raises(ValueError, match=r"state has shape \(3,\), the module needs \(2, 3\)"):
        mod.set_states(states=[mx.nd.ones((3,))])


# Buckets of sequence lengths 5 (the default), 3 and 2 over one set of parameters (a position-wise
# layer, a mean over time, a classifier): fit for 3 epochs, then a checkpoint written and loaded.
# argv: the checkpoint prefix.
BUCKETS = """
import json, sys, numpy as np
rs = np.random.RandomState(0)
def sym_gen(key):
    x = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=3, flatten=False, name='fc')
    x = mx.sym.mean(mx.sym.Activation(x, act_type='tanh'), axis=1)
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(x, num_hidden=2, name='out'), name='softmax')
    return net, ('data',), ('softmax_label',)
batches = []
for key in (5, 3, 5, 3, 2):
    X = rs.randn(4, key, 4).astype('float32')
    batches.append((key, X, (X[:, :, 0].mean(axis=1) > 0).astype('float32')))
class Buckets(mx.io.DataIter):
    def __init__(self):
        super(Buckets, self).__init__(4)
        self.i = 0
        self.default_bucket_key = 5
        self.provide_data = [mx.io.DataDesc('data', (4, 5, 4))]
        self.provide_label = [mx.io.DataDesc('softmax_label', (4,))]
    def reset(self):
        self.i = 0
    def next(self):
        if self.i == len(batches):
            raise StopIteration
        key, X, y = batches[self.i]
        self.i += 1
        return mx.io.DataBatch([mx.nd.array(X)], [mx.nd.array(y)], pad=0, bucket_key=key,
                               provide_data=[mx.io.DataDesc('data', X.shape)],
                               provide_label=[mx.io.DataDesc('softmax_label', y.shape)])
def predictions(mod, it):
    return [o[0].asnumpy().tolist() for o, _, _ in mod.iter_predict(it)]
it = Buckets()
out = {}
if sys.argv[1] != 'load':
    start = {'fc_weight': rs.randn(3, 4) * .5, 'fc_bias': rs.randn(3) * .1,
             'out_weight': rs.randn(2, 3) * .5, 'out_bias': np.zeros(2)}
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=5)
    mod.fit(it, num_epoch=3, optimizer='sgd', eval_metric='acc',
            optimizer_params={'learning_rate': 0.5, 'momentum': 0.9},
            arg_params={k: mx.nd.array(v) for k, v in start.items()}, aux_params={})
    args, _ = mod.get_params()
    out.update(params={k: v.asnumpy().tolist() for k, v in sorted(args.items())},
               buckets=sorted(mod._buckets), score=mod.score(it, 'acc')[0][1],
               shapes=[list(d[:2]) for d in mod.data_shapes], pred=predictions(mod, it))
    mod.save_checkpoint(sys.argv[1], 3)
    prefix = sys.argv[1]
else:
    prefix = sys.argv[2]
loaded = mx.mod.BucketingModule.load(prefix, 3, sym_gen=sym_gen, default_bucket_key=5)
loaded.bind(it.provide_data, it.provide_label, for_training=False)
out['loaded_pred'] = predictions(loaded, it)
print(json.dumps(out))
"""


def test_bucketing_module_trains_and_checkpoints_as_mxnet(mx, tmp_path):
    got = run_here(mx, BUCKETS, [str(tmp_path / "ours")])
    want = run_mxnet_script(BUCKETS, [str(tmp_path / "mxnet")])
    assert got["buckets"] == want["buckets"] == [2, 3, 5]
    assert got["shapes"] == want["shapes"] == [["data", [4, 2, 4]]]  # the last batch's bucket
    for name in want["params"]:
        np.testing.assert_allclose(got["params"][name], want["params"][name], rtol=1e-4,
                                   atol=1e-6, err_msg=name)
    np.testing.assert_allclose(np.concatenate(got["pred"]), np.concatenate(want["pred"]),
                               rtol=1e-4, atol=1e-6)
    assert got["score"] == pytest.approx(want["score"])
    # The checkpoint (params, one symbol per bucket, the .buckets keys) loads back in each, and
    # MXNet loads mxplug's to the same predictions.
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("ours")) == [
        "ours-0003.params", "ours-2-symbol.json", "ours-3-symbol.json", "ours-5-symbol.json",
        "ours.buckets"]
    np.testing.assert_allclose(np.concatenate(got["loaded_pred"]), np.concatenate(got["pred"]),
                               rtol=1e-6)
    crossed = run_mxnet_script(BUCKETS, ["load", str(tmp_path / "ours")])
    np.testing.assert_allclose(np.concatenate(crossed["loaded_pred"]),
                               np.concatenate(got["pred"]), rtol=1e-5, atol=1e-7)


def test_buckets_share_one_set_of_parameters(mx):
    def sym_gen(key):
        x = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=2, name='fc')
        return mx.sym.SoftmaxOutput(x, name='softmax'), ('data',), ('softmax_label',)
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=8)
    mod.bind([('data', (8, 3))], [('softmax_label', (8,))])
    mod.init_params()
    mod.init_optimizer(optimizer_params={'learning_rate': 1.0})
    batch = mx.io.DataBatch([mx.nd.ones((4, 3))], [mx.nd.zeros((4,))], bucket_key=4,
                            provide_data=[('data', (4, 3))],
                            provide_label=[('softmax_label', (4,))])
    mod.forward(batch)
    mod.backward()
    mod.update()
    small, default = mod._buckets[4], mod._buckets[8]
    # The same arrays, so the step taken in bucket 4 is bucket 8's weights too.
    assert small._optimizer is default._optimizer
    assert np.array_equal(mod.get_params()[0]['fc_weight'].asnumpy(),
                          default._exec_group.param_arrays[0][0].asnumpy())
    small._exec_group.param_arrays[0][0][:] = 7
    assert (default._exec_group.param_arrays[0][0].asnumpy() == 7).all()
    # A bucket whose parameter has another shape cannot share it.
    wide = mx.mod.Module(mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=5, name='fc'),
                         label_names=None)
    with pytest.raises(mx.base.MXNetError,
                       match=r"fc_weight is shared with shared_exec, whose array is \(2, 3\) "
                             r"float32 on cpu\(0\); this bind needs \(5, 3\)"):
        wide.bind([('data', (8, 3))], shared_module=default)
    with pytest.raises(ValueError, match="default_bucket_key is required"):
        mx.mod.BucketingModule(sym_gen)
