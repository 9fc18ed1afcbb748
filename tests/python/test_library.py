"""mxplug.library (MXNet's mx.library.load) from Python, against the installed package."""
import json

from conftest import PYTHON_OPS, TEST_PLUGINS, default_ops, run_cli, run_python


def test_operators_match_the_cli(tmp_path):
    p = run_python("import json, mxplug as mx; print(json.dumps(mx.library.operators()))")
    assert p.returncode == 0, p.stderr
    from_python = {op["name"]: op["devices"] for op in json.loads(p.stdout)}
    code, out, _ = run_cli(["--json", "list"], cache_dir=tmp_path)
    from_cli = {op["name"]: op["devices"] for op in json.loads(out)["operators"]}
    assert set(from_cli) == default_ops()
    assert from_python == dict(from_cli, Custom=["cpu"])


def test_load_adds_ops_and_refusals_raise_mxnet_error():
    late = TEST_PLUGINS / "late"
    code = """
import mxplug as mx
def ops(): return {o['name'] for o in mx.library.operators()}
assert 'test.Late' not in ops()
rec = mx.library.load(%r, verbose=False)
assert rec['name'] == 'late_op' and rec['ops'] == ['test.Late'], rec
mx.library.load(%r, verbose=False)
assert [o for o in mx.library.operators() if o['name'] == 'test.Late'][0]['devices'] == ['cpu']
for path, text in [(%r, 'built for plugin ABI 99.3'), (%r, 'already registered by plugin')]:
    try:
        mx.library.load(path)
    except mx.MXNetError as e:
        assert text in str(e) and path in str(e), str(e)
    else:
        raise AssertionError('no error for ' + path)
for bad, text in [('/no/such/lib.so', 'does NOT exist'), ('relative.so', 'does NOT exist')]:
    try:
        mx.library.load(bad)
    except mx.MXPlugError as e:
        assert text in str(e)
    else:
        raise AssertionError(bad)
print('ok', len(ops()))
""" % (str(late / "libtest_late_op.so"), str(late / "libtest_late_kernel.so"),
       str(TEST_PLUGINS / "zoo" / "libtest_bad_abi.so"), str(TEST_PLUGINS / "zoo" / "libtest_duplicate_op.so"))
    p = run_python(code)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "ok %d" % (len(default_ops() | PYTHON_OPS) + 1)


def test_import_survives_a_plugin_that_crashes_in_init():
    code = """
import mxplug as mx
(crasher,) = [p for p in mx.library.plugins() if p['path'].endswith('libtest_init_crashes.so')]
assert crasher['state'] == 'refused' and 'signal 11' in crasher['reason'], crasher
print(len(mx.library.operators()))
"""
    p = run_python(code, plugin_path=str(TEST_PLUGINS / "crash"))
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == str(len(default_ops() | PYTHON_OPS))


def test_explicit_loads_are_probed_in_a_child_first(tmp_path):
    """mx.library.load(path) probes a file not seen before as the search path does: a plugin
    that crashes in a static constructor is refused instead of killing Python, and a refused
    plugin's constructors never run in the loading process (before, both ran in-process)."""
    ctors = TEST_PLUGINS / "constructors"
    log = tmp_path / "constructors.log"
    code = """
import os, mxplug as mx
for path, text in [(%r, 'signal 11'), (%r, 'built for plugin ABI 99.0')]:
    try:
        mx.library.load(path, verbose=False)
    except mx.MXNetError as e:
        assert text in str(e) and path in str(e), str(e)
    else:
        raise AssertionError('no error for ' + path)
print(os.getpid(), len(mx.library.operators()))
""" % (str(ctors / "libtest_constructor_crashes.so"), str(ctors / "libtest_refused_with_constructor.so"))
    p = run_python(code, extra_env={"MXPLUG_TEST_CONSTRUCTOR_LOG": str(log)})
    assert p.returncode == 0, p.stderr
    pid, n_ops = p.stdout.split()
    assert int(n_ops) == len(default_ops() | PYTHON_OPS)
    ran_in = log.read_text().split()
    assert ran_in and pid not in ran_in  # it ran in the probe's child only

    # probe=False loads in this process: the constructor runs here (and the crash would kill it).
    p = run_python("import os, mxplug as mx\ntry:\n    mx.library.load(%r, verbose=False, probe=False)\n"
                   "except mx.MXNetError:\n    print(os.getpid())\n" % str(ctors / "libtest_refused_with_constructor.so"),
                   extra_env={"MXPLUG_TEST_CONSTRUCTOR_LOG": str(log)})
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() in log.read_text().split()
    p = run_python("import mxplug as mx\nmx.library.load(%r, probe=False)" % str(ctors / "libtest_constructor_crashes.so"))
    assert p.returncode == -11


def test_the_extension_exports_none_of_a_cxx_runtime_it_links_statically():
    """A C++ runtime linked into mxplug._core (some compilers link libstdc++ statically) stays
    private: were its symbols exported, the process's shared libstdc++ would bind to them, and
    std::call_once in every other library would call through a null pointer (seen on the GPU
    machine, whose compiler does so)."""
    import glob
    import subprocess
    from conftest import PYTHON_PACKAGES
    (core,) = glob.glob(str(PYTHON_PACKAGES / "mxplug" / "_core*.so"))
    symbols = subprocess.run(["nm", "-D", "--defined-only", "--with-symbol-versions", core],
                             capture_output=True, text=True, check=True).stdout.split("\n")
    assert any(line.endswith(" PyInit__core") for line in symbols)
    runtime = [line for line in symbols if "@GLIBCXX" in line or "@CXXABI" in line or "__once_" in line]
    assert not runtime, runtime[:10]
