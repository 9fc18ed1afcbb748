"""Training callbacks (MXNet's ``mx.callback``): batch-end callbacks receive a
``BatchEndParam(epoch, nbatch, eval_metric, locals)``; epoch-end callbacks are called as
``callback(epoch, symbol, arg_params, aux_params)``."""
import logging
import time

from .model import save_checkpoint

__all__ = ["Speedometer", "do_checkpoint", "module_checkpoint", "log_train_metric",
           "LogValidationMetricsCallback"]


def _metric_text(name_value):
    return "".join("\t%s=%f" % nv for nv in name_value)


def do_checkpoint(prefix, period=1):
    """An epoch-end callback that saves a checkpoint every `period` epochs (as epoch + 1)."""
    period = int(max(1, period))

    def _callback(iter_no, sym, arg, aux):
        if (iter_no + 1) % period == 0:
            save_checkpoint(prefix, iter_no + 1, sym, arg, aux)
    return _callback


def module_checkpoint(mod, prefix, period=1, save_optimizer_states=False):
    """An epoch-end callback that saves `mod` (and its optimizer states) every `period` epochs."""
    period = int(max(1, period))

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            mod.save_checkpoint(prefix, iter_no + 1, save_optimizer_states)
    return _callback


def log_train_metric(period, auto_reset=False):
    """A batch-end callback that logs the training metric every `period` batches."""
    def _callback(param):
        if param.nbatch % period == 0 and param.eval_metric is not None:
            for name, value in param.eval_metric.get_name_value():
                logging.info('Iter[%d] Batch[%d] Train-%s=%f', param.epoch, param.nbatch, name, value)
            if auto_reset:
                param.eval_metric.reset_local()
    return _callback


class Speedometer(object):
    """Logs samples per second and the metric every `frequent` batches; with auto_reset the
    metric shown is that of the last `frequent` batches."""

    def __init__(self, batch_size, frequent=50, auto_reset=True):
        self.batch_size = batch_size
        self.frequent = frequent
        self.init = False
        self.tic = 0
        self.last_count = 0
        self.auto_reset = auto_reset

    def __call__(self, param):
        count = param.nbatch
        if self.last_count > count:  # a new epoch
            self.init = False
        self.last_count = count
        if not self.init:
            self.init = True
            self.tic = time.time()
            return
        if count % self.frequent != 0:
            return
        elapsed = time.time() - self.tic
        speed = self.frequent * self.batch_size / elapsed if elapsed > 0 else float('inf')
        if param.eval_metric is not None:
            name_value = param.eval_metric.get_name_value()
            if self.auto_reset:
                param.eval_metric.reset_local()
                logging.info('Epoch[%d] Batch [%d-%d]\tSpeed: %.2f samples/sec%s', param.epoch,
                             count - self.frequent, count, speed, _metric_text(name_value))
            else:
                logging.info('Epoch[%d] Batch [0-%d]\tSpeed: %.2f samples/sec%s', param.epoch, count,
                             speed, _metric_text(name_value))
        else:
            logging.info("Iter[%d] Batch [%d]\tSpeed: %.2f samples/sec", param.epoch, count, speed)
        self.tic = time.time()


class LogValidationMetricsCallback(object):
    """Logs the validation metrics at the end of an epoch's evaluation."""

    def __call__(self, param):
        if not param.eval_metric:
            return
        for name, value in param.eval_metric.get_name_value():
            logging.info('Epoch[%d] Validation-%s=%f', param.epoch, name, value)
