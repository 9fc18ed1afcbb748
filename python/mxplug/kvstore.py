"""Key-value stores (MXNet's ``mx.kv`` / ``mx.kvstore``): devices push values to keys, which are
summed and given to an updater (or stored), and pull the stored values back. Calls are lazy like
NDArray operations: reading a pulled array waits for it. The 'dist_*' stores do the same across
the worker processes of a job started by ``tools/launch.py`` (docs/distributed.md).

Keys are ints or strings, one kind per store; a key with a list of values pushes (or pulls) all
of them, and a list of keys takes a list of values or of value lists.
"""
import pickle

from . import _core
from . import optimizer as opt
from .ndarray import NDArray

__all__ = ["KVStore", "create"]


def _key_values(key, value, what):
    """Flattens MXNet's key/value forms to parallel lists; returns (keys, values, uses_str)."""
    if isinstance(key, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(key) != len(value):
            raise ValueError("kvstore %s: %d keys need a list of %d values (or value lists), got %r"
                             % (what, len(key), len(key), value))
        keys, values, kinds = [], [], set()
        for k, v in zip(key, value):
            ks, vs, uses_str = _key_values(k, v, what)
            keys += ks
            values += vs
            kinds.add(uses_str)
        if len(kinds) > 1:
            raise TypeError("kvstore %s: keys must be all int or all str, got %r" % (what, key))
        return keys, values, kinds.pop() if kinds else False
    if not isinstance(key, (int, str)) or isinstance(key, bool):
        raise TypeError("kvstore %s: a key is an int or a str, got %r" % (what, key))
    values = [value] if isinstance(value, NDArray) else list(value) if isinstance(value, (list, tuple)) else None
    if values is None or not all(isinstance(v, NDArray) for v in values):
        raise TypeError("kvstore %s: the value of key %r must be an NDArray or a list of NDArrays, got %r"
                        % (what, key, value))
    return [str(key)] * len(values), values, isinstance(key, str)


class KVStore(object):
    """A store created by :func:`create`."""

    def __init__(self, handle):
        self.handle = handle
        self._updater = None
        self._str_keys = None  # True or False once the first key is seen

    def _flatten(self, key, value, what):
        keys, values, uses_str = _key_values(key, value, what)
        if keys:
            if self._str_keys is None:
                self._str_keys = uses_str
            elif self._str_keys != uses_str:
                raise TypeError("kvstore %s: this store has %s keys, got %r" %
                                (what, "str" if self._str_keys else "int", key))
        return keys, values

    def init(self, key, value):
        """Initialises key(s) with a copy of the value(s)."""
        self.handle.init(*self._flatten(key, value, "init"))

    def broadcast(self, key, value, out, priority=0):
        """Initialises ``key`` with ``value`` and pulls it into ``out`` (MXNet 1.9's broadcast)."""
        self.init(key, value)
        self.pull(key, out=out, priority=priority)

    def push(self, key, value, priority=0):
        """Pushes value(s): the values of one key are summed, then given to the updater as
        ``updater(key, summed, stored)``, or stored when there is no updater."""
        self.handle.push(*self._flatten(key, value, "push"), priority=priority)

    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Copies the stored value of key(s) into `out` (an NDArray, or lists as for push)."""
        if out is None:
            raise ValueError("kvstore pull: out= must name the arrays to pull into")
        self.handle.pull(*self._flatten(key, out, "pull"), priority=priority)

    def pushpull(self, key, value, out=None, priority=0):
        """push then pull; without `out` the pushed arrays receive the result."""
        self.push(key, value, priority)
        self.pull(key, value if out is None else out, priority)

    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        raise NotImplementedError("row_sparse_pull: mxplug has no row_sparse arrays; use pull")

    def set_gradient_compression(self, compression_params):
        raise NotImplementedError("set_gradient_compression: compression_params=%r: mxplug's stores "
                                  "send gradients uncompressed (no '2bit' or '1bit')" % (compression_params,))

    def set_optimizer(self, optimizer):
        """Updates stored weights with `optimizer` on push (an Updater over it). On the servers of a
        'dist_async' store, as MXNet: the optimizer is pickled and sent to them."""
        if 'async' in self.type:
            self._send_command_to_servers(_SERVER_SET_OPTIMIZER, pickle.dumps(optimizer, 0))
            return
        self._set_updater(opt.get_updater(optimizer))

    def _set_updater(self, updater):
        """Sets ``updater(key, input, stored)``, called once per key per push; None removes it."""
        self._updater = updater
        if updater is None:
            self.handle.set_updater(None)
            return

        def call(key, recv, stored):  # keys cross as str; an int-keyed store gives ints back
            updater(key if self._str_keys else int(key), recv, stored)
        self.handle.set_updater(call)

    set_updater = _set_updater

    @property
    def type(self):
        return self.handle.type

    @property
    def rank(self):
        return self.handle.rank

    @property
    def num_workers(self):
        return self.handle.num_workers

    def _barrier(self):
        """Returns when every worker has called it (a single-process store returns at once)."""
        self.handle.barrier()

    def _send_command_to_servers(self, head, body):
        """Gives (head, body) to the controller of every server (none in a single-process store)."""
        if isinstance(body, str):
            body = body.encode()
        self.handle.send_command_to_servers(int(head), bytes(body))

    def _local_updater(self, what):
        if 'async' in self.type:  # MXNet: "Cannot save states for distributed training"
            raise RuntimeError("%s: the optimizer of a '%s' store runs on the servers, which keep its "
                               "states; a worker cannot %s them (as in MXNet). 'dist_sync' keeps them on "
                               "every worker" % (what, self.type, what.split('_')[0]))
        if not isinstance(self._updater, opt.Updater):
            raise RuntimeError("%s: set an optimizer first (set_optimizer)" % what)
        return self._updater

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Writes the optimizer states (and the optimizer with dump_optimizer) to `fname`. Every
        worker of a 'dist_sync' store holds the same states."""
        self._local_updater("save_optimizer_states").save_states(fname, dump_optimizer)

    def load_optimizer_states(self, fname):
        """Reads optimizer states written by save_optimizer_states."""
        self._local_updater("load_optimizer_states").load_states(fname)


# MXNet's kvstore server command heads (KVStoreServer's kController is 0).
_SERVER_SET_OPTIMIZER = 0


def create(name='local'):
    """A new store: 'local' (sums and updates on the CPU), 'device' (sums on the device of the first
    value pushed; MXNet's choice for several GPUs), 'nccl' (sums over the GPUs of this process with
    NCCL, and broadcasts the pulls), or across the workers of a job: 'dist_sync' (every push sums
    all workers' values), 'dist_device_sync' (the same, summing a worker's devices on the device)
    and 'dist_async'."""
    if not isinstance(name, str):
        raise TypeError("kvstore create: name must be a str, got %r" % (name,))
    return KVStore(_core.KVStore(name))


from .kvstore_server import KVStoreServer  # noqa: E402,F401 (MXNet's mx.kv.KVStoreServer)
