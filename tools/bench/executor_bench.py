"""Executor benchmark: whole networks (tests/python/nets.py: an MLP 784-128-64-10, a LeNet with
BatchNorm and Dropout, a ResNet-18 on 32x32 images) bound and trained step by step by mxplug's
executor, MXNet 1.9.1's simple_bind executor and PyTorch CPU (the same layers as torch.nn), each
system in its own process with the same thread count.

    tools/bench/run.sh executor [--quick] [--threads=N] [--rounds=N]

Per network and batch size it prints
 - the executor's planned and naive bytes for training and for inference (mxplug; MXNet's
   debug_str "Total ... MB allocated" beside them, its own accounting, whole MB);
 - the peak memory of a training step: the growth of the process's peak resident set (VmHWM,
   reset through /proc/self/clear_refs) over its resident set once parameters and gradients exist,
   the same measure for all three systems;
 - the time of one training step (forward, backward, every gradient ready), the mean of the timed
   steps after two warm-up steps.
Every system is measured in --rounds interleaved rounds; the tables give the medians (and the
step time's range), and the ratios are of the medians.
Each network and batch size runs in a fresh process, so that no allocator cache left by another
lowers a peak. With --system=NAME --net=NAME --batch=N it measures one and prints {metric: value}
as JSON (the driver's children).
"""
import argparse
import json
import os
import pathlib
import re
import sys
import time

from peers import REPO, import_mxplug, interleaved_rounds, median_cell, medians, run_child, setting_text

sys.path.insert(0, str(REPO / "tests" / "python"))

NETS = {"mlp": (784,), "lenet": (1, 28, 28), "resnet18": (3, 32, 32)}
BATCHES = (64, 32)
CASES = [(net, batch, "%s b%d" % (net, batch)) for net in NETS for batch in BATCHES]  # (net, batch, row key)
PEERS = ["torch", "mxnet"]


def status_kib(field):
    for line in pathlib.Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(field + " is missing from /proc/self/status")


def step_peak_and_time(step, iters):
    """(peak bytes above the resident set at entry, mean seconds) of `iters` calls of step()
    after two warm-up calls. The warm-up calls count towards the peak: a first step's
    allocations are part of what a step needs."""
    base = status_kib("VmRSS")
    pathlib.Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS
    for _ in range(2):
        step()
    t = time.perf_counter()
    for _ in range(iters):
        step()
    seconds = (time.perf_counter() - t) / iters
    return (status_kib("VmHWM") - base) * 1024, seconds


def iterations(name, quick):
    return (2 if quick else 5) if name == "resnet18" else (10 if quick else 50)


# ---- one system per process ----

def measure_symbolic(mx, system, name, batch, quick):
    """mxplug or MXNet 1.9.1: simple_bind, then forward(is_train=True) + backward per step."""
    import nets
    out = {}
    sym = getattr(nets, name)(mx)
    shape = (batch,) + NETS[name]
    infer = sym.simple_bind(mx.cpu(), grad_req="null", data=shape)
    ex = sym.simple_bind(mx.cpu(), grad_req="write", data=shape)
    nets.random_params(ex, 3)
    for g in ex.grad_arrays:
        if g is not None:
            g[:] = 0  # resident before the measured steps, as torch's preallocated .grad
    for what, e in (("train", ex), ("infer", infer)):
        if system == "mxplug":
            out[what + " planned"], out[what + " naive"] = e.memory["planned"], e.memory["naive"]
        else:
            total = re.search(r"Total (\d+) MB allocated", e.debug_str())
            out[what + " planned"] = int(total.group(1)) << 20 if total else None
    del infer
    mx.nd.waitall()

    def step():
        ex.forward(is_train=True)
        ex.backward()
        mx.nd.waitall()
    out["peak"], out["step"] = step_peak_and_time(step, iterations(name, quick))
    return out


def measure_mxplug(name, batch, quick):
    mx = import_mxplug()
    return measure_symbolic(mx, "mxplug", name, batch, quick)


def measure_mxnet(name, batch, quick):
    import mxnet as mx
    return measure_symbolic(mx, "mxnet", name, batch, quick)


def torch_net(name):
    """The networks of tests/python/nets.py in torch.nn, layer for layer (MXNet's BatchNorm
    momentum 0.9 is torch's 0.1; fix_gamma=True is a frozen gamma of 1)."""
    import torch
    from torch import nn

    def bn(c, fix_gamma=False, eps=1e-3):
        b = nn.BatchNorm2d(c, eps=eps, momentum=0.1)
        if fix_gamma:
            b.weight.requires_grad_(False)
        return b

    if name == "mlp":
        return nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))
    if name == "lenet":
        return nn.Sequential(nn.Conv2d(1, 20, 5), bn(20), nn.Tanh(), nn.MaxPool2d(2, 2),
                             nn.Conv2d(20, 50, 5), bn(50, fix_gamma=True), nn.Tanh(), nn.MaxPool2d(2, 2),
                             nn.Flatten(), nn.Linear(800, 500), nn.Tanh(), nn.Dropout(0.5), nn.Linear(500, 10))

    class Unit(nn.Module):
        def __init__(self, cin, nf, stride, dim_match):
            super().__init__()
            self.bn1, self.bn2 = bn(cin, eps=2e-5), bn(nf, eps=2e-5)
            self.conv1 = nn.Conv2d(cin, nf, 3, stride, 1, bias=False)
            self.conv2 = nn.Conv2d(nf, nf, 3, 1, 1, bias=False)
            self.sc = None if dim_match else nn.Conv2d(cin, nf, 1, stride, bias=False)

        def forward(self, x):
            act1 = torch.relu(self.bn1(x))
            y = self.conv2(torch.relu(self.bn2(self.conv1(act1))))
            return y + (x if self.sc is None else self.sc(act1))

    layers = [bn(3, fix_gamma=True, eps=2e-5), nn.Conv2d(3, 64, 3, 1, 1, bias=False)]
    cin = 64
    for stage, nf in enumerate([64, 128, 256, 512]):
        for u in range(2):
            layers.append(Unit(cin, nf, 2 if stage > 0 and u == 0 else 1, stage == 0 or u > 0))
            cin = nf
    layers += [bn(512, eps=2e-5), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 10)]
    return nn.Sequential(*layers)


def measure_torch(name, batch, quick):
    import torch
    torch.set_num_threads(int(os.environ["BENCH_THREADS"]))
    g = torch.Generator().manual_seed(0)
    net = torch_net(name).train()
    x = torch.randn((batch,) + NETS[name], generator=g)
    label = torch.randint(0, 10, (batch,), generator=g)
    for p in net.parameters():
        p.grad = torch.zeros_like(p) if p.requires_grad else None

    def step():
        # SoftmaxOutput's gradient is softmax - one_hot per sample, summed: cross entropy, 'sum'
        loss = torch.nn.functional.cross_entropy(net(x), label, reduction="sum")
        loss.backward()
    out = {}
    out["peak"], out["step"] = step_peak_and_time(step, iterations(name, quick))
    return out


# ---- driver ----

def run_system(name, quick, threads):
    """{"<net> b<batch> <metric>": value} of one system, each network and batch in its own process."""
    out = {}
    for net, batch, key in CASES:
        print("measuring %s, %s at batch %d ..." % (name, net, batch), file=sys.stderr, flush=True)
        args = ["--net=" + net, "--batch=%d" % batch] + (["--quick"] if quick else [])
        for metric, value in run_child(name, __file__, args, threads).items():
            out[key + " " + metric] = value
    return out


def mb(b):
    return "%.1f" % (b / 2 ** 20) if b is not None else "-"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--system")
    ap.add_argument("--net", choices=list(NETS))
    ap.add_argument("--batch", type=int)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", default=str(REPO / os.environ.get("MXPLUG_BUILD_DIR", "build") / "bench" / "executor.json"))
    args = ap.parse_args()
    if args.system:
        print(json.dumps(globals()["measure_" + args.system](args.net, args.batch, args.quick)))
        return
    runs = interleaved_rounds(["mxplug"] + PEERS, args.rounds, lambda name: run_system(name, args.quick, args.threads))
    r = medians(runs)
    ours, mxnet, torch = r["mxplug"], r["mxnet"], r["torch"]
    rows = []

    def row(metric, unit, peer_name, mine, theirs):
        rows.append(dict(metric=metric, ours=mine, peer=theirs, peer_name=peer_name,
                         ratio=mine / theirs if theirs else None, better="lower", unit=unit))

    print(setting_text())
    print("%d threads on each side%s; medians of %d rounds\n" % (args.threads, ", --quick" if args.quick else "",
                                                              args.rounds))
    print("| network | train planned / naive (MB) | ratio | MXNet's total | infer planned / naive (MB) | ratio |"
          " MXNet's total |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for _, _, key in CASES:
        cells = []
        for what in ("train", "infer"):
            planned, naive = ours[key + " %s planned" % what], ours[key + " %s naive" % what]
            row("%s %s memory planned/naive" % (key, what), "bytes", "naive plan", planned, naive)
            cells += ["%s / %s" % (mb(planned), mb(naive)), "%.1f%%" % (100.0 * planned / naive),
                      mb(mxnet[key + " %s planned" % what])]
        print("| %s | %s |" % (key, " | ".join(cells)))
    def step_ms(system, key):
        return median_cell([1e3 * run[key + " step"] for run in runs[system]])

    print("\n| network | step peak MB: mxplug | PyTorch | MXNet 1.9.1 | step ms: mxplug (range) | PyTorch | MXNet 1.9.1 |"
          " ours/PyTorch | ours/MXNet |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for _, _, key in CASES:
        for peer_name, peer in (("torch", torch), ("mxnet", mxnet)):
            row(key + " training step peak memory", "bytes", peer_name, ours[key + " peak"], peer[key + " peak"])
            row(key + " training step", "ms", peer_name, 1e3 * ours[key + " step"], 1e3 * peer[key + " step"])
        print("| %s | %s | %s | %s | %s | %s | %s | %.2f | %.2f |" % (
            key, mb(ours[key + " peak"]), mb(torch[key + " peak"]), mb(mxnet[key + " peak"]),
            step_ms("mxplug", key), step_ms("torch", key), step_ms("mxnet", key),
            ours[key + " step"] / torch[key + " step"], ours[key + " step"] / mxnet[key + " step"]))
    print("\nratios are ours/peer of the medians: below 1 is better")
    pathlib.Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
