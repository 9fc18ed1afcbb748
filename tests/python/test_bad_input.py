"""Bad input a demanding user can produce gets an MXNetError naming what was wrong, and the process
lives on. The probes that crashed the interpreter before their fix run in a child interpreter,
so a regression fails its test instead of ending the test run."""
import numpy as np
import pytest

from conftest import run_python


@pytest.mark.parametrize("depth", [100_000, 3_000_000])
def test_deeply_nested_symbol_json_is_refused_not_a_stack_overflow(depth):
    # The loader's error message dumped the nested value, recursing once per level (signal 11).
    code = """
import mxplug as mx
depth = %d
for text, words in [
        ('[' * depth + ']' * depth, 'the top level must be an object'),
        ('{"nodes": [{"op": "null", "name": "x", "inputs": ' + '[' * depth + ']' * depth + '}], "heads": []}',
         "node 0 ('x'): an entry must be [node, output] or [node, output, version], got a list of 1 items "
         "holding lists or objects"),
        ('{"nodes": [{"op": "null", "name": "x", "attrs": {"a": ' + '[' * depth + ']' * depth + '}}], "heads": []}',
         "attribute 'a' must be a string, got a list of 1 items holding lists or objects")]:
    try:
        mx.sym.load_json(text)
    except mx.MXNetError as e:
        assert words in str(e), str(e)
    else:
        raise AssertionError('accepted')
print('ok')
""" % depth
    p = run_python(code)
    assert p.returncode == 0, (p.returncode, p.stderr[-2000:])
    assert p.stdout.strip() == "ok"


def test_integer_division_of_the_most_negative_value_by_minus_one_wraps_as_numpy():
    # x86 traps on it (SIGFPE, which killed the interpreter); NumPy wraps the quotient, remainder 0.
    code = """
import json, numpy as np, mxplug as mx
out = {}
for dt in ['int8', 'int32', 'int64']:
    lo = int(np.iinfo(dt).min)
    a, b = mx.nd.array([lo, 7, -9], dtype=dt), mx.nd.array([-1, -1, 2], dtype=dt)
    out[dt] = [(a / b).asnumpy().tolist(), (a % b).asnumpy().tolist(),
               mx.nd.broadcast_div(a, b).asnumpy().tolist(),
               mx.nd._internal._div_scalar(a, scalar=-1).asnumpy().tolist(),
               mx.nd._internal._mod_scalar(a, scalar=-1).asnumpy().tolist(),
               mx.nd._internal._rdiv_scalar(b, scalar=lo).asnumpy().tolist()]
print(json.dumps(out))
"""
    p = run_python(code)
    assert p.returncode == 0, (p.returncode, p.stderr[-2000:])
    import json
    out = json.loads(p.stdout)
    for dt in ["int8", "int32", "int64"]:
        lo = int(np.iinfo(dt).min)
        a, b = np.array([lo, 7, -9], dtype=dt), np.array([-1, -1, 2], dtype=dt)
        with np.errstate(all="ignore"):
            quotient = (a // b).tolist()  # the same for these: exact or wrapped; -9 / 2 differs:
        quotient[2] = -4  # C's truncation, as MXNet's integer division (NumPy floors to -5)
        remainder = [0, 0, 1]  # Python's sign rule, as MXNet's mod
        assert out[dt][0] == quotient and out[dt][2] == quotient, dt
        assert out[dt][1] == remainder, dt
        assert out[dt][3] == [lo, -7, 9] and out[dt][4] == [0, 0, 0], dt
        assert out[dt][5] == [lo, lo, lo // 2], dt


def test_a_params_file_with_a_name_that_is_not_utf8_is_an_mxnet_error(mx, tmp_path):
    # The name crossed to Python as-is and escaped as UnicodeDecodeError.
    path = tmp_path / "names.params"
    mx.nd.save(str(path), {"abc": mx.nd.ones(2)})
    path.write_bytes(path.read_bytes().replace(b"abc", b"a\xffc"))
    with pytest.raises(mx.MXNetError, match=r"cannot load NDArrays from .*names.params: name 0: the name is not "
                                            r"valid UTF-8 text"):
        mx.nd.load(str(path))


def test_an_indexed_record_past_the_end_of_the_file_is_an_error(mx, tmp_path):
    # read_idx returned None, as if the record were empty.
    idx, rec = str(tmp_path / "r.idx"), str(tmp_path / "r.rec")
    writer = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    for i in range(3):
        writer.write_idx(i, b"x" * 10)
    writer.close()
    with open(idx, "a") as f:
        f.write("3\t100000\n")
    reader = mx.recordio.MXIndexedRecordIO(idx, rec, "r")
    assert reader.read_idx(2) == b"x" * 10
    with pytest.raises(mx.MXNetError, match=r"r.idx' puts record 3 at offset 100000, but '.*r.rec' ends at "
                                            r"offset 60"):
        reader.read_idx(3)
    reader.seek(2)
    assert reader.read() == b"x" * 10 and reader.read() is None  # the end of a plain read stays None


def test_exit_does_not_wait_forever_for_a_kernel_that_never_returns():
    # The interpreter's exit drained the engine without a bound: a hung kernel hung the process.
    from conftest import TEST_PLUGINS
    import time
    code = ("import mxplug as mx\nmx.library.load(%r, verbose=False)\ny = mx.nd.test_Hang(mx.nd.ones(3))\n"
            "z = y + 1\nprint('pushed', flush=True)\n" % str(TEST_PLUGINS / "faulty" / "libtest_faulty_ops.so"))
    start = time.monotonic()
    p = run_python(code, extra_env={"MXPLUG_EXIT_TIMEOUT": "1"})
    assert time.monotonic() - start < 30
    assert p.stdout == "pushed\n" and p.returncode == 1, (p.returncode, p.stderr)
    assert ("[mxplug error] exit: engine work is still running after waiting 1 s (MXPLUG_EXIT_TIMEOUT): running "
            "'test.Hang' on cpu(0) (worker 'mxp cpu'); 2 function(s) unfinished. Exiting without it.") in p.stderr


def test_exit_finishes_queued_kernels_before_their_libraries_are_torn_down():
    # The interpreter exited with convolutions still queued: the engine's C exit handler drained
    # them only after the static objects oneDNN made at the first convolution had been
    # destroyed, and the process died of SIGSEGV after printing its results.
    code = ("import mxplug as mx\nx = mx.nd.ones((1, 8, 96, 96))\nw = mx.nd.ones((8, 8, 3, 3)) / 72\n"
            "for _ in range(40):\n    x = mx.nd.Convolution(x, w, kernel=(3, 3), pad=(1, 1), num_filter=8, no_bias=True)\n"
            "print('pushed', x.shape, flush=True)\n")
    for _ in range(3):
        p = run_python(code)
        assert p.returncode == 0 and p.stdout == "pushed (1, 8, 96, 96)\n", (p.returncode, p.stderr)


LOADERS = r"""
import json, os, sys
folder = sys.argv[1]
open(os.path.join(folder, 'bad.json'), 'wb').write(
    b'{"nodes": [{"op": "null", "name": "\xff\xfe", "inputs": []}], "heads": [[0, 0, 0]]}')
cases = {
    'not utf8': lambda: mx.sym.load(os.path.join(folder, 'bad.json')),
    'missing': lambda: mx.sym.load(os.path.join(folder, 'missing.json')),
    'checkpoint': lambda: mx.model.load_checkpoint(os.path.join(folder, 'none'), 3),
    'module': lambda: mx.mod.Module.load(os.path.join(folder, 'none'), 1),
}
out = {}
for name, fn in cases.items():
    try:
        fn()
        out[name] = 'accepted'
    except mx.MXNetError as e:
        out[name] = 'MXNetError'
    except Exception as e:
        out[name] = type(e).__name__
print(json.dumps(out))
"""


def test_loaders_raise_mxnet_error_where_mxnet_does(mx, tmp_path):
    # Python's own FileNotFoundError and UnicodeDecodeError escaped from mx.sym.load and the
    # checkpoint loaders; MXNet 1.9.1 raises MXNetError for each of these.
    from conftest import run_here, run_mxnet_script
    (tmp_path / "here").mkdir()
    (tmp_path / "there").mkdir()
    here = run_here(mx, LOADERS, [str(tmp_path / "here")])
    there = run_mxnet_script(LOADERS, [str(tmp_path / "there")])
    assert there == dict.fromkeys(there, "MXNetError")
    assert here == there
    with pytest.raises(mx.MXNetError, match=r"cannot read the symbol file .*missing.json: No such file or directory"):
        mx.sym.load(str(tmp_path / "missing.json"))
    with pytest.raises(mx.MXNetError, match=r"cannot read the symbol file .*: Is a directory"):
        mx.sym.load(str(tmp_path))  # MXNet 1.9.1 itself raises UnicodeDecodeError here
    with pytest.raises(mx.MXNetError, match=r"the symbol file .*bad.json is not UTF-8 text \(byte 35\)"):
        mx.sym.load(str(tmp_path / "here" / "bad.json"))


def test_a_value_that_is_not_an_array_where_an_op_takes_arrays_is_named(mx):
    x = mx.nd.ones((2,))
    with pytest.raises(TypeError, match=r"^concat: input 1 is a int, expected an NDArray$"):
        mx.nd.concat([x, 3], dim=0)
    with pytest.raises(TypeError, match=r"^__add__: self is a str, expected an NDArray$"):
        type(x).__add__("a", x)
    with pytest.raises(TypeError, match=r"^relu: the inputs must be a list or tuple of NDArrays, got int$"):
        mx._core.invoke("relu", 7, {}, None, None, False)
    np.testing.assert_array_equal((x + x).asnumpy(), [2, 2])  # the process and the arrays live on
