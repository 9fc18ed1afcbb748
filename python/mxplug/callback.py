"""Training callbacks (MXNet's ``mx.callback``): batch-end callbacks receive a
``BatchEndParam(epoch, nbatch, eval_metric, locals)``; epoch-end callbacks are called as
``callback(epoch, symbol, arg_params, aux_params)``."""
import logging
import sys
import time

from .model import save_checkpoint

__all__ = ["Speedometer", "ProgressBar", "do_checkpoint", "module_checkpoint", "log_train_metric",
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


def _clock(seconds):
    seconds = int(round(seconds))
    return "%d:%02d:%02d" % (seconds // 3600, seconds // 60 % 60, seconds % 60)


class ProgressBar(object):
    """A batch-end callback that shows how far the epoch is: batch of total, samples per
    second, time left and the epoch's metric so far. On a terminal it redraws one line; into a
    file or a pipe it writes a plain line every tenth of the epoch (every `frequent` batches
    while the total is unknown) and one at the epoch's end. `total` is the number of batches
    per epoch; without it the first epoch's count is used from the second epoch on."""

    def __init__(self, total=None, length=30, stream=None, frequent=50):
        self.total = total
        self.length = length
        self.stream = stream
        self.frequent = frequent
        self._epoch = None
        self._tic = 0.0
        self._last = -1

    def __call__(self, param):
        stream = self.stream or sys.stderr
        count = param.nbatch + 1
        if param.epoch != self._epoch or count <= self._last:
            self._epoch, self._tic = param.epoch, time.time()
        self._last = count
        local = param.locals or {}
        batch = local.get("data_batch", local.get("eval_batch"))
        batch_size = batch.data[0].shape[0] if batch is not None and batch.data else 0
        done = bool(local.get("end_of_batch")) or count == self.total
        if done and self.total is None:
            self.total = count
        terminal = getattr(stream, "isatty", lambda: False)()
        if not (terminal or done or self._plain_line_due(count)):
            return
        line = self._line(param, count, batch_size, done)
        if terminal:
            stream.write("\r" + line + "\x1b[K" + ("\n" if done else ""))
        else:
            stream.write(line + "\n")
        stream.flush()

    def _plain_line_due(self, count):
        step = max(1, self.total // 10) if self.total else self.frequent
        return count % step == 0

    def _line(self, param, count, batch_size, done):
        elapsed = time.time() - self._tic
        rate = count / elapsed if elapsed > 0 else 0.0
        parts = ["Epoch[%d]" % param.epoch]
        if self.total:
            filled = int(self.length * min(count, self.total) / self.total)
            arrow = ">" if filled < self.length else ""
            parts.append("[%s%s%s] %*d/%d" % ("=" * filled, arrow,
                                             "." * (self.length - filled - len(arrow)),
                                             len(str(self.total)), count, self.total))
        else:
            parts.append("batch %d" % count)
        if batch_size and rate:
            parts.append("%.0f samples/s" % (rate * batch_size))
        if done:
            parts.append("took %s" % _clock(elapsed))
        elif self.total and rate:
            parts.append("ETA %s" % _clock((self.total - count) / rate))
        if param.eval_metric is not None:
            values = param.eval_metric.get_global_name_value()
            parts.append(" ".join("%s=%.4f" % nv for nv in values))
        return "  ".join(parts)
