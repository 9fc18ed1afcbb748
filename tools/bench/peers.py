"""What the Python benchmarks share: where MXNet 1.9.1's interpreter is, and how a driver runs
one system's measurements in a child process with a given thread count on every side."""
import json
import os
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
MXNET_PYTHON = pathlib.Path.home() / ".cache" / "mxplug" / "mxnet-venv" / "bin" / "python"


def import_mxplug():
    """The mxplug package that tools/bench/run.sh installed into the build tree."""
    build = os.environ.get("MXPLUG_BUILD_DIR", "build")
    sys.path.insert(0, str(REPO / build / "install" / "lib" / "python3" / "dist-packages"))
    import mxplug
    return mxplug


def run_child(system, script, args, threads, engine_workers=1):
    """{metric: value} that `script --system=SYSTEM args` prints as its last line, run by the
    system's interpreter (MXNet's virtual environment for 'mxnet') with `threads` threads for
    OpenMP, BLAS and PyTorch (BENCH_THREADS), and `engine_workers` CPU engine workers for mxplug
    and MXNet (None: each engine's default)."""
    python = str(MXNET_PYTHON) if system == "mxnet" else "/usr/bin/python3"
    if system == "mxnet" and not MXNET_PYTHON.exists():
        sys.exit("%s is missing: run tools/install-deps.sh" % MXNET_PYTHON)
    n = str(threads)
    env = dict(os.environ, BENCH_THREADS=n, OMP_NUM_THREADS=n, OPENBLAS_NUM_THREADS=n, MKL_NUM_THREADS=n)
    if engine_workers is not None:
        env.update(MXNET_CPU_WORKER_NTHREADS=str(engine_workers),
                   MXPLUG_CPU_WORKER_NTHREADS=str(engine_workers))
    else:
        for name in ("MXNET_CPU_WORKER_NTHREADS", "MXPLUG_CPU_WORKER_NTHREADS"):
            env.pop(name, None)
    p = subprocess.run([python, str(script), "--system=" + system] + list(args), capture_output=True,
                       text=True, env=env)
    if p.returncode != 0:
        sys.exit("%s benchmark failed:\n%s" % (system, p.stderr))
    return json.loads(p.stdout.strip().splitlines()[-1])
