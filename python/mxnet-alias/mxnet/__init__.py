"""mxnet, on mxplug: `import mxnet as mx` gives the mxplug package, and `import mxnet.ndarray`,
`from mxnet.io import NDArrayIter`... give mxplug's modules themselves (the same objects, so that
classes, isinstance checks and exceptions are one and the same under either name)."""
import importlib
import importlib.abc
import importlib.util
import sys

try:
    import mxplug as _mxplug
except ImportError as e:  # the alias without the package it names
    raise ImportError("mxnet here is the alias of mxplug, which is not installed: run `pip install .` "
                      "at the top of an mxplug checkout (%s)" % e) from e


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds mxnet.<name> as mxplug.<name>."""

    def find_spec(self, fullname, path, target=None):
        if not fullname.startswith("mxnet."):
            return None
        real = "mxplug." + fullname[len("mxnet."):]
        try:
            if importlib.util.find_spec(real) is None:
                return None
        except ModuleNotFoundError:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        return importlib.import_module("mxplug." + spec.name[len("mxnet."):])

    def exec_module(self, module):
        pass  # mxplug's module, already run


if not any(isinstance(f, _Alias) for f in sys.meta_path):
    sys.meta_path.insert(0, _Alias())
sys.modules[__name__] = _mxplug
