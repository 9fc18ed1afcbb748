#!/usr/bin/env python3
"""The distributed kvstores against MXNet 1.9.1 and against Open MPI's own allreduce
(tools/bench/run.sh dist):

- push+pull of one key of 1,000 floats, 4.8 MB and 100 MB on 2 workers with 2 servers, 'dist_sync'
  (and mxplug's 'dist_async'), against MXNet 1.9.1's job of the same shape started by hand
  (tools/bench/mxnet_job.py) and against a bare MPI_Allreduce of the same bytes between 2
  processes (mpi_allreduce_bench.c), the floor;
- training samples/s of the seeds' MLP over one epoch of Fashion-MNIST with 1 worker and with 2
  (dist_sync, each on its half), both frameworks, on this machine's cores.

Goals (issue 23): 1,000 floats at or under 0.3 ms, 4.8 MB at or under 15 ms, 100 MB within 1.3x of
the bare allreduce."""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

from peers import REPO, cpu_description
from mxnet_job import run_mxnet_job

SIZES = [("1,000 floats", 1000, 300), ("4.8 MB", 1200000, 30), ("100 MB", 25000000, 6)]
LAUNCH = REPO / "tools" / "launch.py"


# ---- inside a worker (either framework) ----

def worker_latency(mx, kv_type):
    """Median milliseconds of push then pull, read back, per key size; printed by worker 0."""
    kv = mx.kv.create(kv_type)
    if "async" in kv_type:
        kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.0))
    out = {}
    for i, (name, n, repeats) in enumerate(SIZES):
        value, result = mx.nd.ones(n), mx.nd.zeros(n)
        kv.init(i, value)
        times = []
        for r in range(repeats + 3):  # three rounds of warm-up
            kv._barrier()
            start = time.perf_counter()
            kv.push(i, value)
            kv.pull(i, out=result)
            result.wait_to_read()
            if r >= 3:
                times.append((time.perf_counter() - start) * 1e3)
        out[name] = statistics.median(times)
    if kv.rank == 0:
        print(json.dumps(out), flush=True)


def worker_training(mx, kv_type, data_dir):
    """Samples/s of one epoch of the MLP at batch 64 per worker, over the job (worker 0 prints)."""
    sys.path.insert(0, str(REPO / "examples" / "train"))
    from networks import mlp
    kv = mx.kv.create(kv_type) if "dist" in kv_type else None
    rank, workers = (kv.rank, kv.num_workers) if kv else (0, 1)
    train = mx.io.MNISTIter(image=os.path.join(data_dir, "train-images-idx3-ubyte"),
                            label=os.path.join(data_dir, "train-labels-idx1-ubyte"), batch_size=64,
                            shuffle=True, flat=True, num_parts=workers, part_index=rank)
    mod = mx.mod.Module(mlp(mx), context=mx.cpu())
    mod.bind(train.provide_data, train.provide_label)
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(kvstore=kv or "local", optimizer="sgd",
                       optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    samples, start = 0, time.perf_counter()
    for batch in train:
        mod.forward_backward(batch)
        mod.update()
        samples += 64
    mx.nd.waitall()
    seconds = time.perf_counter() - start
    if kv:
        kv._barrier()
    if rank == 0:
        print(json.dumps({"samples/s": samples * workers / seconds}), flush=True)


# ---- the driver ----

def last_json(text, what):
    lines = [line for line in text.splitlines() if line.startswith("{")]
    if not lines:
        sys.exit("%s printed no result:\n%s" % (what, text))
    return json.loads(lines[-1])


def run_ours(argv, workers, servers):
    env = dict(os.environ, PYTHONPATH=str(REPO / os.environ.get("MXPLUG_BUILD_DIR", "build") / "install" / "lib" /
                                          "python3" / "dist-packages"))
    p = subprocess.run([sys.executable, str(LAUNCH), "-n", str(workers), "-s", str(servers), "--launcher", "local",
                        sys.executable, __file__] + argv, capture_output=True, text=True, env=env, timeout=600)
    if p.returncode:
        sys.exit("mxplug's job failed:\n" + p.stdout + p.stderr)
    return last_json(p.stdout, "mxplug's job")


def run_theirs(argv, workers, servers):
    if workers == 1 and servers == 0:  # one process, no job
        from peers import MXNET_PYTHON
        p = subprocess.run([str(MXNET_PYTHON), __file__] + argv, capture_output=True, text=True, timeout=600)
        codes, outs, errs = [p.returncode], [p.stdout], [p.stderr]
    else:
        codes, outs, errs = run_mxnet_job([__file__] + argv, workers=workers, servers=servers, timeout=600)
    if any(codes):
        sys.exit("MXNet's job failed:\n" + "\n".join(errs))
    return [last_json(o, "MXNet's job") for o in outs if o.strip()][0]


def run_floor(build):
    binary = build / "bin" / "mxplug_bench_mpi_allreduce"
    cmd = ["mpirun", "--oversubscribe", "-n", "2"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
    p = subprocess.run(cmd + [str(binary)] + ["%d:%d" % (n, r) for _, n, r in SIZES], capture_output=True,
                       text=True, timeout=600)
    if p.returncode:
        sys.exit("the MPI allreduce benchmark failed:\n" + p.stderr)
    got = last_json(p.stdout, "mpi_allreduce_bench")
    return {name: got[str(n)] for name, n, _ in SIZES}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--system", help=argparse.SUPPRESS)
    ap.add_argument("--measure", help=argparse.SUPPRESS)
    ap.add_argument("--kv", default="dist_sync", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    build = REPO / os.environ.get("MXPLUG_BUILD_DIR", "build")
    ap.add_argument("--json", default=str(build / "bench" / "dist.json"))
    args = ap.parse_args()
    if args.system:  # a worker of a job
        mx = __import__(args.system)
        if args.measure == "latency":
            worker_latency(mx, args.kv)
        else:
            worker_training(mx, args.kv, args.data)
        return

    from train_bench import raw_files
    data = str(pathlib.Path(raw_files(build / "bench" / "fashion-mnist")["train-images-idx3-ubyte"]).parent)
    print("measuring: the MPI floor, mxplug dist_sync and dist_async, MXNet 1.9.1 dist_sync ...", file=sys.stderr)
    floor = run_floor(build)
    ours = run_ours(["--system=mxplug", "--measure=latency", "--kv=dist_sync"], 2, 2)
    ours_async = run_ours(["--system=mxplug", "--measure=latency", "--kv=dist_async"], 2, 2)
    theirs = run_theirs(["--system=mxnet", "--measure=latency", "--kv=dist_sync"], 2, 2)
    print("measuring: training samples/s with 1 and 2 workers ...", file=sys.stderr)
    train = {}
    for system, runner in (("mxplug", run_ours), ("mxnet", run_theirs)):
        train[system, 1] = runner(["--system=" + system, "--measure=training", "--kv=local", "--data=" + data], 1, 0)
        train[system, 2] = runner(["--system=" + system, "--measure=training", "--kv=dist_sync", "--data=" + data],
                                  2, 2)

    rows = []
    print("CPU: " + cpu_description())
    print("2 workers and 2 servers on this machine (loopback); push then pull of one float32 key, median "
          "milliseconds (lower is better)\n")
    print("| key | mxplug dist_sync | mxplug dist_async | MXNet 1.9.1 dist_sync | MPI_Allreduce (floor) "
          "| ours/MXNet | ours/floor | goal |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    goals = {"1,000 floats": "<= 0.3 ms", "4.8 MB": "<= 15 ms", "100 MB": "<= 1.3x floor"}
    for name, _, _ in SIZES:
        ok = {"1,000 floats": ours[name] <= 0.3, "4.8 MB": ours[name] <= 15,
              "100 MB": ours[name] <= 1.3 * floor[name]}[name]
        print("| %s | %.3f | %.3f | %.3f | %.3f | %.2f | %.2f | %s %s |" % (
            name, ours[name], ours_async[name], theirs[name], floor[name], ours[name] / theirs[name],
            ours[name] / floor[name], goals[name], "met" if ok else "NOT met"))
        rows.append(dict(metric="push+pull " + name, ours=ours[name], peer=theirs[name], peer_name="mxnet",
                         ratio=ours[name] / theirs[name], better="lower", unit="ms"))
        rows.append(dict(metric="push+pull " + name, ours=ours[name], peer=floor[name], peer_name="mpi_allreduce",
                         ratio=ours[name] / floor[name], better="lower", unit="ms"))
        rows.append(dict(metric="push+pull " + name + " dist_async", ours=ours_async[name], peer=theirs[name],
                         peer_name="mxnet dist_sync", ratio=ours_async[name] / theirs[name], better="lower",
                         unit="ms"))
    cores = len(os.sched_getaffinity(0))
    print("\nThe seeds' MLP, one epoch of Fashion-MNIST at batch 64 per worker, samples/s over the job "
          "(higher is better), %d cores shared by every process\n" % cores)
    print("| system | 1 worker | 2 workers (dist_sync, 2 servers) | 2 workers / 1 |")
    print("| --- | ---: | ---: | ---: |")
    for system, label in (("mxplug", "mxplug"), ("mxnet", "MXNet 1.9.1")):
        one, two = train[system, 1]["samples/s"], train[system, 2]["samples/s"]
        print("| %s | %.0f | %.0f | %.2f |" % (label, one, two, two / one))
    for workers in (1, 2):
        ours_rate, theirs_rate = train["mxplug", workers]["samples/s"], train["mxnet", workers]["samples/s"]
        rows.append(dict(metric="MLP training, %d worker%s" % (workers, "s" if workers > 1 else ""), ours=ours_rate,
                         peer=theirs_rate, peer_name="mxnet", ratio=ours_rate / theirs_rate, better="higher",
                         unit="samples/s"))
    pathlib.Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
