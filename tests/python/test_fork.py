"""fork() after the engine and the iterators have started (data-loading code does this): the child
works, the parent is unaffected (Note [Fork] in engine_core.h, Note [Prefetching across fork] in
prefetcher.cc). Before, the child hung forever on its first op. Each scenario runs in its own
interpreter under a timeout, so a hang fails the test instead of stopping the suite."""
import json

import numpy as np

from conftest import run_python

SCENARIO = r"""
import json, os, multiprocessing
import numpy as np
import mxplug as mx

def in_child(fn):
    '''Runs fn in a forked child; returns what it returned, as JSON through a pipe.'''
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.write(w, json.dumps(fn()).encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        text = f.read()
    _, status = os.waitpid(pid, 0)
    assert status == 0, status
    return json.loads(text)

x = mx.nd.array(np.arange(12.0).reshape(3, 4))
x.wait_to_read()                                   # the engine's workers are running
big, w = mx.nd.ones((256, 2048)), mx.nd.ones((512, 2048))
parallel = lambda: float(mx.nd.FullyConnected(big, w, num_hidden=512, no_bias=True).sum().asscalar())
before = parallel()                                # an OpenMP team has run in the parent
pending = (x * 2).sum()                            # not waited for before the fork
csv = os.path.join(os.environ["SCRATCH"], "rows.csv")
np.savetxt(csv, np.arange(400.0).reshape(200, 2), delimiter=",")
it = mx.io.CSVIter(data_csv=csv, data_shape=(2,), batch_size=5, prefetch_buffer=2)
first = it.next().data[0].asnumpy()[0].tolist()    # its reading thread is mid-epoch
rest = lambda: [b.data[0].asnumpy()[0].tolist() for b in it]

child = in_child(lambda: {"ops": (x * 3 + 1).asnumpy().tolist(), "parallel": parallel(),
                          "pending": float(pending.asscalar()), "rest": rest(),
                          "again": (it.reset(), rest())[1]})
with multiprocessing.get_context("fork").Pool(2) as pool:  # the pattern of data-loading workers
    pooled = pool.map(np.sum, [(x + i).asnumpy() for i in range(4)])
print(json.dumps({"child": child, "parent": {"ops": (x * 3 + 1).asnumpy().tolist(), "parallel": parallel(),
                  "pending": float(pending.asscalar()), "rest": rest(), "first": first, "before": before},
                  "pooled": [float(v) for v in pooled]}))
"""


def test_a_forked_child_runs_ops_and_iterators_and_the_parent_goes_on(tmp_path):
    p = run_python(SCENARIO, extra_env={"SCRATCH": str(tmp_path)})
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout.strip().splitlines()[-1])
    x = np.arange(12.0).reshape(3, 4)
    rows = [[float(2 * k), float(2 * k + 1)] for k in range(0, 200, 5)]  # each batch's first row
    for side in ("child", "parent"):
        assert out[side]["ops"] == (x * 3 + 1).tolist(), side
        assert out[side]["parallel"] == 256 * 512 * 2048.0, side
        assert out[side]["pending"] == (x * 2).sum(), side
        assert out[side]["rest"] == rows[1:], side  # the rest of the epoch the fork interrupted
    assert out["child"]["again"] == rows
    assert out["parent"]["first"] == rows[0] and out["parent"]["before"] == 256 * 512 * 2048.0
    assert out["pooled"] == [float((x + i).sum()) for i in range(4)]
