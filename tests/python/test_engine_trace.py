"""The seeds' engine example (A = 2; B = 2; B = A + B; C = A + 2; A.del()) run end to end with
MXPLUG_PROFILER: the trace shows what the engine promises."""
import json
import os
import subprocess

import pytest

from conftest import BUILD, run_python

EXAMPLE = BUILD / "bin" / "mxplug-engine-example"


def trace_of(engine, tmp_path):
    trace = tmp_path / ("%s.json" % engine)
    # Two CPU workers, so the readers of A can overlap (the default is one, as in MXNet).
    env = dict(os.environ, MXPLUG_PROFILER=str(trace), MXPLUG_ENGINE=engine,
               MXPLUG_CPU_WORKER_NTHREADS="2")
    run = subprocess.run([str(EXAMPLE)], capture_output=True, text=True, env=env, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("B = 4, C = 4 (%s engine" % engine)
    events = [e for e in json.loads(trace.read_text())["traceEvents"] if e["ph"] == "X"]
    spans = {e["name"]: (e["ts"], e["ts"] + e["dur"]) for e in events}
    table = (tmp_path / ("%s.json.txt" % engine)).read_text().splitlines()
    return spans, table


def test_threaded_engine_runs_the_readers_of_a_together(tmp_path):
    spans, table = trace_of("threaded", tmp_path)
    assert set(spans) == {"A = 2", "B = 2", "B = A + B", "C = A + 2", "DeleteVariable"}
    (bab_start, bab_end), (cap_start, cap_end) = spans["B = A + B"], spans["C = A + 2"]
    assert bab_start >= spans["A = 2"][1] and cap_start >= spans["A = 2"][1]  # after A = 2
    assert bab_start >= spans["B = 2"][1]                                     # after B = 2
    assert max(bab_start, cap_start) < min(bab_end, cap_end), "the two readers of A did not overlap"
    assert spans["DeleteVariable"][0] >= max(bab_end, cap_end)  # A.del() after both reads
    assert table[0].split()[:2] == ["Name", "Count"] and len(table) == 6


def test_naive_engine_runs_one_function_at_a_time(tmp_path):
    spans, _ = trace_of("naive", tmp_path)
    ordered = sorted(spans.values())
    for (s0, e0), (s1, e1) in zip(ordered, ordered[1:]):
        assert s1 >= e0


def test_python_profiler_api(tmp_path):
    code = """
import json, mxplug as mx
mx.profiler.set_config(filename=%r, profile_all=True)
mx.profiler.set_state('run')
assert mx._core.profiler.running()
mx.profiler.set_state('stop')
mx.profiler.dump()
print(json.load(open(%r))['traceEvents'] == [], mx.profiler.dumps().split()[:2])
try:
    mx.profiler.set_state('go')
except mx.MXNetError as e:
    print('error:', e)
""" % (str(tmp_path / "p.json"), str(tmp_path / "p.json"))
    p = run_python(code)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == "True ['Name', 'Count']"
    assert lines[1] == "error: profiler.set_state: state must be 'run' or 'stop', got 'go'"


@pytest.mark.parametrize("engine", ["threaded", "naive"])
def test_work_pushed_without_waiting_is_drained_at_exit(engine, tmp_path):
    out = tmp_path / "out.txt"
    env = dict(os.environ, MXPLUG_ENGINE=engine)
    run = subprocess.run([str(EXAMPLE), "--exit-without-wait", str(out)], capture_output=True,
                         text=True, env=env, timeout=60)
    assert run.returncode == 0, run.stderr
    assert out.read_text().split() == [str(i) for i in range(100)]


PROFILER_OBJECTS = """
import json, sys
trace = sys.argv[1]
mx.profiler.set_config(filename=trace, profile_all=True, aggregate_stats=True)
mx.profiler.set_state('run')
d = mx.profiler.Domain('mydomain')
t = d.new_task('mytask'); t.start(); (mx.nd.ones((50, 50)) * 2).wait_to_read(); t.stop()
c = d.new_counter('mycounter', 5); c += 3; c.decrement(2); c.increment(4); c -= 1
d.new_marker('mymarker').mark('process'); mx.profiler.Marker(d, 'other').mark('global')
e = mx.profiler.Event('myevent'); e.start(); e.stop()
f = mx.profiler.Frame(d, 'myframe'); f.start(); f.stop()
mx.profiler.pause(); t.start(); t.stop(); mx.profiler.resume()
mx.profiler.set_state('stop')
stats = json.loads(mx.profiler.dumps(format='json'))
out = [str(d), str(t), str(c), str(e)]
out.append({cat: {name: sorted(s) for name, s in names.items()} for cat, names in stats['Time'].items()
            if cat.startswith('my') or cat == 'event'})
out.append(stats['Time']['mydomain']['mytask']['Count'])
mx.profiler.dump()
events = json.load(open(trace))['traceEvents']
mine = [e for e in events if e.get('name', '').startswith('my') or e.get('name') == 'other']
out.append(sorted({(e['name'], e['cat']) for e in mine if e['ph'] in 'XbB('}))
out.append([e['args'][e['name']] for e in mine if e['ph'] == 'C'])
out.append(sorted((e['name'], e['cat'], e['s']) for e in mine if e['ph'] in 'in'))
for bad in (lambda: mx.profiler.dumps(format='xml'), lambda: d.new_marker('m').mark('bogus')):  # noqa: B023
    try:
        bad()
    except Exception as ex:
        out.append(type(ex).__name__)
print(json.dumps(out))
"""


def test_profiler_objects_record_what_mxnets_do(mx, tmp_path):
    from conftest import run_here, run_mxnet_script
    ours = run_here(mx, PROFILER_OBJECTS, [str(tmp_path / "ours.json")])
    theirs = run_mxnet_script(PROFILER_OBJECTS, [str(tmp_path / "theirs.json")])
    # MXNet aggregates a counter's changes as if they were spans and lists its empty marker
    # category; mxplug aggregates spans alone.
    theirs[4]["mydomain"].pop("mycounter")
    theirs[4].pop("mydomain,instant_marker")
    assert ours == theirs
