"""What the Python benchmarks share: where MXNet 1.9.1's interpreter is, and how a driver runs
one system's measurements in a child process with a given thread count on every side."""
import json
import os
import pathlib
import statistics
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


def torch_training_loop(net, x_all, y_all, batch, device=None):
    """The plain PyTorch loop the benchmarks hold Module.fit against: SGD (lr 0.05, momentum 0.9)
    over shuffled batches, moved to `device` when given, and the accuracy read every batch as
    Module.fit's metric does (a host read per batch). Returns train(first, count), which runs
    batches first .. first + count - 1 and returns how many samples it classified right."""
    import torch
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    order = torch.randperm(x_all.shape[0])

    def train(first, count):
        correct = 0
        for b in range(first, first + count):
            idx = order[b * batch:(b + 1) * batch]
            x, y = x_all[idx], y_all[idx]
            if device is not None:
                x, y = x.to(device), y.to(device)
            opt.zero_grad()
            logits = net(x)
            torch.nn.functional.cross_entropy(logits, y).backward()
            opt.step()
            correct += int((logits.argmax(1) == y).sum())
        return correct
    return train


# Debian's OpenMP build of OpenBLAS. PyTorch users run one OpenMP pool (torch's own, libgomp);
# Debian's default pthread OpenBLAS beside it gives a second pool of spinning threads, which on 2
# cores cost PyTorch up to 4.9x on small layers. The PyTorch child finds this folder's libblas.so.3
# first (LD_LIBRARY_PATH), leaving the system's choice of BLAS alone.
OPENMP_OPENBLAS = pathlib.Path("/usr/lib/x86_64-linux-gnu/openblas-openmp")


# Variables that keep oneDNN (Debian's, PyTorch's and MXNet's), OpenBLAS, PyTorch's and NumPy's own
# kernels below the CPU's best instruction set (tools/as-avx2.sh sets them all): an AVX-512 machine
# so capped stands for the project's AVX2 machines. A table measured so says it (cpu_description).
ISA_CAPS = ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA", "MKLDNN_MAX_CPU_ISA", "OPENBLAS_CORETYPE", "ATEN_CPU_CAPABILITY",
            "NPY_DISABLE_CPU_FEATURES")


def cpu_description():
    """'AMD EPYC, 2 CPUs, vector extensions: avx avx2 fma avx512f ...' from /proc/cpuinfo."""
    model, flags, cpus = "unknown CPU", [], 0
    for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        cpus += key == "processor"
        if key == "model name":
            model = value.strip()
        elif key == "flags" and not flags:
            flags = [f for f in value.split() if f.startswith(("avx", "fma", "amx", "sse4"))]
    text = "%s, %d CPUs, vector extensions: %s" % (model, cpus, " ".join(sorted(flags)))
    caps = ["%s=%s" % (v, os.environ[v]) for v in ISA_CAPS if v in os.environ]
    return text + ("; instruction sets capped by " + " ".join(caps) if caps else "")


def loaded_runtimes():
    """The BLAS, oneDNN and OpenMP libraries this process has loaded (from /proc/self/maps): what
    a benchmark child reports next to its numbers, so a table says which libraries each peer ran."""
    names = ("blas", "openblas", "mkl", "dnnl", "mkldnn", "gomp", "iomp", "libomp")
    found = set()
    for line in pathlib.Path("/proc/self/maps").read_text().splitlines():
        path = line.split()[-1] if "/" in line else ""
        if any(n in pathlib.Path(path).name for n in names):
            found.add(path)
    return sorted(found)


LOADED = {}  # system: the libraries its last child loaded


def setting_text():
    """What every table is printed under: the CPU, and the BLAS, oneDNN and OpenMP libraries each
    system's processes loaded."""
    lines = ["CPU: " + cpu_description()]
    for system, libs in LOADED.items():
        lines.append("%s loaded: %s" % (system, ", ".join(libs) or "no BLAS, oneDNN or OpenMP library"))
    return "\n".join(lines) + "\n"


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
    if system == "torch":
        if not OPENMP_OPENBLAS.exists():
            sys.exit("%s is missing (Debian's libopenblas0-openmp): run tools/install-deps.sh" % OPENMP_OPENBLAS)
        env["LD_LIBRARY_PATH"] = str(OPENMP_OPENBLAS) + os.pathsep + env.get("LD_LIBRARY_PATH", "")
    # The child prints its measurements, then the libraries it loaded (loaded_runtimes).
    wrapper = ("import json, runpy, sys; sys.path.insert(0, %r); sys.argv = %r\n"
               "import contextlib, io\nout = io.StringIO()\n"
               "with contextlib.redirect_stdout(out):\n    runpy.run_path(sys.argv[0], run_name='__main__')\n"
               "values = json.loads(out.getvalue().strip().splitlines()[-1])\n"
               "from peers import loaded_runtimes\nvalues['_loaded'] = loaded_runtimes()\nprint(json.dumps(values))\n"
               % (str(pathlib.Path(__file__).parent), [str(script), "--system=" + system] + list(args)))
    p = subprocess.run([python, "-c", wrapper], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit("%s benchmark failed:\n%s" % (system, p.stderr))
    values = json.loads(p.stdout.strip().splitlines()[-1])
    LOADED[system] = values.pop("_loaded")
    return values


def interleaved_rounds(systems, rounds, measure):
    """{system: [{metric: value}, one per round]}: `rounds` rounds, each calling measure(system)
    for every system in turn, so that a slow spell of a shared host falls on all of them alike
    rather than on whichever ran then."""
    runs = {system: [] for system in systems}
    for r in range(rounds):
        for system in systems:
            print("round %d/%d: measuring %s ..." % (r + 1, rounds, system), file=sys.stderr, flush=True)
            runs[system].append(measure(system))
    return runs


def medians(runs, metrics=None):
    """{system: {metric: median over the rounds}} of interleaved_rounds' result, for `metrics` or
    (None) every metric each system measured."""
    def median(values):
        return None if None in values else statistics.median(values)
    return {s: {m: median([run[m] for run in runs[s]]) for m in (metrics or runs[s][0])} for s in runs}


def median_cell(values, fmt=None):
    """A table cell: 'median (min-max)' of the rounds' values, or the value alone for one round;
    fmt defaults to 3 significant digits below 100 and whole numbers above."""
    fmt = fmt or ("%.3g" if max(values) < 100 else "%.0f")
    text = fmt % statistics.median(values)
    return text if len(values) == 1 else "%s (%s-%s)" % (text, fmt % min(values), fmt % max(values))
