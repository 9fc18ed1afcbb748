"""Gluon's Trainer (MXNet 1.9.1's ``mx.gluon.Trainer``): applies an optimizer to a set of
Parameters after ``autograd.backward``, with ``step(batch_size)`` (gradients scaled by
1/batch_size).

On one context the parameters are updated where they are. On several, or with a ``dist`` kvstore,
a KVStore sums the contexts' gradients: by default it also runs the optimizer
(``update_on_kvstore``) and every context pulls the new weights, as MXNet's does for ``'device'``
and ``'local'``; with ``update_on_kvstore=False`` each context's updater steps its copy with the
summed gradient.
"""
import os

from .. import kvstore as kvs
from .. import optimizer as opt
from .parameter import Parameter, ParameterDict


class Trainer(object):
    """``params``: a ParameterDict, or a list or dict of Parameters (all initialized on the same
    contexts); ``optimizer``: a name or an Optimizer; ``optimizer_params``: its arguments;
    ``kvstore``: a name, a KVStore, or None; ``update_on_kvstore``: None lets the kvstore decide."""

    def __init__(self, params, optimizer, optimizer_params=None, kvstore='device', compression_params=None,
                 update_on_kvstore=None):
        param_list = []
        if isinstance(params, (dict, ParameterDict)):
            for key in sorted(list(params.keys())):
                param_list.append(params[key])
            params = param_list
        if not isinstance(params, (list, tuple)):
            raise ValueError("First argument must be a list or dict of Parameters, got %s." % (type(params)))
        self._params = []
        self._param2idx = {}
        for i, param in enumerate(params):
            if not isinstance(param, Parameter):
                raise ValueError("First argument must be a list or dict of Parameters, got list of %s."
                                 % (type(param)))
            if param.name in self._param2idx:
                raise ValueError("Parameter '%s' appears twice in the list of Parameters" % param.name)
            self._param2idx[param.name] = i
            self._params.append(param)
            param._trainer = self
        self._compression_params = compression_params
        self._contexts = self._check_contexts()
        optimizer_params = optimizer_params if optimizer_params else {}
        self._init_optimizer(optimizer, optimizer_params)
        self._scale = self._optimizer.rescale_grad
        if self._optimizer.aggregate_num > 1 and update_on_kvstore is not None and update_on_kvstore:
            raise ValueError("Cannot set update_on_kvstore=True when optimizer.aggregate_num > 1.")
        if update_on_kvstore is None and self._optimizer.aggregate_num > 1:
            update_on_kvstore = False
        self._kvstore_params = {'kvstore': kvstore, 'update_on_kvstore': update_on_kvstore}
        self._kv_initialized = False
        self._kvstore = None
        self._update_on_kvstore = None
        self._params_to_init = []
        self._reset_kvstore()

    def _check_contexts(self):
        contexts = None
        for param in self._params:
            ctx = param.list_ctx()
            if contexts is not None and [str(c) for c in contexts] != [str(c) for c in ctx]:
                raise AssertionError("All Parameters must be initialized on the same set of contexts, but Parameter "
                                     "%s is initialized on %s while previous Parameters are initialized on %s."
                                     % (param.name, str(ctx), str(contexts)))
            contexts = ctx
        return contexts

    def _init_optimizer(self, optimizer, optimizer_params):
        param_dict = {i: param for i, param in enumerate(self._params)}
        if isinstance(optimizer, opt.Optimizer):
            if optimizer_params:
                raise AssertionError("optimizer_params must be None if optimizer is an instance of Optimizer "
                                     "instead of str")
            self._optimizer = optimizer
            self._optimizer.param_dict = param_dict
        else:
            self._optimizer = opt.create(optimizer, param_dict=param_dict, **optimizer_params)
        self._updaters = [opt.get_updater(self._optimizer) for _ in self._contexts]

    def _reset_kvstore(self):
        if self._kvstore and 'dist' in self._kvstore.type:
            raise RuntimeError("Cannot reset distributed KVStore.")
        self._kv_initialized = False
        self._kvstore = None
        self._update_on_kvstore = None
        self._params_to_init = [param for param in self._params]

    def _init_kvstore(self):
        config = self._kvstore_params
        kvstore, update_on_kvstore = config['kvstore'], config['update_on_kvstore']
        if isinstance(kvstore, kvs.KVStore):
            kv = kvstore
        elif kvstore is None or (len(self._contexts) == 1 and 'dist' not in kvstore):
            kv = None  # one context: nothing to aggregate
        else:
            kv = kvs.create(kvstore)
        if kv is None:
            self._update_on_kvstore = False
        else:
            if update_on_kvstore is None:
                update_on_kvstore = os.environ.get('MXNET_UPDATE_ON_KVSTORE', '1') == '1'
            if self._compression_params:
                kv.set_gradient_compression(self._compression_params)
            self._update_on_kvstore = update_on_kvstore
            if update_on_kvstore:
                kv.set_optimizer(self._optimizer)
        self._kvstore = kv
        self._kv_initialized = True

    def _init_params(self):
        if self._kvstore is not None:
            for param in self._params_to_init:
                idx = self._param2idx[param.name]
                self._kvstore.init(idx, param.list_data()[0])
                if param.grad_req != 'null' or self._update_on_kvstore:
                    self._kvstore.pull(idx, param.list_data(), priority=-idx)
        self._params_to_init = []

    def _ensure_kvstore(self):
        """Makes the kvstore and puts the parameters in it, at the first step (MXNet's lazy
        initialization: the parameters' contexts are known by then)."""
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()

    @property
    def learning_rate(self):
        if not isinstance(self._optimizer, opt.Optimizer):
            raise UserWarning("Optimizer has to be defined before its learning rate can be accessed.")
        return self._optimizer.learning_rate

    @property
    def optimizer(self):
        if isinstance(self._optimizer, opt.Optimizer):
            return self._optimizer
        raise UserWarning("Optimizer has not been initialized yet")

    def set_learning_rate(self, lr):
        """Sets the learning rate (of an optimizer without a scheduler)."""
        if not isinstance(self._optimizer, opt.Optimizer):
            raise UserWarning("Optimizer has to be defined before its learning rate is mutated.")
        self._optimizer.set_learning_rate(lr)

    def _row_sparse_pull(self, parameter, out, row_id, full_idx=False):
        raise RuntimeError("row_sparse_pull: mxplug's arrays are dense")

    def _check_and_rescale_grad(self, scale):
        # (the kvstore's updater holds this same optimizer, so the scale reaches it too)
        self._optimizer.rescale_grad = scale

    def step(self, batch_size, ignore_stale_grad=False):
        """One update from the gradients of the last backward, scaled by 1/batch_size."""
        rescale_grad = self._scale / batch_size
        self._check_and_rescale_grad(rescale_grad)
        self._ensure_kvstore()
        self._allreduce_grads()
        self._update(ignore_stale_grad)

    def allreduce_grads(self):
        """Sums the gradients over the contexts (without updating): for ``update`` after gradient
        clipping; needs ``update_on_kvstore=False``."""
        self._ensure_kvstore()
        if self._kvstore and self._update_on_kvstore:
            raise AssertionError("allreduce_grads() when parameters are updated on kvstore is not supported. Try "
                                 "setting `update_on_kvstore` to False when creating trainer.")
        self._allreduce_grads()

    def _allreduce_grads(self):
        if not self._kvstore:
            return
        for i, param in enumerate(self._params):
            if param.grad_req != 'null':
                self._kvstore.push(i, param.list_grad(), priority=-i)
                if not self._update_on_kvstore:
                    self._kvstore.pull(i, param.list_grad(), priority=-i, ignore_sparse=False)

    def update(self, batch_size, ignore_stale_grad=False):
        """The update half of ``step`` (after ``allreduce_grads``)."""
        self._ensure_kvstore()
        if self._kvstore and self._update_on_kvstore:
            raise AssertionError("update() when parameters are updated on kvstore is not supported. Try setting "
                                 "`update_on_kvstore` to False when creating trainer.")
        self._check_and_rescale_grad(self._scale / batch_size)
        self._update(ignore_stale_grad)

    def _update(self, ignore_stale_grad=False):
        updates = [[] for _ in self._updaters]
        for i, param in enumerate(self._params):
            if param.grad_req == 'null':
                continue
            if not ignore_stale_grad:
                for data in param._check_and_get(param._data, list):
                    if not data._fresh_grad:
                        raise UserWarning(
                            "Gradient of Parameter `%s` on context %s has not been updated by backward since last "
                            "`step`. This could mean a bug in your model that made it only use a subset of the "
                            "Parameters (Blocks) for this iteration. If you are intentionally only using a subset, "
                            "call step with ignore_stale_grad=True to suppress this warning and skip updating of "
                            "Parameters with stale gradient" % (param.name, str(data.context)))
            if self._kvstore and self._update_on_kvstore:
                self._kvstore.pull(i, param.list_data(), priority=-i)
                for data in param.list_data():
                    data._fresh_grad = False
                continue
            for upd, arr, grad in zip(updates, param.list_data(), param.list_grad()):
                if not ignore_stale_grad or arr._fresh_grad:
                    upd.append((i, grad, arr))
                    arr._fresh_grad = False
        if not (self._kvstore and self._update_on_kvstore):
            for updater, upd in zip(self._updaters, updates):
                if upd:
                    i, g, w = zip(*upd)
                    updater(list(i), list(g), list(w))

    def save_states(self, fname):
        """Writes the optimizer's states (and the optimizer) to ``fname``."""
        if self._optimizer is None:
            raise AssertionError("the trainer has no optimizer")
        self._ensure_kvstore()
        if self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname, dump_optimizer=True)
        else:
            with open(fname, 'wb') as fout:
                fout.write(self._updaters[0].get_states(dump_optimizer=True))

    def load_states(self, fname):
        """Restores the states written by ``save_states``."""
        self._ensure_kvstore()
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
            self._optimizer = self._kvstore._updater.optimizer
        else:
            with open(fname, 'rb') as f:
                states = f.read()
            for updater in self._updaters:
                updater.set_states(states)
                updater.optimizer = self._updaters[0].optimizer
            self._optimizer = self._updaters[0].optimizer
        self._optimizer.param_dict = {i: param for i, param in enumerate(self._params)}
