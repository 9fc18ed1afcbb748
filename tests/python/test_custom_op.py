"""examples/custom_op, built as a plugin author would: against the installed tree only."""
import os
import shutil
import subprocess

import numpy as np
import pytest

from conftest import INSTALL, REPO, run_json


@pytest.fixture(scope="module")
def example_build(tmp_path_factory):
    build = tmp_path_factory.mktemp("custom_op_build")
    env = dict(os.environ)
    env.pop("CMAKE_PREFIX_PATH", None)
    subprocess.run(["cmake", "-S", str(REPO / "examples" / "custom_op"), "-B", str(build), "-G", "Ninja",
                    "-DCMAKE_PREFIX_PATH=%s" % INSTALL], check=True, capture_output=True, env=env)
    subprocess.run(["cmake", "--build", str(build)], check=True, capture_output=True, env=env)
    return build


def test_plugin_links_nothing_of_mxplug(example_build):
    plugin = example_build / "plugins" / "libmyorg_square.so"
    ldd = subprocess.run(["ldd", str(plugin)], capture_output=True, text=True, check=True).stdout
    assert "libmxplug" not in ldd
    symbols = subprocess.run(["nm", "-D", "--defined-only", str(plugin)], capture_output=True, text=True,
                             check=True).stdout.split()
    assert "mxplug_init" in symbols and sum(1 for s in symbols if s not in ("T", "mxplug_init") and not s.startswith("0")) == 0


def test_dropped_into_a_plugin_folder_it_is_listed_and_runs(example_build, tmp_path):
    folder = tmp_path / "my_plugins"
    folder.mkdir()
    shutil.copy(example_build / "plugins" / "libmyorg_square.so", folder)
    code, out, _ = run_json(["list"], plugin_path=str(folder), cache_dir=tmp_path / "cache")
    assert code == 0
    ops = {op["name"]: op for op in out["operators"]}
    assert ops["myorg.Square"]["plugin"] == "myorg_square"
    assert ops["myorg.Square"]["devices"] == ["cpu"]

    env = dict(os.environ, MXPLUG_PLUGIN_PATH=str(folder), MXPLUG_CACHE_DIR=str(tmp_path / "cache"))
    run = subprocess.run([str(example_build / "run_square")], capture_output=True, text=True, env=env, check=True)
    lines = dict(line.split(":", 1) for line in run.stdout.strip().splitlines())
    x = np.array([1, -2, 3, 0.5], dtype=np.float32)
    dy = np.array([1, 1, 2, -1], dtype=np.float32)
    alpha = 0.5
    np.testing.assert_allclose(np.array(lines["forward"].split(), dtype=np.float32), alpha * x * x, rtol=1e-6)
    np.testing.assert_allclose(np.array(lines["backward"].split(), dtype=np.float32), 2 * alpha * x * dy, rtol=1e-6)


def test_without_the_plugin_the_op_is_missing(example_build, tmp_path):
    env = dict(os.environ, MXPLUG_PLUGIN_PATH="", MXPLUG_CACHE_DIR=str(tmp_path / "cache"))
    run = subprocess.run([str(example_build / "run_square")], capture_output=True, text=True, env=env)
    assert run.returncode == 1
    assert "operator 'myorg.Square' is not registered" in run.stderr
