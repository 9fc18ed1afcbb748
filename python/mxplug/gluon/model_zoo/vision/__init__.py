"""The model zoo's vision architectures (MXNet 1.9.1's ``mx.gluon.model_zoo.vision``):
ResNet V1/V2, VGG (with and without BatchNorm), AlexNet, DenseNet, SqueezeNet, Inception V3,
MobileNet and MobileNetV2, by name through ``get_model``."""
from .resnet import (BasicBlockV1, BasicBlockV2, BottleneckV1, BottleneckV2, ResNetV1, ResNetV2, get_resnet,
                     resnet18_v1, resnet18_v2, resnet34_v1, resnet34_v2, resnet50_v1, resnet50_v2, resnet101_v1,
                     resnet101_v2, resnet152_v1, resnet152_v2)
from .vgg import (VGG, AlexNet, alexnet, get_vgg, vgg11, vgg11_bn, vgg13, vgg13_bn, vgg16, vgg16_bn, vgg19,
                  vgg19_bn)
from .densenet import DenseNet, densenet121, densenet161, densenet169, densenet201, get_densenet
from .squeezenet import SqueezeNet, get_squeezenet, squeezenet1_0, squeezenet1_1
from .inception import Inception3, inception_v3
from .mobilenet import (LinearBottleneck, MobileNet, MobileNetV2, RELU6, get_mobilenet, get_mobilenet_v2, mobilenet0_5,
                        mobilenet0_25, mobilenet0_75, mobilenet1_0, mobilenet_v2_0_5, mobilenet_v2_0_25,
                        mobilenet_v2_0_75, mobilenet_v2_1_0)
from . import densenet, inception, mobilenet, resnet, squeezenet, vgg


def _zoo():
    """get_model's names: the constructors' own, but 'squeezenet1.0', 'inceptionv3', 'mobilenet0.75'
    and 'mobilenetv2_0.75' for the rest (MXNet's, which are also its files' names)."""
    models = {n: f for n, f in globals().items()
              if n.startswith(('resnet', 'vgg', 'alexnet', 'densenet')) and callable(f) and not isinstance(f, type)}
    models.update({'squeezenet1.0': squeezenet1_0, 'squeezenet1.1': squeezenet1_1, 'inceptionv3': inception_v3})
    for m, tag in ((1.0, '1.0'), (0.75, '0.75'), (0.5, '0.5'), (0.25, '0.25')):
        models['mobilenet' + tag] = globals()['mobilenet' + tag.replace('.', '_')]
        models['mobilenetv2_' + tag] = globals()['mobilenet_v2_' + tag.replace('.', '_')]
    return models


def get_model(name, **kwargs):
    """The model ``name`` (``'resnet18_v1'``, ``'vgg16_bn'``, ``'densenet121'``, ``'squeezenet1.1'``,
    ``'inceptionv3'``, ``'mobilenetv2_0.5'``...) made with ``kwargs`` (``classes``, ``pretrained``,
    ``ctx``, ``root``...)."""
    models = _zoo()
    name = name.lower()
    if name not in models:
        raise ValueError('Model %s is not supported. Available options are\n\t%s' % (name, '\n\t'.join(sorted(models))))
    return models[name](**kwargs)
