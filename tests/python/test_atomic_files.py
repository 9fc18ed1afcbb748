"""Every file mxplug writes is replaced atomically (Note [Atomic files], core/src/io/atomic_file.cc):
a writer killed at any moment leaves the previous version or the new one, whole; two writers of
one path never fail or mix their bytes; nothing is left behind. Before, Symbol.save truncated the
file and then wrote it, and .params went through a fixed "<path>.tmp" that a second writer
removed or renamed under the first ("No such file or directory")."""
import os
import pickle
import random
import signal
import subprocess
import sys
import time

import pytest

from conftest import PYTHON_PACKAGES

# Writes every kind of file again and again, each version holding its generation number g
# everywhere: .params, symbol JSON, optimizer states, a RecordIO file and its index, a profiler
# trace and an im2rec-style list. Prints "ready" once the first version of all is on disk.
WRITER = r"""
import sys
import mxplug as mx
from mxplug import _core
folder = sys.argv[1]

def write_all(g):
    mx.nd.save(folder + "/w.params", {"w": mx.nd.full((64, 1024), g)})
    mx.sym.Variable("v%d" % g).save(folder + "/s.json")
    updater = mx.optimizer.get_updater(mx.optimizer.SGD(momentum=0.9))
    updater.states = {0: mx.nd.full((4096,), g)}
    updater.save_states(folder + "/o.states")
    rec = mx.recordio.MXIndexedRecordIO(folder + "/r.idx", folder + "/r.rec", "w")
    for i in range(40):
        rec.write_idx(i, bytes([g % 256]) * (100 + i))
    rec.close()
    mx.profiler.set_config(filename=folder + "/p.json")
    mx.profiler.dump()
    with _core.AtomicFile(folder + "/l.lst") as f:
        for i in range(300):
            f.write("%d\t%d\timage%d.jpg\n" % (i, g, i))

write_all(0)
print("ready", flush=True)
g = 1
while True:
    write_all(g)
    g += 1
"""


def generations(mx, folder):
    """The generation each file holds; raises if any file is not one whole version."""
    found = {}
    w = mx.nd.load(str(folder / "w.params"))["w"].asnumpy()
    assert w.shape == (64, 1024) and (w == w.flat[0]).all()
    found["params"] = int(w.flat[0])
    name = mx.sym.load(str(folder / "s.json")).list_arguments()
    assert len(name) == 1 and name[0].startswith("v")
    found["json"] = int(name[0][1:])
    with open(folder / "o.states", "rb") as f:
        states = pickle.loads(f.read())
    s = states[0].asnumpy()
    assert s.shape == (4096,) and (s == s[0]).all()
    found["states"] = int(s[0])
    rec = mx.recordio.MXIndexedRecordIO(str(folder / "r.idx"), str(folder / "r.rec"), "r")
    assert rec.keys == list(range(40))
    payload = [rec.read_idx(i) for i in range(40)]
    rec.close()
    assert [len(p) for p in payload] == [100 + i for i in range(40)]
    assert len({p[0] for p in payload}) == 1 and all(len(set(p)) == 1 for p in payload)
    found["recordio"] = payload[0][0]
    assert (folder / "p.json").read_text().startswith("{") and (folder / "p.json.txt").stat().st_size > 0
    lines = (folder / "l.lst").read_text().splitlines()
    assert len(lines) == 300 and len({line.split("\t")[1] for line in lines}) == 1
    found["list"] = int(lines[0].split("\t")[1])
    return found


def temporaries(folder):
    return sorted(p.name for p in folder.iterdir() if ".tmp-" in p.name)


def test_a_writer_killed_at_random_moments_leaves_whole_files(mx, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(PYTHON_PACKAGES))
    rounds, rng, seen = 50, random.Random(21), set()
    for _ in range(rounds):
        p = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)], stdout=subprocess.PIPE, env=env)
        assert p.stdout.readline() == b"ready\n"
        time.sleep(rng.uniform(0, 0.15))
        p.send_signal(signal.SIGKILL)
        p.wait()
        found = generations(mx, tmp_path)  # whole, or it raises
        seen.update(found.values())
    assert len(seen) > 5  # the kills landed at many different points
    # A temporary named in the instant before its rename may survive a kill; the next save of the
    # same path removes those whose writer is gone, and a save leaves none of its own.
    subprocess.run([sys.executable, "-c", WRITER.replace("while True", "while g < 2"), str(tmp_path)],
                   check=True, env=env, stdout=subprocess.DEVNULL)
    assert temporaries(tmp_path) == []
    assert set(generations(mx, tmp_path).values()) == {1}


def test_two_processes_saving_one_path_never_fail_or_mix(mx, tmp_path):
    script = ("import sys, mxplug as mx\n"
              "for i in range(150):\n"
              "    mx.nd.save(sys.argv[1], {'w': mx.nd.full((256, 256), float(sys.argv[2]))})\n"
              "    mx.sym.Variable('v' + sys.argv[2]).save(sys.argv[1] + '.json')\n")
    env = dict(os.environ, PYTHONPATH=str(PYTHON_PACKAGES))
    path = tmp_path / "shared.params"
    procs = [subprocess.Popen([sys.executable, "-c", script, str(path), str(k)], env=env,
                              stderr=subprocess.PIPE, text=True) for k in (1, 2)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    w = mx.nd.load(str(path))["w"].asnumpy()
    assert (w == w.flat[0]).all() and w.flat[0] in (1, 2)
    assert mx.sym.load(str(path) + ".json").list_arguments()[0] in ("v1", "v2")
    assert temporaries(tmp_path) == []


def test_a_failed_or_abandoned_write_keeps_the_previous_file(mx, tmp_path):
    from mxplug import _core
    path = tmp_path / "keep.txt"
    _core.write_file_atomically(str(path), "old")
    f = _core.AtomicFile(str(path))
    f.write("new and unfinished")
    f.abandon()
    with pytest.raises(ZeroDivisionError):
        with _core.AtomicFile(str(path)) as g:
            g.write("new")
            1 / 0  # an error inside the block abandons the new version
    assert path.read_text() == "old" and temporaries(tmp_path) == []
    with pytest.raises(mx.MXNetError, match="cannot write .*missing/x.params.*No such file or directory"):
        mx.nd.save(str(tmp_path / "missing" / "x.params"), {"w": mx.nd.ones(1)})
    assert path.read_text() == "old"
