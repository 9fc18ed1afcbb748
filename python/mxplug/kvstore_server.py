"""The server role of a distributed job (MXNet's ``mxnet.kvstore_server``): a process started with
``DMLC_ROLE=server`` serves the workers from ``import mxplug`` until every worker has finished,
then exits, as in MXNet (docs/distributed.md)."""
import os
import pickle
import sys

from . import _core
from . import optimizer as opt


class KVStoreServer(object):
    """Runs the server loop: commands from the workers reach `_controller`, as MXNet's, and each
    push to this server's part of a 'dist_async' key reaches `_update`."""

    def __init__(self):
        self.updater = None  # made from the optimizer the workers' set_optimizer sends

    def _controller(self, rank, head, body):
        if head == 0:  # kController: a pickled optimizer, sent by set_optimizer
            self.updater = opt.get_updater(pickle.loads(body))
        else:  # MXNet's words for a command it does not know
            # One write of the whole line: print's separate write of the newline let another
            # server's line come between them in the job's merged output.
            sys.stdout.write("server %d, unknown command (%d, %s)\n"
                             % (rank, head, body.decode(errors="replace")))
            sys.stdout.flush()

    def _update(self, key, recv, stored):
        if self.updater is None:  # no optimizer: the push replaces the value
            recv.copyto(stored)
        else:
            self.updater(_worker_key(key), recv, stored)

    def run(self):
        _core.kvstore_run_server(self._controller, self._update)


def _worker_key(key):
    """Keys cross as str; an int-keyed store's keys reach the optimizer as ints again, as they do
    in the workers' updaters (its lr_mult and idx2name are looked up by them)."""
    try:
        return int(key) if str(int(key)) == key else key
    except ValueError:
        return key


def _end_the_job_on_uncaught_exceptions():
    """In a process of a job, an exception that ends the script ends the whole job, saying so: the
    other processes would otherwise wait for this one until their deadline (MXNet's hang)."""
    previous = sys.excepthook

    def hook(kind, value, traceback):
        previous(kind, value, traceback)
        sys.stdout.flush()
        sys.stderr.flush()
        _core.kvstore_abandon("the script raised %s: %s" % (kind.__name__, value))
        os._exit(1)  # not joined yet: mpirun ends the others when this one exits without leaving

    sys.excepthook = hook


def _init_kvstore_server_module():
    """Called at import: a server serves, then the process ends with the job."""
    if os.environ.get("DMLC_ROLE") or os.environ.get("OMPI_COMM_WORLD_SIZE"):
        _end_the_job_on_uncaught_exceptions()
    if os.environ.get("DMLC_ROLE") == "server":
        KVStoreServer().run()
        sys.exit(0)
