"""SequentialModule (MXNet's ``mx.mod.SequentialModule``): modules run one after another, each
one's outputs the next one's data, the gradients passed back down the chain."""
import copy
import logging

from ..initializer import Uniform
from .base_module import BaseModule

__all__ = ["SequentialModule"]


class SequentialModule(BaseModule):
    """A chain of modules. ``add(module, take_labels=True)`` gives a module the batch's labels
    (any module in the chain may take them); ``auto_wiring=True`` renames the previous
    module's outputs to the module's data names."""

    META_TAKE_LABELS = 'take_labels'
    META_AUTO_WIRING = 'auto_wiring'

    def __init__(self, logger=logging):
        super(SequentialModule, self).__init__(logger=logger)
        self._modules = []
        self._metas = []
        self._label_shapes = None
        self._data_shapes = None
        self._meta_keys = {self.META_TAKE_LABELS, self.META_AUTO_WIRING}

    def add(self, module, **kwargs):
        """Appends `module` (kwargs: take_labels, auto_wiring) and returns self, for chaining.
        The chain is then unbound: bind, init_params and init_optimizer again."""
        for key in kwargs:
            if key not in self._meta_keys:
                raise ValueError("SequentialModule.add: unknown meta '%s' (expected one of %s)"
                                 % (key, ", ".join(sorted(self._meta_keys))))
        self._modules.append(module)
        self._metas.append(dict(kwargs))
        self.binded = False
        self.params_initialized = False
        self.optimizer_initialized = False
        return self

    def _takes_labels(self, i):
        return bool(self._metas[i].get(self.META_TAKE_LABELS, False))

    # ---- Names and shapes: the first module's data, the last one's outputs -------------------

    @property
    def data_names(self):
        return self._modules[0].data_names if self._modules else []

    @property
    def output_names(self):
        return self._modules[-1].output_names if self._modules else []

    @property
    def data_shapes(self):
        self._check_bound("data_shapes")
        return self._modules[0].data_shapes

    @property
    def label_shapes(self):
        self._check_bound("label_shapes")
        return self._label_shapes

    @property
    def output_shapes(self):
        self._check_bound("output_shapes")
        return self._modules[-1].output_shapes

    # ---- Parameters --------------------------------------------------------------------------

    def get_params(self):
        """Every module's parameters in two dicts (names are unique across the chain)."""
        self._check_ready("get_params")
        arg_params, aux_params = {}, {}
        for module in self._modules:
            args, auxs = module.get_params()
            arg_params.update(args)
            aux_params.update(auxs)
        return arg_params, aux_params

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialises every module's parameters; two modules may not share a name."""
        if self.params_initialized and not force_init:
            return
        if not self.binded:
            raise RuntimeError("SequentialModule.init_params: call bind before initializing "
                               "the parameters")
        for module in self._modules:
            module.init_params(initializer=initializer, arg_params=arg_params,
                               aux_params=aux_params, allow_missing=allow_missing,
                               force_init=force_init, allow_extra=allow_extra)
        owners = ({}, {})  # name -> the layer that has it, for arguments and auxiliary states
        for i, module in enumerate(self._modules):
            for seen, names in zip(owners, module.get_params()):
                for name in names:
                    if name in seen:
                        j = seen[name]
                        raise ValueError(
                            "Duplicated parameter names: name \"%s\" in layer %d (%s) is already "
                            "used in layer %d (%s)." % (name, i, type(module), j,
                                                        type(self._modules[j])))
                    seen[name] = i
        self.params_initialized = True

    # ---- Binding -----------------------------------------------------------------------------

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Binds each module to the previous one's output shapes; every module after the first
        computes its input gradients when training, to pass them down."""
        if self.binded and not force_rebind:
            self.logger.warning('Already bound, ignoring bind()')
            return
        if inputs_need_grad and not for_training:
            raise ValueError("SequentialModule.bind: inputs_need_grad=True needs "
                             "for_training=True")
        if shared_module is not None:
            raise ValueError("SequentialModule.bind: a shared module is not supported")
        if not self._modules:
            raise ValueError("SequentialModule.bind: the chain is empty (add modules first)")
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._label_shapes = label_shapes
        shapes = data_shapes
        anyone_takes_labels = False
        for i, module in enumerate(self._modules):
            labels = None
            if self._takes_labels(i):
                labels = label_shapes
                anyone_takes_labels = True
            if self._metas[i].get(self.META_AUTO_WIRING, False):
                names = module.data_names
                if len(names) != len(shapes):
                    raise ValueError("SequentialModule.bind: layer %d takes %d data inputs, the "
                                     "layer before gives %d" % (i, len(names), len(shapes)))
                shapes = [(name, desc[1]) for name, desc in zip(names, shapes)]
            module.bind(data_shapes=shapes, label_shapes=labels, for_training=for_training,
                        inputs_need_grad=bool(inputs_need_grad or (for_training and i > 0)),
                        force_rebind=force_rebind, shared_module=None, grad_req=grad_req)
            shapes = module.output_shapes
        if not anyone_takes_labels:
            self._label_shapes = None
        self.binded = True

    # ---- Optimizer ---------------------------------------------------------------------------

    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        """Gives every module an optimizer of the same settings."""
        if self._optimizer_kept(force_init):
            return
        for module in self._modules:
            module.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                                  optimizer_params=optimizer_params, force_init=force_init)
        self.optimizer_initialized = True

    # ---- Computing ---------------------------------------------------------------------------

    def forward(self, data_batch, is_train=None):
        """Runs the chain: each module's outputs are the next one's data (a shallow copy of the
        batch carries them, keeping its label, pad and bucket key)."""
        self._check_ready("forward")
        data_batch = copy.copy(data_batch)
        for i, module in enumerate(self._modules):
            module.forward(data_batch, is_train=is_train)
            if i + 1 == len(self._modules):
                break
            data_batch.data = module.get_outputs()
            if hasattr(data_batch, 'provide_data'):
                names = [desc[0] for desc in module.output_shapes]
                data_batch.provide_data = [(name, out.shape)
                                           for name, out in zip(names, data_batch.data)]

    def backward(self, out_grads=None):
        """Runs the backward passes from the last module down, each one's input gradients the
        head gradients of the one before."""
        self._check_ready("backward")
        for i in reversed(range(len(self._modules))):
            self._modules[i].backward(out_grads=out_grads)
            if i > 0:
                out_grads = self._modules[i].get_input_grads()

    def update(self):
        """One optimizer step in every module."""
        self._check_optimizer("update")
        for module in self._modules:
            module.update()

    def get_outputs(self, merge_multi_context=True):
        """The last module's outputs."""
        self._check_ready("get_outputs")
        return self._modules[-1].get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """The first module's input gradients (bind with inputs_need_grad=True)."""
        self._check_ready("get_input_grads")
        if not self.inputs_need_grad:
            raise RuntimeError("SequentialModule.get_input_grads: bind with "
                               "inputs_need_grad=True")
        return self._modules[0].get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Adds the outputs of every module that takes labels to the metric."""
        self._check_ready("update_metric")
        for i, module in enumerate(self._modules):
            if self._takes_labels(i):
                module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        """Installs the monitor on every module."""
        self._check_bound("install_monitor")
        for module in self._modules:
            module.install_monitor(mon)
