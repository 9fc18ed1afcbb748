"""Checkpoints in MXNet's files (``mx.model``): ``prefix-symbol.json`` for the network and
``prefix-%04d.params`` for its parameters, names prefixed ``arg:`` and ``aux:``. Files written
by MXNet 1.x load here and the other way round. Also FeedForward, MXNet's first model class,
running on mx.mod.Module."""
import logging
from collections import namedtuple

import numpy as np

from . import io
from . import metric
from . import ndarray as nd
from . import symbol as sym
from .context import Context, cpu
from .initializer import Uniform

__all__ = ["BatchEndParam", "save_checkpoint", "load_params", "load_checkpoint", "FeedForward"]

# What batch-end callbacks receive: the epoch, the batch number, the metric and the caller's locals.
BatchEndParam = namedtuple('BatchEndParams', ['epoch', 'nbatch', 'eval_metric', 'locals'])


def save_checkpoint(prefix, epoch, symbol, arg_params, aux_params, remove_amp_cast=True):
    """Writes ``prefix-symbol.json`` (unless symbol is None) and ``prefix-%04d.params``."""
    if symbol is not None:
        symbol.save('%s-symbol.json' % prefix)
    param_name = '%s-%04d.params' % (prefix, epoch)
    save_params_file(param_name, arg_params, aux_params)
    logging.info('Saved checkpoint to "%s"', param_name)


def save_params_file(fname, arg_params, aux_params):
    """Writes the parameters as 'arg:<name>' / 'aux:<name>' arrays (MXNet's .params)."""
    save_dict = {'arg:%s' % k: v.as_in_context(cpu()) for k, v in arg_params.items()}
    save_dict.update({'aux:%s' % k: v.as_in_context(cpu()) for k, v in aux_params.items()})
    nd.save(fname, save_dict)


def load_params(prefix, epoch):
    """(arg_params, aux_params) from ``prefix-%04d.params``."""
    return load_params_file("%s-%04d.params" % (prefix, epoch))


def load_params_file(fname):
    """(arg_params, aux_params) from a .params file of 'arg:<name>' / 'aux:<name>' arrays."""
    save_dict = nd.load(fname)
    arg_params, aux_params = {}, {}
    if not save_dict:
        logging.warning("Params file '%s' is empty", fname)
        return arg_params, aux_params
    if not isinstance(save_dict, dict):
        raise ValueError("%s holds unnamed arrays; a checkpoint names them arg:<name> / aux:<name>" % fname)
    for key, value in save_dict.items():
        kind, _, name = key.partition(":")
        if kind == "arg":
            arg_params[name] = value
        elif kind == "aux":
            aux_params[name] = value
        else:
            raise ValueError("%s: array '%s' is neither arg:<name> nor aux:<name>" % (fname, key))
    return arg_params, aux_params


def load_checkpoint(prefix, epoch):
    """(symbol, arg_params, aux_params) from ``prefix-symbol.json`` and ``prefix-%04d.params``."""
    symbol = sym.load('%s-symbol.json' % prefix)
    arg_params, aux_params = load_params(prefix, epoch)
    return symbol, arg_params, aux_params


class FeedForward(object):
    """MXNet's original model class, kept for the scripts that use it: a symbol trained with
    ``fit(X, y)`` on NumPy arrays or data iterators, asked with ``predict`` and ``score``, saved
    and loaded as checkpoints. Runs on mx.mod.Module; ``kwargs`` are the optimizer's
    parameters (learning_rate, momentum, wd, ...). ``epoch_size`` batches make an epoch when
    given (the iterator continuing across epochs)."""

    def __init__(self, symbol, ctx=None, num_epoch=None, epoch_size=None, optimizer='sgd',
                 initializer=None, numpy_batch_size=128, arg_params=None, aux_params=None,
                 allow_extra_params=False, begin_epoch=0, **kwargs):
        if ctx is None:
            ctx = [cpu()]
        elif isinstance(ctx, Context):
            ctx = [ctx]
        self.symbol = symbol
        self.ctx = list(ctx)
        self.num_epoch = num_epoch
        self.epoch_size = epoch_size
        self.optimizer = optimizer
        self.initializer = initializer if initializer is not None else Uniform(0.01)
        self.numpy_batch_size = numpy_batch_size
        self.arg_params = arg_params
        self.aux_params = aux_params
        self.allow_extra_params = allow_extra_params
        self.begin_epoch = begin_epoch
        self.kwargs = kwargs.copy()

    def _init_iter(self, X, y, is_train):
        """A DataIter over X (and y) when they are arrays: shuffled and rolling over for
        training, in order and padded for prediction."""
        if isinstance(X, (np.ndarray, nd.NDArray)):
            if y is None:
                if is_train:
                    raise ValueError("y must be specified when X is numpy.ndarray")
                y = np.zeros(X.shape[0])
            if not isinstance(y, (np.ndarray, nd.NDArray)):
                raise ValueError("y must be ndarray when X is numpy.ndarray")
            if X.shape[0] != y.shape[0]:
                raise ValueError("The numbers of data points and labels not equal: %d vs %d"
                                 % (X.shape[0], y.shape[0]))
            if y.ndim == 2 and y.shape[1] == 1:
                y = y.reshape((y.shape[0],))
            if y.ndim != 1:
                raise ValueError("Label must be 1D or 2D (with 2nd dimension being 1)")
            batch_size = min(X.shape[0], self.numpy_batch_size)
            if is_train:
                return io.NDArrayIter(X, y, batch_size, shuffle=True, last_batch_handle='roll_over')
            return io.NDArrayIter(X, y, batch_size, shuffle=False)
        if not isinstance(X, io.DataIter):
            raise TypeError("X must be DataIter, NDArray or numpy.ndarray, got %s" % type(X).__name__)
        return X

    def _init_eval_iter(self, eval_data):
        if eval_data is None:
            return None
        if isinstance(eval_data, (tuple, list)) and len(eval_data) == 2:
            if eval_data[0] is not None and eval_data[1] is None:
                return self._init_iter(eval_data[0], None, is_train=False)
            return self._init_iter(eval_data[0], eval_data[1], is_train=False)
        return self._init_iter(eval_data, None, is_train=False)

    def _module(self, data_iter, work_load_list=None, logger=None):
        from .module import Module
        return Module(self.symbol, data_names=[d[0] for d in data_iter.provide_data],
                      label_names=[d[0] for d in data_iter.provide_label],
                      context=self.ctx, work_load_list=work_load_list,
                      logger=logger or logging)

    def _predictor(self, data_iter):
        if self.arg_params is None:
            raise RuntimeError("FeedForward: the model has no parameters yet; call fit or load")
        mod = self._module(data_iter)
        mod.bind(data_iter.provide_data, data_iter.provide_label, for_training=False)
        mod.set_params(self.arg_params, self.aux_params or {},
                       allow_extra=self.allow_extra_params)
        return mod

    def fit(self, X, y=None, eval_data=None, eval_metric='acc', epoch_end_callback=None,
            batch_end_callback=None, kvstore='local', logger=None, work_load_list=None,
            monitor=None, eval_end_callback=None, eval_batch_end_callback=None):
        """Trains epochs begin_epoch..num_epoch-1 on X (a DataIter, or arrays with labels y);
        the parameters given at construction are kept, the others initialised."""
        data = self._init_iter(X, y, is_train=True)
        eval_data = self._init_eval_iter(eval_data)
        if self.epoch_size:
            data = io.ResizeIter(data, self.epoch_size, reset_internal=False)
        mod = self._module(data, work_load_list, logger)
        mod.fit(data, eval_data=eval_data, eval_metric=eval_metric,
                epoch_end_callback=epoch_end_callback, batch_end_callback=batch_end_callback,
                kvstore=kvstore, optimizer=self.optimizer, optimizer_params=self.kwargs,
                eval_end_callback=eval_end_callback,
                eval_batch_end_callback=eval_batch_end_callback, initializer=self.initializer,
                arg_params=self.arg_params, aux_params=self.aux_params, allow_missing=True,
                begin_epoch=self.begin_epoch, num_epoch=self.num_epoch, monitor=monitor)
        self.arg_params, self.aux_params = (
            {k: v.copy() for k, v in params.items()} for params in mod.get_params())

    def predict(self, X, num_batch=None, return_data=False, reset=True):
        """The outputs as NumPy arrays (one array for one output), the padding cut off; with
        return_data also the data and labels they came from."""
        data_iter = self._init_iter(X, None, is_train=False)
        mod = self._predictor(data_iter)
        outputs, datas, labels = [], [], []
        for outs, _, batch in mod.iter_predict(data_iter, num_batch=num_batch, reset=reset):
            outputs.append([o.asnumpy() for o in outs])
            if return_data:
                keep = batch.data[0].shape[0] - (batch.pad or 0)
                datas.append([d.asnumpy()[:keep] for d in batch.data])
                labels.append([l.asnumpy()[:keep] for l in batch.label])

        def merge(pieces):
            merged = [np.concatenate(parts) for parts in zip(*pieces)]
            return merged[0] if len(merged) == 1 else merged
        if return_data:
            return merge(outputs), merge(datas), merge(labels)
        return merge(outputs)

    def score(self, X, eval_metric='acc', num_batch=None, batch_end_callback=None, reset=True):
        """The metric's value over X."""
        data_iter = self._init_iter(X, None, is_train=False)
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        self._predictor(data_iter).score(data_iter, eval_metric, num_batch=num_batch,
                                         batch_end_callback=batch_end_callback, reset=reset)
        return eval_metric.get()[1]

    def save(self, prefix, epoch=None, remove_amp_cast=True):
        """Writes the checkpoint prefix-symbol.json / prefix-%04d.params (epoch: num_epoch)."""
        if epoch is None:
            epoch = self.num_epoch
        if epoch is None:
            raise ValueError("FeedForward.save: give the epoch (the model has no num_epoch)")
        save_checkpoint(prefix, epoch, self.symbol, self.arg_params, self.aux_params or {})

    @staticmethod
    def load(prefix, epoch, ctx=None, **kwargs):
        """The model of a checkpoint, ready to predict or to go on training from `epoch`."""
        symbol, arg_params, aux_params = load_checkpoint(prefix, epoch)
        return FeedForward(symbol, ctx=ctx, arg_params=arg_params, aux_params=aux_params,
                           begin_epoch=epoch, **kwargs)

    @staticmethod
    def create(symbol, X, y=None, ctx=None, num_epoch=None, epoch_size=None, optimizer='sgd',
               initializer=None, eval_data=None, eval_metric='acc', epoch_end_callback=None,
               batch_end_callback=None, kvstore='local', logger=None, work_load_list=None,
               eval_end_callback=None, eval_batch_end_callback=None, **kwargs):
        """A FeedForward made and fitted in one call."""
        model = FeedForward(symbol, ctx=ctx, num_epoch=num_epoch, epoch_size=epoch_size,
                            optimizer=optimizer, initializer=initializer, **kwargs)
        model.fit(X, y, eval_data=eval_data, eval_metric=eval_metric,
                  epoch_end_callback=epoch_end_callback, batch_end_callback=batch_end_callback,
                  kvstore=kvstore, logger=logger, work_load_list=work_load_list,
                  eval_end_callback=eval_end_callback,
                  eval_batch_end_callback=eval_batch_end_callback)
        return model
