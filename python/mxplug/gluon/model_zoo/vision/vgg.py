"""VGG (Simonyan and Zisserman) and AlexNet (Krizhevsky et al.) as MXNet 1.9.1's model zoo
builds them: the same blocks and child order, hence the same parameter names and files."""
from .... import initializer
from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ..model_store import get_model_file


class VGG(HybridBlock):
    """``layers`` 3x3 convolutions per stage with ``filters`` channels (BatchNorm with
    ``batch_norm``), max pooling between stages, then two 4096-unit layers."""

    def __init__(self, layers, filters, classes=1000, batch_norm=False, **kwargs):
        super(VGG, self).__init__(**kwargs)
        if len(layers) != len(filters):
            raise AssertionError("layers and filters must have the same length")
        with self.name_scope():
            self.features = self._make_features(layers, filters, batch_norm)
            for _ in range(2):
                self.features.add(nn.Dense(4096, activation='relu', weight_initializer='normal',
                                           bias_initializer='zeros'))
                self.features.add(nn.Dropout(rate=0.5))
            self.output = nn.Dense(classes, weight_initializer='normal', bias_initializer='zeros')

    def _make_features(self, layers, filters, batch_norm):
        featurizer = nn.HybridSequential(prefix='')
        for i, num in enumerate(layers):
            for _ in range(num):
                featurizer.add(nn.Conv2D(filters[i], kernel_size=3, padding=1,
                                         weight_initializer=initializer.Xavier(rnd_type='gaussian', factor_type='out',
                                                                               magnitude=2),
                                         bias_initializer='zeros'))
                if batch_norm:
                    featurizer.add(nn.BatchNorm())
                featurizer.add(nn.Activation('relu'))
            featurizer.add(nn.MaxPool2D(strides=2))
        return featurizer

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


vgg_spec = {11: ([1, 1, 2, 2, 2], [64, 128, 256, 512, 512]),
            13: ([2, 2, 2, 2, 2], [64, 128, 256, 512, 512]),
            16: ([2, 2, 3, 3, 3], [64, 128, 256, 512, 512]),
            19: ([2, 2, 4, 4, 4], [64, 128, 256, 512, 512])}


def get_vgg(num_layers, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """VGG of ``num_layers`` (11, 13, 16, 19); ``batch_norm=True`` for the _bn variants."""
    layers, filters = vgg_spec[num_layers]
    net = VGG(layers, filters, **kwargs)
    if pretrained:
        suffix = '_bn' if kwargs.get('batch_norm') else ''
        net.load_parameters(get_model_file('vgg%d%s' % (num_layers, suffix), root=root), ctx=ctx)
    return net


def _make(depth, batch_norm):
    def constructor(**kwargs):
        if batch_norm:
            kwargs['batch_norm'] = True
        return get_vgg(depth, **kwargs)
    constructor.__name__ = 'vgg%d%s' % (depth, '_bn' if batch_norm else '')
    constructor.__doc__ = "VGG-%d%s (get_vgg)." % (depth, " with BatchNorm" if batch_norm else "")
    return constructor


vgg11, vgg13, vgg16, vgg19 = (_make(d, False) for d in (11, 13, 16, 19))
vgg11_bn, vgg13_bn, vgg16_bn, vgg19_bn = (_make(d, True) for d in (11, 13, 16, 19))


class AlexNet(HybridBlock):
    """AlexNet: five convolutions (ReLU, three max pools), two 4096-unit layers with dropout."""

    def __init__(self, classes=1000, **kwargs):
        super(AlexNet, self).__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            with self.features.name_scope():
                self.features.add(nn.Conv2D(64, kernel_size=11, strides=4, padding=2, activation='relu'),
                                  nn.MaxPool2D(pool_size=3, strides=2),
                                  nn.Conv2D(192, kernel_size=5, padding=2, activation='relu'),
                                  nn.MaxPool2D(pool_size=3, strides=2),
                                  nn.Conv2D(384, kernel_size=3, padding=1, activation='relu'),
                                  nn.Conv2D(256, kernel_size=3, padding=1, activation='relu'),
                                  nn.Conv2D(256, kernel_size=3, padding=1, activation='relu'),
                                  nn.MaxPool2D(pool_size=3, strides=2), nn.Flatten(),
                                  nn.Dense(4096, activation='relu'), nn.Dropout(0.5),
                                  nn.Dense(4096, activation='relu'), nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def alexnet(pretrained=False, ctx=cpu(), root=None, **kwargs):
    """AlexNet (``pretrained``: MXNet's parameter file from ``root``)."""
    net = AlexNet(**kwargs)
    if pretrained:
        net.load_parameters(get_model_file('alexnet', root=root), ctx=ctx)
    return net
