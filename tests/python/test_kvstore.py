"""KVStore: the seeds' snippets with their printed values (several CPU contexts standing in for
the GPUs), str keys, the device store, optimizers on the store, states saved and resumed, and
bad calls that raise at the call and change nothing."""
import contextlib
import io

import numpy as np
import pytest

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
