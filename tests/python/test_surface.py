"""The surface-parity check: every public name of MXNet 1.9.1's Python modules and of its main
classes, every operator it registers, and each operator's argument names, exist in mxplug, or are
listed in mxnet_exclusions.txt with the reason. A new gap, or an exclusion that no longer matches
a gap, fails the check (docs/python.md)."""
import fnmatch
import json
import os
import pathlib
import subprocess
import sys

from conftest import MXNET_PYTHON, PYTHON_PACKAGES, require_mxnet

EXCLUSIONS = pathlib.Path(__file__).with_name("mxnet_exclusions.txt")
# Where MXNet puts a function or method per operator.
OP_PLACES = ("mx.nd", "mx.sym", "NDArray", "Symbol")

# Run under MXNet (argv[1] 'mxnet') and under mxplug: the public names, as JSON.
ENUMERATE = r"""
import importlib, inspect, json, sys, warnings
warnings.simplefilter("ignore")
pkg = sys.argv[1]
mx = importlib.import_module(pkg)
MODULES = ["", "nd", "nd.random", "sym", "sym.random", "io", "recordio", "kv", "kvstore", "mod", "model",
           "optimizer", "lr_scheduler", "init", "metric", "callback", "context", "executor", "name",
           "attribute", "base", "engine", "operator", "profiler", "random", "autograd", "test_utils",
           "visualization", "library", "runtime", "util", "gluon", "gluon.nn", "gluon.loss", "gluon.data",
           "gluon.data.vision", "gluon.data.vision.transforms", "gluon.utils", "gluon.rnn", "rnn", "gluon.model_zoo.vision", "image", "nd.image"]
CLASSES = {"NDArray": "nd.NDArray", "Symbol": "sym.Symbol", "Executor": "executor.Executor",
           "Module": "mod.Module", "DataIter": "io.DataIter", "DataBatch": "io.DataBatch",
           "DataDesc": "io.DataDesc", "KVStore": "kvstore.KVStore", "Block": "gluon.Block",
           "HybridBlock": "gluon.HybridBlock", "Parameter": "gluon.Parameter",
           "ParameterDict": "gluon.ParameterDict", "Trainer": "gluon.Trainer",
           "DataLoader": "gluon.data.DataLoader", "Dataset": "gluon.data.Dataset"}

def lookup(path):
    obj = mx
    for part in filter(None, path.split(".")):
        obj = getattr(obj, part)
    return obj

def module_names(module, where):
    # A module's public API: the names in its __all__ where it has one; otherwise its submodules
    # and the functions and classes defined in it or below it (not what it imports from elsewhere:
    # os, numpy, MXNet's C-API helpers). The package's top level re-exports on purpose, and so does
    # mx.random (mx.nd.random's functions).
    listed = getattr(module, "__all__", None)
    own = module.__name__
    names = []
    for n in dir(module):
        if n.startswith("_"):
            continue
        try:
            obj = getattr(module, n)
        except Exception:
            continue
        if listed is not None:
            keep = n in listed
        elif inspect.ismodule(obj):
            keep = obj.__name__.startswith(pkg + ".") and (where == "" or obj.__name__ == own + "." + n)
        elif inspect.isclass(obj) or callable(obj):
            origin = getattr(obj, "__module__", None) or ""
            if where in ("", "random"):
                keep = origin.startswith(pkg) and origin != pkg + ".base" or (where == "" and n == "MXNetError")
            else:
                keep = origin == own or origin.startswith(own + ".")
        else:
            keep = False
        if keep:
            names.append(n)
    return names

out = {}
if len(sys.argv) > 2:  # probing: which of the names given on stdin this package has
    wanted = json.loads(sys.stdin.read())
    for where, names in wanted.items():
        if where in ("op", "args"):
            continue
        try:
            obj = lookup(CLASSES.get(where, where[3:] if where.startswith("mx.") else ""))
        except AttributeError:
            out[where] = []
            continue
        out[where] = [n for n in names if hasattr(obj, n)]
else:
    for m in MODULES:
        try:
            out["mx" + ("." + m if m else "")] = module_names(lookup(m), m)
        except AttributeError:
            out["mx" + ("." + m if m else "")] = []
    for name, path in CLASSES.items():
        cls = lookup(path)
        out[name] = [n for n in dir(cls) if not n.startswith("_") and n not in dir(object)]
ops = mx.operator.get_all_registered_operators()
out["op"] = ops
args = {}
for op in ops:
    a = mx.operator.get_operator_arguments(op)
    # The variadic input (MXNet's NDArray-or-Symbol[]) is not a named argument one can pass. The
    # inputs come first, as in the functions MXNet generates (its registry interleaves some ops'
    # inputs and parameters: _sample_uniform's low, shape, dtype, high).
    named = [(n, t) for n, t in zip(a.names, a.types) if not t.startswith("NDArray-or-Symbol[]")]
    args[op] = ([n for n, t in named if t.startswith("NDArray")] +
                [n for n, t in named if not t.startswith("NDArray")])
out["args"] = args
print("SURFACE " + json.dumps(out))
"""


def surface(python, package, env, probe=None):
    """MXNet's public names (probe None), or which of `probe`'s names `package` has; with the
    operators and their argument names either way."""
    args = [str(python), "-c", ENUMERATE, package] + (["probe"] if probe is not None else [])
    p = subprocess.run(args, input=json.dumps(probe or {}), capture_output=True, text=True, env=env, timeout=300)
    lines = [l for l in p.stdout.splitlines() if l.startswith("SURFACE ")]
    assert p.returncode == 0 and lines, p.stderr[-3000:]
    return json.loads(lines[-1][len("SURFACE "):])


def is_subsequence(names, of):
    it = iter(of)
    return all(n in it for n in names)


def gaps(theirs, ours):
    """(where, name) for each of MXNet's names that mxplug lacks; ('args', op) for an op whose
    MXNet argument names are not all mxplug's, in MXNet's order."""
    found = []
    for where, names in theirs.items():
        if where == "args":
            for op, wanted in names.items():
                if op in ours["args"] and not is_subsequence(wanted, ours["args"][op]):
                    found.append(("args", op))
            continue
        have = set(ours.get(where, []))
        found += [(where, n) for n in names if n not in have]
    return found


def read_exclusions():
    """[(where, pattern, reason, line number)] of mxnet_exclusions.txt."""
    rules = []
    for number, line in enumerate(EXCLUSIONS.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split(None, 2)
        assert len(parts) == 3 and parts[2].strip(), "%s:%d: expected 'where pattern reason', got %r" % (
            EXCLUSIONS.name, number, line)
        rules.append((parts[0], parts[1], parts[2], number))
    return rules


def test_every_name_and_operator_of_mxnet_exists_or_is_excluded_with_its_reason():
    require_mxnet()
    theirs = surface(MXNET_PYTHON, "mxnet", dict(os.environ))
    ours = surface(sys.executable, "mxplug", dict(os.environ, PYTHONPATH=str(PYTHON_PACKAGES)), probe=theirs)
    rules = read_exclusions()
    missing = gaps(theirs, ours)

    def listed(gap):
        return any(gap[0] == where and fnmatch.fnmatchcase(gap[1], pattern) for where, pattern, _, _ in rules)

    def excluded(gap):
        # An operator's function (mx.nd.<op>, mx.sym.<op>) and fluent method (a.<op>()) go with the op.
        return listed(gap) or (gap[0] in OP_PLACES and gap[1] in theirs["op"] and listed(("op", gap[1])))

    unexplained = ["%s %s" % g for g in missing if not excluded(g)]
    stale = ["line %d: %s %s" % (n, where, pattern) for where, pattern, _, n in rules
             if not any(g[0] == where and fnmatch.fnmatchcase(g[1], pattern) for g in missing)]
    problems = []
    if unexplained:
        problems.append("MXNet 1.9.1 has these and mxplug does not; implement them, or list them in %s with "
                        "the reason:\n  " % EXCLUSIONS.name + "\n  ".join(unexplained))
    if stale:
        problems.append("these exclusions match no gap any more; remove them:\n  " + "\n  ".join(stale))
    assert not problems, "\n".join(problems)
