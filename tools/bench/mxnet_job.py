"""Starts a distributed job of MXNet 1.9.1 on this machine by hand, as its own launcher would (its
tools/launch.py --launcher local crashes on Python 3.11 before starting anything): a scheduler,
servers and workers, each MXNet's interpreter with the DMLC_* variables of its role, all on the
loopback interface. Used by tests/python/test_dist.py and tools/bench/dist_bench.py."""
import os
import socket
import subprocess
import time

from peers import MXNET_PYTHON


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_mxnet_job(argv, workers=2, servers=2, cwd=None, env=None, timeout=120):
    """Runs `argv` (a script and its arguments, under MXNet's interpreter) as each worker of a job
    of `workers` workers and `servers` servers. Returns (exit codes of the workers, their stdout,
    their stderr); every process of the job is ended on return, even when a worker hangs (MXNet's
    jobs do when one process dies) and the timeout runs out, which raises TimeoutError."""
    base = dict(os.environ, DMLC_PS_ROOT_URI="127.0.0.1", DMLC_PS_ROOT_PORT=str(free_port()),
                DMLC_NUM_WORKER=str(workers), DMLC_NUM_SERVER=str(servers), DMLC_NODE_HOST="127.0.0.1",
                DMLC_INTERFACE="lo", **(env or {}))
    python = str(MXNET_PYTHON)

    def start(role, args, **kwargs):
        return subprocess.Popen([python] + args, cwd=cwd, env=dict(base, DMLC_ROLE=role), **kwargs)

    # The scheduler and the servers enter MXNet's server loop at `import mxnet` and leave it when
    # the workers finish.
    helpers = [start("scheduler", ["-c", "import mxnet"])]
    helpers += [start("server", ["-c", "import mxnet"]) for _ in range(servers)]
    procs = [start("worker", list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(workers)]
    deadline = time.monotonic() + timeout
    try:
        outs = [p.communicate(timeout=max(1.0, deadline - time.monotonic())) for p in procs]
        for h in helpers:
            h.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        raise TimeoutError("MXNet's job of %d workers and %d servers did not end within %d s"
                           % (workers, servers, timeout))
    finally:
        for p in procs + helpers:
            if p.poll() is None:
                p.kill()
                p.wait()
    return [p.returncode for p in procs], [o for o, _ in outs], [e for _, e in outs]
