"""The engine profiler (MXNet's ``mx.profiler``).

    mx.profiler.set_config(filename='trace.json')
    mx.profiler.set_state('run')
    ...                               # work pushed to the engine is recorded
    mx.profiler.set_state('stop')
    mx.profiler.dump()                # Chrome trace to trace.json, table to trace.json.txt
    print(mx.profiler.dumps())        # count, total, mean and max time per function name

``MXPLUG_PROFILER=trace.json`` profiles a whole run and writes both files at exit. MXNet's
profiler objects add a user's own events to the trace: ``Task``, ``Frame`` and ``Event`` spans
(start/stop), ``Counter`` values and ``Marker`` instants, each in its ``Domain``.
"""
from . import _core
from .base import MXNetError, MXPlugError

_prof = _core.profiler


def set_config(filename="profile.json", **kwargs):
    """Sets where dump() writes. MXNet's other keywords (profile_all, aggregate_stats, ...) are
    accepted for compatibility; every engine function is recorded and aggregated."""
    _prof.set_config(str(filename))


def _this_process(profile_process):
    if profile_process != "worker":
        raise MXNetError("profiler: profile_process=%r is not supported: each process of a distributed job "
                         "profiles itself (MXPLUG_PROFILER=<file> in its environment)" % (profile_process,))


def set_state(state="stop", profile_process="worker"):
    """'run' starts recording, 'stop' stops it (this process: ``profile_process`` 'worker')."""
    _this_process(profile_process)
    if state not in ("run", "stop"):
        raise MXPlugError("profiler.set_state: state must be 'run' or 'stop', got %r" % (state,))
    _prof.set_state(state == "run")


def dump(finished=True, profile_process="worker"):
    """Writes the Chrome trace to the configured file and the aggregate table beside it."""
    _this_process(profile_process)
    _prof.dump()


def dumps(reset=False, format="table", sort_by="total", ascending=False):  # noqa: A002 - MXNet's name
    """The aggregate statistics: a table (count, total, mean and max time per name, slowest total
    first), or with format='json' MXNet's JSON ({"Time": {category: {name: {"Count", "Total",
    "Min", "Max", "Avg"}}}, "Unit": ...}, in ms)."""
    assert format in ("table", "json"), \
        "Invalid value provided for format: %s. Support: 'table', 'json'" % format
    out = _prof.dumps() if format == "table" else _prof.dumps_json()
    if reset:
        _prof.clear()
    return out


def pause(profile_process="worker"):
    """Stops recording until resume()."""
    _this_process(profile_process)
    _prof.set_state(False)


def resume(profile_process="worker"):
    """Records again after pause()."""
    _this_process(profile_process)
    _prof.set_state(True)


def profiler_set_config(mode="symbolic", filename="profile.json"):
    """MXNet's older name of set_config."""
    set_config(filename=filename)


def profiler_set_state(state="stop"):
    """MXNet's older name of set_state."""
    set_state(state)


def dump_profile():
    """MXNet's older name of dump."""
    dump()


class Domain(object):
    """A category for Tasks, Frames, Counters and Markers (a trace 'process' of its own)."""

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name

    def new_task(self, name):
        return Task(self, name)

    def new_frame(self, name):
        return Frame(self, name)

    def new_counter(self, name, value=None):
        return Counter(self, name, value)

    def new_marker(self, name):
        return Marker(self, name)


class _Span(object):
    """A named span between start() and stop(), recorded in ``category`` at stop()."""

    def __init__(self, category, name):
        self.name = name
        self._category = category
        self._start = None

    def start(self):
        self._start = _prof.now()

    def stop(self):
        if self._start is None:
            raise MXNetError("profiler: %s '%s' stopped without being started" % (type(self).__name__, self.name))
        _prof.record_span(self.name, self._category, self._start, _prof.now())
        self._start = None

    def __str__(self):
        return self.name


class Task(_Span):
    """A span of work in ``domain``."""

    def __init__(self, domain, name):
        super(Task, self).__init__(str(domain), name)
        self.domain = domain


class Frame(_Span):
    """A span of work in ``domain``, in its frames ("<domain>,frame", as MXNet files them)."""

    def __init__(self, domain, name):
        super(Frame, self).__init__("%s,frame" % domain, name)
        self.domain = domain


class Event(_Span):
    """A span of work outside any domain (category "event")."""

    def __init__(self, name):
        super(Event, self).__init__("event", name)


class Counter(object):
    """A value in ``domain`` whose every change is recorded (a counter track in the trace)."""

    def __init__(self, domain, name, value=None):
        self.domain = domain
        self.name = name
        self._value = 0
        if value is not None:
            self.set_value(value)

    def set_value(self, value):
        self._value = value
        _prof.record_counter(self.name, str(self.domain), float(value))

    def increment(self, delta=1):
        self.set_value(self._value + delta)

    def decrement(self, delta=1):
        self.set_value(self._value - delta)

    def __iadd__(self, delta):
        self.increment(delta)
        return self

    def __isub__(self, delta):
        self.decrement(delta)
        return self

    def __str__(self):
        return self.name


# Marker scopes: MXNet's names, as Chrome's instant-event scopes ('task' and 'marker' have no
# Chrome scope of their own: the thread's).
_SCOPES = {"global": "g", "process": "p", "thread": "t", "task": "t", "marker": "t"}


class Marker(object):
    """An instant in ``domain`` ("<domain>,instant_marker", as MXNet files them)."""

    def __init__(self, domain, name):
        self.domain = domain
        self.name = name

    def mark(self, scope="process"):
        if scope not in _SCOPES:
            raise MXNetError("Invalid Input: '%s', valid values are: {'global', 'marker', 'process', 'task', "
                             "'thread'}" % (scope,))
        _prof.record_instant(self.name, "%s,instant_marker" % self.domain, _SCOPES[scope])
