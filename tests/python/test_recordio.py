"""mx.recordio and ImageRecordIter against MXNet 1.9.1: files written by either are read by the
other byte for byte, images decode to MXNet's pixels, the iterator gives MXNet's batches, and
broken files and images raise errors naming the file and the offset."""
import json
import pickle
import re
import struct

import numpy as np
import pytest

from conftest import run_here, run_mxnet, run_mxnet_script

MAGIC = struct.pack("<I", 0xCED7230A)

# Records that exercise the format: empty, unaligned lengths, the magic at aligned positions
# (split into parts), twice in a row, at the end, and unaligned (not split).
RECORDS = [b"", b"a", b"abcd", b"hello", MAGIC, b"xy" + MAGIC + b"z", b"abcd" + MAGIC + b"efgh",
           MAGIC + MAGIC + b"tail", b"1234" + MAGIC, b"x" + MAGIC + b"yyy",
           np.random.RandomState(0).bytes(100003)]


def write_records(mx, path, records, idx_path=None):
    if idx_path:
        rec = mx.recordio.MXIndexedRecordIO(str(idx_path), str(path), "w")
        offsets = []
        for i, r in enumerate(records):
            offsets.append(rec.tell())
            rec.write_idx(i, r)
    else:
        rec = mx.recordio.MXRecordIO(str(path), "w")
        for r in records:
            rec.write(r)
        offsets = None
    rec.close()
    return offsets


def test_records_are_mxnets_byte_for_byte(mx, tmp_path):
    ours, theirs = tmp_path / "ours.rec", tmp_path / "theirs.rec"
    write_records(mx, ours, RECORDS, tmp_path / "ours.idx")
    (tmp_path / "records.pkl").write_bytes(pickle.dumps(RECORDS))
    run_mxnet("""
import mxnet as mx, pickle
records = pickle.load(open(%r, 'rb'))
rec = mx.recordio.MXIndexedRecordIO(%r, %r, 'w')
for i, r in enumerate(records):
    rec.write_idx(i, r)
rec.close()
reader = mx.recordio.MXRecordIO(%r, 'r')
got = []
while True:
    r = reader.read()
    if r is None:
        break
    got.append(r)
assert got == records, 'MXNet reads our file differently'
""" % (str(tmp_path / "records.pkl"), str(tmp_path / "theirs.idx"), str(theirs), str(ours)))
    assert ours.read_bytes() == theirs.read_bytes()
    assert (tmp_path / "ours.idx").read_text() == (tmp_path / "theirs.idx").read_text()
    reader = mx.recordio.MXRecordIO(str(theirs), "r")
    assert [reader.read() for _ in RECORDS] == RECORDS
    assert reader.read() is None
    reader.reset()
    assert reader.read() == RECORDS[0]


def test_indexed_records_read_by_key(mx, tmp_path):
    offsets = write_records(mx, tmp_path / "t.rec", RECORDS, tmp_path / "t.idx")
    assert offsets[:4] == [0, 8, 20, 32]  # 8-byte header, payload padded to 4 bytes
    rec = mx.recordio.MXIndexedRecordIO(str(tmp_path / "t.idx"), str(tmp_path / "t.rec"), "r")
    assert rec.keys == list(range(len(RECORDS)))
    for key in np.random.RandomState(1).permutation(len(RECORDS)):
        assert rec.read_idx(int(key)) == RECORDS[key]
    rec.close()
    named = mx.recordio.MXIndexedRecordIO(str(tmp_path / "s.idx"), str(tmp_path / "s.rec"), "w", key_type=str)
    named.write_idx("cat", b"meow")
    named.write_idx("dog", b"woof")
    named.close()
    named = mx.recordio.MXIndexedRecordIO(str(tmp_path / "s.idx"), str(tmp_path / "s.rec"), "r", key_type=str)
    assert (named.read_idx("dog"), named.read_idx("cat")) == (b"woof", b"meow")


def test_pack_and_unpack_match_mxnet(mx):
    headers = [(0, 3.0, 17, 0), (0, [1.5, -2.0, 7.0], 2 ** 40 + 3, 5), (9, 0.25, 0, 0)]
    payload = b"\x00\x01payload\xff"
    ours = [mx.recordio.pack(h, payload) for h in headers]
    theirs = json.loads(run_mxnet("""
import mxnet as mx, json
print(json.dumps([list(mx.recordio.pack(h, %r)) for h in %r]))
""" % (payload, headers)).strip().splitlines()[-1])
    assert [list(b) for b in ours] == theirs
    header, rest = mx.recordio.unpack(ours[1])
    assert rest == payload and header.flag == 3 and header.id == 2 ** 40 + 3 and header.id2 == 5
    np.testing.assert_array_equal(header.label, np.float32([1.5, -2.0, 7.0]))
    header, rest = mx.recordio.unpack(ours[2])
    assert (header.flag, header.label, rest) == (0, 0.25, payload)  # a number label: flag 0


def smooth_image(height, width, seed):
    y, x = np.mgrid[0:height, 0:width]
    rng = np.random.RandomState(seed)
    a, b, c = rng.uniform(1, 6, 3)
    return np.stack([(x * a + seed * 20) % 256, (y * b) % 256, ((x + y) * c) % 256], -1).astype(np.uint8)


def mxnet_decode(tmp_path, records, flag):
    """MXNet's own decoder (OpenCV inside libmxnet) on the image bytes of each packed record,
    in BGR order as cv2.imdecode gives them."""
    path = tmp_path / "records.npy"
    np.save(path, np.array(records, dtype=object), allow_pickle=True)
    run_mxnet("""
import mxnet as mx, numpy as np
records = np.load(%r, allow_pickle=True)
out = [mx.image.imdecode(mx.recordio.unpack(r)[1], flag=%d, to_rgb=0).asnumpy() for r in records]
np.save(%r, np.array(out + [None], dtype=object)[:-1], allow_pickle=True)  # a list of arrays
""" % (str(path), flag, str(tmp_path / "decoded.npy")))
    return list(np.load(tmp_path / "decoded.npy", allow_pickle=True))


def test_pack_img_decodes_to_mxnets_pixels(mx, tmp_path):
    color = smooth_image(37, 45, 1)                       # BGR, as cv2 holds images
    gray = smooth_image(29, 31, 2)[:, :, 0]
    jpeg = mx.recordio.pack_img((0, 1.0, 1, 0), color, quality=95)
    jpeg_gray = mx.recordio.pack_img((0, 2.0, 2, 0), gray, quality=90, img_fmt=".jpeg")
    png = mx.recordio.pack_img((0, 3.0, 3, 0), color, quality=3, img_fmt=".png")
    theirs = mxnet_decode(tmp_path, [jpeg, png], 1)
    header, ours = mx.recordio.unpack_img(jpeg)
    assert header.label == 1.0 and ours.shape == (37, 45, 3)
    np.testing.assert_array_equal(ours, theirs[0])  # both libjpeg-turbo, accurate DCT
    assert np.abs(ours.astype(int) - color).mean() < 3
    np.testing.assert_array_equal(mx.recordio.unpack_img(png)[1], color)  # lossless
    np.testing.assert_array_equal(theirs[1], color)
    # As stored (-1): a gray JPEG stays (height, width); 0 makes a color one gray, as MXNet's.
    assert mx.recordio.unpack_img(jpeg_gray)[1].shape == (29, 31)
    assert np.abs(mx.recordio.unpack_img(jpeg_gray)[1].astype(int) - gray).mean() < 3
    np.testing.assert_array_equal(mx.recordio.unpack_img(jpeg, iscolor=0)[1],
                                  mxnet_decode(tmp_path, [jpeg], 0)[0][:, :, 0])
    assert mx.recordio.unpack_img(jpeg_gray, iscolor=1)[1].shape == (29, 31, 3)


def test_recordio_errors_name_file_and_offset(mx, tmp_path):
    with pytest.raises(mx.MXNetError, match=r"cannot open RecordIO file '.*missing.rec'"):
        mx.recordio.MXRecordIO(str(tmp_path / "missing.rec"), "r")
    with pytest.raises(ValueError, match="Invalid flag a"):
        mx.recordio.MXRecordIO(str(tmp_path / "x.rec"), "a")
    (tmp_path / "text.rec").write_bytes(b"this is not a record file")
    reader = mx.recordio.MXRecordIO(str(tmp_path / "text.rec"), "r")
    with pytest.raises(mx.MXNetError, match=r"RecordIO file '.*text.rec' has no record at offset 0: it holds "
                                            r"0x73696874 where a record starts with the magic 0xced7230a"):
        reader.read()
    offsets = write_records(mx, tmp_path / "t.rec", RECORDS, tmp_path / "t.idx")
    data = (tmp_path / "t.rec").read_bytes()
    (tmp_path / "cut.rec").write_bytes(data[:offsets[-1] + 100])
    reader = mx.recordio.MXRecordIO(str(tmp_path / "cut.rec"), "r")
    assert [reader.read() for _ in RECORDS[:-1]] == RECORDS[:-1]
    with pytest.raises(mx.MXNetError, match=r"RecordIO file '.*cut.rec' is cut short: the record at offset %d "
                                            r"needs bytes up to offset %d, the file ends at offset %d"
                                            % (offsets[-1], offsets[-1] + 8 + 100004, offsets[-1] + 100)):
        reader.read()
    reader.reset()  # nothing was lost: the good records read again
    assert reader.read() == RECORDS[0]
    # A part that cannot follow: the second part of a split record at a record's start.
    split = offsets[RECORDS.index(MAGIC + MAGIC + b"tail")]
    reader = mx.recordio.MXIndexedRecordIO(str(tmp_path / "t.idx"), str(tmp_path / "t.rec"), "r")
    reader.handle.seek(split + 8)
    with pytest.raises(mx.MXNetError, match=r"malformed: the record at offset %d has a part with flag 2" % (split + 8)):
        reader.read()
    with pytest.raises(mx.MXNetError, match=r"cannot encode an image as '.bmp': the formats are '.jpg' and '.png'"):
        mx.recordio.pack_img((0, 1, 0, 0), smooth_image(4, 4, 0), img_fmt=".bmp")
    with pytest.raises(mx.MXNetError, match=r"not an image: neither a JPEG nor a PNG"):
        mx.recordio.unpack_img(mx.recordio.pack((0, 1, 0, 0), b"garbage bytes"))


def test_records_stay_with_the_process_that_opened_them(mx, tmp_path):
    """MXNet's rule for forked processes: writing, or reading in order, from another process
    raises (naming the file); an indexed reader's read_idx reopens the file there."""
    import multiprocessing
    write_records(mx, tmp_path / "r.rec", RECORDS[:3], tmp_path / "r.idx")
    reader = mx.recordio.MXIndexedRecordIO(str(tmp_path / "r.idx"), str(tmp_path / "r.rec"), "r")
    assert reader.read() == RECORDS[0]
    writer = mx.recordio.MXRecordIO(str(tmp_path / "w.rec"), "w")

    def child(queue):
        for attempt in (lambda: writer.write(b"from the child"), reader.read, lambda: reader.read_idx(2)):
            try:
                queue.put(("ok", attempt()))
            except RuntimeError as e:
                queue.put(("error", str(e)))

    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    p = ctx.Process(target=child, args=(queue,))
    p.start()
    (write_kind, write_error), (read_kind, read_error), by_key = [queue.get(timeout=60) for _ in range(3)]
    p.join(60)
    assert write_kind == read_kind == "error"
    assert re.match(r"Forbidden operation in multiple processes: '.*w.rec' was opened by process %d"
                    % writer.pid, write_error), write_error
    assert re.match(r"Forbidden operation in multiple processes: '.*r.rec'", read_error), read_error
    assert by_key == ("ok", RECORDS[2])
    assert reader.read() == RECORDS[1]  # the parent's reader kept its place
    writer.write(b"parent")
    writer.close()
    assert mx.recordio.MXRecordIO(str(tmp_path / "w.rec"), "r").read() == b"parent"


# ---- ImageRecordIter ----

def write_image_records(mx, tmp_path, n=10, label_width=1, fmt=".jpg", sizes=None):
    """Packs n color images of varied sizes (at least 30x30) with labels i (or [i, -i]) and ids
    100 + i into img.rec/img.idx; returns them as unpack_img decodes them, in RGB order."""
    rng = np.random.RandomState(0)
    rec = mx.recordio.MXIndexedRecordIO(str(tmp_path / "img.idx"), str(tmp_path / "img.rec"), "w")
    for i in range(n):
        h, w = sizes[i] if sizes else (rng.randint(30, 40), rng.randint(30, 40))
        img = smooth_image(h, w, i)
        label = float(i) if label_width == 1 else [float(i), -float(i)]
        rec.write_idx(i, mx.recordio.pack_img((0, label, 100 + i, 0), img, img_fmt=fmt))
    rec.close()
    reader = mx.recordio.MXIndexedRecordIO(str(tmp_path / "img.idx"), str(tmp_path / "img.rec"), "r")
    return [mx.recordio.unpack_img(reader.read_idx(i))[1][:, :, ::-1] for i in range(n)]  # RGB


# Two epochs of batches (data, label, pad), run by MXNet 1.9.1 and here alike. The first epoch
# starts without reset: MXNet 1.9.1's iterator skips batches when reset right after it is made.
IMAGE_RECORD_READ = """
import json, sys
it = mx.io.ImageRecordIter(**json.loads(sys.argv[1]))
out = []
for epoch in range(2):
    if epoch:
        it.reset()
    out.extend([b.data[0].asnumpy().tolist(), b.label[0].asnumpy().tolist(), b.pad] for b in it)
print(json.dumps(out))
"""


def read_both(mx, **kw):
    """(ours, MXNet's) batches of IMAGE_RECORD_READ, as arrays."""
    def arrays(batches):
        return [(np.float32(data), np.float32(label), pad) for data, label, pad in batches]
    argv = [json.dumps(kw)]
    return arrays(run_here(mx, IMAGE_RECORD_READ, argv)), arrays(run_mxnet_script(IMAGE_RECORD_READ, argv))


@pytest.mark.parametrize("extra, tolerance", [
    ({}, 0),
    ({"mean_r": 10, "mean_g": 20, "mean_b": 30, "std_r": 2, "std_g": 3, "std_b": 4, "scale": 0.5}, 0),
    ({"data_shape": (1, 28, 28), "mean_r": 100, "scale": 1 / 255.0}, 0),
    ({"resize": 24, "data_shape": (3, 20, 20)}, 1.0),  # bilinear rounding differs from OpenCV's by 1
])
def test_image_record_iter_gives_mxnets_batches(mx, tmp_path, extra, tolerance):
    write_image_records(mx, tmp_path)
    kw = dict(path_imgrec=str(tmp_path / "img.rec"), data_shape=(3, 28, 28), batch_size=4)
    kw.update(extra)
    ours, theirs = read_both(mx, **kw)
    # 10 records in batches of 4: 3 batches, the last padded with records 0 and 1; round_batch
    # makes the second epoch start at record 2.
    assert [list(b[1]) for b in ours] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1], [2, 3, 4, 5], [6, 7, 8, 9]]
    assert [b[2] for b in ours] == [0, 0, 2, 0, 0]
    assert len(theirs) == len(ours)
    for (data, label, pad), (want_data, want_label, want_pad) in zip(ours, theirs):
        assert data.shape == want_data.shape and pad == want_pad
        np.testing.assert_array_equal(label, want_label)
        assert np.abs(data - want_data).max() <= tolerance
    batches = list(mx.io.ImageRecordIter(**kw))
    assert list(batches[2].index) == [108, 109, 100, 101]  # the records' ids (MXNet 1.9.1: zeros)


def test_image_record_iter_labels_shards_and_shuffle(mx, tmp_path):
    images = write_image_records(mx, tmp_path, n=11, label_width=2)
    kw = dict(path_imgrec=str(tmp_path / "img.rec"), data_shape=(3, 30, 30), batch_size=2, label_width=2)
    ours, theirs = read_both(mx, **kw)
    # 11 records: 6 batches of 2, the last padded with record 0; round_batch then starts the
    # second epoch at record 1, which ends with 5 full batches.
    assert len(ours) == len(theirs) == 11
    for (data, label, pad), (want_data, want_label, want_pad) in zip(ours, theirs):
        assert pad == want_pad
        np.testing.assert_array_equal(label, want_label)
        np.testing.assert_array_equal(data, want_data)

    def center(img):  # the serial oracle: a centre crop in (channel, height, width)
        y, x = (img.shape[0] - 30) // 2, (img.shape[1] - 30) // 2
        return img[y:y + 30, x:x + 30].transpose(2, 0, 1).astype(np.float32)

    seen = []
    for part in range(3):  # contiguous slices of 3, 4 and 4 records
        it = mx.io.ImageRecordIter(num_parts=3, part_index=part, round_batch=False, **kw)
        for b in it:
            for row in range(2 - b.pad):
                i = int(b.label[0].asnumpy()[row, 0])
                np.testing.assert_array_equal(b.label[0].asnumpy()[row], [i, -i])
                np.testing.assert_array_equal(b.data[0].asnumpy()[row], center(images[i]))
                seen.append(i)
    assert seen == list(range(11))
    it = mx.io.ImageRecordIter(shuffle=True, seed=3, round_batch=False, preprocess_threads=3, **kw)
    orders = []
    for _ in range(2):
        it.reset()
        orders.append([int(l) for b in it for l in b.label[0].asnumpy()[:2 - b.pad, 0]])
    assert sorted(orders[0]) == sorted(orders[1]) == list(range(11)) and orders[0] != orders[1]


def test_image_record_iter_random_crop_and_mirror(mx, tmp_path):
    images = write_image_records(mx, tmp_path, n=4, fmt=".png", sizes=[(20, 24)] * 4)
    it = mx.io.ImageRecordIter(path_imgrec=str(tmp_path / "img.rec"), data_shape=(3, 16, 16), batch_size=4,
                               rand_crop=True, rand_mirror=True)
    windows, mirrored = set(), set()
    for _ in range(10):
        it.reset()
        batch = next(iter(it))
        for row, label in enumerate(batch.label[0].asnumpy()):
            out = batch.data[0].asnumpy()[row].transpose(1, 2, 0)
            img = images[int(label)].astype(np.float32)
            found = [(y, x, flip) for y in range(5) for x in range(9) for flip in (False, True)
                     if np.array_equal((img[y:y + 16, x:x + 16, :])[:, ::-1 if flip else 1], out)]
            assert len(found) >= 1, "an output is no crop of its image"
            windows.add(found[0][:2])
            mirrored.add(found[0][2])
    assert len(windows) > 5 and mirrored == {False, True}


def test_image_record_iter_errors_name_file_and_offset(mx, tmp_path):
    write_image_records(mx, tmp_path, n=6)
    rec = mx.recordio.MXIndexedRecordIO(str(tmp_path / "bad.idx"), str(tmp_path / "bad.rec"), "w")
    good = mx.recordio.pack_img((0, 0.0, 0, 0), smooth_image(30, 30, 0))
    for i in range(6):
        rec.write_idx(i, good if i != 4 else mx.recordio.pack((0, 4.0, 4, 0), b"\xff\xd8\xff not really a jpeg"))
    rec.close()
    bad_offset = mx.recordio.MXIndexedRecordIO(str(tmp_path / "bad.idx"), str(tmp_path / "bad.rec"), "r").idx[4]
    it = mx.io.ImageRecordIter(path_imgrec=str(tmp_path / "bad.rec"), data_shape=(3, 28, 28), batch_size=2)
    for _ in range(2):  # the error reaches the caller each epoch; nothing hangs
        it.reset()
        assert it.iter_next() and it.iter_next()
        with pytest.raises(mx.MXNetError, match=r"ImageRecordIter: the record at offset %d of '.*bad.rec': "
                                                r"the JPEG does not decode" % bad_offset):
            it.iter_next()
    # With the index file: the same records by their offsets.
    it = mx.io.ImageRecordIter(path_imgrec=str(tmp_path / "img.rec"), path_imgidx=str(tmp_path / "img.idx"),
                               data_shape=(3, 28, 28), batch_size=3)
    assert [list(b.label[0].asnumpy()) for b in it] == [[0, 1, 2], [3, 4, 5]]
    data = (tmp_path / "img.rec").read_bytes()
    (tmp_path / "cut.rec").write_bytes(data[:-10])
    with pytest.raises(mx.MXNetError, match=r"RecordIO file '.*cut.rec' is cut short: the record at offset"):
        mx.io.ImageRecordIter(path_imgrec=str(tmp_path / "cut.rec"), data_shape=(3, 28, 28), batch_size=2)
    with pytest.raises(mx.MXNetError, match=r"the record at offset 0 of '.*img.rec' is an image of 3\dx3\d, "
                                            r"smaller than data_shape \(3, 48, 48\)"):
        next(iter(mx.io.ImageRecordIter(path_imgrec=str(tmp_path / "img.rec"), data_shape=(3, 48, 48),
                                        batch_size=2)))
    with pytest.raises(mx.MXNetError, match=r"the record at offset 0 of '.*img.rec' has 1 label but label_width is 3"):
        next(iter(mx.io.ImageRecordIter(path_imgrec=str(tmp_path / "img.rec"), data_shape=(3, 28, 28),
                                        batch_size=2, label_width=3)))
    with pytest.raises(mx.MXNetError, match=r"ImageRecordIter: argument 'data_shape' is '\(28, 28\)', expected "
                                            r"\(channels, height, width\)"):
        mx.io.ImageRecordIter(path_imgrec=str(tmp_path / "img.rec"), data_shape=(28, 28), batch_size=2)
    with pytest.raises(mx.MXNetError, match=r"ImageRecordIter: argument 'path_imgrec' is required"):
        mx.io.ImageRecordIter(data_shape=(3, 28, 28), batch_size=2)
    with pytest.raises(mx.MXNetError, match=r"ImageRecordIter: argument 'batch_size' is required"):
        mx.io.ImageRecordIter(path_imgrec=str(tmp_path / "img.rec"), data_shape=(3, 28, 28))
    # Records too short for the image-record header, or for the labels it announces.
    offsets = write_records(mx, tmp_path / "short.rec", [b"short", struct.pack("<IfQQ", 3, 0, 7, 0) + b"abcd"],
                            tmp_path / "short.idx")
    for key, width, message in ((0, 1, "has 5 bytes, fewer than the 24-byte image record header"),
                                (1, 3, r"has 28 bytes, fewer than its header and 3 labels need \(36\)")):
        where = r"the record at offset %d of '.*short.rec' " % offsets[key]
        with pytest.raises(mx.MXNetError, match=where + message):
            it = mx.io.ImageRecordIter(path_imgrec=str(tmp_path / "short.rec"), data_shape=(3, 28, 28),
                                       batch_size=1, label_width=width, num_parts=2, part_index=key)
            next(iter(it))
