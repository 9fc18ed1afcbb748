"""MobileNet (Howard et al.) and MobileNetV2 (Sandler et al.) as MXNet 1.9.1's model zoo builds
them: the same blocks and child order, hence the same parameter names and files."""
from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ..model_store import get_model_file


class RELU6(HybridBlock):
    """min(max(x, 0), 6)."""

    def hybrid_forward(self, F, x):
        return F.clip(x, 0, 6, name="relu6")


def _add_conv(out, channels=1, kernel=1, stride=1, pad=0, num_group=1, active=True, relu6=False):
    """Appends a convolution without bias, BatchNorm and (if ``active``) ReLU or ReLU6 to ``out``."""
    out.add(nn.Conv2D(channels, kernel, stride, pad, groups=num_group, use_bias=False))
    out.add(nn.BatchNorm(scale=True))
    if active:
        out.add(RELU6() if relu6 else nn.Activation('relu'))


def _add_conv_dw(out, dw_channels, channels, stride, relu6=False):
    """A depthwise 3x3 convolution, then a pointwise one."""
    _add_conv(out, channels=dw_channels, kernel=3, stride=stride, pad=1, num_group=dw_channels, relu6=relu6)
    _add_conv(out, channels=channels, relu6=relu6)


class LinearBottleneck(HybridBlock):
    """MobileNetV2's inverted residual: expand by ``t`` (1x1), depthwise 3x3 of ``stride``,
    project to ``channels`` (1x1, linear); the input is added where the shapes agree."""

    def __init__(self, in_channels, channels, t, stride, **kwargs):
        super(LinearBottleneck, self).__init__(**kwargs)
        self.use_shortcut = stride == 1 and in_channels == channels
        with self.name_scope():
            self.out = nn.HybridSequential()
            _add_conv(self.out, in_channels * t, relu6=True)
            _add_conv(self.out, in_channels * t, kernel=3, stride=stride, pad=1, num_group=in_channels * t,
                      relu6=True)
            _add_conv(self.out, channels, active=False, relu6=True)

    def hybrid_forward(self, F, x):
        out = self.out(x)
        return F.elemwise_add(out, x) if self.use_shortcut else out


def _scaled(multiplier, counts):
    """[int(c * multiplier)] for each (c, n) of counts repeated n times."""
    return [int(c * multiplier) for c, n in counts for _ in range(n)]


class MobileNet(HybridBlock):
    """MobileNet with its channels scaled by ``multiplier``: 13 depthwise-separable
    convolutions, global average pooling, a classifier."""

    def __init__(self, multiplier=1.0, classes=1000, **kwargs):
        super(MobileNet, self).__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            with self.features.name_scope():
                _add_conv(self.features, channels=int(32 * multiplier), kernel=3, pad=1, stride=2)
                dw_channels = _scaled(multiplier, [(32, 1), (64, 1), (128, 2), (256, 2), (512, 6), (1024, 1)])
                channels = _scaled(multiplier, [(64, 1), (128, 2), (256, 2), (512, 6), (1024, 2)])
                strides = [1, 2] * 3 + [1] * 5 + [2, 1]
                for dwc, c, s in zip(dw_channels, channels, strides):
                    _add_conv_dw(self.features, dw_channels=dwc, channels=c, stride=s)
                self.features.add(nn.GlobalAvgPool2D(), nn.Flatten())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


class MobileNetV2(HybridBlock):
    """MobileNetV2 with its channels scaled by ``multiplier``: 17 linear bottlenecks, a 1x1
    convolution to 1280 channels, global average pooling, a 1x1 convolution classifier."""

    def __init__(self, multiplier=1.0, classes=1000, **kwargs):
        super(MobileNetV2, self).__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='features_')
            with self.features.name_scope():
                _add_conv(self.features, int(32 * multiplier), kernel=3, stride=2, pad=1, relu6=True)
                in_channels = _scaled(multiplier, [(32, 1), (16, 1), (24, 2), (32, 3), (64, 4), (96, 3), (160, 3)])
                channels = _scaled(multiplier, [(16, 1), (24, 2), (32, 3), (64, 4), (96, 3), (160, 3), (320, 1)])
                ts = [1] + [6] * 16
                strides = [1, 2] * 2 + [1, 1, 2] + [1] * 6 + [2] + [1] * 3
                for in_c, c, t, s in zip(in_channels, channels, ts, strides):
                    self.features.add(LinearBottleneck(in_channels=in_c, channels=c, t=t, stride=s))
                _add_conv(self.features, int(1280 * multiplier) if multiplier > 1.0 else 1280, relu6=True)
                self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.HybridSequential(prefix='output_')
            with self.output.name_scope():
                self.output.add(nn.Conv2D(classes, 1, use_bias=False, prefix='pred_'), nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def _file_suffix(multiplier):
    # The zoo's files are named mobilenet1.0, mobilenet0.75, mobilenet0.5, mobilenet0.25.
    suffix = '{0:.2f}'.format(multiplier)
    return suffix[:-1] if suffix in ('1.00', '0.50') else suffix


def get_mobilenet(multiplier, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """MobileNet with width ``multiplier`` (1.0, 0.75, 0.5, 0.25)."""
    net = MobileNet(multiplier, **kwargs)
    if pretrained:
        net.load_parameters(get_model_file('mobilenet%s' % _file_suffix(multiplier), root=root), ctx=ctx)
    return net


def get_mobilenet_v2(multiplier, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """MobileNetV2 with width ``multiplier`` (1.0, 0.75, 0.5, 0.25)."""
    net = MobileNetV2(multiplier, **kwargs)
    if pretrained:
        net.load_parameters(get_model_file('mobilenetv2_%s' % _file_suffix(multiplier), root=root), ctx=ctx)
    return net


def _make(multiplier, v2):
    name = ('mobilenet_v2_%s' if v2 else 'mobilenet%s') % str(multiplier).replace('.', '_')

    def constructor(**kwargs):
        return (get_mobilenet_v2 if v2 else get_mobilenet)(multiplier, **kwargs)
    constructor.__name__ = name
    constructor.__doc__ = "%s with width multiplier %s." % ('MobileNetV2' if v2 else 'MobileNet', multiplier)
    return constructor


mobilenet1_0, mobilenet0_75, mobilenet0_5, mobilenet0_25 = (_make(m, False) for m in (1.0, 0.75, 0.5, 0.25))
mobilenet_v2_1_0, mobilenet_v2_0_75, mobilenet_v2_0_5, mobilenet_v2_0_25 = (
    _make(m, True) for m in (1.0, 0.75, 0.5, 0.25))
