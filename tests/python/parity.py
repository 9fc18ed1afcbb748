"""The behaviour-parity harness: the same snippets run under MXNet 1.9.1 and under mxplug, each in
a fresh interpreter, and what they give is compared: values (to a tolerance), shapes, dtypes and
Python types, or the exception's class and, where a case asks, the words of its message.

A case is a snippet of statements that sees `mx` (mxnet or mxplug), `np`, `pickle` and `copy` and
leaves its result in `r`. After it runs, `mx.nd.waitall()` is called, so that an error MXNet
defers to the next wait counts as the case's error on both sides."""
import json
import os
import subprocess
import sys

import numpy as np

from conftest import MXNET_PYTHON, PYTHON_PACKAGES, require_mxnet

RUNNER = r"""
import copy, json, pickle, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
import %s as mx

def encode(x):
    if hasattr(x, "asnumpy") and hasattr(x, "shape") and not isinstance(x, type):
        a = x.asnumpy()
        return {"array": a.astype(np.float64).ravel().tolist(), "dtype": a.dtype.name,
                "shape": list(a.shape), "type": type(x).__name__}
    if isinstance(x, np.ndarray):
        return {"array": x.astype(np.float64).ravel().tolist(), "dtype": x.dtype.name,
                "shape": list(x.shape), "type": "ndarray"}
    if isinstance(x, np.generic):
        return {"scalar": x.item(), "dtype": x.dtype.name}
    if isinstance(x, (list, tuple)):
        return {"seq": [encode(v) for v in x], "type": type(x).__name__}
    if isinstance(x, dict):
        return {"dict": {str(k): encode(v) for k, v in sorted(x.items(), key=lambda kv: str(kv[0]))}}
    if isinstance(x, type):
        return {"class": x.__name__}
    if x is None or isinstance(x, (bool, int, float, str)):
        return {"py": x, "type": type(x).__name__}
    return {"type": type(x).__name__}

out = {}
for name, code in json.loads(sys.stdin.read()).items():
    ns = {"mx": mx, "np": np, "pickle": pickle, "copy": copy}
    try:
        exec(code, ns)
        mx.nd.waitall()
        out[name] = {"value": encode(ns.get("r"))}
    except Exception as e:
        out[name] = {"error": type(e).__name__, "message": " ".join(str(e).split())}
print("PARITY " + json.dumps(out))
"""


class _Crashed(AssertionError):
    """The interpreter died from a signal (a segfault, or glibc's abort on a corrupted heap)."""


def _run(python, package, cases, env):
    p = subprocess.run([str(python), "-c", RUNNER % package], input=json.dumps(cases), capture_output=True,
                       text=True, timeout=300, env=env)
    lines = [l for l in p.stdout.splitlines() if l.startswith("PARITY ")]
    if p.returncode < 0:
        raise _Crashed("%s died from signal %d: %s" % (package, -p.returncode, p.stderr[-3000:]))
    assert p.returncode == 0 and lines, "%s: %s" % (package, p.stderr[-3000:])
    return json.loads(lines[-1][len("PARITY "):])


def _run_mxnet(cases, env=None, attempts=3):
    """MXNet's side, run again when MXNet itself crashes: MXNet 1.9.1 dies now and then in its
    iterators' threads (CSVIter: a segfault, or glibc's "corrupted double-linked list", about one
    run in ten on a loaded machine), which says nothing of mxplug. A case that fails for any other
    reason fails at once; mxplug's side is never run again."""
    for attempt in range(attempts):
        try:
            return _run(MXNET_PYTHON, "mxnet", cases, dict(os.environ, **(env or {})))
        except _Crashed:
            if attempt == attempts - 1:
                raise


def run_both(cases, mxnet_env=None):
    """{case: snippet} run under MXNet 1.9.1 (with `mxnet_env` added to its environment) and under
    mxplug: (MXNet's results, mxplug's)."""
    require_mxnet()
    theirs = _run_mxnet(cases, mxnet_env)
    ours = _run(sys.executable, "mxplug", cases, dict(os.environ, PYTHONPATH=str(PYTHON_PACKAGES)))
    return theirs, ours


def _same(a, b, rtol, where):
    if isinstance(a, dict) and "array" in a:
        assert isinstance(b, dict) and "array" in b, "%s: MXNet gives an array, mxplug %r" % (where, b)
        assert (a["shape"], a["dtype"]) == (b["shape"], b["dtype"]), \
            "%s: MXNet gives %s %s, mxplug %s %s" % (where, a["shape"], a["dtype"], b["shape"], b["dtype"])
        assert a["type"] == b["type"], "%s: MXNet gives a %s, mxplug a %s" % (where, a["type"], b["type"])
        np.testing.assert_allclose(b["array"], a["array"], rtol=rtol, atol=rtol, err_msg=where)
    elif isinstance(a, dict) and "seq" in a:
        assert isinstance(b, dict) and "seq" in b and a["type"] == b["type"] and len(a["seq"]) == len(b["seq"]), \
            "%s: MXNet gives %r, mxplug %r" % (where, a, b)
        for i, (x, y) in enumerate(zip(a["seq"], b["seq"])):
            _same(x, y, rtol, "%s[%d]" % (where, i))
    elif isinstance(a, dict) and "dict" in a:
        assert isinstance(b, dict) and "dict" in b and a["dict"].keys() == b["dict"].keys(), \
            "%s: MXNet gives keys %s, mxplug %s" % (where, sorted(a["dict"]), sorted(b.get("dict", {})))
        for k in a["dict"]:
            _same(a["dict"][k], b["dict"][k], rtol, "%s[%r]" % (where, k))
    elif isinstance(a, dict) and "py" in a and isinstance(a["py"], float):
        assert isinstance(b, dict) and b.get("type") == "float", "%s: MXNet gives %r, mxplug %r" % (where, a, b)
        np.testing.assert_allclose(b["py"], a["py"], rtol=rtol, err_msg=where)
    else:
        assert a == b, "%s: MXNet gives %r, mxplug %r" % (where, a, b)


def assert_parity(cases, messages=None, rtol=1e-6, mxnet_env=None):
    """Runs `cases` on both and asserts that each gives the same result, or the same exception
    class; `messages` maps a case to words that both exceptions' messages must contain."""
    theirs, ours = run_both(cases, mxnet_env)
    messages = messages or {}
    failures = []
    for name in cases:
        a, b = theirs[name], ours[name]
        try:
            if "error" in a:
                # A snippet that fails under MXNet for a reason of its own code proves nothing.
                assert a["error"] not in ("NameError", "SyntaxError", "ImportError", "ModuleNotFoundError"), \
                    "the case itself is broken under MXNet: %s: %s" % (a["error"], a["message"])
                assert "error" in b, "MXNet raises %s (%s); mxplug gives %r" % (a["error"], a["message"], b)
                assert a["error"] == b["error"], "MXNet raises %s (%s); mxplug raises %s (%s)" % (
                    a["error"], a["message"], b["error"], b["message"])
                for words in ([messages[name]] if isinstance(messages.get(name), str) else messages.get(name, [])):
                    assert words in a["message"], "the case's words %r are not in MXNet's %r" % (words, a["message"])
                    assert words in b["message"], "mxplug's message %r lacks %r" % (b["message"], words)
            else:
                assert "error" not in b, "MXNet gives %r; mxplug raises %s: %s" % (a["value"], b["error"], b["message"])
                _same(a["value"], b["value"], rtol, "r")
        except AssertionError as e:
            failures.append("%s: %s" % (name, e))
    assert not failures, "\n".join(failures)
