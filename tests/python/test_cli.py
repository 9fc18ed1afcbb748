"""The mxplug CLI: what it lists, how it describes, and how it survives broken plugins."""
import json
import os
import re
import time

import subprocess

import pytest

from conftest import CPU_ONLY_PLUGINS, MXPLUG, TEST_PLUGINS, built_with, default_ops, mpirun, run_cli, run_json, run_python

ZOO = str(TEST_PLUGINS / "zoo")
CRASH = str(TEST_PLUGINS / "crash")
LATE = str(TEST_PLUGINS / "late")
# A sample of what the default plugins must register (the full list grows with the op library).
SAMPLE_OPS = {"FullyConnected", "elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div",
              "_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar",
              "_rdiv_scalar", "broadcast_add", "sum", "Reshape", "slice", "take", "Cast", "_zeros"}


def test_list_shows_every_op_with_plugin_and_devices(cache_dir):
    code, out, _ = run_json(["list"], cache_dir=cache_dir)
    assert code == 0
    ops = {op["name"]: op for op in out["operators"]}
    assert SAMPLE_OPS <= set(ops)
    assert ops["FullyConnected"]["plugin"] == "nn"
    assert ops["elemwise_add"]["plugin"] == "tensor"
    # Every op has a CPU kernel, and a CUDA and a HIP kernel where those plugins are built; the
    # linalg plugin's ops are CPU-only so far (docs/python.md).
    devices = ["cpu"] + [gpu for gpu in ("cuda", "hip") if built_with(gpu)]
    wrong = [o for o in ops.values() if o["devices"] != (["cpu"] if o["plugin"] in CPU_ONLY_PLUGINS else devices)]
    assert not wrong, wrong
    assert sum(o["plugin"] == "linalg" for o in ops.values()) == 33  # 17 ops, 16 with a linalg_ alias
    code, text, _ = run_cli(["list"], cache_dir=cache_dir)
    assert code == 0
    assert re.search(r"^Pooling +nn +%s$" % ", ".join(devices), text, re.M), text
    # cpu, nn, optimizer, random, tensor, linalg, mxnet_lib (the adapter: no ops of its own), and
    # cuda, hip and mpi where they are built
    plugins = 6 + len(devices) + built_with("mpi")
    assert "%d operators from %d plugins" % (len(ops), plugins) in text


def test_describe_fully_connected_schema(cache_dir):
    code, out, _ = run_json(["describe", "FullyConnected"], cache_dir=cache_dir)
    assert code == 0
    params = {p["name"]: p for p in out["params"]}
    assert list(params) == ["num_hidden", "no_bias", "flatten"]
    assert params["num_hidden"]["type"] == "int" and params["num_hidden"]["required"]
    assert params["num_hidden"]["min"] == 1 and "default" not in params["num_hidden"]
    assert params["no_bias"]["type"] == "boolean" and params["no_bias"]["default"] == "false"
    assert params["flatten"]["type"] == "boolean" and params["flatten"]["default"] == "true"
    assert [i["name"] for i in out["inputs"]] == ["data", "weight", "bias"]
    assert out["instance"]["backward_reads"] == ["grad(output)", "data", "weight"]
    gpus = [{"device": gpu, "plugin": gpu, "backward": True} for gpu in ("cuda", "hip")
            if built_with(gpu)]
    assert out["kernels"] == [{"device": "cpu", "plugin": "nn", "backward": True}] + gpus

    code, text, _ = run_cli(["describe", "FullyConnected"], cache_dir=cache_dir)
    assert code == 0
    assert "num_hidden  int >= 1, required" in text
    assert "no_bias     boolean, default false" in text
    assert "flatten     boolean, default true" in text


def test_describe_with_params_shows_that_instance(cache_dir):
    code, out, _ = run_json(["describe", "FullyConnected", "num_hidden=8", "no_bias=true"], cache_dir=cache_dir)
    assert code == 0
    assert out["instance"]["arguments"] == ["data", "weight"]
    assert out["instance"]["note"] == ""
    code, out, _ = run_json(["describe", "elemwise_add"], cache_dir=cache_dir)
    assert out["instance"]["forward_inplace"] == "lhs -> output"
    code, text, err = run_cli(["describe", "FullyConnected", "num_hidden=-3"], cache_dir=cache_dir)
    assert code == 1
    assert "FullyConnected: parameter 'num_hidden' = -3 is out of range: expected an integer >= 1" in text


def test_describe_unknown_op_names_the_closest(cache_dir):
    code, out, err = run_cli(["describe", "FullyConected"], cache_dir=cache_dir)
    assert code == 1
    assert "operator 'FullyConected' is not registered; did you mean 'FullyConnected'?" in err
    code, out, _ = run_json(["describe", "elemwise_ad"], cache_dir=cache_dir)
    assert code == 1 and out["closest"][0] == "elemwise_add"


def test_devices(cache_dir):
    code, out, _ = run_json(["devices"], cache_dir=cache_dir)
    assert code == 0
    cpu = out["devices"][0]
    assert [d["name"] for d in out["devices"]] == ["cpu"] + [gpu for gpu in ("cuda", "hip")
                                                             if built_with(gpu)]
    assert cpu["name"] == "cpu" and cpu["count"] == 8 and cpu["dlpack_device_type"] == 1
    assert "hardware threads" in cpu["devices"][0]["description"]
    assert cpu["devices"][3]["description"] == "a logical context over the host memory of cpu(0)"
    code, out, _ = run_json(["devices"], cache_dir=cache_dir, extra_env={"MXPLUG_CPU_CONTEXTS": "2"})
    assert out["devices"][0]["count"] == 2


@pytest.mark.skipif(not built_with("mpi"), reason="built without MPI (MXPLUG_WITH_MPI)")
def test_comms_says_whether_the_process_is_part_of_a_job(cache_dir):
    code, out, _ = run_json(["comms"], cache_dir=cache_dir)
    assert code == 0
    assert [(c["name"], c["memory"]) for c in out["comms"]] == [("mpi", ["cpu"])]
    assert out["comms"][0]["available"] is False
    assert "not started by mpirun" in out["comms"][0]["reason"]
    env = dict(os.environ, MXPLUG_CACHE_DIR=str(cache_dir), MXPLUG_PLUGIN_PATH="")
    each = '"$0" --json comms > "$1/comms.$OMPI_COMM_WORLD_RANK.json"'
    p = subprocess.run(mpirun(2) + ["sh", "-c", each, str(MXPLUG), str(cache_dir)],
                       capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 0, p.stderr
    for rank in range(2):
        answer = json.loads((cache_dir / ("comms.%d.json" % rank)).read_text())
        assert answer["comms"][0]["available"] is True, answer


def test_broken_plugins_do_not_stop_the_good_ones(cache_dir):
    path = ":".join([ZOO, CRASH, LATE])
    code, out, _ = run_json(["list"], plugin_path=path, cache_dir=cache_dir)
    assert code == 0
    names = {op["name"] for op in out["operators"]}
    assert names == default_ops() | {"test.Late"}
    assert out["refused_plugins"] == 10

    code, out, _ = run_json(["plugins"], plugin_path=path, cache_dir=cache_dir)
    assert code == 0
    reasons = {os.path.basename(p["path"]): p["reason"] for p in out["plugins"] if p["state"] == "refused"}
    expected = {
        "libtest_bad_abi.so": "built for plugin ABI 99.3",
        "libtest_needs_newer_minor.so": "or newer, but this host speaks ABI 1.",
        "libtest_needs_newer_host.so": "needs mxplug 99.0.0 or newer",
        "libtest_init_fails.so": "device driver libfake.so.1 is missing",
        "libtest_incomplete_op.so": "lacks one of create, destroy, list, infer_shape",
        "libtest_init_throws.so": "boom: configuration file not found",
        "libtest_duplicate_op.so": "op 'FullyConnected' is already registered by plugin 'nn'",
        "libtest_no_entry.so": "does not export mxplug_init",
        "libtest_not_a_library.so": "invalid ELF header",
        "libtest_init_crashes.so": "crashed while loading in a probe process (signal 11",
    }
    for name, text in expected.items():
        assert text in reasons.get(name, "(not refused)"), (name, reasons.get(name))
    assert out["unbound_kernels"] == []

    code, text, _ = run_cli(["plugins"], plugin_path=path, cache_dir=cache_dir)
    assert code == 0
    assert "refused: crashed while loading" in text


def test_crash_verdict_is_cached_by_file_identity(cache_dir, tmp_path):
    folder = tmp_path / "plugins"
    folder.mkdir()
    crasher = folder / "libcrasher.so"
    crasher.write_bytes((TEST_PLUGINS / "crash" / "libtest_init_crashes.so").read_bytes())
    def reason():
        plugins = run_json(["plugins"], plugin_path=str(folder), cache_dir=cache_dir)[1]["plugins"]
        (record,) = [p for p in plugins if p["path"].endswith("libcrasher.so")]
        assert record["state"] == "refused"
        return record["reason"]

    first = reason()
    assert "crashed while loading" in first and "cached" not in first
    second = reason()
    assert "crashed while loading" in second and "cached" in second
    # A rebuilt file is a new identity and is probed again.
    stat = crasher.stat()
    os.utime(crasher, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    third = reason()
    assert "crashed while loading" in third and "cached" not in third


def test_unbound_kernel_is_shown_until_its_op_loads(cache_dir, tmp_path):
    folder = tmp_path / "kernel_only"
    folder.mkdir()
    (folder / "libtest_late_kernel.so").write_bytes((TEST_PLUGINS / "late" / "libtest_late_kernel.so").read_bytes())
    code, out, _ = run_json(["plugins"], plugin_path=str(folder), cache_dir=cache_dir)
    assert out["unbound_kernels"] == [{"kernel": "test.Late@cpu", "plugin": "late_kernel"}]
    code, out, _ = run_json(["plugins"], plugin_path=str(folder) + ":" + LATE, cache_dir=cache_dir)
    assert out["unbound_kernels"] == []


def test_check_validates_one_file_in_a_child(cache_dir):
    code, out, _ = run_json(["check", str(TEST_PLUGINS.parent.parent / "lib/mxplug/plugins/libmxplug_nn.so")],
                            cache_dir=cache_dir)
    assert code == 0
    assert out["verdict"] == "ok" and "FullyConnected" in out["plugin"]["ops"]
    assert out["extra_exports"] == []
    code, text, _ = run_cli(["check", CRASH + "/libtest_init_crashes.so"], cache_dir=cache_dir)
    assert code == 1 and "crashed: crashed while loading in a probe process (signal 11" in text
    for name in ["libtest_bad_abi.so", "libtest_init_throws.so", "libtest_not_a_library.so"]:
        code, text, _ = run_cli(["check", ZOO + "/" + name], cache_dir=cache_dir)
        assert code == 1 and "refused" in text, (name, text)
    code, text, _ = run_cli(["check", ZOO + "/libtest_no_entry.so"], cache_dir=cache_dir)
    assert code == 1 and "not an mxplug plugin" in text


def test_empty_plugin_path_lists_nothing_and_says_so(tmp_path, cache_dir):
    code, text, _ = run_cli(["--plugin-path", str(tmp_path), "list"], cache_dir=cache_dir)
    assert code == 0
    assert text.startswith("no operators registered (plugin folders searched: %s)" % tmp_path)


def test_usage_errors_exit_2(cache_dir):
    assert run_cli([], cache_dir=cache_dir)[0] == 2
    assert run_cli(["frobnicate"], cache_dir=cache_dir)[0] == 2
    assert run_cli(["describe"], cache_dir=cache_dir)[0] == 2
    code, _, err = run_cli(["describe", "FullyConnected", "num_hidden"], cache_dir=cache_dir)
    assert code == 2 and "is not KEY=VALUE" in err


def test_a_plugin_printing_to_stdout_cannot_corrupt_json_nor_drive_the_terminal(cache_dir):
    """The noisy test plugin prints a banner when loaded and has escape sequences and a byte that
    is not UTF-8 in its name, version, vendor and op doc. Before, the banner came first in --json
    output (not JSON any more) and the escape sequences reached the terminal as they were."""
    noisy = str(TEST_PLUGINS / "noisy")
    for probe in ([], ["--no-probe"]):  # loaded in the CLI's own process either way
        code, out, err = run_cli(probe + ["--json", "list"], plugin_path=noisy, cache_dir=cache_dir)
        assert code == 0, err
        ops = {op["name"]: op for op in json.loads(out)["operators"]}  # nothing but the JSON
        assert ops["test.Noisy"]["plugin"] == "noisy\\x1b[1m"
        assert "noisy plugin says hello from printf" in err and "from std::cout" in err
    for args in (["plugins"], ["describe", "test.Noisy"], ["list"]):
        code, out, _ = run_cli(args, plugin_path=noisy, cache_dir=cache_dir)
        assert code == 0
        assert not any(c in out for c in "\x1b\x07\ufffd") and "hello" not in out, out
    _, out, _ = run_cli(["plugins"], plugin_path=noisy, cache_dir=cache_dir)
    assert "loaded: noisy\\x1b[1m 1.0\\x1b]0;title\\x07 (tests\\xff)" in out
    _, out, _ = run_cli(["describe", "test.Noisy"], plugin_path=noisy, cache_dir=cache_dir)
    assert "Clears the screen \\x1b[2J\\x1b[31min red\\x07, then a byte that is not UTF-8: \\xff." in out
    # Python imports it (a doc that is not UTF-8 would stop the import) and shows the same text.
    p = run_python("import mxplug as mx\n(r,) = [p for p in mx.library.plugins() if 'noisy' in p['path']]\n"
                   "print(r['name'], r['vendor'])\nprint(mx.nd.test_Noisy.__doc__.splitlines()[0])",
                   plugin_path=noisy)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[-2:] == ["noisy\\x1b[1m tests\\xff",
                                          "Clears the screen \\x1b[2J\\x1b[31min red\\x07, then a byte that is "
                                          "not UTF-8: \\xff."]


def test_plugins_that_anyone_may_write_load_with_a_warning(tmp_path, cache_dir):
    import shutil
    for name, folder_mode, file_mode in [("private", 0o755, 0o644), ("open", 0o777, 0o666), ("sticky", 0o1777, 0o644)]:
        folder = tmp_path / name
        folder.mkdir()
        shutil.copy(TEST_PLUGINS / "late" / "libtest_late_op.so", folder)
        os.chmod(folder / "libtest_late_op.so", file_mode)
        os.chmod(folder, folder_mode)
    def record(out, folder):  # the listing also holds the default folder's plugins, sorted by path
        (r,) = [p for p in out["plugins"] if p["path"] == str(tmp_path / folder / "libtest_late_op.so")]
        return r

    code, out, err = run_json(["plugins"], plugin_path=str(tmp_path / "private"), cache_dir=cache_dir)
    assert code == 0 and record(out, "private")["warnings"] == [] and "writable" not in err
    code, out, err = run_json(["plugins"], plugin_path=str(tmp_path / "open"), cache_dir=cache_dir)
    assert code == 0 and record(out, "open")["state"] == "loaded"
    assert record(out, "open")["warnings"] == [
        "the file is writable by every user (mode 0666): anyone could change the code it runs",
        "its folder %s is writable by every user (mode 0777): anyone could add or replace plugin files "
        "there" % (tmp_path / "open")]
    assert "[mxplug warning] loader: plugin %s: the file is writable" % (tmp_path / "open" / "libtest_late_op.so") in err
    code, text, _ = run_cli(["plugins"], plugin_path=str(tmp_path / "sticky"), cache_dir=cache_dir)
    assert "  warning: its folder %s is writable by every user (mode 1777): anyone could add plugin files there" % (
        tmp_path / "sticky") in text
