"""mx.io: the iterator protocol, NDArrayIter's batching, padding, roll-over and shuffling (against
MXNet 1.9.1 and against the rules written out with NumPy), ResizeIter and PrefetchingIter."""
import json
import re

import numpy as np
import pytest

from conftest import run_here, run_mxnet_script, run_python, write_idx

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
    # The arrays in the epoch's order (data and label reordered together when shuffled).
    order = [it.data[0][1].asnumpy()[:, 0, 0].tolist(), it.label[0][1].asnumpy().tolist(),
             [a.shape for a in it.data_list]]
    out.append([repr(it.provide_data), repr(it.provide_label), epochs, order])
d = {'b': np.arange(12).reshape(6, 2), 'a': np.arange(6)}
it = mx.io.NDArrayIter(d, [np.zeros(6), np.ones(6)], batch_size=4, label_name='lab')
out.append([[x.name for x in it.provide_data], [x.name for x in it.provide_label],
            [[[x.asnumpy().tolist() for x in b.data], b.pad] for b in it]])
it = mx.io.NDArrayIter(np.arange(12).reshape(2, 6), batch_size=4, layout='TN', last_batch_handle='discard')
out.append([repr(it.provide_data), [b.data[0].asnumpy().tolist() for b in it]])
print(json.dumps(out))
"""


def test_ndarray_iter_matches_mxnet(mx):
    assert run_here(mx, ITERATE, []) == run_mxnet_script(ITERATE, [])


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


# ---- The core's iterators: MNISTIter and CSVIter ----

def _write_idx(folder, n=10, rows=3, cols=2, gz=False, seed=0):
    """IDX image and label files of n examples (as MNIST's), raw or gzip-compressed; returns their
    paths and the arrays written."""
    rng = np.random.RandomState(seed)
    images = rng.randint(0, 256, size=(n, rows, cols)).astype(np.uint8)
    labels = rng.randint(0, 10, size=n).astype(np.uint8)
    suffix = ".gz" if gz else ""
    image_path, label_path = str(folder / ("images" + suffix)), str(folder / ("labels" + suffix))
    write_idx(image_path, label_path, images, labels, gz)
    return image_path, label_path, images, labels


MNIST_SETUPS = [dict(batch_size=3, shuffle=False), dict(batch_size=4, shuffle=False, flat=True),
                dict(batch_size=2, shuffle=False, num_parts=3, part_index=2),
                dict(batch_size=1, shuffle=False, num_parts=4, part_index=1)]

MNIST_READ = """
import json, sys
image, label, setups = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
out = []
for kw in setups:
    it = mx.io.MNISTIter(image=image, label=label, **kw)
    epochs = []
    for _ in range(2):
        epochs.append([[b.data[0].asnumpy().tolist(), b.label[0].asnumpy().tolist(), b.pad] for b in it])
        it.reset()
    out.append([[(d.name, list(d.shape)) for d in it.provide_data + it.provide_label], epochs])
print(json.dumps(out))
"""


def test_mnist_iter_matches_mxnet_and_reads_gzip(mx, tmp_path):
    image, label, images, labels = _write_idx(tmp_path, n=11)
    argv = [image, label, json.dumps(MNIST_SETUPS)]
    want = run_mxnet_script(MNIST_READ, argv)
    assert run_here(mx, MNIST_READ, argv) == want
    (tmp_path / "gz").mkdir()
    gz_image, gz_label, _, _ = _write_idx(tmp_path / "gz", n=11, gz=True)
    assert run_here(mx, MNIST_READ, [gz_image, gz_label, json.dumps(MNIST_SETUPS)]) == want
    # Against the files' bytes: pixels / 256, labels as floats, batch b holds examples 3b..3b+2.
    batches = list(mx.io.MNISTIter(image=gz_image, label=gz_label, batch_size=3, shuffle=False))
    assert len(batches) == 3
    for b, batch in enumerate(batches):
        np.testing.assert_array_equal(batch.data[0].asnumpy()[:, 0], images[3 * b:3 * b + 3] / 256.0)
        np.testing.assert_array_equal(batch.label[0].asnumpy(), labels[3 * b:3 * b + 3])
        np.testing.assert_array_equal(batch.index, np.arange(3 * b, 3 * b + 3))


def test_mnist_iter_shuffles_each_epoch_by_seed(mx, tmp_path):
    image, label, images, labels = _write_idx(tmp_path, n=40)

    def epochs(seed, part=0, parts=1):
        it = mx.io.MNISTIter(image=image, label=label, batch_size=5, seed=seed, num_parts=parts,
                             part_index=part)
        out = []
        for _ in range(2):
            out.append(np.concatenate([b.index for b in it]))
            it.reset()
        return out

    first, second = epochs(seed=3)
    assert sorted(first) == list(range(40)) and sorted(second) == list(range(40))
    assert not np.array_equal(first, second)
    assert all(np.array_equal(a, b) for a, b in zip(epochs(seed=3), [first, second]))
    assert not np.array_equal(epochs(seed=4)[0], first)
    # A shuffled part keeps to its own slice; the labels follow their images.
    part = epochs(seed=1, part=1, parts=2)[0]
    assert sorted(part) == list(range(20, 40))
    it = mx.io.MNISTIter(image=image, label=label, batch_size=5)
    for batch in it:
        np.testing.assert_array_equal(batch.label[0].asnumpy(), labels[batch.index.astype(int)])
        np.testing.assert_array_equal(batch.data[0].asnumpy()[:, 0] * 256, images[batch.index.astype(int)])


def test_mnist_iter_batches_in_order_are_read_only_views(mx, tmp_path):
    """Without shuffle, batches view the iterator's float32 copy of the set: writes into them are
    refused, naming the file, and later epochs see the files' values."""
    image, label, images, labels = _write_idx(tmp_path, n=12)
    it = mx.io.MNISTIter(image=image, label=label, batch_size=4, shuffle=False)
    first = next(iter(it))
    data, lab = first.data[0], first.label[0]
    assert not data.writable and not lab.writable
    with pytest.raises(ValueError, match="read-only: it shares memory with MNISTIter's data set "
                       "\\('%s'\\)" % re.escape(image)):
        data[:] = 0
    with pytest.raises(ValueError, match="read-only: it shares memory with MNISTIter's labels "
                       "\\('%s'\\)" % re.escape(label)):
        lab[1] = 5
    with pytest.raises(mx.MXNetError, match="relu: output 'output' is read-only"):
        mx.nd.relu(data - 1, out=data)
    with pytest.raises(mx.MXNetError, match="NDArray::Copy: the destination is read-only"):
        mx.nd.zeros(data.shape).copyto(data)
    kv = mx.kv.create("local")
    kv.init(0, mx.nd.zeros(lab.shape))
    with pytest.raises(mx.MXNetError, match="pull: the output for key '0' is read-only"):
        kv.pull(0, out=lab)
    with pytest.raises(mx.MXNetError, match="__dlpack__: the array is read-only"):
        data.__dlpack__()
    # Reading works everywhere, and a copy is the user's own.
    assert np.array_equal(mx.nd.from_dlpack(data.to_dlpack_for_read()).asnumpy(), data.asnumpy())
    mine = data.copy()
    assert mine.writable
    mine[:] = 0
    it.reset()
    for epoch in range(2):
        for b, batch in enumerate(it):
            np.testing.assert_array_equal(batch.data[0].asnumpy()[:, 0],
                                          images[4 * b:4 * b + 4] / 256.0)
            np.testing.assert_array_equal(batch.label[0].asnumpy(), labels[4 * b:4 * b + 4])
        it.reset()
    # Shuffled batches are copies, the caller's to change.
    assert next(iter(mx.io.MNISTIter(image=image, label=label, batch_size=4))).data[0].writable


def test_mnist_iter_bad_files(mx, tmp_path):
    import gzip
    image, label, _, _ = _write_idx(tmp_path, n=10)
    raw = open(image, "rb").read()
    cut = tmp_path / "cut"
    cut.write_bytes(raw[:40])
    with pytest.raises(mx.MXNetError, match="MNISTIter: '%s' is truncated: 10 images need 76 bytes, "
                       "the file ends at offset 40" % cut):
        mx.io.MNISTIter(image=str(cut), label=label, batch_size=2)
    short_gz = tmp_path / "short.gz"
    short_gz.write_bytes(gzip.compress(raw)[:-30])
    with pytest.raises(mx.MXNetError, match="MNISTIter: cannot read '%s' at offset" % short_gz):
        mx.io.MNISTIter(image=str(short_gz), label=label, batch_size=2)
    with pytest.raises(mx.MXNetError, match="MNISTIter: '%s' is not an IDX file of images: magic "
                       "0x00000801 at offset 0, expected 0x00000803" % label):
        mx.io.MNISTIter(image=label, label=label)
    (tmp_path / "other").mkdir()
    _, other_label, _, _ = _write_idx(tmp_path / "other", n=12)
    with pytest.raises(mx.MXNetError, match="has 10 images but '%s' has 12 labels" % other_label):
        mx.io.MNISTIter(image=image, label=other_label)
    with pytest.raises(mx.MXNetError, match="MNISTIter: batch_size 12 is larger than the 10 examples"):
        mx.io.MNISTIter(image=image, label=label, batch_size=12)
    with pytest.raises(TypeError, match="MNISTIter takes keyword arguments only"):
        mx.io.MNISTIter(image)


CSV_READ = """
import json, sys
data, label = sys.argv[1], sys.argv[2]
out = []
for kw in [dict(data_csv=data, data_shape=(2,), label_csv=label, batch_size=3),
           dict(data_csv=data, data_shape=(1, 2), label_csv=label, batch_size=4),
           dict(data_csv=data, data_shape=(2,), batch_size=4, round_batch=False)]:
    it = mx.io.CSVIter(**kw)
    epochs = []
    for _ in range(3):
        # With round_batch=False MXNet leaves the padding rows unspecified: compare the others.
        epochs.append([[b.data[0].asnumpy()[:len(b.data[0]) - b.pad].tolist(), b.label[0].asnumpy().tolist(),
                        b.pad] for b in it])
        it.reset()
    out.append([[(d.name, list(d.shape)) for d in it.provide_data + it.provide_label], epochs])
print(json.dumps(out))
"""


def test_csv_iter_matches_mxnet(mx, tmp_path):
    data, label = tmp_path / "d.csv", tmp_path / "l.csv"
    np.savetxt(data, np.arange(20).reshape(10, 2) * 0.5, delimiter=",", fmt="%g")
    np.savetxt(label, np.arange(10), delimiter=",", fmt="%g")
    argv = [str(data), str(label)]
    want = run_mxnet_script(CSV_READ, argv)
    assert run_here(mx, CSV_READ, argv) == want


def test_csv_iter_labels_and_errors(mx, tmp_path):
    data, label = tmp_path / "d.csv", tmp_path / "l.csv"
    np.savetxt(data, np.arange(12).reshape(4, 3), delimiter=",", fmt="%g")
    np.savetxt(label, np.arange(8).reshape(4, 2), delimiter=",", fmt="%g")
    it = mx.io.CSVIter(data_csv=str(data), data_shape=(3,), label_csv=str(label), label_shape=(2,),
                       batch_size=2, data_name="x", label_name="y")
    assert [(d.name, d.shape) for d in it.provide_data + it.provide_label] == [("x", (2, 3)), ("y", (2, 2))]
    batch = it.next()
    np.testing.assert_array_equal(batch.label[0].asnumpy(), [[0, 1], [2, 3]])
    short = tmp_path / "short.csv"
    np.savetxt(short, np.arange(3), delimiter=",", fmt="%g")
    with pytest.raises(mx.MXNetError, match="CSVIter: label_csv '%s' has 3 rows but data_csv '%s' has 4"
                       % (short, data)):
        mx.io.CSVIter(data_csv=str(data), data_shape=(3,), label_csv=str(short), batch_size=2)
    with pytest.raises(mx.MXNetError, match="CSVIter: argument 'batch_size' is required"):
        mx.io.CSVIter(data_csv=str(data), data_shape=(3,))


def test_csv_iter_integer_dtypes_are_exact_and_bad_values_are_named(mx, tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("16777217,-3\n2147483647,7.9\n")
    for dtype, width in (("int32", np.int32), ("int64", np.int64)):
        it = mx.io.CSVIter(data_csv=str(data), data_shape=(2,), batch_size=2, dtype=dtype)
        assert [d.dtype for d in it.provide_data + it.provide_label] == [width, width]
        batch = it.next()
        # Exact past float32's 2**24, and a fractional part dropped, as MXNet's parser does.
        np.testing.assert_array_equal(batch.data[0].asnumpy(), np.array([[16777217, -3], [2147483647, 7]], width))
        assert batch.label[0].dtype == width
    big = tmp_path / "big.csv"
    big.write_text("2147483648,1\n")
    with pytest.raises(mx.MXNetError, match="CSVIter: data_csv '%s' line 1 field 1: '2147483648' is not an int32" % big):
        mx.io.CSVIter(data_csv=str(big), data_shape=(2,), batch_size=1, dtype="int32")
    with pytest.raises(mx.MXNetError, match="CSVIter: argument 'dtype' is 'float64', expected float32, int32 or int64"):
        mx.io.CSVIter(data_csv=str(data), data_shape=(2,), batch_size=1, dtype="float64")


UNKNOWN_ARGUMENTS = """
import mxplug as mx
for _ in range(2):
    it = mx.io.CSVIter(data_csv=%r, data_shape=(2,), batch_size=1, preprocess_threads=4, shuffel=True)
print(it.next().data[0].asnumpy().tolist())
"""


def test_iterators_ignore_arguments_they_do_not_take_and_say_so_once(tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("1,2\n")
    p = run_python(UNKNOWN_ARGUMENTS % str(data))
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[[1.0, 2.0]]"
    lines = [l for l in p.stderr.splitlines() if "ignoring argument" in l]
    assert sorted(lines) == [
        "[mxplug] CSVIter: ignoring argument '%s', which it does not take (it takes data_csv, data_shape, "
        "label_csv, label_shape, batch_size, round_batch, prefetch_buffer, num_parts, part_index, dtype)" % name
        for name in ("preprocess_threads", "shuffel")], p.stderr
