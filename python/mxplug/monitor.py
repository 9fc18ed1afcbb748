"""Monitoring what each op computes (MXNet's ``mx.monitor``): a Monitor installed on executors
(``mon.install(exe)``, or ``Module.install_monitor`` / ``fit(monitor=...)``) collects a statistic
of each op's outputs and gradients, named as MXNet names them, every ``interval`` batches between
``tic()`` and ``toc()``."""
import logging
import math
import re

from . import ndarray
from .ndarray import NDArray

__all__ = ["Monitor"]


class Monitor(object):
    """Collects ``stat_func(array)`` (by default ``norm(x) / sqrt(x.size)``) of every monitored
    array whose name matches ``pattern``, in the batches where ``step % interval == 0``; toc()
    adds the arguments and auxiliary states and returns ``(step, name, text)`` for each, sorted
    by name when ``sort``. ``monitor_all`` monitors the ops' inputs too."""

    def __init__(self, interval, stat_func=None, pattern='.*', sort=False, monitor_all=False):
        if stat_func is None:
            def asum_stat(x):
                """Returns |x|/size(x), async execution."""
                return ndarray.norm(x) / math.sqrt(x.size)
            stat_func = asum_stat
        self.stat_func = stat_func
        self.interval = interval
        self.activated = False
        self.queue = []
        self.step = 0
        self.exes = []
        self.re_prog = re.compile(pattern)
        self.sort = sort
        self.monitor_all = monitor_all

        def stat_helper(name, array):
            """The executor's callback."""
            if not self.activated or not self.re_prog.match(name):
                return
            self.queue.append((self.step, name, self.stat_func(array)))
        self.stat_helper = stat_helper

    def install(self, exe):
        """Installs the callback on executor ``exe``."""
        exe.set_monitor_callback(self.stat_helper, self.monitor_all)
        self.exes.append(exe)

    def _wait_for_parameters(self):
        for exe in self.exes:
            for array in exe.arg_arrays + exe.aux_arrays:
                array.wait_to_read()

    def tic(self):
        """Starts collecting, if this batch is one of every ``interval``."""
        if self.step % self.interval == 0:
            self._wait_for_parameters()
            self.queue = []
            self.activated = True
        self.step += 1

    def toc(self):
        """Ends collecting: the statistics as ``(step, name, text)`` tuples, the arguments and
        auxiliary states included."""
        if not self.activated:
            return []
        self._wait_for_parameters()
        for exe in self.exes:
            for name, array in zip(exe._symbol.list_arguments(), exe.arg_arrays):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
            for name, array in zip(exe._symbol.list_auxiliary_states(), exe.aux_arrays):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
        self.activated = False
        res = []
        if self.sort:
            self.queue.sort(key=lambda x: x[1])
        for n, k, v_list in self.queue:
            if isinstance(v_list, NDArray):
                v_list = [v_list]
            assert isinstance(v_list, list)
            s = ''
            for v in v_list:
                assert isinstance(v, NDArray)
                if v.shape == (1,):
                    s += str(v.asscalar()) + '\t'
                else:
                    s += str(v.asnumpy()) + '\t'
            res.append((n, k, s))
        self.queue = []
        return res

    def toc_print(self):
        """toc(), logged (logging.info) one line per statistic."""
        res = self.toc()
        for n, k, v in res:
            logging.info('Batch: {:7d} {:30s} {:s}'.format(n, k, v))
