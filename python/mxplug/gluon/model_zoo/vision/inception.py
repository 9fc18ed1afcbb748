"""Inception V3 (Szegedy et al., "Rethinking the Inception Architecture") as MXNet 1.9.1's model
zoo builds it: the same blocks and child order, hence the same parameter names and files."""
from ....context import cpu
from ...block import HybridBlock
from ...contrib.nn import HybridConcurrent
from ... import nn
from ..model_store import get_model_file


def _conv_bn_relu(**kwargs):
    out = nn.HybridSequential(prefix='')
    out.add(nn.Conv2D(use_bias=False, **kwargs), nn.BatchNorm(epsilon=0.001), nn.Activation('relu'))
    return out


def _branch(pool, *convs):
    """An optional pool ('avg': 3x3 stride 1 padded, 'max': 3x3 stride 2), then convolutions, each
    (channels, kernel_size, strides, padding) with None for the default."""
    out = nn.HybridSequential(prefix='')
    if pool == 'avg':
        out.add(nn.AvgPool2D(pool_size=3, strides=1, padding=1))
    elif pool == 'max':
        out.add(nn.MaxPool2D(pool_size=3, strides=2))
    for conv in convs:
        kwargs = {k: v for k, v in zip(('channels', 'kernel_size', 'strides', 'padding'), conv) if v is not None}
        out.add(_conv_bn_relu(**kwargs))
    return out


def _concurrent(prefix, *branches):
    out = HybridConcurrent(axis=1, prefix=prefix)
    with out.name_scope():
        out.add(*[b() for b in branches])
    return out


def _split(first):
    """One branch, then a 1x3 and a 3x1 convolution of 384 channels side by side."""
    out = nn.HybridSequential(prefix='')
    out.add(first)
    split = HybridConcurrent(axis=1, prefix='')
    split.add(_branch(None, (384, (1, 3), None, (0, 1))), _branch(None, (384, (3, 1), None, (1, 0))))
    out.add(split)
    return out


def _block_a(pool_features, prefix):
    return _concurrent(prefix,
                       lambda: _branch(None, (64, 1, None, None)),
                       lambda: _branch(None, (48, 1, None, None), (64, 5, None, 2)),
                       lambda: _branch(None, (64, 1, None, None), (96, 3, None, 1), (96, 3, None, 1)),
                       lambda: _branch('avg', (pool_features, 1, None, None)))


def _block_b(prefix):
    return _concurrent(prefix,
                       lambda: _branch(None, (384, 3, 2, None)),
                       lambda: _branch(None, (64, 1, None, None), (96, 3, None, 1), (96, 3, 2, None)),
                       lambda: _branch('max'))


def _block_c(c7, prefix):
    return _concurrent(prefix,
                       lambda: _branch(None, (192, 1, None, None)),
                       lambda: _branch(None, (c7, 1, None, None), (c7, (1, 7), None, (0, 3)),
                                       (192, (7, 1), None, (3, 0))),
                       lambda: _branch(None, (c7, 1, None, None), (c7, (7, 1), None, (3, 0)),
                                       (c7, (1, 7), None, (0, 3)), (c7, (7, 1), None, (3, 0)),
                                       (192, (1, 7), None, (0, 3))),
                       lambda: _branch('avg', (192, 1, None, None)))


def _block_d(prefix):
    return _concurrent(prefix,
                       lambda: _branch(None, (192, 1, None, None), (320, 3, 2, None)),
                       lambda: _branch(None, (192, 1, None, None), (192, (1, 7), None, (0, 3)),
                                       (192, (7, 1), None, (3, 0)), (192, 3, 2, None)),
                       lambda: _branch('max'))


def _block_e(prefix):
    return _concurrent(prefix,
                       lambda: _branch(None, (320, 1, None, None)),
                       lambda: _split(_branch(None, (384, 1, None, None))),
                       lambda: _split(_branch(None, (448, 1, None, None), (384, 3, None, 1))),
                       lambda: _branch('avg', (192, 1, None, None)))


def make_aux(classes):
    """The auxiliary classifier (MXNet defines it; its Inception3 does not use it)."""
    out = nn.HybridSequential(prefix='')
    out.add(nn.AvgPool2D(pool_size=5, strides=3), _conv_bn_relu(channels=128, kernel_size=1),
            _conv_bn_relu(channels=768, kernel_size=5), nn.Flatten(), nn.Dense(classes))
    return out


class Inception3(HybridBlock):
    """Inception V3 for 299x299 inputs."""

    def __init__(self, classes=1000, **kwargs):
        super(Inception3, self).__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            self.features.add(_conv_bn_relu(channels=32, kernel_size=3, strides=2),
                              _conv_bn_relu(channels=32, kernel_size=3),
                              _conv_bn_relu(channels=64, kernel_size=3, padding=1),
                              nn.MaxPool2D(pool_size=3, strides=2),
                              _conv_bn_relu(channels=80, kernel_size=1),
                              _conv_bn_relu(channels=192, kernel_size=3),
                              nn.MaxPool2D(pool_size=3, strides=2),
                              _block_a(32, 'A1_'), _block_a(64, 'A2_'), _block_a(64, 'A3_'), _block_b('B_'),
                              _block_c(128, 'C1_'), _block_c(160, 'C2_'), _block_c(160, 'C3_'),
                              _block_c(192, 'C4_'), _block_d('D_'), _block_e('E1_'), _block_e('E2_'),
                              nn.AvgPool2D(pool_size=8), nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def inception_v3(pretrained=False, ctx=cpu(), root=None, **kwargs):
    """Inception V3 (Inception3)."""
    net = Inception3(**kwargs)
    if pretrained:
        net.load_parameters(get_model_file('inceptionv3', root=root), ctx=ctx)
    return net
