"""The networks of train_mnist.py, written once for either framework: each function takes the
framework module (mxplug, or MXNet 1.9.1 in tools/bench/train_bench.py) imported as mx."""


def mlp(mx):
    """The seed's MLP: 784-128-64-10."""
    x = mx.sym.Variable("data")
    x = mx.sym.FullyConnected(x, num_hidden=128, name="fc1")
    x = mx.sym.Activation(x, act_type="relu", name="relu1")
    x = mx.sym.FullyConnected(x, num_hidden=64, name="fc2")
    x = mx.sym.Activation(x, act_type="relu", name="relu2")
    x = mx.sym.FullyConnected(x, num_hidden=10, name="fc3")
    return mx.sym.SoftmaxOutput(x, name="softmax")


def lenet(mx):
    """LeNet with BatchNorm: two 5x5 convolution + BatchNorm + ReLU + 2x2 max-pooling layers
    (20 and 50 filters), then fully connected 500 and 10."""
    x = mx.sym.Variable("data")
    for i, filters in ((1, 20), (2, 50)):
        x = mx.sym.Convolution(x, kernel=(5, 5), num_filter=filters, name="conv%d" % i)
        x = mx.sym.BatchNorm(x, fix_gamma=False, name="bn%d" % i)
        x = mx.sym.Activation(x, act_type="relu", name="relu%d" % i)
        x = mx.sym.Pooling(x, pool_type="max", kernel=(2, 2), stride=(2, 2), name="pool%d" % i)
    x = mx.sym.Flatten(x, name="flatten")
    x = mx.sym.FullyConnected(x, num_hidden=500, name="fc1")
    x = mx.sym.Activation(x, act_type="relu", name="relu3")
    x = mx.sym.Dropout(x, p=0.3, name="drop")
    x = mx.sym.FullyConnected(x, num_hidden=10, name="fc2")
    return mx.sym.SoftmaxOutput(x, name="softmax")
