"""mx.io.ImageDetRecordIter, the C++ detection iterator: the same script under MXNet 1.9.1 and
mxplug over the same records (written here by mx.recordio), and its random augmentations checked
by what they must keep: each box still frames its object's pixels."""
import json

import numpy as np
import pytest

from conftest import run_here, run_mxnet_script


def write_records(mx, folder, boxes_of, sizes, list_labels=None):
    """Records of random images with detection labels [2, 5, objects...]; an image list with
    other labels beside them when `list_labels` is given."""
    rng = np.random.RandomState(0)
    rec = mx.recordio.MXIndexedRecordIO(str(folder / "d.idx"), str(folder / "d.rec"), "w")
    for i, ((h, w), boxes) in enumerate(zip(sizes, boxes_of)):
        img = rng.randint(0, 255, (h, w, 3)).astype(np.uint8)
        label = np.array([2, 5] + [v for b in boxes for v in b], dtype=np.float32)
        rec.write_idx(i, mx.recordio.pack_img(mx.recordio.IRHeader(0, label, i, 0), img, img_fmt=".png"))
    rec.close()
    if list_labels:
        with open(folder / "d.lst", "w") as f:
            for i, label in enumerate(list_labels):
                f.write("%d\t%s\t%d.png\n" % (i, "\t".join("%g" % v for v in label), i))


BOXES = [[[0, 0.0, 0.2, 0.5, 0.9]],
         [[0, 0.0, 0.2, 0.5, 0.9], [1, 0.1, 0.2, 0.6, 0.9]],
         [[0, 0.0, 0.2, 0.5, 0.9], [1, 0.1, 0.2, 0.6, 0.9], [2, 0.2, 0.2, 0.7, 0.9]],
         [[3, 0.3, 0.1, 0.9, 0.5], [1, 0.5, 0.5, 0.4, 0.9]],  # the second has no area: dropped
         [[0, 0.25, 0.25, 0.75, 0.75]]]
SIZES = [(20, 30), (23, 28), (26, 26), (29, 24), (32, 22)]

SCRIPT = """
import json, sys
folder, kwargs = sys.argv[1], json.loads(sys.argv[2])
kwargs['data_shape'] = tuple(kwargs['data_shape'])
try:
    it = mx.io.ImageDetRecordIter(path_imgrec=folder + '/d.rec', batch_size=2, verbose=False, **kwargs)
    out = {'provide': [[d.name, list(d.shape)] for d in it.provide_data + it.provide_label], 'batches': []}
    for epoch in range(2):
        if epoch:  # not before the first: MXNet's prefetcher may have read the epoch already, and
            it.reset()  # its round_batch then starts the next epoch where the last one ended
        for b in it:
            out['batches'].append([b.data[0].asnumpy().tolist(), b.label[0].asnumpy().tolist(), b.pad])
except Exception as e:
    out = {'error': type(e).__name__}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def records(mx, tmp_path_factory):
    folder = tmp_path_factory.mktemp("det")
    write_records(mx, folder, BOXES, SIZES,
                  list_labels=[[2, 6, 0, 0.1, 0.1, 0.4, 0.4, 7]] * 2 + [[2, 6, 1, 0.5, 0.5, 0.9, 0.8, 3]] * 3)
    return folder


@pytest.mark.parametrize("kwargs", [
    {"data_shape": [3, 16, 16]},
    {"data_shape": [3, 12, 20], "inter_method": 2, "resize": 10},
    {"data_shape": [3, 16, 16], "mean_r": 10, "mean_g": 20, "mean_b": 30, "std_r": 2, "std_b": 4, "scale": 0.5},
    {"data_shape": [3, 16, 16], "rand_mirror_prob": 1.0, "label_pad_width": 20, "label_pad_value": -2},
    {"data_shape": [1, 16, 16], "round_batch": False},
    {"data_shape": [3, 40, 40], "resize_mode": "shrink"},
    {"data_shape": [3, 40, 40], "resize_mode": "fit", "inter_method": 0},
    {"data_shape": [3, 16, 16], "path_imglist": "LIST"},
    {"data_shape": [3, 16, 16], "label_pad_width": 5},
    {"data_shape": [3, 16, 16], "label_width": 7},
], ids=lambda kw: ",".join("%s=%s" % (k, v) for k, v in kw.items() if k != "data_shape") or "default")
def test_det_record_iter_gives_mxnets_batches(mx, records, kwargs):
    """Shapes, labels (the image's size, the label's length, the label after mirroring, the
    padding) and pads equal MXNet's; pixels within 1 (MXNet resizes 8-bit in fixed point), where
    the image covers the row ('shrink' and 'fit' leave the rest as MXNet's buffer held it)."""
    if kwargs.get("path_imglist") == "LIST":
        kwargs = dict(kwargs, path_imglist=str(records / "d.lst"))
    argv = [str(records), json.dumps(kwargs)]
    ours, theirs = run_here(mx, SCRIPT, argv), run_mxnet_script(SCRIPT, argv)
    assert ("error" in ours) == ("error" in theirs), (ours.get("error"), theirs.get("error"))
    if "error" in theirs:
        assert ours["error"] == theirs["error"] == "MXNetError"
        return
    assert ours["provide"] == theirs["provide"]
    assert len(ours["batches"]) == len(theirs["batches"]) >= 4
    # a pixel's step in the data; bicubic resizing twice may round apart twice
    step = kwargs.get("scale", 1.0) / min([kwargs.get("std_" + k) or 1.0 for k in "rgb"])
    step *= 2 if "resize" in kwargs else 1
    for (data, label, pad), (want_data, want_label, want_pad) in zip(ours["batches"], theirs["batches"]):
        assert pad == want_pad
        rows = 2 - pad  # MXNet's pad rows without round_batch hold what its buffer last held
        np.testing.assert_allclose(label[:rows], want_label[:rows], rtol=1e-6, atol=1e-6)
        data, want_data = np.array(data), np.array(want_data)
        for row, (c, h, w) in enumerate(np.array(label)[:rows, :3].astype(int)):
            got, want = data[row, :c, :h, :w], want_data[row, :c, :h, :w]
            assert np.abs(got - want).max() <= step + 1e-4, (row, np.abs(got - want).max())
            assert (data[row, :, h:, :] == 0).all() and (data[row, :, :, w:] == 0).all()


def framed_records(mx, folder):
    """Black images, each object a white rectangle exactly where its box says."""
    rng = np.random.RandomState(1)
    rec = mx.recordio.MXIndexedRecordIO(str(folder / "f.idx"), str(folder / "f.rec"), "w")
    for i in range(12):
        h, w = rng.randint(40, 80, size=2)
        img = np.zeros((h, w, 3), np.uint8)
        objects = []
        for k in range(rng.randint(1, 4)):
            x0, y0 = rng.randint(0, w - 12), rng.randint(0, h - 12)
            x1, y1 = x0 + rng.randint(8, min(30, w - x0) + 1), y0 + rng.randint(8, min(30, h - y0) + 1)
            img[y0:y1, x0:x1] = 255
            objects += [k, x0 / w, y0 / h, x1 / w, y1 / h]
        label = np.array([2, 5] + objects, np.float32)
        rec.write_idx(i, mx.recordio.pack_img(mx.recordio.IRHeader(0, label, i, 0), img, img_fmt=".png"))
    rec.close()
    return str(folder / "f.rec")


@pytest.mark.parametrize("kwargs", [
    {"rand_mirror_prob": 0.5},
    {"rand_pad_prob": 1.0, "max_pad_scale": 3.0, "fill_value": 0},
    {"rand_crop_prob": 1.0, "min_crop_scales": (0.3,), "max_crop_scales": (0.9,),
     "min_crop_aspect_ratios": (0.5,), "max_crop_aspect_ratios": (2.0,), "max_crop_trials": (50,)},
    {"rand_crop_prob": 1.0, "num_crop_sampler": 2, "min_crop_scales": (0.3, 0.6), "max_crop_scales": (0.5, 1.0),
     "crop_emit_mode": "overlap", "emit_overlap_thresh": 0.5, "rand_pad_prob": 0.5, "max_pad_scale": 2.0,
     "fill_value": 0, "rand_mirror_prob": 0.5},
], ids=["mirror", "pad", "crop", "samplers"])
def test_det_augmentations_keep_each_box_on_its_object(mx, tmp_path, kwargs):
    """After mirroring, padding and cropping (random, seeded by the batch), every box still
    frames white pixels and nothing white lies outside all boxes; the augmentations did happen
    (some labels differ from the unaugmented iterator's), and an iterator made alike repeats
    them."""
    path = framed_records(mx, tmp_path)

    def run(**kw):
        it = mx.io.ImageDetRecordIter(path_imgrec=path, data_shape=(3, 64, 64), batch_size=4, **kw)
        return [(b.data[0].asnumpy(), b.label[0].asnumpy()) for b in it]

    batches, plain = run(**kwargs), run()
    # A crop starts at a whole source pixel (MXNet truncates the box's corner), up to one source
    # pixel off its label's box: several output pixels once the crop is enlarged to 64.
    margin = 6 if "rand_crop_prob" in kwargs else 1
    for data, label in batches:
        for image, row in zip(data, label):
            objects = row[4 + 2:4 + int(row[3])].reshape(-1, 5)
            white = image[0] > 127
            covered = np.zeros_like(white)
            for _, x0, y0, x1, y1 in objects:
                r0, r1 = int(np.ceil(y0 * 64)), int(np.floor(y1 * 64))
                c0, c1 = int(np.ceil(x0 * 64)), int(np.floor(x1 * 64))
                inner = white[r0 + margin:r1 - margin, c0 + margin:c1 - margin]
                if inner.size:
                    assert inner.mean() > 0.95, (x0, y0, x1, y1, inner.mean())
                covered[max(r0 - 2, 0):r1 + 2, max(c0 - 2, 0):c1 + 2] = True
            if "rand_crop_prob" not in kwargs:  # a crop drops objects whose centre it leaves out
                assert not (white & ~covered).any()
    assert any(not np.array_equal(l, p) for (_, l), (_, p) in zip(batches, plain))
    for (d0, l0), (d1, l1) in zip(batches, run(**kwargs)):
        np.testing.assert_array_equal(l0, l1)
        np.testing.assert_array_equal(d0, d1)


def test_det_iter_errors_name_the_argument(mx, records):
    for kwargs, words in [({"aug_seq": "aug_default"}, "aug_seq"), ({"resize_mode": "stretch"}, "resize_mode"),
                          ({"num_crop_sampler": 2, "min_crop_scales": (0.1, 0.2, 0.3)}, "min_crop_scales"),
                          ({"max_crop_scales": (1.5,)}, "crop sampler 0"), ({"inter_method": 5}, "inter_method"),
                          ({"label_pad_width": 3}, "label_pad_width")]:
        with pytest.raises(mx.base.MXNetError, match=words):
            mx.io.ImageDetRecordIter(path_imgrec=str(records / "d.rec"), data_shape=(3, 8, 8), batch_size=2, **kwargs)
    bad_list = records / "bad.lst"
    bad_list.write_text("x1\t2\t5\t0\t0.1\t0.1\t0.4\t0.4\t0.png\n")
    with pytest.raises(mx.base.MXNetError, match="line 1 of .*bad.lst.*a whole-number index first"):
        mx.io.ImageDetRecordIter(path_imgrec=str(records / "d.rec"), path_imglist=str(bad_list), data_shape=(3, 8, 8),
                                 batch_size=2)
