"""The networks the executor is checked and measured on, written once for either framework: each
function takes the framework module (mxplug or MXNet 1.9.1, both imported as mx). Its text is also
run by MXNet 1.9.1's interpreter (tests/python/test_executor.py, tools/bench/executor_bench.py), so
it imports nothing but NumPy."""
import numpy as np


def mlp(mx):
    x = mx.sym.Variable('data')
    x = mx.sym.FullyConnected(x, num_hidden=128, name='fc1')
    x = mx.sym.Activation(x, act_type='relu', name='relu1')
    x = mx.sym.FullyConnected(x, num_hidden=64, name='fc2')
    x = mx.sym.Activation(x, act_type='relu', name='relu2')
    x = mx.sym.FullyConnected(x, num_hidden=10, name='fc3')
    return mx.sym.SoftmaxOutput(x, name='softmax')

def lenet(mx):
    x = mx.sym.Variable('data')
    x = mx.sym.Convolution(x, kernel=(5, 5), num_filter=20, name='conv1')
    x = mx.sym.BatchNorm(x, fix_gamma=False, name='bn1')
    x = mx.sym.Activation(x, act_type='tanh', name='tanh1')
    x = mx.sym.Pooling(x, pool_type='max', kernel=(2, 2), stride=(2, 2), name='pool1')
    x = mx.sym.Convolution(x, kernel=(5, 5), num_filter=50, name='conv2')
    x = mx.sym.BatchNorm(x, name='bn2')
    x = mx.sym.Activation(x, act_type='tanh', name='tanh2')
    x = mx.sym.Pooling(x, pool_type='max', kernel=(2, 2), stride=(2, 2), name='pool2')
    x = mx.sym.Flatten(x, name='flatten')
    x = mx.sym.FullyConnected(x, num_hidden=500, name='fc1')
    x = mx.sym.Activation(x, act_type='tanh', name='tanh3')
    x = mx.sym.Dropout(x, p=0.5, name='drop')
    x = mx.sym.FullyConnected(x, num_hidden=10, name='fc2')
    return mx.sym.SoftmaxOutput(x, name='softmax')

def resnet18(mx):
    def unit(x, nf, stride, dim_match, name):
        bn1 = mx.sym.BatchNorm(x, fix_gamma=False, eps=2e-5, momentum=0.9, name=name + '_bn1')
        act1 = mx.sym.Activation(bn1, act_type='relu', name=name + '_relu1')
        conv1 = mx.sym.Convolution(act1, num_filter=nf, kernel=(3, 3), stride=stride, pad=(1, 1),
                                   no_bias=True, name=name + '_conv1')
        bn2 = mx.sym.BatchNorm(conv1, fix_gamma=False, eps=2e-5, momentum=0.9, name=name + '_bn2')
        act2 = mx.sym.Activation(bn2, act_type='relu', name=name + '_relu2')
        conv2 = mx.sym.Convolution(act2, num_filter=nf, kernel=(3, 3), pad=(1, 1), no_bias=True,
                                   name=name + '_conv2')
        short = x if dim_match else mx.sym.Convolution(act1, num_filter=nf, kernel=(1, 1), stride=stride,
                                                       no_bias=True, name=name + '_sc')
        return conv2 + short
    x = mx.sym.Variable('data')
    x = mx.sym.BatchNorm(x, fix_gamma=True, eps=2e-5, name='bn_data')
    x = mx.sym.Convolution(x, num_filter=64, kernel=(3, 3), pad=(1, 1), no_bias=True, name='conv0')
    for stage, nf in enumerate([64, 128, 256, 512]):
        for u in range(2):
            stride = (2, 2) if stage > 0 and u == 0 else (1, 1)
            x = unit(x, nf, stride, stage == 0 or u > 0, 'stage%d_unit%d' % (stage + 1, u + 1))
    x = mx.sym.BatchNorm(x, fix_gamma=False, eps=2e-5, name='bn1')
    x = mx.sym.Activation(x, act_type='relu', name='relu1')
    x = mx.sym.Pooling(x, global_pool=True, kernel=(7, 7), pool_type='avg', name='pool1')
    x = mx.sym.Flatten(x, name='flatten')
    x = mx.sym.FullyConnected(x, num_hidden=10, name='fc1')
    return mx.sym.SoftmaxOutput(x, name='softmax')

SHAPES = {'mlp': (16, 784), 'lenet': (8, 1, 28, 28), 'resnet18': (4, 3, 32, 32)}

def random_params(ex, seed):
    rng = np.random.RandomState(seed)
    for name, a in sorted(ex.arg_dict.items()):
        if name.endswith('gamma'):
            v = rng.uniform(0.5, 1.5, a.shape)
        elif name == 'softmax_label':
            v = rng.randint(0, 10, a.shape)
        elif name.endswith('weight'):  # scaled by fan-in, so that activations stay near 1 through the depth
            v = rng.normal(0, 1.0 / np.sqrt(np.prod(a.shape[1:])), a.shape)
        else:
            v = rng.normal(0, 0.1 if name != 'data' else 1.0, a.shape)
        a[:] = v.astype(np.float32)
    for name, a in sorted(ex.aux_dict.items()):
        v = rng.uniform(0.5, 1.5, a.shape) if name.endswith('var') else rng.normal(0, 0.2, a.shape)
        a[:] = v.astype(np.float32)
