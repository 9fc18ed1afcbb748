"""BucketingModule (MXNet's ``mx.mod.BucketingModule``): one Module per bucket key (a sequence
length, say), each bound to its own symbol from ``sym_gen(key)``, all of them on the default
bucket's parameters; each batch runs in the module of its ``bucket_key``."""
import logging

import numpy as np

from .. import ndarray as nd
from .. import symbol as sym
from ..context import cpu
from ..initializer import Uniform
from ..model import load_params
from ..name import NameManager
from .base_module import BaseModule
from .module import Module, _check_input_names

__all__ = ["BucketingModule"]


class BucketingModule(BaseModule):
    """``sym_gen(bucket_key)`` returns (symbol, data_names, label_names); the module of
    ``default_bucket_key`` is bound first and owns the parameters (so it should be the largest
    bucket); the other arguments are Module's."""

    def __init__(self, sym_gen, default_bucket_key=None, logger=logging, context=cpu(),
                 work_load_list=None, fixed_param_names=None, state_names=None, group2ctxs=None,
                 compression_params=None):
        super(BucketingModule, self).__init__(logger=logger)
        if default_bucket_key is None:
            raise ValueError("BucketingModule: default_bucket_key is required")
        self._default_bucket_key = default_bucket_key
        self._sym_gen = sym_gen
        symbol, data_names, label_names = self._call_sym_gen(default_bucket_key)
        state_names = list(state_names) if state_names is not None else []
        fixed_param_names = list(fixed_param_names) if fixed_param_names is not None else []
        _check_input_names(symbol, list(data_names or []), "data", True)
        _check_input_names(symbol, list(label_names or []), "label", False)
        _check_input_names(symbol, state_names, "state", True)
        _check_input_names(symbol, fixed_param_names, "fixed_param", True)
        self._module_args = dict(logger=logger, context=context, work_load_list=work_load_list,
                                 fixed_param_names=fixed_param_names, state_names=state_names,
                                 group2ctxs=group2ctxs, compression_params=compression_params)
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None
        self._params_dirty = False
        self._monitor = None
        self._grad_req = None

    def _call_sym_gen(self, bucket_key):
        # A fresh NameManager: every bucket's symbol gets the same automatic names.
        with NameManager():
            return self._sym_gen(bucket_key)

    def _new_module(self, bucket_key):
        symbol, data_names, label_names = self._call_sym_gen(bucket_key)
        return Module(symbol, data_names, label_names, **self._module_args)

    def _reset_bind(self):
        self.binded = False
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None

    # ---- Names and shapes: the current bucket's ----------------------------------------------

    @property
    def default_bucket_key(self):
        return self._default_bucket_key

    @property
    def data_names(self):
        if self.binded:
            return self._curr_module.data_names
        return self._call_sym_gen(self._default_bucket_key)[1]

    @property
    def output_names(self):
        if self.binded:
            return self._curr_module.output_names
        return self._call_sym_gen(self._default_bucket_key)[0].list_outputs()

    @property
    def data_shapes(self):
        self._check_bound("data_shapes")
        return self._curr_module.data_shapes

    @property
    def label_shapes(self):
        self._check_bound("label_shapes")
        return self._curr_module.label_shapes

    @property
    def output_shapes(self):
        self._check_bound("output_shapes")
        return self._curr_module.output_shapes

    @property
    def symbol(self):
        self._check_bound("symbol")
        return self._curr_module.symbol

    # ---- Parameters: the default bucket's, which every bucket shares -------------------------

    def get_params(self):
        if not self.params_initialized:
            raise RuntimeError("get_params: call init_params (or fit) first")
        self._curr_module._params_dirty = self._params_dirty
        params = self._curr_module.get_params()
        self._params_dirty = False
        return params

    def _set_given_params(self, arg_params, aux_params, force_init, allow_extra):
        self._curr_module.set_params(arg_params, aux_params, allow_missing=True,
                                     force_init=force_init, allow_extra=allow_extra)

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        if self.params_initialized and not force_init:
            return
        self._check_bound("init_params")
        self._curr_module.init_params(initializer=initializer, arg_params=arg_params,
                                      aux_params=aux_params, allow_missing=allow_missing,
                                      force_init=force_init, allow_extra=allow_extra)
        self._params_dirty = False
        self.params_initialized = True

    def get_states(self, merge_multi_context=True):
        self._check_ready("get_states")
        return self._curr_module.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None):
        self._check_ready("set_states")
        self._curr_module.set_states(states, value)

    # ---- Binding and switching buckets -------------------------------------------------------

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Binds the default bucket's module to these shapes (the other buckets bind when their
        first batch comes)."""
        if self.params_initialized:
            arg_params, aux_params = self.get_params()
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning('Already bound, ignoring bind()')
            return
        if shared_module is not None:
            raise ValueError("BucketingModule.bind: shared_module is not supported")
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._grad_req = grad_req
        module = self._buckets.get(self._default_bucket_key)
        if module is None:
            module = self._new_module(self._default_bucket_key)
        module.bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                    force_rebind=False, shared_module=None, grad_req=grad_req)
        self.binded = True
        self._curr_module = module
        self._curr_bucket_key = self._default_bucket_key
        self._buckets[self._default_bucket_key] = module
        if self.params_initialized:
            self.set_params(arg_params, aux_params)

    def switch_bucket(self, bucket_key, data_shapes, label_shapes=None):
        """Makes `bucket_key`'s module the current one, making and binding it (on the default
        bucket's parameters) the first time."""
        self._check_bound("switch_bucket")
        module = self._buckets.get(bucket_key)
        if module is None:
            module = self._new_module(bucket_key)
            self._buckets[bucket_key] = module
        if not module.binded:
            module.bind(data_shapes, label_shapes, self._curr_module.for_training,
                        self._curr_module.inputs_need_grad, force_rebind=False,
                        shared_module=self._buckets[self._default_bucket_key],
                        grad_req=self._grad_req)
            if self._monitor is not None:
                module.install_monitor(self._monitor)
        self._curr_module = module
        self._curr_bucket_key = bucket_key

    # ---- Optimizer ---------------------------------------------------------------------------

    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        """Creates the optimizer in the current module; the others borrow it."""
        if self._optimizer_kept(force_init):
            return
        self._curr_module.init_optimizer(kvstore, optimizer, optimizer_params,
                                         force_init=force_init)
        for module in self._buckets.values():
            if module is not self._curr_module:
                module.borrow_optimizer(self._curr_module)
        self.optimizer_initialized = True

    # ---- Computing: in the current bucket's module -------------------------------------------

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Binds the batch's bucket if it is new (the current bucket stays current)."""
        self._check_ready("prepare")
        original = self._curr_bucket_key
        self.switch_bucket(data_batch.bucket_key, data_batch.provide_data,
                           data_batch.provide_label)
        self._curr_module.prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
        self.switch_bucket(original, None, None)

    def forward(self, data_batch, is_train=None):
        """Switches to the batch's bucket (its bucket_key, provide_data and provide_label),
        then runs its forward pass."""
        self._check_ready("forward")
        self.switch_bucket(data_batch.bucket_key, data_batch.provide_data,
                           data_batch.provide_label)
        self._curr_module.forward(data_batch, is_train=is_train)

    def backward(self, out_grads=None):
        self._check_ready("backward")
        self._curr_module.backward(out_grads=out_grads)

    def update(self):
        self._check_optimizer("update")
        self._params_dirty = True
        self._curr_module.update()

    def get_outputs(self, merge_multi_context=True):
        self._check_ready("get_outputs")
        return self._curr_module.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        self._check_ready("get_input_grads")
        return self._curr_module.get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        self._check_ready("update_metric")
        self._curr_module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        """Installs the monitor on every bucket's module, and on those made later."""
        self._check_bound("install_monitor")
        self._monitor = mon
        for module in self._buckets.values():
            module.install_monitor(mon)

    # ---- Checkpoints -------------------------------------------------------------------------

    def save_checkpoint(self, prefix, epoch, remove_amp_cast=False):
        """Writes ``prefix-%04d.params``, one ``prefix-<key>-symbol.json`` per bucket and
        ``prefix.buckets`` (the keys, an int32 NDArray), as MXNet does."""
        if not self._buckets:
            raise RuntimeError("save_checkpoint: an empty BucketingModule cannot be saved")
        self.save_params("%s-%04d.params" % (prefix, epoch))
        for bucket_key in self._buckets:
            symbol, _, _ = self._call_sym_gen(bucket_key)
            symbol.save("%s-%s-symbol.json" % (prefix, bucket_key),
                        remove_amp_cast=remove_amp_cast)
        nd.save("%s.buckets" % prefix, nd.array(list(self._buckets.keys()), dtype=np.int32))

    @staticmethod
    def load(prefix, epoch, sym_gen=None, default_bucket_key=None, **kwargs):
        """A BucketingModule over a checkpoint of save_checkpoint (kwargs go to it and to each
        bucket's Module)."""
        if sym_gen is None or default_bucket_key is None:
            raise ValueError("BucketingModule.load: sym_gen and default_bucket_key are required")
        keys = [int(k) for k in nd.load("%s.buckets" % prefix)[0].asnumpy().astype('int32')]
        symbols = {key: sym.load("%s-%s-symbol.json" % (prefix, key)) for key in keys}
        arg_params, aux_params = load_params(prefix, epoch)
        return BucketingModule._loaded(symbols, sym_gen, default_bucket_key, arg_params,
                                       aux_params, kwargs)

    @staticmethod
    def load_dict(sym_dict=None, sym_gen=None, default_bucket_key=None, arg_params=None,
                  aux_params=None, **kwargs):
        """A BucketingModule over symbols by bucket key and parameters already in memory."""
        for name, value in (("sym_dict", sym_dict), ("arg_params", arg_params),
                            ("aux_params", aux_params), ("default_bucket_key", default_bucket_key)):
            if value is None:
                raise ValueError("BucketingModule.load_dict: %s is required" % name)
        return BucketingModule._loaded(sym_dict, sym_gen, default_bucket_key, arg_params,
                                       aux_params, kwargs)

    @staticmethod
    def _loaded(symbols, sym_gen, default_bucket_key, arg_params, aux_params, kwargs):
        module = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        for bucket_key, symbol in symbols.items():
            _, data_names, label_names = sym_gen(bucket_key)
            module._buckets[bucket_key] = Module(symbol, data_names, label_names, **kwargs)
        if default_bucket_key not in module._buckets:
            raise ValueError("BucketingModule: the saved buckets %s do not include the default "
                             "bucket %r" % (sorted(module._buckets), default_bucket_key))
        module._curr_module = module._buckets[default_bucket_key]
        module._curr_bucket_key = default_bucket_key
        module._curr_module._arg_params = arg_params
        module._curr_module._aux_params = aux_params
        module._curr_module.params_initialized = True
        module.params_initialized = True
        return module
