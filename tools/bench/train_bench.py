"""Training benchmark: the networks of examples/train/networks.py trained on Fashion-MNIST by
mxplug's Module.fit, MXNet 1.9.1's Module.fit and a PyTorch CPU loop (the same layers, SGD with
momentum, the accuracy read every batch as a metric does), each system in its own process with
the same OpenMP/BLAS thread count, its engine in its default configuration, and the same IDX files (decompressed, as MXNet's MNISTIter reads only raw
ones).

    tools/bench/run.sh train [--quick] [--threads=N] [--rounds=N]

Rows, in samples per second (higher is better): the MLP trained at batch 128 (over MNISTIter, and
over NDArrayIter holding the images as float32 arrays), the LeNet at batch 64 (after a warm-up of
a few batches, over a fixed number of batches read from the shuffled training set), and the MLP's
inference over the test set at batch 128 (predict, outputs copied
out; INFER_PASSES passes after one warm-up). Single runs on a shared 2-core machine spread by 2x
or more (docs/performance.md), so the systems are measured in --rounds interleaved rounds, each
system in a fresh process per round, and the table shows each system's median with its range;
the ratios are of the medians.
With --system=NAME it measures one system once and prints {metric: value} as JSON.
"""
import argparse
import gzip
import json
import os
import pathlib
import shutil
import sys
import time

import numpy as np

from peers import (REPO, import_mxplug, interleaved_rounds, median_cell, medians, run_child, setting_text,
                   torch_training_loop)

sys.path.insert(0, str(REPO / "examples" / "train"))

FASHION = pathlib.Path("/usr/share/datasets/fashion-mnist")
FILES = ["train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
         "t10k-labels-idx1-ubyte"]
# (row, network, batch size, what); "train-arrays" is fit over NDArrayIter on the images already
# in memory as float32 (PyTorch's loop always batches such tensors).
CASES = [("mlp train b128", "mlp", 128, "train"),
         ("mlp train b128, NDArrayIter", "mlp", 128, "train-arrays"),
         ("lenet train b64", "lenet", 64, "train"), ("mlp inference b128", "mlp", 128, "infer")]
WARMUP = 5
# Passes over the test set per inference measurement: a pass takes 10-20 ms, and single passes on
# a shared 2-core machine vary by 2x (docs/performance.md), so a few would measure the luck.
INFER_PASSES = 15


def batches(quick, net):
    if net == "lenet":
        return 60 if quick else 300
    return 150 if quick else 468


def raw_files(data_dir):
    """The four IDX files, decompressed once into data_dir."""
    data_dir.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        target = data_dir / name
        if not target.exists():
            with gzip.open(FASHION / (name + ".gz"), "rb") as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst)
    return {name: str(data_dir / name) for name in FILES}


# ---- one system per process ----

def measure_symbolic(mx, files, quick):
    """mxplug or MXNet 1.9.1: Module.fit over MNISTIter, then Module.predict."""
    import networks
    out = {}
    for row, net, batch, what in CASES:
        flat = net == "mlp"
        mod = mx.mod.Module(getattr(networks, net)(mx), context=mx.cpu())
        if what.startswith("train"):
            if what == "train":
                it = mx.io.MNISTIter(image=files[FILES[0]], label=files[FILES[1]],
                                     batch_size=batch, shuffle=True, flat=flat, seed=1)
            else:
                images = read_idx(files[FILES[0]], True)
                it = mx.io.NDArrayIter(images.reshape(images.shape[0], -1) if flat else images,
                                       read_idx(files[FILES[1]], False).astype(np.float32),
                                       batch_size=batch, shuffle=True, label_name="softmax_label")
            kw = dict(optimizer="sgd", optimizer_params={"learning_rate": 0.05, "momentum": 0.9},
                      initializer=mx.init.Xavier(), eval_metric="acc")
            mod.fit(mx.io.ResizeIter(it, WARMUP), num_epoch=1, **kw)
            n = batches(quick, net)
            t = time.perf_counter()
            mod.fit(mx.io.ResizeIter(it, n), num_epoch=1, **kw)
            mx.nd.waitall()
            out[row] = n * batch / (time.perf_counter() - t)
        else:
            it = mx.io.MNISTIter(image=files[FILES[2]], label=files[FILES[3]], batch_size=batch,
                                 shuffle=False, flat=flat)
            mod.bind(it.provide_data, it.provide_label, for_training=False)
            mod.init_params(mx.init.Xavier())
            mod.predict(it).asnumpy()
            reps = 1 if quick else INFER_PASSES
            t = time.perf_counter()
            for _ in range(reps):
                samples = mod.predict(it).asnumpy().shape[0]
            out[row] = reps * samples / (time.perf_counter() - t)
    return out


def measure_mxplug(files, quick):
    return measure_symbolic(import_mxplug(), files, quick)


def measure_mxnet(files, quick):
    import mxnet as mx
    return measure_symbolic(mx, files, quick)


def read_idx(path, images):
    raw = np.fromfile(path, dtype=np.uint8)
    if images:
        return raw[16:].reshape(-1, 1, 28, 28).astype(np.float32) / 256
    return raw[8:].astype(np.int64)


def torch_net(name):
    from torch import nn
    if name == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 64),
                             nn.ReLU(), nn.Linear(64, 10))
    layers = []
    for cin, cout in ((1, 20), (20, 50)):
        layers += [nn.Conv2d(cin, cout, 5), nn.BatchNorm2d(cout, eps=1e-3, momentum=0.1), nn.ReLU(),
                   nn.MaxPool2d(2, 2)]
    return nn.Sequential(*layers, nn.Flatten(), nn.Linear(800, 500), nn.ReLU(), nn.Dropout(0.3),
                         nn.Linear(500, 10))


def measure_torch(files, quick):
    import torch
    torch.set_num_threads(int(os.environ["BENCH_THREADS"]))
    torch.manual_seed(0)
    train_x, train_y = (torch.from_numpy(read_idx(files[FILES[0]], True)),
                        torch.from_numpy(read_idx(files[FILES[1]], False)))
    test_x = torch.from_numpy(read_idx(files[FILES[2]], True))
    out = {}
    for row, net_name, batch, what in CASES:
        net = torch_net(net_name)
        if what.startswith("train"):  # the same loop over tensors in memory for both rows
            net.train()
            train = torch_training_loop(net, train_x, train_y, batch)
            train(0, WARMUP)
            n = batches(quick, net_name)
            t = time.perf_counter()
            train(WARMUP, n)
            out[row] = n * batch / (time.perf_counter() - t)
        else:
            net.eval()
            usable = test_x.shape[0] // batch * batch  # full batches, as MNISTIter gives

            def infer():
                with torch.no_grad():
                    return sum(net(test_x[b:b + batch]).numpy().shape[0] for b in range(0, usable, batch))
            infer()
            reps = 1 if quick else INFER_PASSES
            t = time.perf_counter()
            samples = sum(infer() for _ in range(reps))
            out[row] = samples / (time.perf_counter() - t)
    return out


# ---- driver ----

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--system")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    build = REPO / os.environ.get("MXPLUG_BUILD_DIR", "build")
    ap.add_argument("--json", default=str(build / "bench" / "train.json"))
    args = ap.parse_args()
    files = raw_files(build / "bench" / "fashion-mnist")
    if args.system:
        print(json.dumps(globals()["measure_" + args.system](files, args.quick)))
        return
    # Each engine as users run it: its default number of CPU workers (1 in both).
    runs = interleaved_rounds(("mxplug", "torch", "mxnet"), args.rounds, lambda system: run_child(
        system, __file__, ["--quick"] if args.quick else [], args.threads, engine_workers=None))
    median = medians(runs, [row for row, *_ in CASES])

    def cell(system, row):
        return median_cell([run[row] for run in runs[system]], "%.0f")

    ours = median["mxplug"]
    rows = []
    print(setting_text())
    print("%d threads on each side%s, samples/s (higher is better), median (range) of %d rounds\n"
          % (args.threads, ", --quick" if args.quick else "", args.rounds))
    print("| case | mxplug | PyTorch | MXNet 1.9.1 | ours/PyTorch | ours/MXNet |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for row, _, _, _ in CASES:
        for peer in ("torch", "mxnet"):
            rows.append(dict(metric=row, ours=ours[row], peer=median[peer][row], peer_name=peer,
                             ratio=ours[row] / median[peer][row], better="higher",
                             unit="samples/s"))
        print("| %s | %s | %s | %s | %.2f | %.2f |" % (
            row, cell("mxplug", row), cell("torch", row), cell("mxnet", row),
            ours[row] / median["torch"][row], ours[row] / median["mxnet"][row]))
    print("\nratios are of the medians, ours/peer: above 1 is better")
    pathlib.Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
