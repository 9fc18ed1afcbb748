"""The engine profiler (MXNet's ``mx.profiler``).

    mx.profiler.set_config(filename='trace.json')
    mx.profiler.set_state('run')
    ...                               # work pushed to the engine is recorded
    mx.profiler.set_state('stop')
    mx.profiler.dump()                # Chrome trace to trace.json, table to trace.json.txt
    print(mx.profiler.dumps())        # count, total, mean and max time per function name

``MXPLUG_PROFILER=trace.json`` profiles a whole run and writes both files at exit.
"""
from . import _core
from .base import MXPlugError

_prof = _core.profiler


def set_config(filename="profile.json", **kwargs):
    """Sets where dump() writes. MXNet's other keywords (profile_all, aggregate_stats, ...) are
    accepted for compatibility; every engine function is recorded and aggregated."""
    _prof.set_config(str(filename))


def set_state(state="stop"):
    """'run' starts recording, 'stop' stops it."""
    if state not in ("run", "stop"):
        raise MXPlugError("profiler.set_state: state must be 'run' or 'stop', got %r" % (state,))
    _prof.set_state(state == "run")


def dump(finished=True):
    """Writes the Chrome trace to the configured file and the aggregate table beside it."""
    _prof.dump()


def dumps(reset=False):
    """The aggregate table: count, total, mean and max time per function name."""
    table = _prof.dumps()
    if reset:
        _prof.clear()
    return table
