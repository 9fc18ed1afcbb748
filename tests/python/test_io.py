"""mx.io: the iterator protocol, NDArrayIter's batching, padding, roll-over and shuffling (against
MXNet 1.9.1 and against the rules written out with NumPy), ResizeIter and PrefetchingIter."""
import json

import numpy as np
import pytest

from conftest import run_mxnet

# Runs under MXNet 1.9.1 and under mxplug (``mx`` is whichever is imported); prints one JSON line
# with every batch's data, label and pad over two epochs of each set-up.
ITERATE = """
import json, numpy as np
np.random.seed(7)
data = np.arange(40, dtype=np.float32).reshape((10, 2, 2))
label = np.arange(10, dtype=np.float32)
setups = [dict(batch_size=3, last_batch_handle=h, shuffle=s) for h in ('pad', 'discard', 'roll_over')
          for s in (False, True)] + [dict(batch_size=4), dict(batch_size=10), dict(batch_size=23)]
out = []
for kw in setups:
    it = mx.io.NDArrayIter(data, label, **kw)
    epochs = []
    for _ in range(3):
        epochs.append([[b.data[0].asnumpy()[:, 0, 0].tolist(), b.label[0].asnumpy().tolist(), b.pad]
                       for b in it])
        it.reset()
    out.append([repr(it.provide_data), repr(it.provide_label), epochs])
d = {'b': np.arange(12).reshape(6, 2), 'a': np.arange(6)}
it = mx.io.NDArrayIter(d, [np.zeros(6), np.ones(6)], batch_size=4, label_name='lab')
out.append([[x.name for x in it.provide_data], [x.name for x in it.provide_label],
            [[[x.asnumpy().tolist() for x in b.data], b.pad] for b in it]])
it = mx.io.NDArrayIter(np.arange(12).reshape(2, 6), batch_size=4, layout='TN', last_batch_handle='discard')
out.append([repr(it.provide_data), [b.data[0].asnumpy().tolist() for b in it]])
print(json.dumps(out))
"""


def _ours(mx):
    scope = {"mx": mx}
    import contextlib
    import io
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(ITERATE, scope)  # noqa: S102 - the shared script above
    return json.loads(printed.getvalue().strip().splitlines()[-1])


def test_ndarray_iter_matches_mxnet(mx):
    want = json.loads(run_mxnet("import mxnet as mx\n" + ITERATE).strip().splitlines()[-1])
    assert _ours(mx) == want


def test_ndarray_iter_rules_against_numpy(mx):
    n, bs = 10, 3
    data = np.arange(n, dtype=np.float32)
    # pad: every example once, then the last batch filled from the start.
    batches = list(mx.io.NDArrayIter(data, batch_size=bs))
    got = np.concatenate([b.data[0].asnumpy() for b in batches])
    np.testing.assert_array_equal(got, np.concatenate([data, data[:bs - n % bs]]))
    assert [b.pad for b in batches] == [0, 0, 0, bs - n % bs]
    # discard: the n // bs full batches only.
    batches = list(mx.io.NDArrayIter(data, batch_size=bs, last_batch_handle="discard"))
    np.testing.assert_array_equal(np.concatenate([b.data[0].asnumpy() for b in batches]), data[:9])
    # roll_over: the left-over example starts the next epoch; over two epochs nothing is lost.
    it = mx.io.NDArrayIter(data, batch_size=bs, last_batch_handle="roll_over")
    first = np.concatenate([b.data[0].asnumpy() for b in it])
    it.reset()
    second = [b for b in it]
    np.testing.assert_array_equal(first, data[:9])
    np.testing.assert_array_equal(second[0].data[0].asnumpy(), [9, 0, 1])
    assert second[0].pad == 1
    # hard_reset forgets the carried example.
    it.hard_reset()
    np.testing.assert_array_equal(it.next().data[0].asnumpy(), [0, 1, 2])
    # shuffle: each epoch is a permutation, and data and label stay paired.
    it = mx.io.NDArrayIter(data, data * 10, batch_size=5, shuffle=True)
    orders = []
    for _ in range(2):
        batches = list(it)
        x = np.concatenate([b.data[0].asnumpy() for b in batches])
        np.testing.assert_array_equal(np.sort(x), data)
        np.testing.assert_array_equal(np.concatenate([b.label[0].asnumpy() for b in batches]), x * 10)
        orders.append(x)
        it.reset()
    assert not np.array_equal(orders[0], orders[1])


def test_ndarray_iter_keeps_dtype_and_accepts_ndarrays(mx):
    it = mx.io.NDArrayIter(mx.nd.array([[1, 2], [3, 4]], dtype="int32"), batch_size=1, shuffle=True)
    assert it.provide_data[0].dtype == np.int32
    assert sorted(b.data[0].asnumpy().tolist()[0][0] for b in it) == [1, 3]
    it.reset()
    assert all(b.data[0].dtype == np.int32 for b in it)
    # NumPy input becomes float32, as nd.array makes it.
    assert mx.io.NDArrayIter(np.arange(4)).provide_data[0].dtype == np.float32


def test_ndarray_iter_errors(mx):
    with pytest.raises(ValueError, match="last_batch_handle must be one of pad, discard, roll_over, got 'keep'"):
        mx.io.NDArrayIter(np.zeros(4), last_batch_handle="keep")
    with pytest.raises(ValueError, match="batch_size must be a positive int, got 0"):
        mx.io.NDArrayIter(np.zeros(4), batch_size=0)
    with pytest.raises(ValueError, match="'softmax_label' has 3 examples, fewer than the 4 of 'data'"):
        mx.io.NDArrayIter(np.zeros(4), np.zeros(3))
    with pytest.raises(TypeError, match="data must be an NDArray, a numpy.ndarray, a list of them or a dict"):
        mx.io.NDArrayIter("images.bin")
    with pytest.raises(ValueError, match="data is required"):
        mx.io.NDArrayIter(None)
    it = mx.io.NDArrayIter(np.zeros(4), batch_size=2)
    list(it)
    with pytest.raises(StopIteration):
        it.next()


def test_data_desc_and_batch(mx):
    desc = mx.io.DataDesc("data", (4, 3), np.float16, layout="NC")
    name, shape = desc
    assert (name, shape, desc.dtype, desc.layout) == ("data", (4, 3), np.float16, "NC")
    assert repr(desc) == "DataDesc[data,(4, 3),<class 'numpy.float16'>,NC]"
    assert mx.io.DataDesc.get_batch_axis("TNC") == 1 and mx.io.DataDesc.get_batch_axis(None) == 0
    descs = mx.io.DataDesc.get_list([("a", (1,)), ("b", (2,))], [("a", np.int32), ("b", np.uint8)])
    assert [(d.name, d.dtype) for d in descs] == [("a", np.int32), ("b", np.uint8)]
    batch = mx.io.DataBatch([mx.nd.ones((2, 3))], [mx.nd.ones((2,))], pad=1)
    assert str(batch) == "DataBatch: data shapes: [(2, 3)] label shapes: [(2,)]"
    with pytest.raises(TypeError, match="data must be a list of NDArrays"):
        mx.io.DataBatch(mx.nd.ones((2, 3)))


def test_resize_iter(mx):
    it = mx.io.ResizeIter(mx.io.NDArrayIter(np.arange(10), batch_size=4), 5)
    got = [b.data[0].asnumpy().tolist() for b in it]
    assert got == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1], [0, 1, 2, 3], [4, 5, 6, 7]]
    it.reset()
    assert len(list(it)) == 5
    assert it.provide_data[0].shape == (4,)


class _Failing(object):
    """An iterator whose second batch raises, to check that the reading thread's error reaches
    the caller."""

    def __init__(self, mx):
        self.inner = mx.io.NDArrayIter(np.arange(8), batch_size=2)
        self.provide_data, self.provide_label = self.inner.provide_data, self.inner.provide_label
        self.batch_size, self.count = 2, 0

    def next(self):
        self.count += 1
        if self.count == 2:
            raise IOError("images.rec: truncated record at offset 4096")
        return self.inner.next()

    def reset(self):
        self.inner.reset()


def test_prefetching_iter(mx):
    a = mx.io.NDArrayIter({"data": np.arange(8)}, np.arange(8), batch_size=4)
    b = mx.io.NDArrayIter({"data": np.arange(8) * 2}, np.arange(8), batch_size=4)
    it = mx.io.PrefetchingIter([a, b], rename_data=[{"data": "a"}, {"data": "b"}])
    assert [d.name for d in it.provide_data] == ["a", "b"]
    assert [d.name for d in it.provide_label] == ["softmax_label", "softmax_label"]
    for _ in range(2):
        got = [[x.asnumpy().tolist() for x in batch.data] for batch in it]
        assert got == [[[0, 1, 2, 3], [0, 2, 4, 6]], [[4, 5, 6, 7], [8, 10, 12, 14]]]
        it.reset()
    failing = mx.io.PrefetchingIter(_Failing(mx))
    failing.next()
    with pytest.raises(IOError, match="truncated record at offset 4096"):
        failing.next()
    failing.close()
    uneven = mx.io.PrefetchingIter([mx.io.NDArrayIter(np.arange(8), batch_size=4),
                                    mx.io.NDArrayIter(np.arange(4), batch_size=4)])
    uneven.next()
    with pytest.raises(ValueError, match="different numbers of batches"):
        uneven.next()
