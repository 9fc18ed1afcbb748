"""Operator benchmark: mxplug against PyTorch CPU and MXNet 1.9.1 (and NumPy / OpenBLAS for
GEMM), each system in its own process with the same thread count, on the same shapes.

    tools/bench/run.sh ops [--quick] [--threads=N] [--rounds=N]

Without --system this is the driver: it runs every system in --rounds interleaved rounds (each
system in a fresh process per round), prints each system's median with its range and the ratios
of the medians, and writes the JSON rows of ../shared/DESIGN.md "Benchmarks". Within a round each
row is the median of its repetitions after a warm-up. With --system=NAME it measures one system
and prints {metric: value} as JSON (the driver's children).
"""
import argparse
import ctypes
import ctypes.util
import json
import operator
import os
import pathlib
import sys
import statistics
import time

from peers import REPO, import_mxplug, interleaved_rounds, median_cell, medians, run_child, setting_text

# (metric, unit, better): time rows are milliseconds per call, lower is better.
ROWS = [
    ("sgemm 1024^3", "GFLOP/s", "higher"),
    ("sgemm 4096^3", "GFLOP/s", "higher"),
    ("FullyConnected 512x4096->4096 fwd+bwd", "ms", "lower"),
    ("Convolution 32x64x56x56 K64 3x3 fwd", "ms", "lower"),
    ("Convolution 32x64x56x56 K64 3x3 fwd+bwd", "ms", "lower"),
    ("Pooling max 3x3/2 32x64x56x56 fwd", "ms", "lower"),
    ("BatchNorm train 32x64x56x56 fwd", "ms", "lower"),
    ("softmax (4096,1000)", "ms", "lower"),
    # The fused recurrent operator: a 2-layer LSTM, 256 in and hidden, 35 steps of a batch of 32.
    ("LSTM 2x256 T35 N32 fwd", "ms", "lower"),
    ("LSTM 2x256 T35 N32 fwd+bwd", "ms", "lower"),
    # A new output is memory the allocator hands over: PyTorch's first touches of a fresh 64 MiB
    # block are page faults, where mxplug's pool gives back the block of the call before. The out=
    # row times the addition alone, into an output allocated once.
    ("add 16M float32, new output", "GB/s", "higher"),
    ("add 16M float32, out=", "GB/s", "higher"),
    # Unary maps, into an output allocated once: exp and tanh are computed (a vector math
    # library's work), abs is a loop the compiler vectorizes (random signs: a branch per element
    # would be mispredicted half of the time).
    ("exp 16M float32, out=", "ms", "lower"),
    ("tanh 16M float32, out=", "ms", "lower"),
    ("abs 16M float32, out=", "ms", "lower"),
    ("tiny-op overhead (1-element add)", "us/op", "lower"),
]
PEERS = ["torch", "mxnet"]
LSTM = dict(steps=35, batch=32, size=256, layers=2)


def lstm_parameter_count():
    """The RNN op's parameter vector of LSTM: every layer's i2h and h2h weights and biases."""
    h = LSTM["size"]
    return LSTM["layers"] * 4 * h * (h + h + 2)
EXTRA = ["numpy", "openblas", "memcpy"]  # GEMM floors and a one-thread copy, where they apply


def timed(fn, reps, warmup=1):
    """Median wall time of fn() in seconds over reps calls (fn must return only when its result
    is ready)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def gemm_rows(matmul, make, quick):
    out = {}
    for n, reps in ((1024, 5), (4096, 1 if quick else 3)):
        a, b = make((n, n)), make((n, n))
        out["sgemm %d^3" % n] = 2.0 * n ** 3 / timed(lambda: matmul(a, b), reps) / 1e9
    return out


# ---- one system per process ----

def measure_mxplug(quick):
    import numpy as np
    mx = import_mxplug()
    rng = np.random.default_rng(0)
    nd = lambda shape: mx.nd.array(rng.standard_normal(shape, dtype=np.float32))
    core = mx._core

    def sync(x):
        (x[0] if isinstance(x, list) else x).wait_to_read()

    out = gemm_rows(lambda a, b: mx.nd.dot(a, b).wait_to_read(), nd, quick)

    def fwd_bwd(op, arrays, kw):
        outs = core.invoke_train(op, arrays, kw)
        grads = core.invoke_backward(op, kw, arrays, outs, [mx.nd.ones(outs[0].shape)])
        for g in grads:
            g.wait_to_read()

    fc = [nd((512, 4096)), nd((4096, 4096)), nd((4096,))]
    out["FullyConnected 512x4096->4096 fwd+bwd"] = 1e3 * timed(lambda: fwd_bwd("FullyConnected", fc, {"num_hidden": 4096}), 3)
    conv = [nd((32, 64, 56, 56)), nd((64, 64, 3, 3)), nd((64,))]
    ckw = {"kernel": (3, 3), "pad": (1, 1), "num_filter": 64}
    reps = 1 if quick else 3
    out["Convolution 32x64x56x56 K64 3x3 fwd"] = 1e3 * timed(lambda: sync(mx.nd.Convolution(*conv, **ckw)), reps)
    out["Convolution 32x64x56x56 K64 3x3 fwd+bwd"] = 1e3 * timed(lambda: fwd_bwd("Convolution", conv, ckw), reps)
    x = conv[0]
    out["Pooling max 3x3/2 32x64x56x56 fwd"] = 1e3 * timed(
        lambda: sync(mx.nd.Pooling(x, kernel=(3, 3), stride=(2, 2), pad=(1, 1))), 3)
    bn = [x, nd((64,)), nd((64,)), mx.nd.zeros((64,)), mx.nd.ones((64,))]
    out["BatchNorm train 32x64x56x56 fwd"] = 1e3 * timed(
        lambda: sync(core.invoke_train("BatchNorm", bn, {"fix_gamma": False})), 3)
    s = nd((4096, 1000))
    out["softmax (4096,1000)"] = 1e3 * timed(lambda: sync(mx.nd.softmax(s)), 5)
    rnn = [nd((LSTM["steps"], LSTM["batch"], LSTM["size"])), nd((lstm_parameter_count(),)) * 0.05,
           mx.nd.zeros((LSTM["layers"], LSTM["batch"], LSTM["size"])),
           mx.nd.zeros((LSTM["layers"], LSTM["batch"], LSTM["size"]))]
    rkw = {"state_size": LSTM["size"], "num_layers": LSTM["layers"], "mode": "lstm"}
    out["LSTM 2x256 T35 N32 fwd"] = 1e3 * timed(lambda: sync(mx.nd.RNN(*rnn, **rkw)), 5)
    out["LSTM 2x256 T35 N32 fwd+bwd"] = 1e3 * timed(lambda: fwd_bwd("RNN", rnn, rkw), 5)
    a, b = nd((16 << 20,)), nd((16 << 20,))
    out["add 16M float32, new output"] = 3 * 4 * (16 << 20) / timed(lambda: sync(a + b), 5) / 1e9
    c = mx.nd.empty((16 << 20,))
    out["add 16M float32, out="] = 3 * 4 * (16 << 20) / timed(
        lambda: sync(mx.nd.elemwise_add(a, b, out=c)), 5) / 1e9
    out["exp 16M float32, out="] = 1e3 * timed(lambda: sync(mx.nd.exp(a, out=c)), 5)
    out["tanh 16M float32, out="] = 1e3 * timed(lambda: sync(mx.nd.tanh(a, out=c)), 5)
    out["abs 16M float32, out="] = 1e3 * timed(lambda: sync(mx.nd.abs(a, out=c)), 5)
    out["tiny-op overhead (1-element add)"] = tiny_ops(lambda: mx.nd.ones((1,)), operator.add, mx.nd.waitall, quick)
    return out


def tiny_ops(make, add, waitall, quick):
    """Microseconds per op for N 1-element adds, from the first Python call to all results ready.
    `add` is operator.add for every system: `p + q` as a script writes it, through each array
    type's own `__add__`, with no Python function of ours around it."""
    n = 10_000 if quick else 100_000
    p, q = make(), make()
    waitall()

    def run():
        for _ in range(n):
            add(p, q)
        waitall()
    return 1e6 * timed(run, 3) / n


def measure_torch(quick):
    import torch
    torch.set_num_threads(int(os.environ["BENCH_THREADS"]))
    F = torch.nn.functional
    g = torch.Generator().manual_seed(0)
    t = lambda shape, grad=False: torch.randn(*shape, generator=g).requires_grad_(grad)
    out = gemm_rows(torch.mm, t, quick)

    def fwd_bwd(fn, arrays):
        for a in arrays:
            a.grad = None
        y = fn(*arrays)
        y.backward(torch.ones_like(y))

    fc = [t((512, 4096), True), t((4096, 4096), True), t((4096,), True)]
    out["FullyConnected 512x4096->4096 fwd+bwd"] = 1e3 * timed(lambda: fwd_bwd(F.linear, fc), 3)
    conv = [t((32, 64, 56, 56), True), t((64, 64, 3, 3), True), t((64,), True)]
    reps = 1 if quick else 3
    with torch.no_grad():
        out["Convolution 32x64x56x56 K64 3x3 fwd"] = 1e3 * timed(lambda: F.conv2d(*conv, padding=1), reps)
    out["Convolution 32x64x56x56 K64 3x3 fwd+bwd"] = 1e3 * timed(
        lambda: fwd_bwd(lambda x, w, b: F.conv2d(x, w, b, padding=1), conv), reps)
    x = conv[0].detach()
    with torch.no_grad():
        out["Pooling max 3x3/2 32x64x56x56 fwd"] = 1e3 * timed(lambda: F.max_pool2d(x, 3, 2, 1), 3)
        gamma, beta = t((64,)), t((64,))
        mean, var = torch.zeros(64), torch.ones(64)
        out["BatchNorm train 32x64x56x56 fwd"] = 1e3 * timed(
            lambda: F.batch_norm(x, mean, var, gamma, beta, training=True), 3)
        s = t((4096, 1000))
        out["softmax (4096,1000)"] = 1e3 * timed(lambda: torch.softmax(s, 1), 5)
        lstm = torch.nn.LSTM(LSTM["size"], LSTM["size"], num_layers=LSTM["layers"])
        seq = t((LSTM["steps"], LSTM["batch"], LSTM["size"]))
        out["LSTM 2x256 T35 N32 fwd"] = 1e3 * timed(lambda: lstm(seq), 5)
    seq = seq.clone().requires_grad_(True)
    out["LSTM 2x256 T35 N32 fwd+bwd"] = 1e3 * timed(lambda: fwd_bwd(lambda x: lstm(x)[0], [seq]), 5)
    with torch.no_grad():
        a, b = t((16 << 20,)), t((16 << 20,))
        out["add 16M float32, new output"] = 3 * 4 * (16 << 20) / timed(lambda: a + b, 5) / 1e9
        c = torch.empty(16 << 20)
        out["add 16M float32, out="] = 3 * 4 * (16 << 20) / timed(lambda: torch.add(a, b, out=c), 5) / 1e9
        out["exp 16M float32, out="] = 1e3 * timed(lambda: torch.exp(a, out=c), 5)
        out["tanh 16M float32, out="] = 1e3 * timed(lambda: torch.tanh(a, out=c), 5)
        out["abs 16M float32, out="] = 1e3 * timed(lambda: torch.abs(a, out=c), 5)
        out["tiny-op overhead (1-element add)"] = tiny_ops(lambda: torch.ones(1), operator.add, lambda: None, quick)
    return out


def measure_mxnet(quick):
    import mxnet as mx
    from mxnet import autograd
    nd = lambda shape: mx.nd.random.normal(shape=shape)
    out = gemm_rows(lambda a, b: mx.nd.dot(a, b).wait_to_read(), nd, quick)

    def fwd_bwd(fn, arrays):
        for a in arrays:
            a.attach_grad()
        with autograd.record():
            y = fn(*arrays)
        y.backward()
        for a in arrays:
            a.grad.wait_to_read()

    fc = [nd((512, 4096)), nd((4096, 4096)), nd((4096,))]
    out["FullyConnected 512x4096->4096 fwd+bwd"] = 1e3 * timed(
        lambda: fwd_bwd(lambda x, w, b: mx.nd.FullyConnected(x, w, b, num_hidden=4096), fc), 3)
    conv = [nd((32, 64, 56, 56)), nd((64, 64, 3, 3)), nd((64,))]
    ckw = dict(kernel=(3, 3), pad=(1, 1), num_filter=64)
    reps = 1 if quick else 3
    out["Convolution 32x64x56x56 K64 3x3 fwd"] = 1e3 * timed(lambda: mx.nd.Convolution(*conv, **ckw).wait_to_read(), reps)
    out["Convolution 32x64x56x56 K64 3x3 fwd+bwd"] = 1e3 * timed(
        lambda: fwd_bwd(lambda x, w, b: mx.nd.Convolution(x, w, b, **ckw), conv), reps)
    x = conv[0]
    out["Pooling max 3x3/2 32x64x56x56 fwd"] = 1e3 * timed(
        lambda: mx.nd.Pooling(x, kernel=(3, 3), stride=(2, 2), pad=(1, 1)).wait_to_read(), 3)
    gamma, beta, mean, var = nd((64,)), nd((64,)), mx.nd.zeros(64), mx.nd.ones(64)

    def bn():
        with autograd.record():  # training mode: the batch's statistics
            y = mx.nd.BatchNorm(x, gamma, beta, mean, var, fix_gamma=False)
        y.wait_to_read()
    out["BatchNorm train 32x64x56x56 fwd"] = 1e3 * timed(bn, 3)
    s = nd((4096, 1000))
    out["softmax (4096,1000)"] = 1e3 * timed(lambda: mx.nd.softmax(s).wait_to_read(), 5)
    rnn = [nd((LSTM["steps"], LSTM["batch"], LSTM["size"])), nd((lstm_parameter_count(),)) * 0.05,
           mx.nd.zeros((LSTM["layers"], LSTM["batch"], LSTM["size"])),
           mx.nd.zeros((LSTM["layers"], LSTM["batch"], LSTM["size"]))]
    rkw = dict(state_size=LSTM["size"], num_layers=LSTM["layers"], mode="lstm")
    out["LSTM 2x256 T35 N32 fwd"] = 1e3 * timed(lambda: mx.nd.RNN(*rnn, **rkw).wait_to_read(), 5)
    out["LSTM 2x256 T35 N32 fwd+bwd"] = 1e3 * timed(lambda: fwd_bwd(lambda *a: mx.nd.RNN(*a, **rkw), rnn), 5)
    a, b = nd((16 << 20,)), nd((16 << 20,))
    out["add 16M float32, new output"] = 3 * 4 * (16 << 20) / timed(lambda: (a + b).wait_to_read(), 5) / 1e9
    c = mx.nd.empty((16 << 20,))
    out["add 16M float32, out="] = 3 * 4 * (16 << 20) / timed(
        lambda: mx.nd.elemwise_add(a, b, out=c).wait_to_read(), 5) / 1e9
    out["exp 16M float32, out="] = 1e3 * timed(lambda: mx.nd.exp(a, out=c).wait_to_read(), 5)
    out["tanh 16M float32, out="] = 1e3 * timed(lambda: mx.nd.tanh(a, out=c).wait_to_read(), 5)
    out["abs 16M float32, out="] = 1e3 * timed(lambda: mx.nd.abs(a, out=c).wait_to_read(), 5)
    out["tiny-op overhead (1-element add)"] = tiny_ops(lambda: mx.nd.ones((1,)), operator.add, mx.nd.waitall, quick)
    return out


def measure_numpy(quick):
    import numpy as np
    rng = np.random.default_rng(0)
    return gemm_rows(np.dot, lambda s: rng.standard_normal(s, dtype=np.float32), quick)


def measure_openblas(quick):
    """cblas_sgemm called directly through ctypes: the floor GEMM rows are held to."""
    import numpy as np
    lib = ctypes.CDLL(ctypes.util.find_library("openblas") or "libopenblas.so.0")
    rng = np.random.default_rng(0)
    f = ctypes.c_void_p

    def sgemm(a, b):
        n = a.shape[0]
        c = np.empty((n, n), dtype=np.float32)
        lib.cblas_sgemm(101, 111, 111, n, n, n, ctypes.c_float(1.0), f(a.ctypes.data), n, f(b.ctypes.data), n,
                        ctypes.c_float(0.0), f(c.ctypes.data), n)
        return c
    return gemm_rows(sgemm, lambda s: rng.standard_normal(s, dtype=np.float32), quick)


def measure_memcpy(quick):
    """One thread's memmove of 16M floats (one read and one write): a reference for add's bandwidth,
    not a ceiling, since two threads move more."""
    import numpy as np
    a, b = np.ones(16 << 20, dtype=np.float32), np.empty(16 << 20, dtype=np.float32)
    t = timed(lambda: ctypes.memmove(b.ctypes.data, a.ctypes.data, a.nbytes), 5)
    gbs = 2 * a.nbytes / t / 1e9
    return {"add 16M float32, new output": gbs, "add 16M float32, out=": gbs}


# ---- driver ----

def run_system(name, quick, threads):
    return run_child(name, __file__, ["--quick"] if quick else [], threads)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--system")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", default=str(REPO / os.environ.get("MXPLUG_BUILD_DIR", "build") / "bench" / "ops.json"))
    args = ap.parse_args()
    if args.system:
        print(json.dumps(globals()["measure_" + args.system](args.quick)))
        return
    systems = ["mxplug"] + PEERS + EXTRA
    runs = interleaved_rounds(systems, args.rounds, lambda name: run_system(name, args.quick, args.threads))
    results = medians(runs)
    rows = []
    print(setting_text())
    print("%d threads on each side%s; median (range) of %d rounds\n" % (
        args.threads, ", --quick" if args.quick else "", args.rounds))
    print("| metric | unit | mxplug | PyTorch | MXNet 1.9.1 | reference | ours/PyTorch | ours/MXNet |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for metric, unit, better in ROWS:
        ours = results["mxplug"][metric]
        reference = ""
        for peer in PEERS:
            theirs = results[peer][metric]
            rows.append(dict(metric=metric, ours=ours, peer=theirs, peer_name=peer, ratio=ours / theirs,
                             better=better, unit=unit))
        for extra in EXTRA:
            if metric in results[extra]:
                theirs = results[extra][metric]
                rows.append(dict(metric=metric, ours=ours, peer=theirs, peer_name=extra, ratio=ours / theirs,
                                 better=better, unit=unit))
                reference += "%s %.3g " % (extra, theirs)
        cells = [median_cell([run[metric] for run in runs[name]]) for name in ["mxplug"] + PEERS]
        print("| %s | %s | %s | %s| %.2f | %.2f |" % (
            metric, unit, " | ".join(cells), reference, ours / results["torch"][metric],
            ours / results["mxnet"][metric]))
    print("\nratios are ours/peer of the medians: above 1 is better for GFLOP/s and GB/s, below 1 for ms and us/op")
    pathlib.Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
