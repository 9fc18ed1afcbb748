"""BaseModule: the training loop (``fit``), evaluation (``score``) and inference (``predict``,
``iter_predict``) written once over the primitive steps every module gives: bind, init_params,
init_optimizer, forward, backward, update, update_metric, get_outputs, get_params."""
import logging
import time
import warnings

import numpy as np

from .. import metric
from .. import ndarray as nd
from ..initializer import Uniform
from ..io import DataBatch, DataDesc, DataIter
from ..model import BatchEndParam, load_params_file, save_params_file
from ..ndarray import NDArray
from .executor_group import refuse_merged_states

__all__ = ["BaseModule"]


def _as_list(obj):
    """A list of one object unless it is already a list or tuple."""
    return list(obj) if isinstance(obj, (list, tuple)) else [obj]


def _call_all(callbacks, epoch, nbatch, eval_metric, local_vars):
    """Calls each batch-end callback (one, a list or None) with a BatchEndParam."""
    if not callbacks:
        return
    params = BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric, locals=local_vars)
    for callback in _as_list(callbacks):
        callback(params)


def _check_names_match(names, shapes, what, throw):
    """The names a module was made with against those an iterator provides."""
    actual = [desc[0] for desc in shapes]
    if sorted(names) != sorted(actual):
        msg = "Data provided by %s_shapes don't match names specified by %s_names (%s vs. %s)" % (
            what, what, str(shapes), str(names))
        if throw:
            raise ValueError(msg)
        warnings.warn(msg)


def _parse_data_desc(data_names, label_names, data_shapes, label_shapes):
    """DataDescs from (name, shape) pairs or DataDescs, checked against the module's names."""
    data_shapes = [d if isinstance(d, DataDesc) else DataDesc(*d) for d in data_shapes]
    _check_names_match(data_names, data_shapes, "data", True)
    if label_shapes:
        label_shapes = [d if isinstance(d, DataDesc) else DataDesc(*d) for d in label_shapes]
        _check_names_match(label_names, label_shapes, "label", False)
    else:
        label_shapes = None
        _check_names_match(label_names, [], "label", False)
    return data_shapes, label_shapes


class BaseModule(object):
    """A model that can be bound to input shapes, initialised, trained and asked for
    predictions. Its state flags: ``binded``, ``for_training``, ``inputs_need_grad``,
    ``params_initialized``, ``optimizer_initialized``."""

    def __init__(self, logger=logging):
        self.logger = logger
        self.binded = False
        self.for_training = False
        self.inputs_need_grad = False
        self.params_initialized = False
        self.optimizer_initialized = False
        self._symbol = None

    # ---- The high-level interface ------------------------------------------------------------

    def _forward_reading(self, data_batch):
        """forward(data_batch, is_train=False) for the module's own loops (score, predict,
        iter_predict), which may read the batch without copying it into the bound inputs until
        _finish_reading (Note [Reading in place] in core/src/executor/executor.cc)."""
        self.forward(data_batch, is_train=False)

    def _finish_reading(self):
        """Ends a loop of _forward_reading: the bound inputs hold its last batch."""

    def forward_backward(self, data_batch):
        """A training step's forward and backward passes."""
        self.forward(data_batch, is_train=True)
        self.backward()

    def score(self, eval_data, eval_metric, num_batch=None, batch_end_callback=None,
              score_end_callback=None, reset=True, epoch=0, sparse_row_id_fn=None):
        """Runs the model over `eval_data` (inference mode) and returns the metric's
        [(name, value)] list. Padded examples count, as in MXNet."""
        self._check_ready("score")
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        eval_metric.reset()
        actual_num_batch = 0
        for nbatch, eval_batch in self._inference_batches(eval_data, num_batch, reset,
                                                          sparse_row_id_fn):
            self.update_metric(eval_metric, eval_batch.label)
            _call_all(batch_end_callback, epoch, nbatch, eval_metric, locals())
            actual_num_batch += 1
        _call_all(score_end_callback, epoch, actual_num_batch, eval_metric, locals())
        return eval_metric.get_name_value()

    def iter_predict(self, eval_data, num_batch=None, reset=True, sparse_row_id_fn=None):
        """Yields (outputs, batch number, batch) per batch, the padding cut off the outputs."""
        self._check_ready("iter_predict")
        for nbatch, eval_batch in self._inference_batches(eval_data, num_batch, reset,
                                                          sparse_row_id_fn):
            pad = eval_batch.pad or 0
            outputs = self.get_outputs()
            if pad:
                outputs = [out[0:out.shape[0] - pad] for out in outputs]
            yield (outputs, nbatch, eval_batch)

    def _inference_batches(self, eval_data, num_batch, reset, sparse_row_id_fn):
        """(batch number, batch) after each batch's inference forward pass, for score and
        iter_predict; however the loop ends, the bound inputs then hold its last batch."""
        if reset:
            eval_data.reset()
        try:
            for nbatch, eval_batch in enumerate(eval_data):
                if num_batch is not None and nbatch == num_batch:
                    break
                self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
                self._forward_reading(eval_batch)
                yield nbatch, eval_batch
        finally:
            self._finish_reading()

    def predict(self, eval_data, num_batch=None, merge_batches=True, reset=True,
                always_output_list=False, sparse_row_id_fn=None):
        """The outputs over `eval_data` (a DataIter, or one batch as an NDArray or NumPy
        array), the padding cut off; batches concatenated when merge_batches."""
        self._check_ready("predict")
        if isinstance(eval_data, (NDArray, np.ndarray)):
            if isinstance(eval_data, np.ndarray):
                eval_data = nd.array(eval_data)
            self.forward(DataBatch([eval_data]))
            return self.get_outputs()[0]
        if not isinstance(eval_data, DataIter):
            raise ValueError("eval_data must be of type NDArray or DataIter, got %s"
                             % type(eval_data).__name__)
        output_list = [[out.copy() for out in outputs]
                       for outputs, _, _ in self.iter_predict(eval_data, num_batch, reset,
                                                              sparse_row_id_fn)]
        if not output_list:
            return output_list
        if not merge_batches:
            return output_list
        num_outputs = len(output_list[0])
        for out in output_list:
            if len(out) != num_outputs:
                raise ValueError("Cannot merge batches, as num of outputs is not the same in "
                                 "mini-batches. Maybe bucketing is used?")
        merged = [nd.concatenate([out[i] for out in output_list]) for i in range(num_outputs)]
        if num_outputs == 1 and not always_output_list:
            return merged[0]
        return merged

    def fit(self, train_data, eval_data=None, eval_metric='acc', epoch_end_callback=None,
            batch_end_callback=None, kvstore='local', optimizer='sgd',
            optimizer_params=(('learning_rate', 0.01),), eval_end_callback=None,
            eval_batch_end_callback=None, initializer=Uniform(0.01), arg_params=None,
            aux_params=None, allow_missing=False, force_rebind=False, force_init=False,
            begin_epoch=0, num_epoch=None, validation_metric=None, monitor=None,
            sparse_row_id_fn=None):
        """Trains on `train_data` for epochs begin_epoch..num_epoch-1: binds, initialises the
        parameters (unless given or already set) and the optimizer, then per batch forward,
        backward, update and metric; logs 'Epoch[%d] Train-<metric>', 'Time cost' and
        'Validation-<metric>' (on eval_data) per epoch and calls the callbacks."""
        if num_epoch is None:
            raise ValueError("fit: please specify number of epochs (num_epoch)")
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label,
                  for_training=True, force_rebind=force_rebind)
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init)
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                            optimizer_params=optimizer_params)
        if validation_metric is None:
            validation_metric = eval_metric
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)

        for epoch in range(begin_epoch, num_epoch):
            tic = time.time()
            eval_metric.reset()
            nbatch = 0
            data_iter = iter(train_data)
            end_of_batch = False
            next_data_batch = next(data_iter)
            while not end_of_batch:
                data_batch = next_data_batch
                if monitor is not None:
                    monitor.tic()
                self.forward_backward(data_batch)
                self.update()
                self.update_metric(eval_metric, data_batch.label)
                try:
                    next_data_batch = next(data_iter)
                    self.prepare(next_data_batch, sparse_row_id_fn=sparse_row_id_fn)
                except StopIteration:
                    end_of_batch = True
                if end_of_batch:
                    eval_name_vals = eval_metric.get_global_name_value()
                if monitor is not None:
                    monitor.toc_print()
                _call_all(batch_end_callback, epoch, nbatch, eval_metric, locals())
                nbatch += 1

            for name, val in eval_name_vals:
                self.logger.info('Epoch[%d] Train-%s=%f', epoch, name, val)
            self.logger.info('Epoch[%d] Time cost=%.3f', epoch, time.time() - tic)

            # The devices' parameters averaged into the module's own copies, and back.
            arg_params, aux_params = self.get_params()
            self.set_params(arg_params, aux_params)
            if epoch_end_callback is not None:
                for callback in _as_list(epoch_end_callback):
                    callback(epoch, self.symbol, arg_params, aux_params)
            if eval_data:
                res = self.score(eval_data, validation_metric,
                                 score_end_callback=eval_end_callback,
                                 batch_end_callback=eval_batch_end_callback, epoch=epoch)
                for name, val in res:
                    self.logger.info('Epoch[%d] Validation-%s=%f', epoch, name, val)
            train_data.reset()

    # ---- Parameters --------------------------------------------------------------------------

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Sets the parameters from dicts of name to NDArray: all of them, or with
        allow_missing those given (unless already set and not force_init)."""
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=False, force_init=force_init, allow_extra=allow_extra)
            return
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. "
                          "set_params call ignored.", stacklevel=2)
            return
        self._set_given_params(arg_params, aux_params, force_init, allow_extra)
        self._params_dirty = True
        self.params_initialized = True

    def _set_given_params(self, arg_params, aux_params, force_init, allow_extra):
        """set_params(allow_missing=True)'s step: sets the parameters the dicts have."""
        self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=True, force_init=force_init, allow_extra=allow_extra)

    def save_params(self, fname):
        """Writes the parameters as 'arg:<name>' / 'aux:<name>' arrays (MXNet's .params)."""
        arg_params, aux_params = self.get_params()
        save_params_file(fname, arg_params, aux_params)

    def load_params(self, fname):
        """Sets the parameters from a file written by save_params."""
        arg_params, aux_params = load_params_file(fname)
        self.set_params(arg_params, aux_params)

    # ---- What modules give -------------------------------------------------------------------

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Prepares the module for a batch (nothing to do for dense modules)."""

    def get_states(self, merge_multi_context=True):
        """A module without states has none: []."""
        self._check_ready("get_states")
        refuse_merged_states(merge_multi_context)
        return []

    def set_states(self, states=None, value=None):
        """A module without states takes none."""
        self._check_ready("set_states")
        if states or value:
            raise ValueError("set_states: %s has no states to set" % type(self).__name__)

    def install_monitor(self, mon):
        raise NotImplementedError("%s.install_monitor: monitors are not supported yet"
                                  % type(self).__name__)

    def _optimizer_kept(self, force_init):
        """init_optimizer's check: True (and a warning) when the optimizer stays as it is."""
        self._check_ready("init_optimizer")
        if self.optimizer_initialized and not force_init:
            self.logger.warning('optimizer already initialized, ignoring.')
            return True
        return False

    def _check_bound(self, what):
        if not self.binded:
            raise RuntimeError("%s.%s: call bind first" % (type(self).__name__, what))

    def _check_ready(self, what):
        if not (self.binded and self.params_initialized):
            raise RuntimeError("%s: call bind and init_params (or fit) first" % what)

    def _check_optimizer(self, what):
        """`what` steps the optimizer: the module must be ready and have one."""
        self._check_ready(what)
        if not self.optimizer_initialized:
            raise RuntimeError("%s.%s: call init_optimizer first" % (type(self).__name__, what))

    @property
    def symbol(self):
        return self._symbol
