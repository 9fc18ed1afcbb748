"""examples/train/train_mnist.py end to end on a small learnable set in MNIST's files (class c is
a bright block at one of ten places, over noise; training files gzip-compressed, test files raw):
both networks reach the goal, the accuracy it prints is that of its checkpoint's predictions
computed here, and --resume goes on from the last checkpoint."""
import os
import re
import subprocess
import sys

import numpy as np

from conftest import PYTHON_PACKAGES, REPO, write_idx

EXAMPLE = REPO / "examples" / "train" / "train_mnist.py"


def _learnable(n, seed):
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 10, n)
    images = rng.randint(0, 90, (n, 28, 28))
    for image, c in zip(images, labels):
        row, col = divmod(int(c), 5)
        image[3 + 14 * row:11 + 14 * row, 1 + 5 * col:5 + 5 * col] = 230
    return images, labels


def _run(args):
    env = dict(os.environ, PYTHONPATH=str(PYTHON_PACKAGES))
    p = subprocess.run([sys.executable, str(EXAMPLE), "--no-progress"] + args, capture_output=True,
                       text=True, env=env, timeout=600)
    return p.returncode, p.stdout + p.stderr


def test_train_mnist_reaches_goal_and_resumes(mx, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    train_x, train_y = _learnable(2000, 0)
    test_x, test_y = _learnable(500, 1)
    write_idx(data / "train-images-idx3-ubyte.gz", data / "train-labels-idx1-ubyte.gz", train_x, train_y,
              gz=True)
    write_idx(data / "t10k-images-idx3-ubyte", data / "t10k-labels-idx1-ubyte", test_x, test_y)
    ckpt = tmp_path / "ckpt"
    code, out = _run(["--data-dir", str(data), "--num-epochs", "2", "--goal", "0.95", "--check",
                      "--checkpoint-dir", str(ckpt)])
    assert code == 0, out
    printed = dict(re.findall(r"^(\w+): test accuracy ([0-9.]+) \(goal 0.95 reached\)", out, re.M))
    assert sorted(printed) == ["lenet", "mlp"], out
    assert "Epoch[1] Validation-accuracy=" in out and "training" in out

    # The printed accuracy is that of the last checkpoint's predictions on the test images.
    for name, flat in (("mlp", True), ("lenet", False)):
        assert (ckpt / ("%s-0002.states" % name)).exists()
        mod = mx.mod.Module.load(str(ckpt / name), 2)
        x = test_x.reshape(500, -1) if flat else test_x.reshape(500, 1, 28, 28)
        mod.bind([("data", x.shape)], for_training=False)
        pred = mod.predict(mx.nd.array(x.astype(np.float32) / 256)).asnumpy().argmax(1)
        accuracy = (pred == test_y).mean()
        assert accuracy >= 0.95
        assert abs(accuracy - float(printed[name])) < 1e-4

    code, out = _run(["--data-dir", str(data), "--network", "mlp", "--num-epochs", "3", "--resume",
                      "--goal", "0.95", "--checkpoint-dir", str(ckpt)])
    assert code == 0, out
    assert "mlp: resuming from %s-0002.params" % (ckpt / "mlp") in out
    assert "Epoch[2] Train-accuracy" in out and "Epoch[1]" not in out and "Epoch[0]" not in out
    assert (ckpt / "mlp-0003.params").exists()

    code, out = _run(["--data-dir", str(tmp_path / "missing")])
    assert code != 0 and "train-images-idx3-ubyte(.gz) is not in" in out
