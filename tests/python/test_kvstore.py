"""KVStore: the seeds' snippets with their printed values (several CPU contexts standing in for
the GPUs), str keys, the device store, optimizers on the store, states saved and resumed, bad
calls that raise at the call and change nothing, and the 'nccl' store and Module over several
accelerators on the asynchronous test device."""
import contextlib
import io
import json

import numpy as np
import pytest

from conftest import TEST_DEVICE, TEST_PLUGINS, built_with, run_python

SHAPE = (2, 3)


def full(v):
    return np.full(SHAPE, v, np.float32)


def test_seed_snippets(mx):
    """The seeds' KVStore walk-through as written (mx.gpu(i) replaced by mx.cpu(i))."""
    kv = mx.kv.create('local')
    kv.init(3, mx.nd.ones(SHAPE) * 2)
    a = mx.nd.zeros(SHAPE)
    kv.pull(3, out=a)
    np.testing.assert_array_equal(a.asnumpy(), full(2))
    kv.push(3, mx.nd.ones(SHAPE) * 8)
    kv.pull(3, out=a)
    np.testing.assert_array_equal(a.asnumpy(), full(8))

    gpus = [mx.cpu(i) for i in range(4)]
    b = [mx.nd.ones(SHAPE, gpu) for gpu in gpus]
    kv.push(3, b)
    kv.pull(3, out=a)
    np.testing.assert_array_equal(a.asnumpy(), full(4))

    def update(key, input, stored):
        print("update on key: %d" % key)
        stored += input * 2
    kv._set_updater(update)
    kv.pull(3, out=a)
    np.testing.assert_array_equal(a.asnumpy(), full(4))
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        kv.push(3, mx.nd.ones(SHAPE))
    assert printed.getvalue() == "update on key: 3\n"
    kv.pull(3, out=a)
    np.testing.assert_array_equal(a.asnumpy(), full(6))

    b = [mx.nd.ones(SHAPE, gpu) for gpu in gpus]
    kv.pull(3, out=b)
    assert b[1].context == mx.cpu(1)
    np.testing.assert_array_equal(b[1].asnumpy(), full(6))

    keys = [5, 7, 9]
    kv.init(keys, [mx.nd.ones(SHAPE)] * len(keys))
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        kv.push(keys, [mx.nd.ones(SHAPE)] * len(keys))
    assert printed.getvalue() == "update on key: 5\nupdate on key: 7\nupdate on key: 9\n"
    b = [mx.nd.zeros(SHAPE)] * len(keys)
    kv.pull(keys, out=b)
    np.testing.assert_array_equal(b[1].asnumpy(), full(3))

    b = [[mx.nd.ones(SHAPE, gpu) for gpu in gpus]] * len(keys)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        kv.push(keys, b)
    assert printed.getvalue() == "update on key: 5\nupdate on key: 7\nupdate on key: 9\n"
    kv.pull(keys, out=b)
    np.testing.assert_array_equal(b[1][1].asnumpy(), full(11))


@pytest.mark.parametrize("kind", ["local", "device"])
def test_sum_of_values_from_several_contexts(mx, kind):
    kv = mx.kv.create(kind)
    assert (kv.type, kv.rank, kv.num_workers) == (kind, 0, 1)
    rng = np.random.RandomState(0)
    vals = [rng.randn(*SHAPE).astype(np.float32) for _ in range(3)]
    kv.init("w", mx.nd.zeros(SHAPE, mx.cpu(2)))
    kv.push("w", [mx.nd.array(v, mx.cpu(i + 1)) for i, v in enumerate(vals)])
    outs = [mx.nd.zeros(SHAPE, mx.cpu(i)) for i in range(3)]
    kv.pull("w", out=outs)
    for o in outs:
        np.testing.assert_allclose(o.asnumpy(), vals[0] + vals[1] + vals[2], rtol=1e-6)


def test_device_store_updates_on_first_value_context(mx):
    kv = mx.kv.create('device')
    kv.init(0, mx.nd.ones(SHAPE))
    seen = []
    kv._set_updater(lambda key, recv, stored: (seen.append((key, recv.context, stored.context)),
                                               stored.__iadd__(recv)))
    kv.push(0, [mx.nd.ones(SHAPE, mx.cpu(3)), mx.nd.ones(SHAPE, mx.cpu(1))])
    assert seen == [(0, mx.cpu(3), mx.cpu(3))]
    out = mx.nd.zeros(SHAPE)
    kv.pull(0, out=out)
    np.testing.assert_array_equal(out.asnumpy(), full(3))


def test_str_keys_and_pushpull(mx):
    kv = mx.kv.create()
    kv.init(["a", "b"], [mx.nd.ones(SHAPE), mx.nd.zeros(SHAPE)])
    keys = []
    kv._set_updater(lambda key, recv, stored: (keys.append(key), stored.__isub__(recv)))
    v = mx.nd.ones(SHAPE) * 3
    kv.pushpull("a", v)  # no out: the pushed array receives the result
    np.testing.assert_array_equal(v.asnumpy(), full(-2))
    out = mx.nd.zeros(SHAPE)
    kv.pushpull("b", mx.nd.ones(SHAPE), out=out)
    np.testing.assert_array_equal(out.asnumpy(), full(-1))
    assert keys == ["a", "b"]


def test_push_without_updater_replaces(mx):
    kv = mx.kv.create()
    kv.init(1, mx.nd.ones(SHAPE))
    pushed = mx.nd.ones(SHAPE) * 5
    kv.push(1, pushed)
    pushed += 1  # the store kept its own copy
    out = mx.nd.zeros(SHAPE)
    kv.pull(1, out=out)
    np.testing.assert_array_equal(out.asnumpy(), full(5))


def test_set_optimizer_matches_updater(mx):
    """kv.set_optimizer(SGD) on pushed gradients == the optimizer's formula on their sum."""
    kv = mx.kv.create('local')
    w0 = np.arange(6, dtype=np.float32).reshape(SHAPE)
    kv.init(0, mx.nd.array(w0))
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.01,
                                      param_idx2name={0: "x_weight"}))
    w, mom = w0.astype(np.float64), np.zeros(SHAPE)
    for step in range(3):
        grads = [np.full(SHAPE, step + 1.0, np.float32), np.full(SHAPE, 0.5, np.float32)]
        kv.push(0, [mx.nd.array(g, mx.cpu(i)) for i, g in enumerate(grads)])
        mom = 0.9 * mom - 0.1 * (grads[0] + grads[1] + 0.01 * w)
        w = w + mom
    out = mx.nd.zeros(SHAPE)
    kv.pull(0, out=out)
    np.testing.assert_allclose(out.asnumpy(), w, rtol=1e-5)


def test_optimizer_states_resume(mx, tmp_path):
    """Adam's moments and step counts saved after 2 pushes and loaded into a new store give the
    third push exactly as an uninterrupted run."""
    def store(init, optimizer):
        kv = mx.kv.create()
        kv.init(0, init)
        kv.set_optimizer(optimizer)
        return kv
    straight = store(mx.nd.ones(SHAPE), mx.optimizer.Adam(learning_rate=0.1))
    first = store(mx.nd.ones(SHAPE), mx.optimizer.Adam(learning_rate=0.1))
    for s in (1, 2, 3):
        straight.push(0, mx.nd.ones(SHAPE) * s)
    for s in (1, 2):
        first.push(0, mx.nd.ones(SHAPE) * s)
    fname = str(tmp_path / "states")
    first.save_optimizer_states(fname, dump_optimizer=True)
    current = mx.nd.zeros(SHAPE)
    first.pull(0, out=current)
    resumed = store(current, mx.optimizer.SGD())
    resumed.load_optimizer_states(fname)  # brings Adam back with its moments and counts
    resumed.push(0, mx.nd.ones(SHAPE) * 3)
    a, b = mx.nd.zeros(SHAPE), mx.nd.zeros(SHAPE)
    straight.pull(0, out=a)
    resumed.pull(0, out=b)
    np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    assert not np.array_equal(a.asnumpy(), np.ones(SHAPE))


def test_bad_calls_raise_and_change_nothing(mx):
    kv = mx.kv.create()
    kv.init([1, 2], [mx.nd.ones(SHAPE), mx.nd.ones(SHAPE)])
    calls = []
    kv._set_updater(lambda *args: calls.append(args))
    with pytest.raises(mx.MXNetError, match=r"kvstore push: key '3' has not been initialised"):
        kv.push([1, 3], [mx.nd.ones(SHAPE), mx.nd.ones(SHAPE)])
    with pytest.raises(mx.MXNetError, match=r"kvstore push: key '2' holds \(2, 3\) float32, the array given is \(3,\) float32"):
        kv.push([1, 2], [mx.nd.ones(SHAPE), mx.nd.ones((3,))])
    with pytest.raises(mx.MXNetError, match=r"kvstore pull: key '1' holds \(2, 3\) float32, the array given is \(2, 3\) float64"):
        kv.pull(1, out=mx.nd.zeros(SHAPE, dtype='float64'))
    with pytest.raises(mx.MXNetError, match=r"kvstore init: key '1' is already initialised"):
        kv.init(1, mx.nd.zeros(SHAPE))
    with pytest.raises(TypeError, match="keys must be all int or all str"):
        kv.push([1, "a"], [mx.nd.ones(SHAPE)] * 2)
    with pytest.raises(TypeError, match="this store has int keys"):
        kv.init("a", mx.nd.ones(SHAPE))
    with pytest.raises(ValueError, match="3 keys need a list of 3 values"):
        kv.push([1, 2, 1], [mx.nd.ones(SHAPE)])
    with pytest.raises(mx.MXNetError, match=r"unknown type 'dist_nope'; the types are 'local' and 'device'"):
        mx.kv.create('dist_nope')
    assert calls == []
    out = mx.nd.zeros(SHAPE)
    kv.pull(1, out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.ones(SHAPE))


def test_updater_error_reaches_caller(mx):
    kv = mx.kv.create()
    kv.init(0, mx.nd.ones(SHAPE))

    def broken(key, recv, stored):
        raise RuntimeError("updater failed on %d" % key)
    kv._set_updater(broken)
    with pytest.raises(RuntimeError, match="updater failed on 0"):
        kv.push(0, mx.nd.ones(SHAPE))
    kv._set_updater(None)
    kv.push(0, mx.nd.ones(SHAPE) * 4)
    out = mx.nd.zeros(SHAPE)
    kv.pull(0, out=out)
    np.testing.assert_array_equal(out.asnumpy(), full(4))


# MXNet's 'nccl' store over the asynchronous test device's collectives (its four devices stand in
# for GPUs; NCCL's on CUDA are checked by the device conformance suite on a GPU machine), and data
# parallelism on accelerators mixed with CPUs. Run in a fresh interpreter, where mx.gpu is the test
# device whatever this run's device is. Prints one JSON line: each case's result or first error
# line, and the collectives it ran (the test device counts them).
DEVICES_HEADER = """
import ctypes, json, os, numpy as np
import mxplug as mx
if "TESTDEV" in os.environ:
    mx.library.load(os.environ["TESTDEV"])
    counter = ctypes.CDLL(os.environ["TESTDEV"]).mxplug_testdev_collectives
    counter.restype = ctypes.c_int64
else:
    counter = lambda: 0
rs = np.random.RandomState(0)
gpus = [mx.gpu(i) for i in range(int(os.environ.get("GPUS", "4")))]
vals = [rs.randn(5, 7).astype(np.float32) for _ in range(4)]
out = {}

def case(name, fn):
    before = counter()
    try:
        out[name] = {"result": fn()}
        mx.nd.waitall()  # the collectives pushed have run
    except mx.MXNetError as e:
        out[name] = {"error": str(e).splitlines()[0]}
    out[name]["collectives"] = int(counter() - before)

def pulled(kv, key, ctxs, shape=(5, 7), dtype="float32"):
    outs = [mx.nd.zeros(shape, c, dtype=dtype) for c in ctxs]
    kv.pull(key, out=outs)
    return [o.asnumpy().tolist() for o in outs]
"""
NCCL_CASES = """

def sum_and_broadcast():
    kv = mx.kv.create("nccl")
    kv.init("w", mx.nd.zeros((5, 7)))
    kv.push("w", [mx.nd.array(v, ctx=g) for v, g in zip(vals, gpus)])
    return [kv.type, pulled(kv, "w", gpus)]
case("sum_and_broadcast", sum_and_broadcast)

def updater_on_root():
    kv = mx.kv.create("nccl")
    kv.init(3, mx.nd.ones((5, 7)))
    seen = []
    def update(key, recv, stored):
        seen.append([key, str(recv.context), str(stored.context)])
        stored += recv * 2
    kv._set_updater(update)
    order = [2, 0, 3, 1]
    kv.push(3, [mx.nd.array(vals[i], ctx=gpus[i]) for i in order])
    first = pulled(kv, 3, gpus)
    kv.push(3, [mx.nd.array(vals[i], ctx=gpus[i]) for i in range(4)])  # the root stays gpu(2)
    return [seen, first, pulled(kv, 3, [gpus[i] for i in (3, 1, 0, 2)])]
case("updater_on_root", updater_on_root)

def copies_only():
    kv = mx.kv.create("nccl")
    kv.init("w", mx.nd.array(vals[0]))
    before_push = pulled(kv, "w", gpus[:3])  # no push of several values yet: copies
    kv.push("w", mx.nd.array(vals[1], ctx=gpus[1]))  # one value: used as it is
    return [before_push, pulled(kv, "w", [gpus[3]])]
case("copies_only", copies_only)

def several_keys_and_dtypes():
    kv = mx.kv.create("nccl")
    ints = [rs.randint(-100, 100, (4, 3)).astype(np.int32) for _ in range(3)]
    kv.init(["a", "b"], [mx.nd.zeros((5, 7), dtype="float64"), mx.nd.zeros((4, 3), dtype="int32")])
    kv.push(["a", "b"], [[mx.nd.array(v, ctx=g, dtype="float64") for v, g in zip(vals[:3], gpus[:3])],
                         [mx.nd.array(v, ctx=g, dtype="int32") for v, g in zip(ints, gpus[:3])]])
    return [pulled(kv, "a", gpus[:3], dtype="float64"), pulled(kv, "b", gpus[:3], (4, 3), "int32"),
            [v.tolist() for v in ints]]
case("several_keys_and_dtypes", several_keys_and_dtypes)

kv = mx.kv.create("nccl")
kv.init(["x", "y"], [mx.nd.zeros((5, 7)), mx.nd.zeros((5, 7))])
case("cpu_value", lambda: kv.push("x", [mx.nd.array(vals[0], ctx=gpus[0]), mx.nd.array(vals[1])]))
case("same_device", lambda: kv.push("x", [mx.nd.array(vals[0], ctx=gpus[1]),
                                          mx.nd.array(vals[1], ctx=gpus[1])]))
case("first_set", lambda: kv.push("x", [mx.nd.array(v, ctx=g) for v, g in zip(vals[:2], gpus[:2])]))
# The second key's devices differ from the set: refused whole, "x" keeps its sum.
case("other_set", lambda: kv.push(["x", "y"], [[mx.nd.ones((5, 7), g) for g in gpus[:2]],
                                               [mx.nd.ones((5, 7), g) for g in (gpus[0], gpus[2])]]))
case("pull_other_set", lambda: pulled(kv, "x", [gpus[1], gpus[3]]))
case("after_errors", lambda: pulled(kv, "x", gpus[:2]))
"""
# Module: two epochs of an MLP on several devices against the same on two CPU contexts.
FIT_ON_DEVICES = """
X = rs.randn(96, 10).astype(np.float32)
y = rs.randint(0, 3, 96).astype(np.float32)
start = {"fc1_weight": rs.randn(16, 10) * 0.3, "fc1_bias": rs.randn(16) * 0.1,
         "fc2_weight": rs.randn(3, 16) * 0.3, "fc2_bias": np.zeros(3)}
def fit(contexts, kvstore):
    x = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=16, name="fc1")
    x = mx.sym.FullyConnected(mx.sym.Activation(x, act_type="relu"), num_hidden=3, name="fc2")
    mod = mx.mod.Module(mx.sym.SoftmaxOutput(x, name="softmax"), context=contexts)
    mod.fit(mx.io.NDArrayIter(X, y, batch_size=32), num_epoch=2, optimizer="sgd", kvstore=kvstore,
            optimizer_params={"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-3},
            arg_params={k: mx.nd.array(v) for k, v in start.items()})
    return {k: v.asnumpy().tolist() for k, v in sorted(mod.get_params()[0].items())}
case("fit_cpus", lambda: fit([mx.cpu(0), mx.cpu(1)], "local"))
if len(gpus) > 1:
    case("fit_nccl", lambda: fit(gpus[:2], "nccl"))
case("fit_gpu_and_cpu", lambda: fit([gpus[0], mx.cpu(0)], "device"))
print(json.dumps(out))
"""
NCCL_ON_TESTDEV = DEVICES_HEADER + NCCL_CASES + FIT_ON_DEVICES


@pytest.fixture(scope="module")
def nccl_on_testdev():
    p = run_python(NCCL_ON_TESTDEV, extra_env={
        "MXPLUG_GPU_BACKEND": "testdev", "TESTDEV": str(TEST_PLUGINS / "devices" / "libtest_device.so"),
        "CUDA_VISIBLE_DEVICES": ""})
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def script_values():
    """The arrays the script pushes: its first draws from RandomState(0)."""
    rs = np.random.RandomState(0)
    return rs, [rs.randn(5, 7).astype(np.float32) for _ in range(4)]


def test_nccl_store_sums_on_the_root_and_broadcasts(nccl_on_testdev):
    out = nccl_on_testdev
    _, vals = script_values()
    total = vals[0] + vals[1] + vals[2] + vals[3]
    kind, outs = out["sum_and_broadcast"]["result"]
    assert kind == "nccl"
    for o in outs:
        np.testing.assert_allclose(o, total, rtol=1e-6, atol=1e-6)
    assert out["sum_and_broadcast"]["collectives"] == 2  # one reduce, one broadcast

    seen, first, second = out["updater_on_root"]["result"]
    # The root is the first value's device of the first push of several values, and stays so.
    assert seen == [[3, "gpu(2)", "gpu(2)"], [3, "gpu(2)", "gpu(2)"]]
    for o in first:
        np.testing.assert_allclose(o, 1 + 2 * total, rtol=1e-5, atol=1e-5)
    for o in second:
        np.testing.assert_allclose(o, 1 + 4 * total, rtol=1e-5, atol=1e-5)
    assert out["updater_on_root"]["collectives"] == 4

    before_push, after = out["copies_only"]["result"]
    for o in before_push:
        np.testing.assert_array_equal(o, vals[0])
    np.testing.assert_array_equal(after[0], vals[1])
    assert out["copies_only"]["collectives"] == 0

    a, b, ints = out["several_keys_and_dtypes"]["result"]
    want_a = vals[0].astype(np.float64) + vals[1] + vals[2]
    for o in a:
        np.testing.assert_allclose(o, want_a, rtol=1e-12)
    for o in b:
        np.testing.assert_array_equal(o, np.sum(ints, axis=0))
    assert out["several_keys_and_dtypes"]["collectives"] == 4


def test_nccl_store_refuses_what_nccl_cannot_do_and_changes_nothing(nccl_on_testdev):
    out = nccl_on_testdev
    _, vals = script_values()
    error = out["cpu_value"]["error"]
    assert error.startswith("kvstore 'nccl' push: key 'x' has an array on cpu(0); this store sums "
                            "and broadcasts over devices whose backend has collectives ("), error
    assert "testdev" in error and error.endswith("), one array on each"), error
    assert out["cpu_value"]["collectives"] == 0
    assert out["same_device"]["error"] == \
        "kvstore 'nccl' push: key 'x' has two arrays on ext_dev(1); one array per device"
    assert out["first_set"] == {"result": None, "collectives": 1}
    assert out["other_set"] == {"collectives": 0, "error": (
        "kvstore 'nccl' push: key 'y' has arrays on ext_dev(0), ext_dev(2), but this store runs over "
        "ext_dev(0), ext_dev(1) (the devices of its first push of several values), and only over "
        "those, as MXNet's")}
    assert out["pull_other_set"]["error"].startswith(
        "kvstore 'nccl' pull: key 'x' has arrays on ext_dev(1), ext_dev(3), but this store runs over "
        "ext_dev(0), ext_dev(1)")
    for o in out["after_errors"]["result"]:
        np.testing.assert_allclose(o, vals[0] + vals[1], rtol=1e-6)
    assert out["after_errors"]["collectives"] == 1  # the broadcast


def test_module_on_accelerators_and_cpus_trains_as_on_cpus(nccl_on_testdev):
    """Data parallelism over several accelerators summed by 'nccl', and over an accelerator and a
    CPU summed by 'device', give the parameters of the same training on two CPU contexts."""
    out = nccl_on_testdev
    want = out["fit_cpus"]["result"]
    for setup in ("fit_nccl", "fit_gpu_and_cpu"):
        got = out[setup]["result"]
        assert sorted(got) == sorted(want), out[setup]
        for name in want:
            np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6,
                                       err_msg="%s: %s" % (setup, name))
    assert out["fit_nccl"]["collectives"] > 0
    assert out["fit_gpu_and_cpu"]["collectives"] == 0


def test_module_on_a_gpu_and_a_cpu_trains_as_on_cpus():
    """On a machine with one GPU: data parallelism over gpu(0) and cpu(0) with kvstore 'device'
    gives the parameters of the same training on two CPU contexts, and a 'nccl' store on one GPU
    sums and pulls (a push of one value needs no collective; NCCL with one rank is checked by
    the device conformance suite)."""
    if TEST_DEVICE != "cuda":
        pytest.skip("needs a CUDA GPU (tools/gpu/run.sh python); on the test device, "
                    "test_module_on_accelerators_and_cpus_trains_as_on_cpus runs the same")
    one_gpu = """
kv = mx.kv.create("nccl")
kv.init("w", mx.nd.zeros((5, 7)))
kv.push("w", mx.nd.array(vals[0], ctx=gpus[0]))
case("nccl_one_gpu", lambda: pulled(kv, "w", gpus[:1]))
"""
    p = run_python(DEVICES_HEADER + one_gpu + FIT_ON_DEVICES,
                   extra_env={"MXPLUG_GPU_BACKEND": "cuda", "GPUS": "1"})
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout.strip().splitlines()[-1])
    np.testing.assert_array_equal(out["nccl_one_gpu"]["result"][0], script_values()[1][0])
    want, got = out["fit_cpus"]["result"], out["fit_gpu_and_cpu"]["result"]
    assert sorted(got) == sorted(want), out["fit_gpu_and_cpu"]
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6, err_msg=name)


def test_nccl_store_needs_a_backend_with_collectives():
    p = run_python("import mxplug as mx\nprint(mx.kv.create('nccl').type)",
                   extra_env={"CUDA_VISIBLE_DEVICES": ""})
    if built_with("nccl"):  # the CUDA plugin has them, with or without a GPU
        assert p.returncode == 0, p.stderr
        assert p.stdout.strip() == "nccl"
    else:
        assert p.returncode != 0
        assert "kvstore 'nccl' sums over the GPUs of this process with their backend's " \
               "collectives, and no loaded device backend has them" in p.stderr, p.stderr
