"""ImageRecordIter's augmentation arguments against MXNet 1.9.1 (core/src/io/image_augment.cc,
Note [MXNet's augmenter, observed]): the same iterator run by both on the same records. What
draws no random number gives MXNet's batches; what does is held, on both, to the model of what
it does (a constant image shows the factor each draw applied), and repeats as MXNet's does."""
import json

import numpy as np
import pytest

from conftest import run_here, run_mxnet_script
from test_recordio import IMAGE_RECORD_READ, read_both, write_image_records


@pytest.mark.parametrize("extra, tolerance", [
    ({"mirror": True}, 0),
    ({"pad": 3, "fill_value": 7, "data_shape": (3, 34, 34)}, 0),
    ({"rotate": 30}, 0),
    ({"rotate": 15, "max_img_size": 30, "min_img_size": 30, "fill_value": 0, "data_shape": (3, 30, 30)}, 0),
    ({"max_img_size": 24, "data_shape": (3, 24, 24)}, 0),
    ({"min_img_size": 44, "data_shape": (3, 44, 44)}, 0),
    # a window resized to data_shape: the bilinear rounding differs from OpenCV's by 1
    ({"min_crop_size": 24, "max_crop_size": 24, "data_shape": (3, 16, 16)}, 1.0),
    ({"random_resized_crop": True}, 0),  # without an area or ratio range: the usual crop
    # random_h/s/l of 1 draw shifts that truncate to 0: OpenCV's HLS round trip, exactly
    ({"random_h": 1, "random_s": 1, "random_l": 1}, 0),
    ({"max_random_contrast": 0, "max_random_illumination": 0, "seed_aug": 3}, 0),
])
def test_augmentations_that_draw_nothing_give_mxnets_batches(mx, tmp_path, extra, tolerance):
    write_image_records(mx, tmp_path)
    kw = dict(path_imgrec=str(tmp_path / "img.rec"), data_shape=(3, 28, 28), batch_size=4)
    kw.update(extra)
    ours, theirs = read_both(mx, **kw)
    assert len(ours) == len(theirs) == 5
    for (data, label, pad), (want_data, want_label, want_pad) in zip(ours, theirs):
        assert data.shape == want_data.shape and pad == want_pad
        np.testing.assert_array_equal(label, want_label)
        assert np.abs(data - want_data).max() <= tolerance


@pytest.mark.parametrize("extra", [{}, {"std_r": 2, "scale": 0.5, "mean_r": 50},
                                   {"mirror": True, "pad": 2, "fill_value": 0}])
def test_mean_image_is_created_as_mxnet_creates_it_and_read_both_ways(mx, tmp_path, extra):
    write_image_records(mx, tmp_path)
    kw = dict(path_imgrec=str(tmp_path / "img.rec"), data_shape=(3, 28, 28), batch_size=4, **extra)
    ours = run_here(mx, IMAGE_RECORD_READ, [json.dumps(dict(kw, mean_img=str(tmp_path / "ours.nd")))])
    theirs = run_mxnet_script(IMAGE_RECORD_READ, [json.dumps(dict(kw, mean_img=str(tmp_path / "theirs.nd")))])
    assert (tmp_path / "ours.nd").read_bytes() == (tmp_path / "theirs.nd").read_bytes()
    for (data, _, _), (want, _, _) in zip(ours, theirs):
        np.testing.assert_allclose(np.float32(data), np.float32(want), rtol=0, atol=1e-4)
    # MXNet's file read here gives MXNet's batches, and the file is not made again.
    again = run_here(mx, IMAGE_RECORD_READ, [json.dumps(dict(kw, mean_img=str(tmp_path / "theirs.nd")))])
    for (data, _, _), (want, _, _) in zip(again, theirs):
        np.testing.assert_allclose(np.float32(data), np.float32(want), rtol=0, atol=1e-4)
    saved = mx.nd.load(str(tmp_path / "ours.nd"))
    assert list(saved) == ["mean_img"] and saved["mean_img"].shape == (3, 28, 28)


def test_a_mean_image_of_another_shape_is_refused(mx, tmp_path):
    write_image_records(mx, tmp_path)
    mx.nd.save(str(tmp_path / "m.nd"), {"mean_img": mx.nd.zeros((3, 20, 20))})
    with pytest.raises(mx.MXNetError, match=r"the mean image '.*m.nd' holds 1 arrays, the first of shape "
                                            r"\(3, 20, 20\); expected one float32 array of data_shape \(3, 28, 28\)"):
        mx.io.ImageRecordIter(path_imgrec=str(tmp_path / "img.rec"), data_shape=(3, 28, 28), batch_size=4,
                              mean_img=str(tmp_path / "m.nd"))


RANDOM = dict(rand_crop=True, rand_mirror=True, max_rotate_angle=20, max_shear_ratio=0.1, max_random_scale=1.2,
              min_random_scale=0.9, max_aspect_ratio=0.2, brightness=0.3, contrast=0.3, saturation=0.3, pca_noise=0.1,
              random_h=10, random_s=10, random_l=10, max_random_contrast=0.2, max_random_illumination=5,
              data_shape=(3, 20, 20))


def test_random_augmentations_repeat_run_to_run_and_follow_seed_aug(mx, tmp_path):
    """MXNet draws the same numbers in every run of a script, and others with another seed_aug;
    the two epochs of a run differ. Both are held to that; the draws themselves differ."""
    write_image_records(mx, tmp_path)
    kw = dict(path_imgrec=str(tmp_path / "img.rec"), batch_size=4, preprocess_threads=2, **RANDOM)

    def runs(run, **more):
        return [np.float32([b[0] for b in run(IMAGE_RECORD_READ, [json.dumps(dict(kw, **more))])])
                for _ in range(2)]
    here = lambda script, argv: run_here(mx, script, argv)  # noqa: E731
    for run in (here, run_mxnet_script):
        first, second = runs(run)
        np.testing.assert_array_equal(first, second)
        assert not np.array_equal(first[:3], first[3:6])  # epoch 2 (from record 2) vs epoch 1
        seeded, seeded_again = runs(run, seed_aug=5)
        np.testing.assert_array_equal(seeded, seeded_again)
        assert not np.array_equal(seeded, first)
        assert np.isfinite(first).all() and first.shape == (5, 4, 3, 20, 20)


def write_constant_records(mx, path, rgb, n=40):
    rec = mx.recordio.MXIndexedRecordIO(str(path / "c.idx"), str(path / "c.rec"), "w")
    for i in range(n):
        image = np.empty((20, 20, 3), np.uint8)
        image[:] = rgb[::-1]  # pack_img takes OpenCV's BGR
        rec.write_idx(i, mx.recordio.pack_img((0, float(i), i, 0), image, img_fmt=".png"))
    rec.close()


BASE = np.float32([120, 90, 60])  # RGB, far enough from 0 and 255 for factors in [0.5, 1.5]
MXNET_GREY = 0.299 * BASE[2] + 0.587 * BASE[1] + 0.114 * BASE[0]  # MXNet's weights on BGR


@pytest.mark.parametrize("arg, value, model", [
    # (what the pixel is, given the draw f) and the range of f
    ("brightness", 0.5, lambda f: BASE * f),
    ("contrast", 0.5, lambda f: BASE * f + (1 - f) * MXNET_GREY),
    ("saturation", 0.5, lambda f: BASE * f + (1 - f) * MXNET_GREY),
    ("max_random_contrast", 0.5, lambda f: BASE * f),
    ("max_random_illumination", 20, lambda f: BASE + f),
])
def test_colour_draws_follow_mxnets_model_on_both(mx, tmp_path, arg, value, model):
    """A constant image: every output row is the model at one draw, the draws spread over their
    range. Run on MXNet's batches and ours alike."""
    write_constant_records(mx, tmp_path, BASE)
    kw = dict(path_imgrec=str(tmp_path / "c.rec"), data_shape=(3, 20, 20), batch_size=40, **{arg: value})
    read = IMAGE_RECORD_READ.replace("range(2)", "range(1)")
    low, high = (1 - value, 1 + value) if arg != "max_random_illumination" else (-value, value)
    draws = np.linspace(low, high, 4001)
    predicted = np.stack([model(f) for f in draws])  # (draws, 3)
    for who, run in (("mxplug", lambda s, a: run_here(mx, s, a)), ("MXNet", run_mxnet_script)):
        data = np.float32(run(read, [json.dumps(kw)])[0][0])
        assert (np.ptp(data, axis=(2, 3)) == 0).all(), who  # each row stays constant
        pixels = data[:, :, 0, 0]
        found = []
        for row in pixels:
            error = np.abs(predicted - row).max(axis=1)
            assert error.min() <= 1.0, "%s: %s is no %s draw of %s" % (who, row, arg, BASE)
            found.append(draws[error.argmin()])
        assert np.ptp(found) > value * 0.8, "%s: the draws %s do not spread over the range" % (who, found)


ITERATOR_READ = """
import json, os, sys
name, kw = json.loads(sys.argv[1])
try:
    it = getattr(mx.io, name)(**kw)
    out = [[b.data[0].asnumpy().tolist(), b.data[0].dtype.__name__, b.label[0].asnumpy().tolist()] for b in it]
    out.append([str(d.dtype) for d in it.provide_data])
except Exception as e:
    out = [type(e).__name__]
out.append(os.path.exists(kw.get('mean_img', '')))
print(json.dumps(out))
"""


@pytest.mark.parametrize("name, extra", [
    ("ImageRecordUInt8Iter", {}),
    ("ImageRecordInt8Iter", {}),  # pixels above 127 saturate
    ("ImageRecordUInt8Iter", {"mirror": True}),
    ("ImageRecordUInt8Iter_v1", {"mirror": True, "pad": 2, "fill_value": 9, "data_shape": (3, 32, 32)}),  # never mirrors
    ("ImageRecordIter_v1", {"mean_r": 10, "scale": 0.5}),
    # the pixels: no mean, scale or contrast; mirrored and padded all the same; no mean image made
    ("ImageRecordIter", {"dtype": "uint8", "mean_r": 100, "scale": 0.5, "mirror": True, "mean_img": "mean.nd"}),
    ("ImageRecordIter", {"dtype": "int8", "pad": 2, "fill_value": 200, "data_shape": (3, 32, 32)}),
    ("ImageRecordIter", {"dtype": "float16"}),
])
def test_uint8_and_int8_iterators_give_mxnets_pixels(mx, tmp_path, name, extra):
    write_image_records(mx, tmp_path)
    kw = dict(path_imgrec=str(tmp_path / "img.rec"), data_shape=(3, 28, 28), batch_size=4)
    kw.update(extra)
    if "mean_img" in kw:
        kw["mean_img"] = str(tmp_path / kw["mean_img"])
    argv = [json.dumps([name, kw])]
    ours, theirs = run_here(mx, ITERATOR_READ, argv), run_mxnet_script(ITERATOR_READ, argv)
    assert ours == theirs
