"""One epoch of the seeds' MLP on Fashion-MNIST, written once for mxplug and MXNet 1.9.1 (the
determinism test of tests/python/test_dist.py):

    dist_mlp_epoch.py FRAMEWORK dist DATA_DIR OUT     # a worker of a dist_sync job: its half, batch 64
    dist_mlp_epoch.py FRAMEWORK single DATA_DIR OUT   # one process, batch 128: each batch the two
                                                      # halves' batches side by side

Every run starts from the same weights (NumPy's, seeded) and trains with SGD (lr 0.1, momentum
0.9) on the epoch's first BATCHES batches; the weights are then saved to OUT.<rank>.npz. DATA_DIR
holds the raw IDX files (MXNet's MNISTIter reads no .gz).

Why not the whole epoch: two 64-row gradients summed over the workers and one 128-row gradient
round differently, by a CPU's GEMM kernels, and this training amplifies that: on an AVX2 EPYC the
two agree to 2e-7 for 300 batches, then part (8e-6 at 325, 0.035 at 468)."""
import os
import sys

import numpy as np

framework, mode, data_dir, out = sys.argv[1:5]
mx = __import__(framework)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "train"))
from networks import mlp  # noqa: E402


def half(part):
    return mx.io.MNISTIter(image=os.path.join(data_dir, "train-images-idx3-ubyte"),
                           label=os.path.join(data_dir, "train-labels-idx1-ubyte"),
                           batch_size=64, shuffle=False, flat=True, num_parts=2, part_index=part)


BATCHES = 250


class First(mx.io.DataIter):
    """The first BATCHES batches of an iterator."""

    def __init__(self, it):
        super(First, self).__init__(it.batch_size)
        self.it, self.count = it, 0
        self.provide_data, self.provide_label = it.provide_data, it.provide_label

    def reset(self):
        self.it.reset()
        self.count = 0

    def next(self):
        if self.count == BATCHES:
            raise StopIteration
        self.count += 1
        return self.it.next()


if mode == "dist":
    kv = mx.kv.create("dist_sync")
    rank, train = kv.rank, First(half(kv.rank))
else:
    kv, rank = "local", 0
    pairs = list(zip(half(0), half(1)))[:BATCHES]
    data = np.concatenate([np.concatenate([a.data[0].asnumpy(), b.data[0].asnumpy()]) for a, b in pairs])
    label = np.concatenate([np.concatenate([a.label[0].asnumpy(), b.label[0].asnumpy()]) for a, b in pairs])
    train = mx.io.NDArrayIter(data, label, batch_size=128, shuffle=False, label_name="softmax_label")

net = mlp(mx)
shapes, _, _ = net.infer_shape(data=(64, 784))
rng = np.random.RandomState(0)
arg_params = {name: mx.nd.array(rng.uniform(-0.1, 0.1, shape).astype(np.float32))
              for name, shape in zip(net.list_arguments(), shapes) if name not in ("data", "softmax_label")}
mod = mx.mod.Module(net, context=mx.cpu())
mod.fit(train, num_epoch=1, kvstore=kv, optimizer="sgd", eval_metric="acc",
        optimizer_params={"learning_rate": 0.1, "momentum": 0.9}, arg_params=arg_params, aux_params={})
np.savez("%s.%d.npz" % (out, rank), **{k: v.asnumpy() for k, v in mod.get_params()[0].items()})
