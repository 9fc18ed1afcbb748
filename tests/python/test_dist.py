"""Distributed kvstores on Open MPI: jobs of workers and servers started by tools/launch.py on this
machine (docs/distributed.md). Each job is bounded by a timeout; each checks its arithmetic
against values the test computes alone, and each fault case its exit code, its message and that no
process of the job is left."""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from conftest import PYTHON_PACKAGES, REPO, TEST_PLUGINS, built_with, require_mxnet

sys.path.insert(0, str(REPO / "tools" / "bench"))
from mxnet_job import run_mxnet_job  # noqa: E402

pytestmark = pytest.mark.skipif(not built_with("mpi"), reason="built without MPI (MXPLUG_WITH_MPI)")

LAUNCH = REPO / "tools" / "launch.py"
# Every job script starts with this: report(d) writes d for the test (stdout of several processes
# interleaves), as result.<d["rank"]>.json.
REPORT = """import json as _json
def report(d):
    with open("result.%s.json" % d["rank"], "w") as f:
        _json.dump(d, f)
"""


def launch(tmp_path, script, workers=2, servers=2, env=None, timeout=60):
    """Runs `script` as a job of the launcher; returns (exit code, stdout, stderr, seconds)."""
    path = tmp_path / "job.py"
    path.write_text(REPORT + textwrap.dedent(script))
    run_env = dict(os.environ, PYTHONPATH=str(PYTHON_PACKAGES), MXPLUG_PLUGIN_PATH="")
    run_env.update(env or {})
    start = time.monotonic()
    p = subprocess.run([sys.executable, str(LAUNCH), "-n", str(workers), "-s", str(servers), "--launcher", "local",
                        sys.executable, str(path)], capture_output=True, text=True, env=run_env,
                       timeout=timeout, cwd=tmp_path)
    return p.returncode, p.stdout, p.stderr, time.monotonic() - start


def left_running(tmp_path):
    """Processes still running the job's script."""
    out = subprocess.run(["pgrep", "-f", str(tmp_path / "job.py")], capture_output=True, text=True).stdout
    return out.split()


def results(tmp_path):
    """What the job's processes reported, by rank."""
    found = [json.loads(p.read_text()) for p in tmp_path.glob("result.*.json")]
    return {r["rank"]: r for r in found}


def test_the_seeds_arithmetic_across_two_workers_and_two_servers(tmp_path):
    code, out, err, _ = launch(tmp_path, """
        import json
        import mxplug as mx
        kv = mx.kv.create('dist_sync')
        r, n = kv.rank, kv.num_workers
        shape = (2, 3)
        kv.init(3, mx.nd.ones(shape) * (r + 5))          # rank 0's value wins
        a = mx.nd.zeros(shape)
        kv.pull(3, out=a)
        init = a.asnumpy().tolist()
        kv.push(3, mx.nd.ones(shape) * (r + 1))          # summed over the workers, then stored
        kv.pull(3, out=a)
        summed = a.asnumpy().tolist()
        kv._set_updater(lambda key, grad, weight: weight.__setitem__(slice(None), weight + 2 * grad))
        kv.push(3, [mx.nd.ones(shape) * (r + 1), mx.nd.ones(shape)])  # two devices' values, merged first
        kv.pull(3, out=a)
        updated = a.asnumpy().tolist()
        kv._set_updater(None)
        kv.init([4, 5], [mx.nd.arange(1000) * (r + 1), mx.nd.zeros((300, 1000))])
        kv.push([4, 5], [mx.nd.ones(1000) * r, mx.nd.ones((300, 1000)) * (r + 2)])
        x, y = mx.nd.zeros(1000), mx.nd.zeros((300, 1000))
        kv.pull([4, 5], out=[x, y])
        kv._barrier()
        report({"rank": r, "n": n, "type": kv.type, "init": init, "summed": summed,
                          "updated": updated, "x": x.asnumpy().tolist(), "y": [float(y.asnumpy().min()),
                          float(y.asnumpy().max())]})
        """)
    assert code == 0, err
    got = results(tmp_path)
    assert sorted(got) == [0, 1]
    ranks = np.arange(2)
    for r in got.values():
        assert r["n"] == 2 and r["type"] == "dist_sync"
        assert np.all(np.array(r["init"]) == 5)
        assert np.all(np.array(r["summed"]) == (ranks + 1).sum())
        assert np.all(np.array(r["updated"]) == (ranks + 1).sum() + 2 * ((ranks + 1) + 1).sum())
        assert np.all(np.array(r["x"]) == ranks.sum())  # without an updater: the sum is stored
        assert r["y"] == [float((ranks + 2).sum())] * 2


def test_dist_device_sync_merges_on_the_device_and_updates_there(tmp_path):
    # The asynchronous test device stands for GPUs: two per worker, merged there, summed over the
    # workers through host memory, copied back for the updater (MXNet's dist_device_sync).
    code, _, err, _ = launch(tmp_path, """
        import os
        import mxplug as mx
        mx.library.load(os.environ["TESTDEV"], verbose=False)
        kv = mx.kv.create('dist_device_sync')
        r = kv.rank
        kv.init('w', mx.nd.ones((4, 5), ctx=mx.gpu(0)) * (r + 3))
        kv._set_updater(lambda key, grad, weight: weight.__setitem__(slice(None), weight - 0.5 * grad))
        grads = [mx.nd.ones((4, 5), ctx=mx.gpu(i)) * (r + 1) * (i + 1) for i in (0, 1)]
        kv.push('w', grads)
        outs = [mx.nd.zeros((4, 5), ctx=mx.gpu(i)) for i in (0, 1)]
        kv.pull('w', out=outs)
        report({"rank": r, "ctx": [str(o.context) for o in outs], "w": [o.asnumpy().tolist() for o in outs]})
        """, env={"MXPLUG_GPU_BACKEND": "testdev", "CUDA_VISIBLE_DEVICES": "",
                  "TESTDEV": str(TEST_PLUGINS / "devices" / "libtest_device.so")})
    assert code == 0, err
    got = results(tmp_path)
    grad_sum = sum((r + 1) * (i + 1) for r in (0, 1) for i in (0, 1))
    for r in got.values():
        assert r["ctx"] == ["gpu(0)", "gpu(1)"]
        assert np.all(np.array(r["w"]) == 3 - 0.5 * grad_sum)


def test_workers_that_init_different_keys_are_told_which(tmp_path):
    code, _, err, _ = launch(tmp_path, """
        import mxplug as mx
        kv = mx.kv.create('dist_sync')
        kv.init('w', mx.nd.ones(3 + kv.rank))
        """)
    assert code == 1
    assert ("kvstore init: key 'w' is (3,) float32 here (12 bytes), while another worker's has between 12 and "
            "16 bytes (worker 0 of 2 (process 0 of 4))") in err, err
    assert left_running(tmp_path) == []


def test_commands_reach_every_server(tmp_path):
    code, out, err, _ = launch(tmp_path, """
        import mxplug as mx
        kv = mx.kv.create('dist_sync')
        if kv.rank == 0:
            kv._send_command_to_servers(5, "hello")
        kv._barrier()
        """)
    assert code == 0, err
    # MXNet's KVStoreServer prints the commands it does not know, in these words.
    assert sorted(line for line in out.splitlines() if "unknown command" in line) == [
        "server 0, unknown command (5, hello)", "server 1, unknown command (5, hello)"]


FASHION = "/usr/share/datasets/fashion-mnist"
EPOCH_SCRIPT = REPO / "tests" / "python" / "dist_mlp_epoch.py"


def test_dist_sync_gives_the_weights_of_one_process_and_of_mxnet(tmp_path):
    # 250 batches of the seeds' MLP (tests/python/dist_mlp_epoch.py): 2 workers at batch 64 on
    # num_parts=2 halves, against one process at batch 128 over the same batches, and against the
    # same job under MXNet 1.9.1 (servers merging and updating), all from the same weights.
    require_mxnet()
    for name in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"):
        with gzip.open(os.path.join(FASHION, name + ".gz")) as f, open(tmp_path / name, "wb") as g:
            shutil.copyfileobj(f, g)
    code, _, err, _ = launch(tmp_path, """
        import runpy, sys
        sys.argv = ["dist_mlp_epoch.py", "mxplug", "dist", ".", "mxplug"]
        runpy.run_path(%r, run_name="__main__")
        """ % str(EPOCH_SCRIPT), timeout=120)
    assert code == 0, err
    env = dict(os.environ, PYTHONPATH=str(PYTHON_PACKAGES), MXPLUG_PLUGIN_PATH="")
    single = subprocess.run([sys.executable, str(EPOCH_SCRIPT), "mxplug", "single", ".", "single"], cwd=tmp_path,
                            env=env, capture_output=True, text=True, timeout=120)
    assert single.returncode == 0, single.stderr
    codes, _, errs = run_mxnet_job([str(EPOCH_SCRIPT), "mxnet", "dist", ".", "mxnet"], cwd=tmp_path, timeout=120)
    assert codes == [0, 0], errs
    ours = [np.load(tmp_path / ("mxplug.%d.npz" % r)) for r in (0, 1)]
    one, theirs = np.load(tmp_path / "single.0.npz"), np.load(tmp_path / "mxnet.0.npz")
    assert sorted(one.files) == ["fc%d_%s" % (i, w) for i in (1, 2, 3) for w in ("bias", "weight")]
    for name in one.files:
        np.testing.assert_array_equal(ours[0][name], ours[1][name])  # every worker holds the same
        np.testing.assert_allclose(ours[0][name], one[name], rtol=0, atol=1e-5, err_msg=name)
        np.testing.assert_allclose(ours[0][name], theirs[name], rtol=0, atol=1e-5, err_msg=name)
        assert np.abs(one[name]).max() > 0.2  # trained: the weights started within 0.1


def test_the_training_example_runs_as_a_job(tmp_path):
    # examples/train/train_mnist.py --kv-store dist_sync, as the README starts it (one epoch of
    # the MLP here): each worker trains on its half, both score the test set, worker 0 alone
    # writes the checkpoint.
    env = dict(os.environ, PYTHONPATH=str(PYTHON_PACKAGES), MXPLUG_PLUGIN_PATH="")
    p = subprocess.run([sys.executable, str(LAUNCH), "-n", "2", "-s", "2", "--launcher", "local", sys.executable,
                        str(REPO / "examples" / "train" / "train_mnist.py"), "--kv-store", "dist_sync",
                        "--network", "mlp", "--num-epochs", "1", "--goal", "0.8", "--check", "--no-progress",
                        "--checkpoint-dir", "ck"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    accuracy = dict(re.findall(r"worker (\d): mlp: test accuracy (\S+) \(goal 0.80 reached\)", p.stdout))
    assert sorted(accuracy) == ["0", "1"], p.stdout
    assert all(float(a) >= 0.8 for a in accuracy.values())
    assert sorted(f.name for f in (tmp_path / "ck").iterdir()) == ["mlp-0001.params", "mlp-0001.states",
                                                                   "mlp-symbol.json"]


AGENT = REPO / "tools" / "netns-agent.sh"


def _ip(*args):
    return subprocess.run(["ip"] + list(args), capture_output=True, text=True)


def _veth_bytes(ns, dev):
    """(received, sent) bytes of `dev` in namespace `ns`."""
    stats = json.loads(_ip("-n", ns, "-s", "-j", "link", "show", dev).stdout)[0]["stats64"]
    return stats["rx"]["bytes"], stats["tx"]["bytes"]


def _netns_of(ns):
    """The namespace identity /proc/PID/ns/net shows for a process inside `ns`."""
    return subprocess.run(["ip", "netns", "exec", ns, "readlink", "/proc/self/ns/net"], capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def two_hosts():
    """Two "hosts" on this machine: network namespaces joined by a veth pair on a private link
    (10.231.0.1 and .2/24, nothing routed beyond it). Yields (names, addresses)."""
    if os.geteuid() != 0:
        pytest.skip("making network namespaces (ip netns) needs root")
    tag = "mxp%d" % os.getpid()
    names, devs, addrs = [tag + "a", tag + "b"], [tag + "va", tag + "vb"], ["10.231.0.1", "10.231.0.2"]
    made = []
    try:
        for ns in names:
            r = _ip("netns", "add", ns)
            if r.returncode:
                pytest.skip("this machine refuses network namespaces: " + r.stderr.strip())
            made.append(ns)
        steps = [["link", "add", devs[0], "type", "veth", "peer", "name", devs[1]]]
        for ns, dev, addr in zip(names, devs, addrs):
            steps += [["link", "set", dev, "netns", ns], ["-n", ns, "addr", "add", addr + "/24", "dev", dev],
                      ["-n", ns, "link", "set", dev, "up"], ["-n", ns, "link", "set", "lo", "up"]]
        for step in steps:
            r = _ip(*step)
            assert r.returncode == 0, "ip %s: %s" % (" ".join(step), r.stderr)
        yield names, devs, addrs
    finally:
        for ns in made:
            _ip("netns", "del", ns)


def test_a_job_over_two_hosts_made_of_network_namespaces(tmp_path, two_hosts):
    # mpirun runs in the first namespace and reaches the second through the project's launch agent
    # (MXPLUG_LAUNCH_AGENT, as ssh would reach another machine); Open MPI may only use TCP on the
    # private link, and places the processes on the hosts in turn: worker 0 and server 0 on the
    # first, worker 1 and server 1 on the second. The traffic of the sums crosses the veth pair.
    names, devs, addrs = two_hosts
    (tmp_path / "hosts").write_text("".join("%s slots=2\n" % a for a in addrs))
    path = tmp_path / "job.py"
    path.write_text(REPORT + textwrap.dedent("""
        import os
        import numpy as np
        import mxplug as mx
        n = 1000000
        kv = mx.kv.create('dist_sync')
        r = kv.rank
        kv.init('w', mx.nd.ones(n) * (r + 7))
        w0, w = mx.nd.zeros(n), mx.nd.zeros(n)
        kv.pull('w', out=w0)
        kv.push('w', mx.nd.ones(n) * (r + 1))
        kv.pull('w', out=w)
        ka = mx.kv.create('dist_async')                 # its big key split over both servers
        ka.init('v', mx.nd.zeros(n))
        ka.push('v', mx.nd.arange(n) * (r + 1))
        ka._barrier()
        v = mx.nd.zeros(n)
        ka.pull('v', out=v)
        report({"rank": r, "net": os.readlink("/proc/self/ns/net"), "host": os.uname().nodename,
                "w0": [float(w0.asnumpy().min()), float(w0.asnumpy().max())],
                "w": [float(w.asnumpy().min()), float(w.asnumpy().max())],
                # Each server keeps the last push it got of its half, from either worker.
                "v_is_a_push": all(bool((part == base).all() or (part == 2 * base).all())
                                   for part, base in zip(np.split(v.asnumpy(), 2),
                                                         np.split(mx.nd.arange(n).asnumpy(), 2)))})
        """))
    before = _veth_bytes(names[0], devs[0])
    env = dict(os.environ, PYTHONPATH=str(PYTHON_PACKAGES), MXPLUG_PLUGIN_PATH="", MXPLUG_LAUNCH_AGENT=str(AGENT),
               OMPI_MCA_btl="tcp,self", OMPI_MCA_rmaps_base_mapping_policy="node", MXPLUG_KVSTORE_TIMEOUT="20",
               MXNET_KVSTORE_BIGARRAY_BOUND="1000")
    p = subprocess.run(["ip", "netns", "exec", names[0], sys.executable, str(LAUNCH), "-n", "2", "-s", "2",
                        "--launcher", "ssh", "-H", str(tmp_path / "hosts"), "-i", "10.231.0.0/24",
                        sys.executable, str(path)], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=90)
    assert p.returncode == 0, p.stdout + p.stderr
    after = _veth_bytes(names[0], devs[0])
    got = results(tmp_path)
    assert sorted(got) == [0, 1]
    assert got[0]["net"] != got[1]["net"]                 # two namespaces...
    assert got[1]["host"] == addrs[1]                      # ...the second reached through the agent
    assert got[0]["net"] == _netns_of(names[0]) and got[1]["net"] == _netns_of(names[1])
    for r in got.values():
        assert r["w0"] == [7.0] * 2                        # rank 0's value
        assert r["w"] == [1.0 + 2.0] * 2                   # no updater: the sum of the pushes
        assert r["v_is_a_push"]                            # no optimizer: per server, the last push of either
    received, sent = after[0] - before[0], after[1] - before[1]
    assert received > 4e6 and sent > 4e6, (received, sent)  # the 4 MB key crossed both ways
    assert left_running(tmp_path) == []


# An optimizer the servers unpickle from a module of the job's folder (its script cannot be
# imported there: a server serves from `import mxplug`); it records which part of which key each
# server process updates.
RECORDING_SGD = """import os
import mxplug as mx

class RecordingSGD(mx.optimizer.SGD):
    def update(self, index, weight, grad, state):
        with open("parts.%s.txt" % os.environ["OMPI_COMM_WORLD_RANK"], "a") as f:
            f.write("%s %d %s\\n" % (index, weight.size, os.environ["DMLC_ROLE"]))
        super().update(index, weight, grad, state)
"""


def test_dist_async_updates_on_the_servers_and_splits_big_keys(tmp_path):
    (tmp_path / "recording.py").write_text(RECORDING_SGD)
    code, _, err, _ = launch(tmp_path, """
        import mxplug as mx
        from recording import RecordingSGD
        kv = mx.kv.create('dist_async')
        r = kv.rank
        kv.init(['a', 'b', 'big'], [mx.nd.ones((2, 3)) * (r + 5), mx.nd.arange(6) * (r + 1),
                                     mx.nd.arange(2001) * (r + 1)])      # rank 0's values win
        a, b, big = mx.nd.zeros((2, 3)), mx.nd.zeros(6), mx.nd.zeros(2001)
        kv.pull(['a', 'b', 'big'], out=[a, b, big])
        init = [a.asnumpy().tolist(), b.asnumpy().tolist(), big.asnumpy().tolist()]
        kv._barrier()                                  # no push before both have pulled (async)
        kv.push('a', mx.nd.ones((2, 3)) * (r + 1))    # no optimizer yet: a push replaces the value
        kv._barrier()
        kv.pull('a', out=a)
        replaced = a.asnumpy().tolist()
        kv._barrier()
        kv.set_optimizer(RecordingSGD(learning_rate=0.5, rescale_grad=0.25))
        kv.push(['b', 'big'], [[mx.nd.ones(6) * (r + 1), mx.nd.ones(6)], mx.nd.arange(2001) * (r + 1)])
        kv._barrier()                                  # both workers' pushes are applied
        kv.pull(['b', 'big', 'b'], out=[b, big, a.reshape(6)])
        try:
            kv.save_optimizer_states("states")
            saved = "saved"
        except RuntimeError as e:
            saved = str(e)
        try:
            kv._set_updater(lambda *args: None)
            updater = "set"
        except mx.MXNetError as e:
            updater = str(e)
        report({"rank": r, "init": init, "replaced": replaced, "b": b.asnumpy().tolist(),
                "big": big.asnumpy().tolist(), "b2": a.asnumpy().ravel().tolist(), "saved": saved,
                "updater": updater})
        """, env={"MXNET_KVSTORE_BIGARRAY_BOUND": "1000"})
    assert code == 0, err
    got = results(tmp_path)
    assert sorted(got) == [0, 1]
    grads_b = np.ones(6) * (1 + 2) + 2 * np.ones(6)  # each worker's two values merged, then both workers'
    for r in got.values():
        assert r["init"] == [[[5.0] * 3] * 2, list(range(6)), list(range(2001))]
        assert r["replaced"] in ([[1.0] * 3] * 2, [[2.0] * 3] * 2)  # the last push of either worker
        np.testing.assert_array_equal(r["b"], np.arange(6) - 0.5 * 0.25 * grads_b)
        np.testing.assert_array_equal(r["b2"], r["b"])
        np.testing.assert_allclose(r["big"], np.arange(2001) - 0.5 * 0.25 * np.arange(2001) * 3, rtol=1e-6)
        assert "runs on the servers" in r["saved"] and "cannot save them" in r["saved"]
        assert "the updater runs on the servers; give them an optimizer with set_optimizer" in r["updater"]
    # Where the parts were updated (MXNet's placement): 'b' (key 1 in init order) whole on server
    # (1 * 9973) % 2 = 1; 'big' (2,001 elements, over the bound of 1,000) split 1,001 + 1,000.
    parts = {int(p.name.split(".")[1]): sorted(p.read_text().splitlines()) for p in tmp_path.glob("parts.*.txt")}
    first, second = sorted(parts)
    assert parts[first] == ["big 1001 server"] * 2
    assert parts[second] == ["b 6 server"] * 2 + ["big 1000 server"] * 2


def test_dist_async_trains_a_module_to_accuracy(tmp_path):
    code, _, err, _ = launch(tmp_path, """
        import numpy as np
        import mxplug as mx
        kv = mx.kv.create('dist_async')
        rng = np.random.RandomState(kv.rank)
        x = rng.randn(1000, 10).astype('float32')
        y = (x @ (np.arange(10) - 4.5) > 0).astype('float32')
        it = mx.io.NDArrayIter(x, y, batch_size=50, label_name='softmax_label')
        net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=2, name='fc'),
                                   name='softmax')
        mod = mx.mod.Module(net, context=mx.cpu())
        mod.fit(it, num_epoch=4, kvstore=kv, optimizer='sgd', optimizer_params={'learning_rate': 0.5},
                initializer=mx.init.Xavier())
        report({"rank": kv.rank, "acc": mod.score(it, 'acc')[0][1]})
        """)
    assert code == 0, err
    got = results(tmp_path)
    assert sorted(got) == [0, 1]
    for r in got.values():
        assert r["acc"] > 0.95, r


def test_dist_async_needs_servers(tmp_path):
    code, _, err, _ = launch(tmp_path, """
        import mxplug as mx
        mx.kv.create('dist_async')
        """, servers=0)
    assert code == 1
    assert "kvstore 'dist_async' keeps its keys on servers and this job has none" in err, err
    assert left_running(tmp_path) == []


def test_a_store_outside_a_job_says_how_to_start_one(mx):
    with pytest.raises(mx.MXNetError, match="not started by mpirun.*tools/launch.py"):
        mx.kv.create('dist_sync')
    kv = mx.kv.create('local')
    with pytest.raises(NotImplementedError, match="compression_params"):
        kv.set_gradient_compression({'type': '2bit', 'threshold': 0.5})


def test_a_worker_killed_ends_the_job_naming_it(tmp_path):
    code, _, err, seconds = launch(tmp_path, """
        import os, signal, time
        import mxplug as mx
        kv = mx.kv.create('dist_sync')
        kv.init('w', mx.nd.ones(10))
        if kv.rank == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(60)
        """)
    assert code != 0
    assert "the job failed: worker 1 (rank 1) was killed by SIGKILL" in err, err
    assert seconds < 5 + 3  # the launcher's bound, plus starting 4 interpreters
    assert left_running(tmp_path) == []


def test_a_server_killed_ends_the_job_naming_it(tmp_path):
    code, _, err, _ = launch(tmp_path, """
        import os, signal, time
        if os.environ["DMLC_ROLE"] == "server" and os.environ["OMPI_COMM_WORLD_RANK"] == "3":
            os.kill(os.getpid(), signal.SIGTERM)
        import mxplug as mx
        kv = mx.kv.create('dist_sync')
        time.sleep(60)
        """)
    assert code != 0
    assert "the job failed: server 1 (rank 3) was killed by SIGTERM" in err, err
    assert left_running(tmp_path) == []


def test_a_worker_whose_script_fails_ends_the_job(tmp_path):
    code, _, err, _ = launch(tmp_path, """
        import mxplug as mx
        kv = mx.kv.create('dist_sync')
        if kv.rank == 1:
            raise ValueError("no data for worker 1")
        kv.init('w', mx.nd.ones(10))
        """)
    assert code == 1
    assert "mxplug kvstore: worker 1 of 2 (process 1 of 4): the script raised ValueError: no data for worker 1" in err
    assert re.search(r"the job failed: worker 1 \(rank 1\) ended (it|the job through MPI_Abort) with code 1\n", err), err
    assert left_running(tmp_path) == []


def test_a_worker_exit_code_is_the_jobs(tmp_path):
    code, _, err, _ = launch(tmp_path, """
        import sys
        import mxplug as mx
        kv = mx.kv.create('dist_sync')
        sys.exit(3 if kv.rank == 0 else 0)
        """, servers=1)
    assert code == 3
    assert "the job failed: worker 0 (rank 0) exited with code 3" in err, err


def test_a_stalled_worker_ends_the_job_at_the_deadline_naming_the_key(tmp_path):
    code, _, err, seconds = launch(tmp_path, """
        import time
        import mxplug as mx
        kv = mx.kv.create('dist_sync')
        kv.init('fc1_weight', mx.nd.ones(10))
        if kv.rank == 1:
            time.sleep(60)
        kv.push('fc1_weight', mx.nd.ones(10))
        a = mx.nd.zeros(10)
        kv.pull('fc1_weight', out=a)
        a.asnumpy()
        """, env={"MXPLUG_KVSTORE_TIMEOUT": "2"})
    assert code == 124
    assert ("mxplug kvstore: worker 0 of 2 (process 0 of 4): kvstore push: summing key 'fc1_weight' over the "
            "workers: no answer after 2.0 s (MXPLUG_KVSTORE_TIMEOUT); ending the job") in err, err
    assert re.search(r"the job failed: worker 0 \(rank 0\) ended (it|the job through MPI_Abort) with code 124", err)
    assert seconds < 2 + 5
    assert left_running(tmp_path) == []


def test_launcher_arguments_are_checked_as_mxnets(tmp_path):
    p = subprocess.run([sys.executable, str(LAUNCH), "-n", "2", "python3", "x.py"], capture_output=True, text=True)
    assert p.returncode == 2 and "--launcher ssh needs -H HOSTFILE" in p.stderr
    p = subprocess.run([sys.executable, str(LAUNCH), "-n", "2", "--launcher", "yarn", "python3", "x.py"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "--launcher yarn is not supported" in p.stderr
    code, out, err, _ = launch(tmp_path, """
        import json, os
        if os.environ["DMLC_ROLE"] == "worker":
            report({"rank": int(os.environ["OMPI_COMM_WORLD_RANK"]),
                              "env": {k: os.environ.get(k) for k in ("DMLC_ROLE", "DMLC_NUM_WORKER",
                                      "DMLC_NUM_SERVER", "DMLC_PS_ROOT_URI", "DMLC_PS_ROOT_PORT")}})
        import mxplug
        """, workers=2, servers=3)
    assert code == 0, err
    got = results(tmp_path)
    assert sorted(got) == [0, 1]
    assert got[0]["env"] == {"DMLC_ROLE": "worker", "DMLC_NUM_WORKER": "2", "DMLC_NUM_SERVER": "3",
                             "DMLC_PS_ROOT_URI": "127.0.0.1", "DMLC_PS_ROOT_PORT": "9091"}


def test_an_idle_server_leaves_its_core_to_others(tmp_path):
    # The server reports its CPU time at exit (atexit runs when `import mxplug` ends its life);
    # the worker reports what starting up and joining cost it, then keeps the server idle for 3 s.
    code, out, err, _ = launch(tmp_path, """
        import atexit, json, os, resource, time
        def cpu():
            u = resource.getrusage(resource.RUSAGE_SELF)
            return u.ru_utime + u.ru_stime
        if os.environ["DMLC_ROLE"] == "server":
            atexit.register(lambda: report({"rank": "server", "cpu": cpu()}))
        import mxplug as mx
        kv = mx.kv.create('dist_sync')
        started = cpu()
        time.sleep(3)
        report({"rank": kv.rank, "cpu": started})
        """, workers=1, servers=1)
    assert code == 0, err
    got = results(tmp_path)
    idle = got["server"]["cpu"] - got[0]["cpu"]
    assert idle < 0.3, "the server used %.2f s of CPU while idle for 3 s (more than 10%% of a core)" % idle
