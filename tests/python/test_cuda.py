"""The CUDA plugin: built wherever nvcc is found, it loads on every machine, lists its kernels,
and reports 0 devices with the runtime's reason where there is no GPU. Where there is one, its
kernels are held to the CPU's by the conformance suites (test_conformance.py for every op,
tests/cpp/test_device_conformance.cc for the backend), which run on gpu(0) wherever one exists."""

import pytest

from conftest import INSTALL, built_with, checked_plugin_libraries, run_cli, run_json

pytestmark = pytest.mark.skipif(not built_with("cuda"),
                                reason="built without the CUDA plugin (no CUDA toolkit with nvcc)")

PLUGIN = INSTALL / "lib" / "mxplug" / "plugins" / "libmxplug_cuda.so"

UNARY = ["negative", "abs", "sign", "exp", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt",
         "cbrt", "square", "reciprocal", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh",
         "cosh", "tanh", "sigmoid", "relu", "softsign", "erf", "round", "rint", "floor", "ceil",
         "trunc", "fix", "gamma", "gammaln", "_copy", "identity", "BlockGrad", "stop_gradient", "clip"]
BINARY = ["add", "sub", "mul", "div", "mod", "power", "maximum", "minimum", "hypot", "equal",
          "not_equal", "greater", "greater_equal", "lesser", "lesser_equal", "logical_and",
          "logical_or", "logical_xor"]
SCALAR = {"plus" if b == "add" else "minus" if b == "sub" else b for b in BINARY}
REVERSED_SCALAR = ["_rminus_scalar", "_rdiv_scalar", "_rmod_scalar", "_rpower_scalar"]
# The ops of issue 22's list that have CUDA kernels so far; the list grows with the kernels.
CUDA_OPS = (set(UNARY) | {"broadcast_" + b for b in BINARY} | {"_%s_scalar" % s for s in SCALAR}
            | set(REVERSED_SCALAR) | {"elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div",
                                      "broadcast_plus", "broadcast_minus"}
            | {"sum", "mean", "prod", "max", "min", "nansum", "nanprod", "sum_axis", "norm",
               "argmax", "argmin"}
            | {"_zeros", "_ones", "_full", "_arange", "_eye", "zeros_like", "ones_like", "Cast",
               "cast"}
            | {"Reshape", "reshape", "Flatten", "flatten", "expand_dims", "transpose", "slice", "crop",
               "_slice_assign", "_slice_assign_scalar", "take", "broadcast_to", "broadcast_like"}
            | {"Concat", "concat", "stack", "SliceChannel", "split", "ElementWiseSum", "add_n",
               "slice_axis", "tile", "repeat", "flip", "reverse", "squeeze"}
            | {"dot", "batch_dot", "FullyConnected"}
            | {"sgd_update", "sgd_mom_update", "nag_mom_update", "adam_update", "rmsprop_update",
               "rmspropalex_update", "adagrad_update"}
            | {"Activation", "LeakyReLU", "softmax", "log_softmax", "SoftmaxOutput", "Softmax",
               "LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput",
               "MakeLoss", "make_loss", "Dropout", "Embedding"}
            | {"_random_uniform", "_random_normal", "_random_randint", "_sample_multinomial"}
            | {"pick", "one_hot", "where"}
            | {"Convolution", "Deconvolution"})


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


def test_it_is_a_well_formed_plugin_that_needs_only_the_driver_and_cublas():
    ldd = checked_plugin_libraries(PLUGIN)
    assert "libcudart" not in ldd  # the runtime is linked statically
    assert "libcublas.so" in ldd and "libcublas.so.13 => not found" not in ldd, ldd


def test_the_ops_it_has_kernels_for_show_cuda_in_the_list():
    code, out, err = run_json(["list"])
    assert code == 0, err
    devices = {op["name"]: op["devices"] for op in out["operators"]}
    missing = sorted(name for name in CUDA_OPS if "cuda" not in devices.get(name, []))
    assert not missing, missing
    code, text, _ = run_cli(["list"])
    assert "broadcast_add             tensor     cpu, cuda" in text


def test_a_gpu_context_without_a_device_is_a_clear_error(mx):
    entry = cuda_entry()
    if entry["count"] > 0:
        pytest.skip("this machine has %d CUDA device(s)" % entry["count"])
    assert mx.context.num_gpus() == 0
    with pytest.raises(mx.base.MXNetError, match=r"cuda\(0\) does not exist: cuda has 0 device"):
        mx.nd.ones((2, 3), mx.gpu())
