"""Module: a Symbol trained and run as one model over one or more contexts (MXNet's
``mx.mod.Module``). Parameters live on every device and in the module's own CPU copies
(``get_params``); with several devices the gradients are summed through a kvstore."""
import logging
import os
import warnings

from .. import kvstore as kvs
from .. import ndarray as nd
from .. import optimizer as opt
from ..context import Context, cpu
from ..initializer import InitDesc, Uniform
from ..io import DataDesc
from ..model import load_checkpoint
from .base_module import BaseModule, _parse_data_desc
from .executor_group import ExecutorGroup

__all__ = ["Module"]


def _check_input_names(symbol, names, typename, throw):
    """Each name must be an argument of the symbol (or only warned about, for labels)."""
    args = symbol.list_arguments()
    for name in names:
        if name in args:
            continue
        candidates = [a for a in args if not a.endswith(('_weight', '_bias', '_gamma', '_beta'))]
        msg = ("You created Module with Module(..., %s_names=%s) but input with name '%s' is "
               "not found in symbol.list_arguments(). Did you mean one of:\n\t%s"
               % (typename, str(names), name, "\n\t".join(candidates)))
        if throw:
            raise ValueError(msg)
        warnings.warn(msg)


def _create_kvstore(kvstore, num_device, arg_params):
    """(kvstore or None, update_on_kvstore) as MXNet decides them: one device and a local
    store need none; very large weights are updated on the devices instead."""
    update_on_kvstore = bool(int(os.getenv('MXNET_UPDATE_ON_KVSTORE', "1")))
    if kvstore is None:
        kv = None
    elif isinstance(kvstore, kvs.KVStore):
        kv = kvstore
    elif isinstance(kvstore, str):
        if num_device == 1 and 'dist' not in kvstore:
            kv = None
        else:
            kv = kvs.create(kvstore)
            if kvstore == 'local':
                max_size = max(p.size for p in arg_params.values()) if arg_params else 0
                if max_size > 1024 * 1024 * 16:
                    update_on_kvstore = False
    else:
        raise TypeError("kvstore must be a KVStore, a str or None, got %s" % type(kvstore).__name__)
    if kv is None:
        update_on_kvstore = False
    return kv, update_on_kvstore


def _resized_batch(descs, data_descs):
    """`descs` with their batch axis set to the batch size of `data_descs`."""
    if not descs:
        return None
    first = data_descs[0]
    layout = getattr(first, "layout", None)
    batch_size = first[1][DataDesc.get_batch_axis(layout)]
    resized = []
    for d in descs:
        shape, axis = list(d.shape), DataDesc.get_batch_axis(d.layout)
        if axis >= 0:
            shape[axis] = batch_size
        resized.append(DataDesc(d.name, tuple(shape), d.dtype, d.layout))
    return resized


class Module(BaseModule):
    """A symbol with its data, label and parameter names, bound to `context` (a Context or a
    list of them, the batch split along its batch axis in proportion to `work_load_list`)."""

    def __init__(self, symbol, data_names=('data',), label_names=('softmax_label',),
                 logger=logging, context=cpu(), work_load_list=None, fixed_param_names=None,
                 state_names=None, group2ctxs=None, compression_params=None):
        super(Module, self).__init__(logger=logger)
        if isinstance(context, Context):
            context = [context]
        self._context = list(context)
        if work_load_list is None:
            work_load_list = [1] * len(self._context)
        if len(work_load_list) != len(self._context):
            raise ValueError("work_load_list has %d entries for %d contexts"
                             % (len(work_load_list), len(self._context)))
        self._work_load_list = work_load_list
        self._group2ctxs = group2ctxs
        self._symbol = symbol
        data_names = list(data_names) if data_names is not None else []
        label_names = list(label_names) if label_names is not None else []
        state_names = list(state_names) if state_names is not None else []
        fixed_param_names = list(fixed_param_names) if fixed_param_names is not None else []
        _check_input_names(symbol, data_names, "data", True)
        _check_input_names(symbol, label_names, "label", False)
        _check_input_names(symbol, state_names, "state", True)
        _check_input_names(symbol, fixed_param_names, "fixed_param", True)
        input_names = data_names + label_names + state_names
        self._param_names = [x for x in symbol.list_arguments() if x not in input_names]
        self._fixed_param_names = fixed_param_names
        self._aux_names = symbol.list_auxiliary_states()
        self._data_names = data_names
        self._label_names = label_names
        self._state_names = state_names
        self._output_names = symbol.list_outputs()
        self._compression_params = compression_params
        self._arg_params = None
        self._aux_params = None
        self._params_dirty = False
        self._optimizer = None
        self._kvstore = None
        self._update_on_kvstore = None
        self._updater = None
        self._preload_opt_states = None
        self._grad_req = None
        self._exec_group = None
        self._data_shapes = None
        self._label_shapes = None

    @staticmethod
    def load(prefix, epoch, load_optimizer_states=False, **kwargs):
        """A Module over the checkpoint ``prefix-symbol.json`` / ``prefix-%04d.params`` (and
        ``prefix-%04d.states`` when load_optimizer_states); kwargs go to Module()."""
        sym, args, auxs = load_checkpoint(prefix, epoch)
        mod = Module(symbol=sym, **kwargs)
        mod._arg_params = args
        mod._aux_params = auxs
        mod.params_initialized = True
        if load_optimizer_states:
            mod._preload_opt_states = '%s-%04d.states' % (prefix, epoch)
        return mod

    def save_checkpoint(self, prefix, epoch, save_optimizer_states=False, remove_amp_cast=True):
        """Writes ``prefix-symbol.json``, ``prefix-%04d.params`` and, when asked,
        ``prefix-%04d.states``."""
        self._symbol.save('%s-symbol.json' % prefix, remove_amp_cast=remove_amp_cast)
        param_name = '%s-%04d.params' % (prefix, epoch)
        self.save_params(param_name)
        logging.info('Saved checkpoint to "%s"', param_name)
        if save_optimizer_states:
            state_name = '%s-%04d.states' % (prefix, epoch)
            self.save_optimizer_states(state_name)
            logging.info('Saved optimizer state to "%s"', state_name)

    # ---- Names and shapes --------------------------------------------------------------------

    @property
    def data_names(self):
        return self._data_names

    @property
    def label_names(self):
        return self._label_names

    @property
    def output_names(self):
        return self._output_names

    @property
    def data_shapes(self):
        self._check_bound("data_shapes")
        return self._data_shapes

    @property
    def label_shapes(self):
        self._check_bound("label_shapes")
        return self._label_shapes

    @property
    def output_shapes(self):
        self._check_bound("output_shapes")
        return [(name, out.shape) for name, out in
                zip(self._output_names, self._exec_group.get_outputs())]

    # ---- Parameters --------------------------------------------------------------------------

    def get_params(self):
        """(arg_params, aux_params): the module's CPU copies, refreshed from the devices
        (averaged over them) after updates. Loaded parameters are there before bind, as in
        MXNet."""
        if not self.params_initialized:
            raise RuntimeError("get_params: call init_params (or fit, or Module.load) first")
        if self._params_dirty:
            self._sync_params_from_devices()
        return (self._arg_params, self._aux_params)

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Sets each parameter from arg_params/aux_params when there, else (allow_missing)
        from the initializer; copies them to every device."""
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. "
                          "init_params call ignored.", stacklevel=2)
            return
        if not self.binded:
            raise RuntimeError("init_params: call bind before initializing the parameters")

        def _impl(name, arr, cache):
            if cache is not None:
                if name in cache:
                    if cache[name] is not arr:
                        cached = cache[name]
                        if cached.shape != arr.shape:
                            raise ValueError("init_params: %s has shape %s, the module needs %s"
                                             % (name, cached.shape, arr.shape))
                        cached.astype(arr.dtype).copyto(arr)
                elif not allow_missing:
                    raise RuntimeError("init_params: %s is not presented (give it in the "
                                       "parameters, or allow_missing=True to initialize it)" % name)
                elif initializer is not None:
                    initializer(name, arr)
            else:
                initializer(name, arr)

        attrs = self._symbol.attr_dict()
        for params, cache in ((self._arg_params, arg_params), (self._aux_params, aux_params)):
            for name, arr in sorted(params.items()):
                _impl(InitDesc(name, attrs.get(name, None)), arr, cache)
        self.params_initialized = True
        self._params_dirty = False
        self._exec_group.set_params(self._arg_params, self._aux_params, allow_extra=allow_extra)

    def _set_given_params(self, arg_params, aux_params, force_init, allow_extra):
        self._exec_group.set_params(arg_params, aux_params, allow_extra=allow_extra)

    def _sync_params_from_devices(self):
        self._exec_group.get_params(self._arg_params, self._aux_params)
        self._params_dirty = False

    # ---- Binding -----------------------------------------------------------------------------

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Makes the executors for these input shapes ([(name, shape)] or DataDescs)."""
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning('Already bound, ignoring bind()')
            return
        if not for_training and inputs_need_grad:
            raise ValueError("bind: inputs_need_grad=True needs for_training=True")
        if shared_module is not None and not (isinstance(shared_module, Module)
                                              and shared_module.binded
                                              and shared_module.params_initialized):
            raise ValueError("bind: shared_module must be a Module that is bound and has its "
                             "parameters initialized")
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._grad_req = grad_req
        self._data_shapes, self._label_shapes = _parse_data_desc(
            self._data_names, self._label_names, data_shapes, label_shapes)
        self._exec_group = ExecutorGroup(
            self._symbol, self._context, self._work_load_list, self._data_shapes,
            self._label_shapes, self._param_names, for_training, inputs_need_grad,
            fixed_param_names=self._fixed_param_names, grad_req=grad_req,
            group2ctxs=self._group2ctxs, state_names=self._state_names,
            shared_group=shared_module._exec_group if shared_module is not None else None)
        self.binded = True
        if shared_module is not None:
            # The executors use the shared module's parameter arrays: so do the CPU copies.
            self.params_initialized = True
            self._arg_params = shared_module._arg_params
            self._aux_params = shared_module._aux_params
            if shared_module.optimizer_initialized:
                self.borrow_optimizer(shared_module)
        elif self.params_initialized:
            # Parameters set before binding (Module.load) go to the new executors.
            self._exec_group.set_params(self._arg_params, self._aux_params)
        else:
            self._arg_params = {name: nd.zeros(block[0].shape, dtype=block[0].dtype)
                                for name, block in zip(self._param_names,
                                                       self._exec_group.param_arrays)}
            self._aux_params = {name: nd.zeros(block[0].shape, dtype=block[0].dtype)
                                for name, block in zip(self._aux_names,
                                                       self._exec_group.aux_arrays)}

    def reshape(self, data_shapes, label_shapes=None):
        """Re-binds for new input shapes, keeping the parameters."""
        self._check_bound("reshape")
        self._data_shapes, self._label_shapes = _parse_data_desc(
            self._data_names, self._label_names, data_shapes, label_shapes)
        self._exec_group.reshape(self._data_shapes, self._label_shapes)

    def _reset_bind(self):
        self.binded = False
        self._exec_group = None
        self._data_shapes = None
        self._label_shapes = None

    # ---- Optimizer ---------------------------------------------------------------------------

    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        """Creates the optimizer (rescale_grad = 1/batch size) and, with several devices or a
        given store, the kvstore that sums the gradients (and updates the weights)."""
        self._check_ready("init_optimizer")
        if self.optimizer_initialized and not force_init:
            self.logger.warning('optimizer already initialized, ignoring...')
            return
        if self._params_dirty:
            self._sync_params_from_devices()
        kvstore, update_on_kvstore = _create_kvstore(kvstore, len(self._context),
                                                     self._arg_params)
        batch_size = self._exec_group.batch_size
        if kvstore is not None and 'dist' in kvstore.type and '_sync' in kvstore.type:
            batch_size *= kvstore.num_workers
        rescale_grad = 1.0 / batch_size
        num_dev = len(self._context)
        if update_on_kvstore:
            idx2name = dict(enumerate(self._exec_group.param_names))
        else:
            idx2name = {i * num_dev + k: n for k in range(num_dev)
                        for i, n in enumerate(self._exec_group.param_names)}
        if isinstance(optimizer, str):
            optimizer_params = dict(optimizer_params)
            optimizer_params.setdefault('rescale_grad', rescale_grad)
            optimizer = opt.create(optimizer, sym=self.symbol, param_idx2name=idx2name,
                                   **optimizer_params)
        else:
            if not isinstance(optimizer, opt.Optimizer):
                raise TypeError("init_optimizer: optimizer must be a name or an Optimizer, got %s"
                                % type(optimizer).__name__)
            if optimizer.rescale_grad != rescale_grad:
                warnings.warn("Optimizer created manually outside Module but rescale_grad is not "
                              "normalized to 1.0/batch_size/num_workers (%s vs. %s). Is this "
                              "intended?" % (optimizer.rescale_grad, rescale_grad), stacklevel=2)
            if not optimizer.idx2name:
                optimizer.idx2name = idx2name.copy()
        self._optimizer = optimizer
        self._kvstore = kvstore
        self._update_on_kvstore = update_on_kvstore
        self._updater = None
        if kvstore is not None:
            if update_on_kvstore:
                kvstore.set_optimizer(self._optimizer)
            for idx, (name, on_devs) in enumerate(zip(self._exec_group.param_names,
                                                      self._exec_group.param_arrays)):
                kvstore.init(name, self._arg_params[name])
                if update_on_kvstore:
                    kvstore.pull(name, on_devs, priority=-idx)
        if not update_on_kvstore:
            self._updater = opt.get_updater(optimizer)
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self.load_optimizer_states(self._preload_opt_states)
            self._preload_opt_states = None

    def borrow_optimizer(self, shared_module):
        """Uses another module's optimizer, kvstore and updater (as bucketing modules do)."""
        if not shared_module.optimizer_initialized:
            raise RuntimeError("borrow_optimizer: the shared module has no optimizer yet")
        self._optimizer = shared_module._optimizer
        self._kvstore = shared_module._kvstore
        self._update_on_kvstore = shared_module._update_on_kvstore
        self._updater = shared_module._updater
        self.optimizer_initialized = True

    def _states_updater(self, what):
        """The Updater holding the optimizer's states: the kvstore's when it updates."""
        if not self.optimizer_initialized:
            raise RuntimeError("%s: call init_optimizer first" % what)
        return self._kvstore._updater if self._update_on_kvstore else self._updater

    def save_optimizer_states(self, fname):
        """Writes the optimizer's states to `fname`."""
        self._states_updater("save_optimizer_states").save_states(fname)

    def load_optimizer_states(self, fname):
        """Restores states written by save_optimizer_states."""
        self._states_updater("load_optimizer_states").load_states(fname)

    # ---- Computing ---------------------------------------------------------------------------

    def forward(self, data_batch, is_train=None):
        """Runs the forward pass on a batch (re-binding first when its shapes differ from the
        bound ones); is_train defaults to for_training."""
        self._check_ready("forward")
        self._fit_to(data_batch)
        self._exec_group.forward(data_batch, is_train)

    def _forward_reading(self, data_batch):
        self._check_ready("forward")
        self._fit_to(data_batch)
        self._exec_group.forward_reading(data_batch)

    def _finish_reading(self):
        if self.binded:
            self._exec_group.finish_reading()

    def _fit_to(self, data_batch):
        """Re-binds when the batch's shapes differ from the bound ones."""
        curr = tuple(d.shape for d in self._data_shapes)
        new = tuple(d.shape for d in data_batch.data)
        if curr != new:
            if getattr(data_batch, "provide_data", None):
                new_dshape = data_batch.provide_data
            else:
                new_dshape = [DataDesc(d.name, shape, d.dtype, d.layout)
                              for d, shape in zip(self._data_shapes, new)]
            if getattr(data_batch, "provide_label", None):
                new_lshape = data_batch.provide_label
            elif getattr(data_batch, "label", None) and self._label_shapes:
                new_lshape = [DataDesc(d.name, l.shape, d.dtype, d.layout)
                              for d, l in zip(self._label_shapes, data_batch.label)]
            else:
                # A batch without labels (prediction): the labels follow the new batch size,
                # where MXNet would refuse the changed label shape.
                new_lshape = _resized_batch(self._label_shapes, new_dshape)
            self.reshape(new_dshape, new_lshape)

    def backward(self, out_grads=None):
        """Runs the backward pass (out_grads for outputs that are not losses)."""
        self._check_ready("backward")
        self._exec_group.backward(out_grads=out_grads)

    def update(self):
        """One optimizer step on every parameter from the gradients of the last backward,
        summed over the devices."""
        self._check_optimizer("update")
        self._params_dirty = True
        group = self._exec_group
        if self._update_on_kvstore:
            for index, (name, weights, grads) in enumerate(zip(group.param_names,
                                                               group.param_arrays,
                                                               group.grad_arrays)):
                if grads[0] is None:
                    continue
                self._kvstore.push(name, grads, priority=-index)
                self._kvstore.pull(name, weights, priority=-index)
            return
        num_dev = len(self._context)
        for index, (name, weights, grads) in enumerate(zip(group.param_names,
                                                           group.param_arrays,
                                                           group.grad_arrays)):
            if grads[0] is None:
                continue
            if self._kvstore is not None:
                self._kvstore.push(name, grads, priority=-index)
                self._kvstore.pull(name, grads, priority=-index)
            for k, (w, g) in enumerate(zip(weights, grads)):
                self._updater(index * num_dev + k, g, w)

    def get_states(self, merge_multi_context=True):
        """The state arrays (inputs named in state_names) per name and then per device;
        merge_multi_context=True is refused, as in MXNet."""
        self._check_ready("get_states")
        return self._exec_group.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None):
        """Sets the state arrays from `states` ([[state_dev1, ...], ...]) or to `value`."""
        self._check_ready("set_states")
        self._exec_group.set_states(states, value)

    def get_outputs(self, merge_multi_context=True):
        """The outputs of the last forward pass (one array per output, the devices' pieces
        concatenated unless merge_multi_context=False)."""
        self._check_ready("get_outputs")
        return self._exec_group.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """The gradients of the data inputs (bind with inputs_need_grad=True)."""
        self._check_ready("get_input_grads")
        return self._exec_group.get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Adds the last forward pass's outputs against `labels` to the metric."""
        self._exec_group.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        """Installs a monitor (mx.monitor.Monitor) on the executors."""
        assert self.binded
        self._exec_group.install_monitor(mon)
