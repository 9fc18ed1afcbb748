"""Installed as Python users install things (issue 25 item 8): `pip install .` of the checkout
into a fresh virtual environment (the wheel that pyproject.toml makes with scikit-build-core:
the package with libmxplug, the plugins and the CLI inside it), then the seeds' snippets run there
with no PYTHONPATH; then the opt-in `mxnet` alias (python/mxnet-alias) runs them as
`import mxnet as mx`, and refuses to install over a real MXNet.

pip fetches scikit-build-core, flit_core and numpy from PyPI, as any pip install does; the build
itself reuses build/'s objects through ccache (build-wheel/ sits beside build/)."""
import os
import pathlib
import subprocess
import sys

import pytest

from conftest import BUILD, PYTHON_OPS, REPO

# The seeds' walk-throughs (NDArray, Symbol, KVStore), with a short Module fit, each result held to
# NumPy or to the seeds' printed values.
SNIPPETS = r"""
import os, sys
import numpy as np
a = mx.nd.ones((2, 3)) * 2
b = mx.nd.ones((2, 3)) * 4
c = a + b
assert (c.asnumpy() == 6).all() and c.shape == (2, 3) and c.context == mx.cpu()
assert ((a * b).asnumpy() == 8).all() and (mx.nd.dot(a, b.T).asnumpy() == 24).all()
d = a.copyto(mx.cpu(1))
assert d.context == mx.cpu(1) and (d.asnumpy() == 2).all()
mx.nd.save('mydata.bin', {'a': a, 'b': b})
loaded = mx.nd.load('mydata.bin')
assert sorted(loaded) == ['a', 'b'] and (loaded['b'].asnumpy() == 4).all()

net = mx.symbol.Variable('data')
net = mx.symbol.FullyConnected(data=net, name='fc1', num_hidden=128)
net = mx.symbol.Activation(data=net, name='relu1', act_type="relu")
net = mx.symbol.FullyConnected(data=net, name='fc2', num_hidden=64)
net = mx.symbol.SoftmaxOutput(data=net, name='out')
assert net.list_arguments() == ['data', 'fc1_weight', 'fc1_bias', 'fc2_weight', 'fc2_bias', 'out_label']
arg_shapes, out_shapes, _ = net.infer_shape(data=(100, 100))
assert arg_shapes[1] == (128, 100) and out_shapes == [(100, 64)]

kv = mx.kv.create('local')
kv.init(3, mx.nd.ones((2, 3)) * 2)
out = mx.nd.zeros((2, 3))
kv.push(3, [mx.nd.ones((2, 3), mx.cpu(i)) for i in range(4)])
kv.pull(3, out=out)
assert (out.asnumpy() == 4).all()

rs = np.random.RandomState(0)
X = rs.randn(200, 10).astype('float32'); Y = (X[:, 0] > 0).astype('float32')
data = mx.sym.var('data')
mlp = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=2), name='softmax')
mod = mx.mod.Module(mlp, context=mx.cpu())
mod.fit(mx.io.NDArrayIter(X, Y, batch_size=20, shuffle=True), num_epoch=5,
        optimizer_params={'learning_rate': 0.5}, initializer=mx.init.Xavier())
acc = mod.score(mx.io.NDArrayIter(X, Y, batch_size=20), 'acc')[0][1]
assert acc > 0.9, acc

import mxplug
assert os.path.dirname(mxplug.__file__).startswith(sys.prefix), mxplug.__file__
print('ok', mx.__name__, len(mx.library.operators()))
"""


def _clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "LD_LIBRARY_PATH", "MXPLUG_PLUGIN_PATH", "PYTHONHOME")}
    env.setdefault("CCACHE_BASEDIR", str(REPO))
    env.setdefault("CCACHE_NOHASHDIR", "1")
    # ccache keys objects by the compiler's name too: without these, scikit-build-core hands CMake
    # the interpreter's compiler (x86_64-linux-gnu-g++ where build/ has c++) and nothing is reused.
    for variable, name in (("CC", "CMAKE_C_COMPILER"), ("CXX", "CMAKE_CXX_COMPILER")):
        compiler = _cached(name)
        if compiler:
            env.setdefault(variable, compiler)
    env.update(extra)
    return env


def _cached(name):
    """A value from build/'s CMake cache, or None."""
    prefix = name + ":"
    for line in (BUILD / "CMakeCache.txt").read_text().splitlines():
        if line.startswith(prefix):
            return line.split("=", 1)[1]
    return None


def _run(args, cwd, timeout=600):
    return subprocess.run([str(a) for a in args], cwd=str(cwd), capture_output=True, text=True,
                          env=_clean_env(), timeout=timeout)


def _venv(path):
    subprocess.run(["/usr/bin/python3", "-m", "venv", str(path)], check=True, timeout=300)
    return path / "bin" / "python", path / "bin" / "pip"


def test_the_wheel_and_the_mxnet_alias_install_and_run_the_seeds_snippets(tmp_path):
    python, pip = _venv(tmp_path / "venv")
    p = _run([pip, "install", "--no-input", REPO], tmp_path, timeout=3000)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-4000:]

    p = _run([python, "-c", "import mxplug as mx\n" + SNIPPETS], tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.split()[:2] == ["ok", "mxplug"], p.stdout
    operators = int(p.stdout.split()[2])
    assert operators > 200

    # The CLI, from the wheel, finds the plugins inside the package.
    p = _run([tmp_path / "venv" / "bin" / "mxplug", "list"], tmp_path)
    assert p.returncode == 0, p.stderr
    # All but the Python package's own (conftest.PYTHON_OPS).
    assert "%d operators from" % (operators - len(PYTHON_OPS)) in p.stdout, p.stdout[-500:]

    # Before the alias, there is no mxnet; after it, `import mxnet as mx` is mxplug.
    p = _run([python, "-c", "import mxnet"], tmp_path)
    assert p.returncode != 0 and "No module named 'mxnet'" in p.stderr
    p = _run([pip, "install", "--no-input", REPO / "python" / "mxnet-alias"], tmp_path)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-4000:]
    p = _run([python, "-c", "import mxnet as mx\n" + SNIPPETS + """
import mxnet.ndarray, mxnet.symbol, mxnet.io
from mxnet.io import NDArrayIter
from mxnet import nd, sym
assert mx is mxplug and mxnet.ndarray is mxplug.ndarray and NDArrayIter is mxplug.io.NDArrayIter
assert isinstance(nd.ones(1), mxplug.nd.NDArray) and mx.base.MXNetError is mxplug.base.MXNetError
print('alias ok')
"""], tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.split()[:2] == ["ok", "mxplug"] and "alias ok" in p.stdout, p.stdout


def test_the_mxnet_alias_refuses_to_install_over_a_real_mxnet(tmp_path):
    python, pip = _venv(tmp_path / "venv")
    # A real MXNet, as pip records one: its distribution metadata in site-packages.
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    info = pathlib.Path(site) / "mxnet-1.9.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mxnet\nVersion: 1.9.1\n")
    (info / "RECORD").write_text("")
    p = _run([pip, "install", "--no-input", REPO / "python" / "mxnet-alias"], tmp_path)
    assert p.returncode != 0
    assert "will not install over a real MXNet: mxnet 1.9.1" in p.stdout + p.stderr, p.stdout + p.stderr
    assert info.exists()  # the real one is untouched
