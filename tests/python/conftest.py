"""Shared fixtures: the build and install trees that tools/test.sh made."""
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD = (REPO / os.environ.get("MXPLUG_BUILD_DIR", "build")).resolve()
INSTALL = BUILD / "install"
MXPLUG = INSTALL / "bin" / "mxplug"
TEST_PLUGINS = BUILD / "tests" / "plugins"
PYTHON_PACKAGES = INSTALL / "lib" / "python3" / "dist-packages"


# Plugins whose ops have CPU kernels only so far (docs/python.md: the linalg plugin's LAPACK
# kernels have no CUDA/HIP counterpart yet).
CPU_ONLY_PLUGINS = {"linalg"}


def built_with(component):
    """Whether CMake switched an optional component (cuda, cudnn, hip, onednn, mpi, python) on."""
    return json.loads((BUILD / "components.json").read_text())[component]


def run_cli(args, plugin_path=None, cache_dir=None, extra_env=None):
    """Runs the installed mxplug CLI; returns (exit code, stdout, stderr)."""
    env = dict(os.environ)
    env["MXPLUG_PLUGIN_PATH"] = plugin_path or ""
    env["MXPLUG_CACHE_DIR"] = str(cache_dir) if cache_dir else env.get("MXPLUG_CACHE_DIR", "")
    env.update(extra_env or {})
    p = subprocess.run([str(MXPLUG)] + list(args), capture_output=True, text=True, env=env, timeout=120)
    return p.returncode, p.stdout, p.stderr


def mpirun(n):
    """The start of an mpirun command line for n local processes (root allowed: CI runs as root)."""
    return ["mpirun", "--oversubscribe", "-n", str(n)] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])


def run_json(args, **kwargs):
    code, out, err = run_cli(["--json"] + list(args), **kwargs)
    return code, json.loads(out), err


def checked_plugin_libraries(plugin):
    """ldd's report for a plugin that `mxplug check` passes and that links no part of the core."""
    code, out, err = run_json(["check", str(plugin)])
    assert code == 0, (out, err)
    ldd = subprocess.run(["ldd", str(plugin)], capture_output=True, text=True, check=True).stdout
    assert "libmxplug" not in ldd  # plugins never link the core
    return ldd


_default_ops = []
# The ops the Python package registers itself, beside the plugin folder's: the Custom op of
# operators written in Python (python/src/custom_op.cc), which the CLI does not have.
PYTHON_OPS = {"Custom"}


def default_ops():
    """The names of the ops the default plugin folder registers (no MXPLUG_PLUGIN_PATH)."""
    if not _default_ops:
        code, out, err = run_json(["list"])
        assert code == 0, err
        _default_ops.extend(op["name"] for op in out["operators"])
    return set(_default_ops)


@pytest.fixture
def cache_dir(tmp_path):
    return tmp_path / "cache"


@pytest.fixture(scope="session", autouse=True)
def installed_tree(tmp_path_factory):
    assert MXPLUG.exists(), "%s is missing: run tools/test.sh, which builds and installs" % MXPLUG
    # Probe verdicts of this session go to a scratch folder, never to the user's cache.
    os.environ["MXPLUG_CACHE_DIR"] = str(tmp_path_factory.mktemp("probe_cache"))
    return INSTALL


def run_python(code, plugin_path="", extra_env=None):
    """Runs code in a fresh interpreter that imports the installed mxplug package."""
    env = dict(os.environ, PYTHONPATH=str(PYTHON_PACKAGES), MXPLUG_PLUGIN_PATH=plugin_path)
    env.update(extra_env or {})
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)


# MXPLUG_TEST_DEVICE=testdev (tools/test.sh sets it for a second run of the NDArray, executor,
# Module and kvstore tests): mx.gpu is the asynchronous test device (tests/plugins/test_device.cc:
# host memory, but streams that run every copy and kernel later, on threads of their own), and
# every test runs inside `with mx.gpu(0)`, so arrays made without a context live there. A host
# that let a function complete before its stream did fails these runs. MXPLUG_TEST_DEVICE=cuda
# (tools/gpu/run.sh, on a GPU machine) runs the same tests so on the CUDA plugin's gpu(0).
TEST_DEVICE = os.environ.get("MXPLUG_TEST_DEVICE", "")
TEST_DEVICES = ("testdev", "cuda")


@pytest.fixture(scope="session")
def mx(installed_tree):
    """The installed mxplug package, imported into this interpreter."""
    if str(PYTHON_PACKAGES) not in sys.path:
        sys.path.insert(0, str(PYTHON_PACKAGES))
    import mxplug
    if TEST_DEVICE:
        assert TEST_DEVICE in TEST_DEVICES, "MXPLUG_TEST_DEVICE=%s: expected one of %s" % (TEST_DEVICE, TEST_DEVICES)
        os.environ["MXPLUG_GPU_BACKEND"] = TEST_DEVICE
        if TEST_DEVICE == "testdev":
            mxplug.library.load(str(TEST_PLUGINS / "devices" / "libtest_device.so"))
        code, out, err = run_json(["devices"])
        (entry,) = [d for d in out["devices"] if d["name"] == TEST_DEVICE] or [{"count": 0, "reason": "not loaded"}]
        assert TEST_DEVICE == "testdev" or entry["count"] > 0, \
            "MXPLUG_TEST_DEVICE=%s, but %s has no device here: %s" % (TEST_DEVICE, TEST_DEVICE, entry.get("reason"))
    return mxplug


@pytest.fixture(autouse=True)
def default_context_is_the_test_device(request):
    if not TEST_DEVICE:
        yield
        return
    mx = request.getfixturevalue("mx")
    with mx.gpu(0):
        yield


MXNET_PYTHON = pathlib.Path.home() / ".cache" / "mxplug" / "mxnet-venv" / "bin" / "python"


def require_mxnet():
    """MXNet 1.9.1, the reference environment tools/install-deps.sh makes, for a test that compares
    with it. Where MXPLUG_WITHOUT_MXNET=1 says that this machine cannot have it (tools/gpu/run.sh
    on a GPU machine, which has no network), the test is skipped with that reason; elsewhere its
    absence fails the test."""
    if MXNET_PYTHON.exists():
        return
    if os.environ.get("MXPLUG_WITHOUT_MXNET") == "1":
        pytest.skip("MXNet 1.9.1 is not on this machine (MXPLUG_WITHOUT_MXNET=1)")
    pytest.fail("%s is missing: run tools/install-deps.sh" % MXNET_PYTHON)


def run_mxnet(code, extra_env=None):
    """Runs code under MXNet 1.9.1 (require_mxnet)."""
    require_mxnet()
    env = dict(os.environ, **(extra_env or {}))
    p = subprocess.run([str(MXNET_PYTHON), "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr
    return p.stdout


def run_mxnet_script(script, argv):
    """Runs `script` (which imports nothing of mxnet itself: `mx` is given) under MXNet 1.9.1 with
    `argv` as sys.argv[1:]; returns the JSON of its last printed line. The process ends with
    os._exit once the script is done: MXNet 1.9.1's teardown at interpreter exit, with an
    iterator's prefetch thread still alive, now and then aborts ("corrupted double-linked list")
    after the script has printed everything, and that teardown is not what is compared."""
    out = run_mxnet("import sys; sys.argv[1:] = %r\nimport mxnet as mx\n" % list(argv) + script +
                    "\nsys.stdout.flush()\nimport os\nos._exit(0)\n")
    return json.loads(out.strip().splitlines()[-1])


def run_here(mx, script, argv):
    """The same script run in this interpreter with mxplug as `mx`: what run_mxnet_script
    returns for MXNet."""
    import contextlib
    import io
    printed, saved = io.StringIO(), sys.argv
    sys.argv = ["script"] + list(argv)
    try:
        with contextlib.redirect_stdout(printed):
            exec(script, {"mx": mx})  # noqa: S102 - a test's shared script
    finally:
        sys.argv = saved
    return json.loads(printed.getvalue().strip().splitlines()[-1])


def write_idx(image_path, label_path, images, labels, gz=False):
    """MNIST's IDX files of uint8 images (n, rows, cols) and labels (n,), gzip-compressed when gz."""
    import gzip
    import struct
    opener = gzip.open if gz else open
    n, rows, cols = images.shape
    with opener(str(image_path), "wb") as f:
        f.write(struct.pack(">IIII", 0x803, n, rows, cols) + images.astype(np.uint8).tobytes())
    with opener(str(label_path), "wb") as f:
        f.write(struct.pack(">II", 0x801, n) + labels.astype(np.uint8).tobytes())
