"""GPU benchmark: mxplug on gpu(0) against PyTorch on the same GPU, each system in its own process
of this interpreter, measured in the same run (issue 22's goals in brackets):

    tools/bench/run.sh gpu [--quick] [--rounds=N]      (or tools/gpu/run.sh bench on a GPU machine)

  sgemm N          float32 N x N x N products, mx.nd.dot(out=) vs torch.matmul(out=), TFLOP/s
                   (>= 0.95x); both in strict float32 (no TF32: PyTorch's default, and cuBLAS's)
  FC fwd+bwd       FullyConnected forward and backward through an executor vs nn.Linear with
                   autograd, TFLOP/s counting 3 products (>= 0.95x)
  op overhead      a 1-element `a + 1` from Python and the wait for it (wait_to_read; PyTorch:
                   torch.cuda.synchronize), microseconds, lower is better (<= 1.5x PyTorch eager)
  MLP fit bB       the seeds' MLP (784-128-64-10, ReLU) trained by Module.fit with SGD and
                   momentum over an NDArrayIter at batch B, accuracy read every batch, vs a plain
                   PyTorch loop doing the same (batches copied from host memory each step), samples/s
                   (>= 1.0x)
  ResNet-D train   ResNet-18 and ResNet-50 (tools/bench/resnet.py, the same layers on both sides)
                   trained through Module (forward_backward + update, SGD with momentum) on one
                   synthetic 224x224 batch of 128 kept on the device, images/s (>= 1.0x); inference
                   images/s; the first step's seconds (cuDNN's algorithm searches and memory
                   planning on our side, cudnn.benchmark's on PyTorch's; ResNet-50 <= 10 s).
                   Both sides in strict float32: no TF32 (PyTorch's cuDNN default allows it)
  portable         the project's portable GEMM and unrolled convolution (HIP's kernels; on CUDA with
                   MXPLUG_CUDA_PORTABLE_KERNELS=1) against cuBLAS and cuDNN in the same run: sgemm
                   and a ResNet 3x3 convolution's forward and backward, TFLOP/s, reported (no goal)
  memory           device memory beyond the context while ResNet-50 trains 200 steps on batches of
                   128 and 96 alternately: at step 10 and the most after (<= 1.1x PyTorch's, and
                   flat), with PyTorch's reserved memory shown
  peak memory      device memory in use at the end of all the above beyond what the process held
                   after creating its CUDA context (cudaMemGetInfo on both sides: what each caching
                   pool kept, cuBLAS workspaces, everything), MiB, lower is better

Times are wall-clock around many repetitions that end with the device drained (the GPU's queue is
in the measured time, as a user sees it), after warm-ups. The table shows the median of --rounds
rounds, each system in a fresh process per round; ratios are ours/PyTorch for the medians.

--device=testdev rehearses the script where there is no GPU: mx.gpu is the asynchronous test
device (host memory) and PyTorch runs on the CPU, so the numbers mean nothing but every path runs.
With --system=NAME it measures one system once and prints {metric: value} as JSON.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

import numpy as np

import resnet
from peers import REPO, import_mxplug, interleaved_rounds, median_cell, medians, torch_training_loop

BUILD = REPO / os.environ.get("MXPLUG_BUILD_DIR", "build")
MIB = 1 << 20
WARMUP = 5  # batches of each fit before the measured ones


def sizes(quick):
    return dict(resnet=dict(depths=[18], batch=4, size=64, steps=2) if quick
                else dict(depths=[18, 50], batch=128, size=224, steps=20),
                gemm=[1024, 4096] if quick else [2048, 4096, 8192],
                fc=[(1024, 1024, 1024)] if quick else [(1024, 1024, 1024), (4096, 4096, 4096)],
                batches={128: 40, 1024: 10} if quick else {128: 400, 1024: 60},
                overhead_reps=300 if quick else 5000)


def mlp_rows(quick):
    return ["MLP fit b%d" % b for b in sizes(quick)["batches"]]


def timed(run, reps, drain):
    """Seconds per call of run(), over reps calls after 3 warm-ups, the device drained at the end."""
    for _ in range(3):
        run()
    drain()
    t = time.perf_counter()
    for _ in range(reps):
        run()
    drain()
    return (time.perf_counter() - t) / reps


def samples_needed(quick):
    """Enough samples for every fit's warm-up and measured batches without wrapping around."""
    return max(b * (n + WARMUP) for b, n in sizes(quick)["batches"].items())


def synthetic_mnist(n):
    rng = np.random.default_rng(0)
    return rng.random((n, 784), dtype=np.float32), rng.integers(0, 10, n).astype(np.float32)


# ---- one system per process ----

def mxplug_gpu(device):
    mx = import_mxplug()
    if device == "testdev":
        os.environ["MXPLUG_GPU_BACKEND"] = "testdev"
        mx.library.load(str(BUILD / "tests" / "plugins" / "devices" / "libtest_device.so"))
    return mx, mx.gpu(0)


def measure_kernels(device, quick):
    """The GEMM and a convolution on whichever kernels this process's CUDA plugin registered
    (MXPLUG_CUDA_PORTABLE_KERNELS, read when it loads): TFLOP/s."""
    mx, ctx = mxplug_gpu(device)
    n = 1024 if quick else 4096
    a, b, c = mx.nd.ones((n, n), ctx=ctx), mx.nd.ones((n, n), ctx=ctx), mx.nd.empty((n, n), ctx=ctx)
    out = {"sgemm %d" % n: 2 * n ** 3 / timed(lambda: mx.nd.dot(a, b, out=c), 10, mx.nd.waitall) / 1e12}
    batch, channels, size = (8, 64, 28) if quick else (64, 128, 28)  # a ResNet stage's 3x3 layer
    net = mx.sym.Convolution(mx.sym.Variable("data"), kernel=(3, 3), pad=(1, 1), num_filter=channels,
                             no_bias=True, name="conv")
    ex = net.simple_bind(ctx, data=(batch, channels, size, size))
    for arr in ex.arg_dict.values():
        arr[:] = 0.01
    grad = mx.nd.ones(ex.outputs[0].shape, ctx=ctx)

    def step():
        ex.forward(is_train=True)
        ex.backward(grad)
    flops = 3 * 2 * batch * channels * channels * 9 * size * size  # forward, data and weight gradients
    out["conv 3x3 %dx%dx%d fwd+bwd" % (batch, channels, size)] = flops / timed(step, 10, mx.nd.waitall) / 1e12
    return out


def memory_sizes(quick):
    return (dict(depth=18, batches=[4, 3], size=64, steps=12) if quick
            else dict(depth=50, batches=[128, 96], size=224, steps=200))


def measure_memory_mxplug(device, quick):
    """Device memory beyond the context while ResNet trains with alternating batch sizes."""
    mx, ctx = mxplug_gpu(device)
    mx.nd.zeros((1,), ctx=ctx).wait_to_read()
    free, total = mx.context.gpu_memory_info(0)
    baseline = total - free

    def used():
        mx.nd.waitall()
        free, total = mx.context.gpu_memory_info(0)
        return (total - free - baseline) / MIB
    m = memory_sizes(quick)
    train, _ = resnet.mxplug_steps(mx, ctx, m["depth"], max(m["batches"]), m["size"])
    return resnet.memory_profile(train, m["batches"], used, m["steps"])


def measure_memory_torch(device, quick):
    import torch
    cuda = device == "cuda"
    dev = torch.device("cuda" if cuda else "cpu")
    if cuda:
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cudnn.benchmark = True
        torch.zeros(1, device=dev)
        free, total = torch.cuda.mem_get_info()
        baseline = total - free

    def used():  # on the CPU (a rehearsal) there is nothing to read
        if not cuda:
            return 0.0
        torch.cuda.synchronize()
        free, total = torch.cuda.mem_get_info()
        return (total - free - baseline) / MIB
    m = memory_sizes(quick)
    train, _ = resnet.torch_steps(torch, dev, m["depth"], max(m["batches"]), m["size"])
    out = resnet.memory_profile(train, m["batches"], used, m["steps"])
    out["reserved by PyTorch's allocator"] = torch.cuda.memory_reserved() / MIB if cuda else 0.0
    return out


def measure_mxplug(device, quick):
    mx, ctx = mxplug_gpu(device)
    mx.nd.zeros((1,), ctx=ctx).wait_to_read()  # the context, before the baseline
    free, total = mx.context.gpu_memory_info(0)
    baseline = total - free
    s, out = sizes(quick), {}
    for n in s["gemm"]:
        a, b = mx.nd.ones((n, n), ctx=ctx), mx.nd.ones((n, n), ctx=ctx)
        c = mx.nd.empty((n, n), ctx=ctx)
        sec = timed(lambda: mx.nd.dot(a, b, out=c), 10 if n >= 4096 else 30, mx.nd.waitall)
        out["sgemm %d" % n] = 2 * n ** 3 / sec / 1e12
    for batch, cin, cout in s["fc"]:
        net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=cout, name="fc")
        ex = net.simple_bind(ctx, data=(batch, cin))
        for name, arr in ex.arg_dict.items():
            arr[:] = 0.01
        grad = mx.nd.ones((batch, cout), ctx=ctx)

        def step():
            ex.forward(is_train=True)
            ex.backward(grad)
        sec = timed(step, 20, mx.nd.waitall)
        out["FC fwd+bwd %dx%dx%d" % (batch, cin, cout)] = 3 * 2 * batch * cin * cout / sec / 1e12
    one = mx.nd.ones((1,), ctx=ctx)
    out["op overhead"] = timed(lambda: (one + 1).wait_to_read(), s["overhead_reps"], mx.nd.waitall) * 1e6
    x, y = synthetic_mnist(samples_needed(quick))
    data = mx.sym.Variable("data")
    h = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=128, name="fc1"), act_type="relu")
    h = mx.sym.Activation(mx.sym.FullyConnected(h, num_hidden=64, name="fc2"), act_type="relu")
    mlp = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=10, name="fc3"), name="softmax")
    for batch, n in s["batches"].items():
        mod = mx.mod.Module(mlp, context=ctx)
        kw = dict(optimizer="sgd", optimizer_params={"learning_rate": 0.05, "momentum": 0.9},
                  initializer=mx.init.Xavier(), eval_metric="acc")
        it = mx.io.NDArrayIter(x, y, batch_size=batch, shuffle=True)
        mod.fit(mx.io.ResizeIter(it, WARMUP), num_epoch=1, **kw)
        mx.nd.waitall()
        t = time.perf_counter()
        mod.fit(mx.io.ResizeIter(it, n), num_epoch=1, **kw)
        mx.nd.waitall()
        out["MLP fit b%d" % batch] = n * batch / (time.perf_counter() - t)
    r = s["resnet"]
    for depth in r["depths"]:
        got = resnet.measure(*resnet.mxplug_steps(mx, ctx, depth, r["batch"], r["size"]), r["batch"], r["steps"],
                             mx.nd.waitall)
        out.update(resnet_rows(depth, r["batch"], got))
    free, total = mx.context.gpu_memory_info(0)
    out["peak memory"] = (total - free - baseline) / MIB
    return out


def resnet_rows(depth, batch, got):
    return {"ResNet-%d train b%d" % (depth, batch): got["train"],
            "ResNet-%d inference b%d" % (depth, batch): got["inference"],
            "ResNet-%d first step" % depth: got["first step"]}


def measure_torch(device, quick):
    import torch
    dev = torch.device("cuda" if device == "cuda" else "cpu")
    cuda = dev.type == "cuda"
    drain = torch.cuda.synchronize if cuda else (lambda: None)
    if cuda:
        torch.zeros(1, device=dev)
        free, total = torch.cuda.mem_get_info()
        baseline = total - free
    torch.manual_seed(0)
    s, out = sizes(quick), {}
    for n in s["gemm"]:
        a, b = torch.ones(n, n, device=dev), torch.ones(n, n, device=dev)
        c = torch.empty(n, n, device=dev)
        sec = timed(lambda: torch.matmul(a, b, out=c), 10 if n >= 4096 else 30, drain)
        out["sgemm %d" % n] = 2 * n ** 3 / sec / 1e12
    for batch, cin, cout in s["fc"]:
        lin = torch.nn.Linear(cin, cout, device=dev)
        x = torch.full((batch, cin), 0.01, device=dev, requires_grad=True)
        grad = torch.ones(batch, cout, device=dev)
        sec = timed(lambda: lin(x).backward(grad), 20, drain)
        out["FC fwd+bwd %dx%dx%d" % (batch, cin, cout)] = 3 * 2 * batch * cin * cout / sec / 1e12
    one = torch.ones(1, device=dev)

    def op():
        one + 1
        drain()
    out["op overhead"] = timed(op, s["overhead_reps"], drain) * 1e6
    x_all, y_all = synthetic_mnist(samples_needed(quick))
    x_all, y_all = torch.from_numpy(x_all), torch.from_numpy(y_all).long()
    for batch, n in s["batches"].items():
        net = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 64),
                                  torch.nn.ReLU(), torch.nn.Linear(64, 10)).to(dev)
        train = torch_training_loop(net, x_all, y_all, batch, device=dev)  # batches copied from the host
        train(0, WARMUP)
        drain()
        t = time.perf_counter()
        train(WARMUP, n)
        drain()
        out["MLP fit b%d" % batch] = n * batch / (time.perf_counter() - t)
    if cuda:  # strict float32 as ours, and cuDNN's autotuning as our MXNET_CUDNN_AUTOTUNE_DEFAULT=1
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.benchmark = True
    r = s["resnet"]
    for depth in r["depths"]:
        got = resnet.measure(*resnet.torch_steps(torch, dev, depth, r["batch"], r["size"]), r["batch"], r["steps"],
                             drain)
        out.update(resnet_rows(depth, r["batch"], got))
    if cuda:
        free, total = torch.cuda.mem_get_info()
        out["peak memory"] = (total - free - baseline) / MIB
    return out


# ---- driver ----

def run_child(system, device, quick, env=None):
    args = [sys.executable, __file__, "--system=" + system, "--device=" + device] + (["--quick"] if quick else [])
    p = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, **(env or {})))
    if p.returncode != 0:
        # cuDNN's autotuning logs a line per convolution: leave them out, so the error shows
        errors = "\n".join(l for l in p.stderr.splitlines() if not l.startswith("[mxplug] cuDNN"))
        sys.exit("%s benchmark failed (exit status %d):\n%s" % (system, p.returncode, errors[-5000:]))
    measured = json.loads(p.stdout.strip().splitlines()[-1])
    print("  %s: %s" % (system, json.dumps(measured)), file=sys.stderr, flush=True)  # kept if a later one fails
    return measured


def gpu_description(device):
    if device != "cuda":
        return "no GPU: --device=testdev rehearsal (mx.gpu is the test device, PyTorch on the CPU)"
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                               "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    except FileNotFoundError:
        return "nvidia-smi not found"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--system")
    ap.add_argument("--device", choices=["cuda", "testdev"], default="cuda")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", default=str(BUILD / "bench" / "gpu.json"))
    args = ap.parse_args()
    if args.system:
        print(json.dumps(globals()["measure_" + args.system](args.device, args.quick)))
        return
    if args.device == "cuda":
        listed = subprocess.run([str(BUILD / "install" / "bin" / "mxplug"), "--json", "devices"], capture_output=True,
                                text=True, check=True).stdout
        cuda = [d for d in json.loads(listed)["devices"] if d["name"] == "cuda"]
        if not cuda or cuda[0]["count"] == 0:
            sys.exit("no CUDA device for mxplug here (%s); --device=testdev rehearses the benchmark without one"
                     % (cuda[0]["reason"] if cuda else "built without the CUDA plugin"))
    runs = interleaved_rounds(("mxplug", "torch"), args.rounds,
                              lambda system: run_child(system, args.device, args.quick))
    metrics = [m for m in runs["mxplug"][0] if all(m in run for run in runs["torch"])]
    median = medians(runs, metrics)
    lower_is_better = {"op overhead", "peak memory"} | {m for m in metrics if m.endswith("first step")}
    units = {"op overhead": "us", "peak memory": "MiB"}
    goals = {"op overhead": "<= 1.5", "peak memory": ""}
    for m in metrics:
        if m.startswith("ResNet"):
            units[m] = "s" if m.endswith("first step") else "images/s"
            goals[m] = (">= 1.0" if " train " in m else "" if " inference " in m
                        else "<= 10 s" if m.startswith("ResNet-50") else "")
    rows = []
    print("== table")
    print("GPU: %s; float32 without TF32 on both sides; %d rounds%s, median (range)" % (gpu_description(args.device), args.rounds,
                                                      ", --quick" if args.quick else ""))
    print("| case | unit | mxplug | PyTorch | ours/PyTorch | goal |")
    print("| --- | --- | ---: | ---: | ---: | --- |")
    for m in metrics:
        unit = units.get(m, "samples/s" if m.startswith("MLP") else "TFLOP/s")
        goal = goals.get(m, ">= 1.0" if m.startswith("MLP") else ">= 0.95")
        ours, peer = median["mxplug"][m], median["torch"][m]
        ratio = ours / peer if peer else float("nan")

        def cell(system):
            return median_cell([run[m] for run in runs[system]])
        print("| %s | %s | %s | %s | %.2f | %s |" % (m, unit, cell("mxplug"), cell("torch"), ratio, goal))
        rows.append(dict(metric=m, ours=ours, peer=peer, peer_name="torch", ratio=ratio,
                         better="lower" if m in lower_is_better else "higher", unit=unit))
    print("\nratios are ours/PyTorch of the medians: for time and memory below 1 is better, else above 1")
    # The portable kernels against the vendor's, one process each (reported, no goal).
    kernels = {name: run_child("kernels", args.device, args.quick, {"MXPLUG_CUDA_PORTABLE_KERNELS": flag})
               for name, flag in (("vendor", "0"), ("portable", "1"))}
    print("\n== portable kernels (HIP's; MXPLUG_CUDA_PORTABLE_KERNELS=1) against cuBLAS and cuDNN")
    print("| case | unit | portable | cuBLAS/cuDNN | portable/vendor |")
    print("| --- | --- | ---: | ---: | ---: |")
    for m, vendor in kernels["vendor"].items():
        portable = kernels["portable"][m]
        print("| %s | TFLOP/s | %.3g | %.3g | %.2f |" % (m, portable, vendor, portable / vendor))
        rows.append(dict(metric="portable " + m, ours=portable, peer=vendor, peer_name="vendor",
                         ratio=portable / vendor, better="higher", unit="TFLOP/s"))
    # Memory while batch sizes alternate, once per system: flat from step 10 on, and against PyTorch.
    m = memory_sizes(args.quick)
    memory = {system: run_child("memory_" + system, args.device, args.quick) for system in systems}
    print("\n== memory while ResNet-%d trains on batches of %s alternately (%d steps), MiB beyond the context"
          % (m["depth"], " and ".join(map(str, m["batches"])), m["steps"]))
    print("| case | mxplug | PyTorch | ours/PyTorch | goal |")
    print("| --- | ---: | ---: | ---: | --- |")
    for key in ("memory at step 10", "memory peak from step 10"):
        ours, peer = memory["mxplug"][key], memory["torch"][key]
        ratio = ours / peer if peer else float("nan")
        print("| %s | %.0f | %.0f | %.2f | <= 1.1 |" % (key, ours, peer, ratio))
        rows.append(dict(metric="ResNet-%d %s" % (m["depth"], key), ours=ours, peer=peer, peer_name="torch",
                         ratio=ratio, better="lower", unit="MiB"))
    growth = {sys_: memory[sys_]["memory peak from step 10"] - memory[sys_]["memory at step 10"] for sys_ in systems}
    print("| growth from step 10 | %.0f | %.0f | | 0 (flat) |" % (growth["mxplug"], growth["torch"]))
    print("| reserved by PyTorch's allocator | | %.0f | | |" % memory["torch"]["reserved by PyTorch's allocator"])
    pathlib.Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
