"""The CUDA plugin: built wherever nvcc is found, it loads on every machine, lists its kernels,
and reports 0 devices with the runtime's reason where there is no GPU. Where there is one, its
kernels are held to the CPU's by the conformance suites (test_conformance.py for every op,
tests/cpp/test_device_conformance.cc for the backend), which run on gpu(0) wherever one exists."""
import json
import re

import numpy as np
import pytest

from conftest import (CPU_ONLY_PLUGINS, INSTALL, TEST_PLUGINS, built_with, checked_plugin_libraries, run_cli, run_json,
                      run_python)

pytestmark = pytest.mark.skipif(not built_with("cuda"),
                                reason="built without the CUDA plugin (no CUDA toolkit with nvcc)")

PLUGIN = INSTALL / "lib" / "mxplug" / "plugins" / "libmxplug_cuda.so"


def cuda_entry():
    code, out, err = run_json(["devices"])
    assert code == 0, err
    (entry,) = [d for d in out["devices"] if d["name"] == "cuda"]
    return entry


def test_the_plugin_loads_and_says_how_many_devices_and_why():
    entry = cuda_entry()
    assert entry["dlpack_device_type"] == 2
    if entry["count"] == 0:
        # The runtime's own words, and which call said them.
        assert "cudaGetDeviceCount" in entry["reason"], entry
    else:
        assert "compute capability" in entry["devices"][0]["description"]


def test_it_is_a_well_formed_plugin_that_needs_only_the_driver_cublas_and_cudnn():
    ldd = checked_plugin_libraries(PLUGIN)
    assert "libcudart" not in ldd  # the runtime is linked statically
    assert "libcublas.so" in ldd and "not found" not in ldd, ldd
    # cuDNN where configure found it with its legacy API (components.json's "cudnn").
    assert ("libcudnn.so" in ldd) == built_with("cudnn"), ldd


def test_every_op_has_a_cuda_kernel_and_the_list_says_so():
    code, out, err = run_json(["list"])
    assert code == 0, err
    missing = sorted(op["name"] for op in out["operators"]
                     if "cuda" not in op["devices"] and op["plugin"] not in CPU_ONLY_PLUGINS)
    assert len(out["operators"]) > 200 and not missing, missing
    code, text, _ = run_cli(["list"])
    assert re.search(r"^broadcast_add +tensor +cpu, cuda", text, re.M), text[:500]


def test_a_gpu_context_without_a_device_is_a_clear_error(mx):
    entry = cuda_entry()
    if entry["count"] > 0:
        pytest.skip("this machine has %d CUDA device(s)" % entry["count"])
    assert mx.context.num_gpus() == 0
    with pytest.raises(mx.base.MXNetError, match=r"cuda\(0\) does not exist: cuda has 0 device"):
        mx.nd.ones((2, 3), mx.gpu())


def test_compute_capability_is_the_devices(mx):
    if cuda_entry()["count"] == 0:
        pytest.skip("no CUDA device: %s" % cuda_entry()["reason"])
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch here has no CUDA")
    major, minor = torch.cuda.get_device_capability(0)
    assert mx.util.get_cuda_compute_capability(mx.gpu(0)) == 10 * major + minor


# One process per tuning mode: the algorithm cache and its log lines belong to a process.
CONV_SCRIPT = r"""
import json, sys
import numpy as np
import mxplug as mx
rng = np.random.default_rng(7)
results = {}
for name, op, data, kw in [
        ("conv2d", "Convolution", (4, 6, 9, 8), dict(kernel=(3, 3), num_filter=8, pad=(1, 1), num_group=2)),
        ("conv1d", "Convolution", (3, 4, 11), dict(kernel=(3,), num_filter=5, stride=(2,), dilate=(2,))),
        ("conv3d", "Convolution", (2, 3, 5, 6, 5), dict(kernel=(2, 3, 2), num_filter=4)),
        ("deconv2d", "Deconvolution", (2, 6, 5, 4), dict(kernel=(3, 3), num_filter=4, stride=(2, 2),
                                                         pad=(1, 1), adj=(1, 0), num_group=2, no_bias=False))]:
    for dtype in ("float32", "float64"):
        x = mx.nd.array(rng.standard_normal(data), dtype=dtype, ctx=mx.gpu(0))  # one for both
        for cudnn_off in (False, True):
            sym = getattr(mx.sym, op)(mx.sym.Variable("data"), name="c", cudnn_off=cudnn_off, **kw)
            exe = sym.simple_bind(mx.gpu(0), data=data, type_dict={"data": dtype})
            for key, arr in sorted(exe.arg_dict.items()):
                if key != "data":
                    arr[:] = mx.nd.array(np.random.default_rng(len(key)).standard_normal(arr.shape), dtype=dtype)
            exe.arg_dict["data"][:] = x
            for _ in range(2):  # the second pass finds its algorithms in the cache
                out = exe.forward(is_train=True)[0]
                exe.backward(mx.nd.ones(out.shape, dtype=dtype, ctx=mx.gpu(0)))
            results["%s %s %s" % (name, dtype, cudnn_off)] = {
                "out": out.asnumpy().astype(np.float64).ravel().tolist(),
                **{k: v.asnumpy().astype(np.float64).ravel().tolist() for k, v in exe.grad_dict.items()}}
print(json.dumps(results))
"""


@pytest.mark.parametrize("mode", ["0", "1", "2"])
def test_cudnn_convolutions_agree_with_the_unrolled_kernel_and_log_each_new_choice(mx, mode):
    """MXNET_CUDNN_AUTOTUNE_DEFAULT's three modes (heuristics, search within the workspace, fastest)
    give cuDNN's results, which agree with the unrolled kernel's (cudnn_off=True) in float32 and
    float64; each new problem logs one line per direction, and the second pass logs nothing."""
    if not built_with("cudnn"):
        pytest.skip("built without cuDNN's legacy API")
    if cuda_entry()["count"] == 0:
        pytest.skip("no CUDA device: %s" % cuda_entry()["reason"])
    p = run_python(CONV_SCRIPT, extra_env={"MXNET_CUDNN_AUTOTUNE_DEFAULT": mode})
    assert p.returncode == 0, p.stderr
    results = json.loads(p.stdout.strip().splitlines()[-1])
    for key, on in results.items():
        if key.endswith("True"):
            continue
        off = results[key[:-len("False")] + "True"]
        tol = 1e-4 if "float32" in key else 1e-10
        for name in on:
            np.testing.assert_allclose(on[name], off[name], rtol=tol, atol=tol, err_msg=key + " " + name)
    lines = [l for l in p.stderr.splitlines() if l.startswith("[mxplug] cuDNN convolution")]
    # 4 problems x 2 dtypes, each forward, backward data and backward filter, logged once.
    assert len(lines) == 24 and len(set(lines)) == 24, "\n".join(lines)
    assert all(("heuristics" in l) == (mode == "0") for l in lines), lines


# The layers cuDNN runs (Note [cuDNN layers]), each forward and backward, with the moving
# statistics after; run once on cuDNN and once on the project's kernels
# (MXPLUG_CUDA_PORTABLE_KERNELS=1 turns cuDNN off for the whole process).
LAYERS_SCRIPT = r"""
import json, os
import numpy as np
import mxplug as mx
if "TESTDEV" in os.environ:
    mx.library.load(os.environ["TESTDEV"])
ctx = mx.cpu(0) if os.environ.get("LAYERS_ON") == "cpu" else mx.gpu(0)
bn = dict(fix_gamma=False, output_mean_var=True)
cases = [  # name, op, data shape, parameters, training, dtypes
    ("bn", "BatchNorm", (4, 6, 5, 3), bn, True, ("float32", "float64", "float16")),
    ("bn fix_gamma", "BatchNorm", (4, 6, 5, 3), dict(bn, fix_gamma=True), True, ("float32",)),
    ("bn last axis", "BatchNorm", (5, 4, 7), dict(bn, axis=-1), True, ("float32", "float16")),
    ("bn global stats", "BatchNorm", (4, 6, 5, 3), dict(bn, use_global_stats=True), True, ("float32",)),
    ("bn inference", "BatchNorm", (4, 6, 5, 3), bn, False, ("float32", "float16")),
    ("relu", "Activation", (4, 6, 5), dict(act_type="relu"), True, ("float32", "float64")),
    ("softmax", "softmax", (6, 1000), {}, True, ("float32", "float64")),
    ("softmax axis 1", "softmax", (3, 7, 4), dict(axis=1), True, ("float32",)),
    ("log_softmax", "log_softmax", (6, 10), {}, True, ("float32", "float64")),
    ("SoftmaxOutput", "SoftmaxOutput", (6, 10), {}, True, ("float32",)),
    ("LRN", "LRN", (2, 8, 4, 3), dict(nsize=5), True, ("float32", "float64"))]
results = {}
for name, op, shape, kw, train, dtypes in cases:
    for dtype in dtypes:
        rng = np.random.default_rng(3)
        sym = getattr(mx.sym, op)(mx.sym.Variable("data"), name="l", **kw)
        exe = sym.simple_bind(ctx, data=shape, type_dict={"data": dtype})
        for key, arr in list(exe.arg_dict.items()) + list(exe.aux_dict.items()):
            if key.endswith("label"):
                v = rng.integers(0, shape[-1], arr.shape)
            elif key.endswith(("gamma", "var")):
                v = rng.uniform(0.5, 2.0, arr.shape)
            else:
                v = rng.standard_normal(arr.shape)
            arr[:] = mx.nd.array(v, dtype=arr.dtype, ctx=ctx)
        outs = exe.forward(is_train=train)
        if train:
            exe.backward([mx.nd.array(rng.standard_normal(o.shape), dtype=o.dtype, ctx=ctx) for o in outs])
        got = {"out%d" % i: o for i, o in enumerate(outs)}
        if train:
            got.update({"grad " + k: v for k, v in exe.grad_dict.items() if v is not None})
        got.update({"aux " + k: v for k, v in exe.aux_dict.items()})
        results["%s %s" % (name, dtype)] = {k: v.asnumpy().astype(np.float64).ravel().tolist()
                                           for k, v in got.items()}
print(json.dumps(results))
"""


def run_layers(portable=False, env=None):
    p = run_python(LAYERS_SCRIPT, extra_env=dict(env or {}, MXPLUG_CUDA_PORTABLE_KERNELS="1" if portable else "0"))
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def assert_layers_agree(a, b):
    assert a.keys() == b.keys() and len(a) == 19
    for case, arrays in a.items():
        assert arrays.keys() == b[case].keys(), case
        tol = 2e-2 if "float16" in case else 1e-4 if "float32" in case else 1e-10
        for name, values in arrays.items():
            np.testing.assert_allclose(values, b[case][name], rtol=tol, atol=tol, err_msg=case + " " + name)


def test_the_layers_comparison_holds_the_test_device_to_the_cpu():
    """The script of the cuDNN comparison below, run on the asynchronous test device and on the
    CPU: every case with its outputs, gradients and moving statistics, and the same numbers."""
    on_testdev = run_layers(env={"MXPLUG_GPU_BACKEND": "testdev",
                                 "TESTDEV": str(TEST_PLUGINS / "devices" / "libtest_device.so")})
    assert {"out0", "out1", "out2", "grad l_gamma", "grad data", "aux l_moving_var"} <= set(
        on_testdev["bn float32"]), on_testdev["bn float32"].keys()
    assert_layers_agree(on_testdev, run_layers(env={"LAYERS_ON": "cpu"}))


def test_cudnn_layers_agree_with_the_project_kernels():
    """BatchNorm (training, fix_gamma, another axis, global statistics, inference; float16 with
    float32 statistics), relu, softmax, log_softmax, SoftmaxOutput and LRN's backward on cuDNN give
    the project's kernels' outputs, gradients and moving statistics (MXNet's biased-variance
    update, which cuDNN's own running variance would not give)."""
    if not built_with("cudnn"):
        pytest.skip("built without cuDNN's legacy API")
    if cuda_entry()["count"] == 0:
        pytest.skip("no CUDA device: %s" % cuda_entry()["reason"])
    assert_layers_agree(run_layers(portable=False), run_layers(portable=True))
