"""Modules written in Python (MXNet's ``mx.mod.PythonModule`` and ``PythonLossModule``): no
parameters and no optimizer, the computation in Python; most often a loss at the end of a
SequentialModule."""
import logging

from .. import ndarray as nd
from ..initializer import Uniform
from .base_module import BaseModule

__all__ = ["PythonModule", "PythonLossModule"]


class PythonModule(BaseModule):
    """A module without parameters whose subclass gives forward, backward, get_outputs,
    get_input_grads and _compute_output_shapes (the output shapes from ``self._data_shapes``
    and ``self._label_shapes``, called at bind)."""

    def __init__(self, data_names, label_names, output_names, logger=logging):
        super(PythonModule, self).__init__(logger=logger)
        self._data_names = list(data_names) if isinstance(data_names, tuple) else data_names
        self._label_names = list(label_names) if isinstance(label_names, tuple) else label_names
        self._output_names = output_names
        self._data_shapes = None
        self._label_shapes = None
        self._output_shapes = None

    @property
    def data_names(self):
        return self._data_names

    @property
    def output_names(self):
        return self._output_names

    @property
    def data_shapes(self):
        return self._data_shapes

    @property
    def label_shapes(self):
        return self._label_shapes

    @property
    def output_shapes(self):
        return self._output_shapes

    # No parameters, so nothing to initialise, read or update.
    def get_params(self):
        return {}, {}

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        pass

    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        pass

    def update(self):
        pass

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Adds the outputs against `labels` to the metric (nothing when bound without labels)."""
        if self._label_shapes is None:
            return
        if pre_sliced:
            raise RuntimeError("PythonModule does not support presliced labels")
        eval_metric.update(labels, self.get_outputs())

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Records the input shapes (their names must be the module's, in order) and computes
        the output shapes. A second bind records the new shapes (there are no executors to
        keep), as MXNet's, which never marks a Python module bound."""
        if grad_req != 'write':
            raise ValueError("%s.bind: a Python module only writes its gradients "
                             "(grad_req='write'), got %r" % (type(self).__name__, grad_req))
        names = [desc[0] for desc in data_shapes]
        if names != list(self._data_names):
            raise ValueError("%s.bind: data_shapes name %s, the module's data_names are %s"
                             % (type(self).__name__, names, list(self._data_names)))
        if label_shapes is not None:
            names = [desc[0] for desc in label_shapes]
            if self._label_names is None or names != list(self._label_names):
                raise ValueError("%s.bind: label_shapes name %s, the module's label_names are %s"
                                 % (type(self).__name__, names, self._label_names))
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._data_shapes = data_shapes
        self._label_shapes = label_shapes
        self._output_shapes = self._compute_output_shapes()
        self.binded = True
        self.params_initialized = True  # there are none to initialise

    def _compute_output_shapes(self):
        """[(output name, shape)] for the bound input shapes."""
        raise NotImplementedError("%s: a PythonModule subclass gives _compute_output_shapes"
                                  % type(self).__name__)


class PythonLossModule(PythonModule):
    """A loss written in Python: the output is the data (the scores) unchanged, and backward
    takes the scores' gradient from ``grad_func(scores, labels)`` (an NDArray, or anything
    nd.array takes)."""

    def __init__(self, name='pyloss', data_names=('data',), label_names=('softmax_label',),
                 logger=logging, grad_func=None):
        super(PythonLossModule, self).__init__(data_names, label_names, [name + '_output'],
                                               logger=logger)
        if len(data_names) != 1 or len(label_names) != 1:
            raise ValueError("PythonLossModule: takes one data and one label input, got "
                             "data_names=%s, label_names=%s" % (list(data_names),
                                                                list(label_names)))
        if grad_func is not None and not callable(grad_func):
            raise TypeError("PythonLossModule: grad_func must be callable, got %s"
                            % type(grad_func).__name__)
        self._name = name
        self._grad_func = grad_func
        self._scores = None
        self._labels = None
        self._scores_grad = None

    def _compute_output_shapes(self):
        return [(self._name + '_output', self._data_shapes[0][1])]

    def forward(self, data_batch, is_train=None):
        """Keeps the scores (and, when training, the labels) of the batch."""
        self._scores = data_batch.data[0]
        if is_train is None:
            is_train = self.for_training
        if is_train:
            self._labels = data_batch.label[0]

    def get_outputs(self, merge_multi_context=True):
        if not merge_multi_context:
            raise ValueError("PythonLossModule.get_outputs: merge_multi_context=False is not "
                             "supported (the module runs on one context)")
        return [self._scores]

    def backward(self, out_grads=None):
        """The scores' gradient from grad_func; a loss takes no head gradient."""
        if out_grads is not None:
            raise ValueError("PythonLossModule.backward: a loss module takes no out_grads")
        if not self.for_training:
            raise RuntimeError("PythonLossModule.backward: bind with for_training=True")
        self._backward_impl()

    def _backward_impl(self):
        """Sets self._scores_grad; subclasses without grad_func override it."""
        if self._grad_func is None:
            raise NotImplementedError("PythonLossModule: give grad_func or override "
                                      "_backward_impl")
        grad = self._grad_func(self._scores, self._labels)
        if not isinstance(grad, nd.NDArray):
            grad = nd.array(grad)
        self._scores_grad = grad

    def get_input_grads(self, merge_multi_context=True):
        if not merge_multi_context:
            raise ValueError("PythonLossModule.get_input_grads: merge_multi_context=False is not "
                             "supported (the module runs on one context)")
        return [self._scores_grad]

    def install_monitor(self, mon):
        raise NotImplementedError("PythonLossModule.install_monitor: a Python module has no "
                                  "executors to monitor")
