"""tools/im2rec/im2rec.py against MXNet 1.9.1's own im2rec: the same list and, passing the files
through, the same .rec and .idx bytes; re-encoded images read back by ImageRecordIter match a
PyTorch resize of the originals; an unreadable image is named and left out."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from conftest import MXNET_PYTHON, PYTHON_PACKAGES, REPO, require_mxnet

IM2REC = REPO / "tools" / "im2rec" / "im2rec.py"
# MXNet's im2rec imports cv2 (which the reference environment lacks) but needs it only to decode;
# listing and --pass-through packing run with an empty stand-in.
MXNET_IM2REC = """
import sys, types, runpy, mxnet
sys.modules['cv2'] = types.ModuleType('cv2')
sys.argv = ['im2rec.py'] + sys.argv[1:]
runpy.run_path(mxnet.__path__[0] + '/tools/im2rec.py', run_name='__main__')
"""


def im2rec(*args):
    env = dict(os.environ, PYTHONPATH=str(PYTHON_PACKAGES))
    return subprocess.run([sys.executable, str(IM2REC)] + [str(a) for a in args], capture_output=True,
                          text=True, env=env, timeout=300)


def mxnet_im2rec(*args):
    require_mxnet()
    p = subprocess.run([str(MXNET_PYTHON), "-c", MXNET_IM2REC] + [str(a) for a in args], capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return p


def make_folder(mx, root):
    """Three classes of color images (JPEG and PNG) of several sizes, and a file that is no image."""
    rng = np.random.RandomState(0)
    images = {}
    for c, name in enumerate(["cats", "dogs", "owls"]):
        (root / name).mkdir(parents=True)
        for k in range(3):
            h, w = rng.randint(24, 40), rng.randint(24, 40)
            y, x = np.mgrid[0:h, 0:w]
            img = np.stack([(x * (3 + c) + k * 40) % 256, (y * 4 + c * 60) % 256, ((x + y) * 2) % 256],
                           -1).astype(np.uint8)  # BGR
            fmt = ".png" if k != 1 else ".jpg"
            path = root / name / ("%d%s" % (k, fmt))
            path.write_bytes(mx._core.imencode(img, fmt, 3 if fmt == ".png" else 95, True))
            images[os.path.relpath(path, root)] = img
    (root / "dogs" / "notes.txt").write_text("not an image")
    return images


def test_list_and_pass_through_records_are_mxnets(mx, tmp_path):
    make_folder(mx, tmp_path / "images")
    for run, prefix in ((im2rec, tmp_path / "ours"), (mxnet_im2rec, tmp_path / "theirs")):
        p = run("--list", "--recursive", prefix, tmp_path / "images")
        assert p.returncode == 0, p.stderr
        assert p.stdout.split("\n")[:3] == ["cats 0", "dogs 1", "owls 2"]
        p = run("--pass-through", prefix, tmp_path / "images")
        assert p.returncode == 0, p.stderr
    lines = (tmp_path / "ours.lst").read_text().splitlines()
    assert lines == (tmp_path / "theirs.lst").read_text().splitlines() and len(lines) == 9
    assert sorted(lines)[0] == "0\t0.000000\tcats/0.png"
    for ext in (".rec", ".idx"):
        assert (tmp_path / ("ours" + ext)).read_bytes() == (tmp_path / ("theirs" + ext)).read_bytes()


def test_resized_records_read_back_through_image_record_iter(mx, tmp_path):
    images = make_folder(mx, tmp_path / "images")
    assert im2rec("--list", "--recursive", "--no-shuffle", tmp_path / "data", tmp_path / "images").returncode == 0
    p = im2rec("--resize", 20, "--encoding", ".png", "--num-thread", 3, tmp_path / "data", tmp_path / "images")
    assert p.returncode == 0, p.stderr
    assert "im2rec: packed 9 images" in p.stdout
    paths = [line.split("\t")[-1] for line in (tmp_path / "data.lst").read_text().splitlines()]
    it = mx.io.ImageRecordIter(path_imgrec=str(tmp_path / "data.rec"), data_shape=(3, 20, 20), batch_size=9)
    batch = next(iter(it))
    np.testing.assert_array_equal(batch.label[0].asnumpy(), [0, 0, 0, 1, 1, 1, 2, 2, 2])
    for row, path in enumerate(paths):
        # The source as decoded (test_recordio checks the decoder against MXNet's), in RGB.
        img = mx._core.imdecode((tmp_path / "images" / path).read_bytes(), 3, False).astype(np.float32)
        if path.endswith(".png"):
            np.testing.assert_array_equal(img, images[path][:, :, ::-1])
        h, w = img.shape[:2]
        size = (h * 20 // w, 20) if h > w else (20, w * 20 // h)  # the shorter edge becomes 20
        resized = torch.nn.functional.interpolate(torch.from_numpy(img.transpose(2, 0, 1))[None], size=size,
                                                  mode="bilinear", align_corners=False)[0].numpy()
        y, x = (size[0] - 20) // 2, (size[1] - 20) // 2
        # The resize rounds to 8 bits; PNG keeps that exactly.
        np.testing.assert_allclose(batch.data[0].asnumpy()[row], resized[:, y:y + 20, x:x + 20], atol=1.0)


def test_unreadable_image_is_named_and_left_out(mx, tmp_path):
    make_folder(mx, tmp_path / "images")
    (tmp_path / "images" / "owls" / "9.jpg").write_bytes(b"\xff\xd8\xff this is not a jpeg")
    assert im2rec("--list", "--recursive", tmp_path / "data", tmp_path / "images").returncode == 0
    p = im2rec(tmp_path / "data", tmp_path / "images")
    assert p.returncode == 1
    assert "owls/9.jpg left out: the JPEG does not decode" in p.stderr
    assert "im2rec: packed 9 images" in p.stdout and "left out 1" in p.stdout
    record = mx.recordio.MXIndexedRecordIO(str(tmp_path / "data.idx"), str(tmp_path / "data.rec"), "r")
    assert len(record.keys) == 9
    p = im2rec(tmp_path / "nothing", tmp_path / "images")
    assert p.returncode == 2 and "no list file" in p.stderr
