"""The instructions an imperative call costs, all threads together, counted by callgrind (issue 26,
item 4: the per-op overhead). A 1-element add from Python, 2,000 times after a warm-up, between two
callgrind dumps; the budget stops a change from adding work to every call unnoticed."""
import shutil
import subprocess
import sys

import pytest

from conftest import PYTHON_PACKAGES

# Measured 32,000-32,400 instructions per call on 2026-11-28 (from 39,400 before the inference
# cache, Note [Inference cache] in imperative.cc), then 21,000 once small CPU calls ran on the
# calling thread (Note [Inline functions]), idle arrays were freed without an engine function
# (Note [Idle deletes]), the autograd check moved into C++ (Note [Autograd state]) and a call's
# lists stopped allocating; 18,300 on 2026-11-29 once small elementwise loops stopped entering an
# OpenMP region and the operators found NDArray's Python type once (Note [NDArray's Python type]);
# 10,800 on 2026-11-29 once shapes kept their dimensions inline (Note [Inline dimensions]), the
# SDK's kernel trampoline reused its lists (Note [Kernel argument lists]), `a + b` entered through
# the type's number slot (Note [Arithmetic slots]) and kept the GIL (Note [The GIL across a call]),
# and an idle array's chunk freed its memory without a delete function; 7,700 on 2026-11-29 once
# a call whose variables are free ran without an engine function (Note [Free variables]), the
# call block was reused (Note [Spare call]), the argument lists too (Note [Argument lists]),
# nobody was woken when nobody drained (Note [Idle wakes]), the short locks stopped being
# mutexes (Note [Short locks]), the engine's thread state became one lookup (Note [Thread
# state]), and the CPU backend and an op's kernel were found without a lock. Lower this budget as
# the call gets cheaper. The margin covers glibc's choice of string functions per CPU and a
# worker that valgrind schedules while it still polls its queue.
BUDGET = 8_800
CALLS = 2_000

SCRIPT = r"""
import os, subprocess, mxplug as mx
p, q = mx.nd.ones((1,)), mx.nd.ones((1,))
for _ in range(200): p + q
mx.nd.waitall()
subprocess.run(["callgrind_control", "--dump=before", str(os.getpid())], check=True, capture_output=True)
for _ in range(%d): p + q
mx.nd.waitall()
subprocess.run(["callgrind_control", "--dump=after", str(os.getpid())], check=True, capture_output=True)
""" % CALLS


def test_a_one_element_add_from_python_stays_within_its_instruction_budget(tmp_path):
    if not shutil.which("valgrind") or not shutil.which("callgrind_control"):
        pytest.skip("valgrind is not installed (tools/install-deps.sh installs it)")
    out = tmp_path / "callgrind.out"
    p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=%s" % out, sys.executable, "-c", SCRIPT],
                       capture_output=True, text=True, timeout=600,
                       env={"PYTHONPATH": str(PYTHON_PACKAGES), "PATH": "/usr/bin:/bin", "MXPLUG_PLUGIN_PATH": ""})
    assert p.returncode == 0, p.stderr[-3000:]
    dumps = {}
    for f in tmp_path.glob("callgrind.out.*"):
        text = f.read_text(errors="replace")
        trigger = next(line for line in text.splitlines() if line.startswith("desc: Trigger"))
        dumps[trigger.split()[-1]] = int(next(line for line in text.splitlines() if line.startswith("totals:")).split()[1])
    assert set(dumps) >= {"before", "after"}, dumps
    per_call = dumps["after"] / CALLS
    print("%.0f instructions per call" % per_call)
    assert per_call <= BUDGET, "a 1-element add costs %.0f instructions, over the budget of %d" % (per_call, BUDGET)
