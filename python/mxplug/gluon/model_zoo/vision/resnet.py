"""ResNet V1 and V2 (He et al.) as MXNet 1.9.1's model zoo builds them: the same blocks,
attribute names and child order, hence the same parameter names and files."""
from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ..model_store import get_model_file


def _conv3x3(channels, stride, in_channels):
    return nn.Conv2D(channels, kernel_size=3, strides=stride, padding=1, use_bias=False, in_channels=in_channels)


def _downsample_v1(channels, stride, in_channels):
    down = nn.HybridSequential(prefix='')
    down.add(nn.Conv2D(channels, kernel_size=1, strides=stride, use_bias=False, in_channels=in_channels))
    down.add(nn.BatchNorm())
    return down


class BasicBlockV1(HybridBlock):
    """Two 3x3 convolutions with BatchNorm, added to the (projected) input, then ReLU."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super(BasicBlockV1, self).__init__(**kwargs)
        self.body = nn.HybridSequential(prefix='')
        self.body.add(_conv3x3(channels, stride, in_channels), nn.BatchNorm(), nn.Activation('relu'),
                      _conv3x3(channels, 1, channels), nn.BatchNorm())
        self.downsample = _downsample_v1(channels, stride, in_channels) if downsample else None

    def hybrid_forward(self, F, x):
        residual = self.downsample(x) if self.downsample else x
        return F.Activation(residual + self.body(x), act_type='relu')


class BottleneckV1(HybridBlock):
    """1x1, 3x3 and 1x1 convolutions (channels/4 inside) with BatchNorm, added to the input."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super(BottleneckV1, self).__init__(**kwargs)
        self.body = nn.HybridSequential(prefix='')
        self.body.add(nn.Conv2D(channels // 4, kernel_size=1, strides=stride), nn.BatchNorm(), nn.Activation('relu'),
                      _conv3x3(channels // 4, 1, channels // 4), nn.BatchNorm(), nn.Activation('relu'),
                      nn.Conv2D(channels, kernel_size=1, strides=1), nn.BatchNorm())
        self.downsample = _downsample_v1(channels, stride, in_channels) if downsample else None

    def hybrid_forward(self, F, x):
        residual = self.downsample(x) if self.downsample else x
        return F.Activation(self.body(x) + residual, act_type='relu')


def _downsample_v2(channels, stride, in_channels, downsample):
    return nn.Conv2D(channels, 1, stride, use_bias=False, in_channels=in_channels) if downsample else None


class _PreActivation(HybridBlock):
    """What the V2 blocks share: BatchNorm and ReLU first; the shortcut taken from there when it
    is projected (``downsample``), else from the input."""

    def _start(self, F, x):
        out = F.Activation(self.bn1(x), act_type='relu')
        return out, (self.downsample(out) if self.downsample else x)


class BasicBlockV2(_PreActivation):
    """Pre-activation: BatchNorm and ReLU before each of two 3x3 convolutions."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super(BasicBlockV2, self).__init__(**kwargs)
        self.bn1 = nn.BatchNorm()
        self.conv1 = _conv3x3(channels, stride, in_channels)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels, 1, channels)
        self.downsample = _downsample_v2(channels, stride, in_channels, downsample)

    def hybrid_forward(self, F, x):
        x, residual = self._start(F, x)
        x = F.Activation(self.bn2(self.conv1(x)), act_type='relu')
        return self.conv2(x) + residual


class BottleneckV2(_PreActivation):
    """Pre-activation bottleneck: 1x1, 3x3, 1x1 convolutions each after BatchNorm and ReLU."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super(BottleneckV2, self).__init__(**kwargs)
        self.bn1 = nn.BatchNorm()
        self.conv1 = nn.Conv2D(channels // 4, kernel_size=1, strides=1, use_bias=False)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels // 4, stride, channels // 4)
        self.bn3 = nn.BatchNorm()
        self.conv3 = nn.Conv2D(channels, kernel_size=1, strides=1, use_bias=False)
        self.downsample = _downsample_v2(channels, stride, in_channels, downsample)

    def hybrid_forward(self, F, x):
        x, residual = self._start(F, x)
        x = self.conv2(F.Activation(self.bn2(self.conv1(x)), act_type='relu'))
        x = self.conv3(F.Activation(self.bn3(x), act_type='relu'))
        return x + residual


class _ResNet(HybridBlock):
    def _make_layer(self, block, layers, channels, stride, stage_index, in_channels=0):
        layer = nn.HybridSequential(prefix='stage%d_' % stage_index)
        with layer.name_scope():
            layer.add(block(channels, stride, channels != in_channels, in_channels=in_channels, prefix=''))
            for _ in range(layers - 1):
                layer.add(block(channels, 1, False, in_channels=channels, prefix=''))
        return layer

    def _stem(self, channels, thumbnail):
        if thumbnail:
            self.features.add(_conv3x3(channels, 1, 0))
        else:
            self.features.add(nn.Conv2D(channels, 7, 2, 3, use_bias=False), nn.BatchNorm(), nn.Activation('relu'),
                              nn.MaxPool2D(3, 2, 1))

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


class ResNetV1(_ResNet):
    """ResNet V1: ``block`` BasicBlockV1 or BottleneckV1, ``layers`` per stage, ``channels``
    (one more than stages); ``thumbnail`` for small images (a 3x3 stem)."""

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super(ResNetV1, self).__init__(**kwargs)
        if len(layers) != len(channels) - 1:
            raise AssertionError("channels must have one more entry than layers")
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            self._stem(channels[0], thumbnail)
            for i, num_layer in enumerate(layers):
                self.features.add(self._make_layer(block, num_layer, channels[i + 1], 1 if i == 0 else 2, i + 1,
                                                   in_channels=channels[i]))
            self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.Dense(classes, in_units=channels[-1])


class ResNetV2(_ResNet):
    """ResNet V2 (pre-activation): ``block`` BasicBlockV2 or BottleneckV2."""

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super(ResNetV2, self).__init__(**kwargs)
        if len(layers) != len(channels) - 1:
            raise AssertionError("channels must have one more entry than layers")
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            self.features.add(nn.BatchNorm(scale=False, center=False))
            self._stem(channels[0], thumbnail)
            in_channels = channels[0]
            for i, num_layer in enumerate(layers):
                self.features.add(self._make_layer(block, num_layer, channels[i + 1], 1 if i == 0 else 2, i + 1,
                                                   in_channels=in_channels))
                in_channels = channels[i + 1]
            self.features.add(nn.BatchNorm(), nn.Activation('relu'), nn.GlobalAvgPool2D(), nn.Flatten())
            self.output = nn.Dense(classes, in_units=in_channels)


# depth: (block kind, layers per stage, channels)
resnet_spec = {18: ('basic_block', [2, 2, 2, 2], [64, 64, 128, 256, 512]),
               34: ('basic_block', [3, 4, 6, 3], [64, 64, 128, 256, 512]),
               50: ('bottle_neck', [3, 4, 6, 3], [64, 256, 512, 1024, 2048]),
               101: ('bottle_neck', [3, 4, 23, 3], [64, 256, 512, 1024, 2048]),
               152: ('bottle_neck', [3, 8, 36, 3], [64, 256, 512, 1024, 2048])}
resnet_net_versions = [ResNetV1, ResNetV2]
resnet_block_versions = [{'basic_block': BasicBlockV1, 'bottle_neck': BottleneckV1},
                         {'basic_block': BasicBlockV2, 'bottle_neck': BottleneckV2}]


def get_resnet(version, num_layers, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """ResNet ``version`` (1 or 2) of ``num_layers`` (18, 34, 50, 101, 152); ``pretrained``
    loads MXNet's parameter file from ``root`` (model_store)."""
    if num_layers not in resnet_spec:
        raise AssertionError("Invalid number of layers: %d. Options are %s" % (num_layers, str(resnet_spec.keys())))
    if not 1 <= version <= 2:
        raise AssertionError("Invalid resnet version: %d. Options are 1 and 2." % version)
    block_type, layers, channels = resnet_spec[num_layers]
    net = resnet_net_versions[version - 1](resnet_block_versions[version - 1][block_type], layers, channels, **kwargs)
    if pretrained:
        net.load_parameters(get_model_file('resnet%d_v%d' % (num_layers, version), root=root), ctx=ctx)
    return net


def _make(version, depth):
    def constructor(**kwargs):
        return get_resnet(version, depth, **kwargs)
    constructor.__name__ = 'resnet%d_v%d' % (depth, version)
    constructor.__doc__ = "ResNet-%d V%d (get_resnet)." % (depth, version)
    return constructor


resnet18_v1, resnet34_v1, resnet50_v1, resnet101_v1, resnet152_v1 = (_make(1, d) for d in (18, 34, 50, 101, 152))
resnet18_v2, resnet34_v2, resnet50_v2, resnet101_v2, resnet152_v2 = (_make(2, d) for d in (18, 34, 50, 101, 152))
