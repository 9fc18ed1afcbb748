"""SqueezeNet 1.0 and 1.1 (Iandola et al.) as MXNet 1.9.1's model zoo builds them: the same blocks
and child order, hence the same parameter names and files."""
from ....context import cpu
from ...block import HybridBlock
from ...contrib.nn import HybridConcurrent
from ... import nn
from ..model_store import get_model_file


def _conv_relu(channels, kernel_size, padding=0):
    out = nn.HybridSequential(prefix='')
    out.add(nn.Conv2D(channels, kernel_size, padding=padding), nn.Activation('relu'))
    return out


def _fire(squeeze, expand1x1, expand3x3):
    """A 1x1 squeeze, then 1x1 and 3x3 expansions side by side."""
    out = nn.HybridSequential(prefix='')
    out.add(_conv_relu(squeeze, 1))
    paths = HybridConcurrent(axis=1, prefix='')
    paths.add(_conv_relu(expand1x1, 1), _conv_relu(expand3x3, 3, 1))
    out.add(paths)
    return out


# The features after the stem, by version: a fire module's (squeeze, expand1x1, expand3x3), or
# 'pool' for a 3x3 max pool of stride 2.
_LAYOUT = {
    '1.0': ((96, 7), [(16, 64, 64), (16, 64, 64), (32, 128, 128), 'pool', (32, 128, 128), (48, 192, 192),
                      (48, 192, 192), (64, 256, 256), 'pool', (64, 256, 256)]),
    '1.1': ((64, 3), [(16, 64, 64), (16, 64, 64), 'pool', (32, 128, 128), (32, 128, 128), 'pool',
                      (48, 192, 192), (48, 192, 192), (64, 256, 256), (64, 256, 256)]),
}


def _pool():
    return nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True)


class SqueezeNet(HybridBlock):
    """SqueezeNet ``version`` '1.0' or '1.1'; the classifier is a 1x1 convolution averaged over
    13x13 (224x224 inputs)."""

    def __init__(self, version, classes=1000, **kwargs):
        super(SqueezeNet, self).__init__(**kwargs)
        assert version in ['1.0', '1.1'], \
            "Unsupported SqueezeNet version {version}:1.0 or 1.1 expected".format(version=version)
        (stem_channels, stem_kernel), layout = _LAYOUT[version]
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            self.features.add(nn.Conv2D(stem_channels, kernel_size=stem_kernel, strides=2),
                              nn.Activation('relu'), _pool())
            for layer in layout:
                self.features.add(_pool() if layer == 'pool' else _fire(*layer))
            self.features.add(nn.Dropout(0.5))
            self.output = nn.HybridSequential(prefix='')
            self.output.add(nn.Conv2D(classes, kernel_size=1), nn.Activation('relu'), nn.AvgPool2D(13),
                            nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def get_squeezenet(version, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """SqueezeNet of ``version`` ('1.0', '1.1')."""
    net = SqueezeNet(version, **kwargs)
    if pretrained:
        net.load_parameters(get_model_file('squeezenet%s' % version, root=root), ctx=ctx)
    return net


def squeezenet1_0(**kwargs):
    """SqueezeNet 1.0 (get_squeezenet)."""
    return get_squeezenet('1.0', **kwargs)


def squeezenet1_1(**kwargs):
    """SqueezeNet 1.1 (get_squeezenet)."""
    return get_squeezenet('1.1', **kwargs)
