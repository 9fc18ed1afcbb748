"""The model zoo's vision architectures (MXNet 1.9.1's ``mx.gluon.model_zoo.vision``):
ResNet V1/V2, VGG (with and without BatchNorm) and AlexNet, by name through ``get_model``."""
from .resnet import (BasicBlockV1, BasicBlockV2, BottleneckV1, BottleneckV2, ResNetV1, ResNetV2, get_resnet,
                     resnet18_v1, resnet18_v2, resnet34_v1, resnet34_v2, resnet50_v1, resnet50_v2, resnet101_v1,
                     resnet101_v2, resnet152_v1, resnet152_v2)
from .vgg import (VGG, AlexNet, alexnet, get_vgg, vgg11, vgg11_bn, vgg13, vgg13_bn, vgg16, vgg16_bn, vgg19,
                  vgg19_bn)
from . import resnet, vgg


def get_model(name, **kwargs):
    """The model ``name`` (``'resnet18_v1'``, ``'vgg16_bn'``, ``'alexnet'``...) made with
    ``kwargs`` (``classes``, ``pretrained``, ``ctx``, ``root``...)."""
    models = {n: f for n, f in globals().items()
              if n.startswith(('resnet', 'vgg', 'alexnet')) and callable(f) and not isinstance(f, type)}
    name = name.lower()
    if name not in models:
        raise ValueError('Model %s is not supported. Available options are\n\t%s' % (name, '\n\t'.join(sorted(models))))
    return models[name](**kwargs)
