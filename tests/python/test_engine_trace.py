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
