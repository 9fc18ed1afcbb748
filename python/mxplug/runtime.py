"""What this installation was built with (MXNet's ``mx.runtime``): ``Features()``, an ordered
dict of MXNet's feature names to ``Feature`` (``name``, ``enabled``), and ``feature_list()``.

MXNet reports what its one library was compiled with. mxplug's components are plugins, so a
feature is enabled when the build had it (``components.json``, installed beside the plugins
folder) and, for the device and communication features, when its plugin is loaded too."""
import collections
import json
import os
import platform

from . import library

# MXNet 1.9.1's names, in its order.
_NAMES = ["CUDA", "CUDNN", "NCCL", "CUDA_RTC", "TENSORRT", "CPU_SSE", "CPU_SSE2", "CPU_SSE3",
          "CPU_SSE4_1", "CPU_SSE4_2", "CPU_SSE4A", "CPU_AVX", "CPU_AVX2", "OPENMP", "SSE", "F16C",
          "JEMALLOC", "BLAS_OPEN", "BLAS_ATLAS", "BLAS_MKL", "BLAS_APPLE", "LAPACK", "MKLDNN",
          "OPENCV", "CAFFE", "PROFILER", "DIST_KVSTORE", "CXX14", "INT64_TENSOR_SIZE",
          "SIGNAL_HANDLER", "DEBUG", "TVM_OP"]


class Feature(object):
    """A feature and whether this installation has it."""

    def __init__(self, name, enabled):
        self._name = name
        self._enabled = bool(enabled)

    name = property(lambda self: self._name, doc="The feature's name.")
    enabled = property(lambda self: self._enabled, doc="True if this installation has it.")

    def __repr__(self):
        return ("✔ {}" if self.enabled else "✖ {}").format(self.name)


def _components():
    """The build's components (cuda, cudnn, nccl, hip, onednn, mpi), from the components.json
    beside the default plugins folder; {} where there is none."""
    for p in library.plugins():
        if p["source"] == "default folder":
            path = os.path.join(os.path.dirname(os.path.dirname(p["path"])), "components.json")
            if os.path.exists(path):
                with open(path) as f:
                    return json.load(f)
    return {}


def feature_list():
    """Every feature MXNet 1.9.1 names, as ``Feature`` objects, in its order."""
    built = _components()
    loaded = [p for p in library.plugins() if p["state"] == "loaded"]
    devices = {d for p in loaded for d in p["devices"]}
    cuda = bool(built.get("cuda")) and "cuda" in devices
    x86 = platform.machine() in ("x86_64", "AMD64")
    enabled = {
        "CUDA": cuda,
        "CUDNN": cuda and bool(built.get("cudnn")),
        "NCCL": cuda and bool(built.get("nccl")),
        # Built for the baseline of x86-64; oneDNN and OpenBLAS choose wider kernels at run time.
        "CPU_SSE": x86,
        "CPU_SSE2": x86,
        "OPENMP": True,  # the CPU kernels (oneDNN, OpenBLAS, the nn plugin) thread with OpenMP
        "BLAS_OPEN": True,
        "MKLDNN": bool(built.get("onednn")) and any(p["name"] == "nn" for p in loaded),
        "PROFILER": True,
        "DIST_KVSTORE": bool(built.get("mpi")) and any(p["name"] == "mpi" for p in loaded),
        "CXX14": True,
        "INT64_TENSOR_SIZE": True,  # shapes and indices are 64-bit throughout
    }
    return [Feature(name, enabled.get(name, False)) for name in _NAMES]


class Features(collections.OrderedDict):
    """The features by name (one instance, made at first use)."""
    instance = None

    def __new__(cls):
        if cls.instance is None:
            cls.instance = super(Features, cls).__new__(cls)
            super(Features, cls.instance).__init__([(f.name, f) for f in feature_list()])
        return cls.instance

    def __init__(self):  # filled once, in __new__
        pass

    def __repr__(self):
        return str(list(self.values()))

    def is_enabled(self, feature_name):
        """Whether the feature (a name such as 'CUDA', any case) is enabled. RuntimeError for a
        name MXNet does not know, as in MXNet."""
        feature_name = feature_name.upper()
        if feature_name not in self:
            raise RuntimeError("Feature '{}' is unknown, known features are: {}".format(
                feature_name, list(self.keys())))
        return self[feature_name].enabled
