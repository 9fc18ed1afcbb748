"""The HIP plugin: the CUDA plugin's sources compiled by hipcc (devices/hip, gpu_vendor.h). No AMD GPU
exists where the project is built, so what is checked is what holds everywhere: it loads, it is a
well-formed plugin linked against HIP's runtime only, it reports 0 devices with the runtime's
reason, it registers a kernel for every op the CUDA plugin has one for, and mx.gpu() picks it
only where it is the one with devices (or the only one loaded)."""
import re
import subprocess

import pytest

from conftest import INSTALL, built_with, checked_plugin_libraries, run_cli, run_json

pytestmark = pytest.mark.skipif(not built_with("hip"),
                                reason="built without the HIP plugin (no hipcc with HIP's runtime)")

PLUGIN = INSTALL / "lib" / "mxplug" / "plugins" / "libmxplug_hip.so"
DL_CUDA, DL_ROCM = 2, 10


def device_entry(name):
    code, out, err = run_json(["devices"])
    assert code == 0, err
    (entry,) = [d for d in out["devices"] if d["name"] == name]
    return entry


def hip_entry_without_devices():
    entry = device_entry("hip")
    if entry["count"] > 0:
        pytest.skip("this machine has %d ROCm device(s)" % entry["count"])
    return entry


def test_the_plugin_loads_and_says_how_many_devices_and_why():
    entry = device_entry("hip")
    assert entry["dlpack_device_type"] == DL_ROCM
    if entry["count"] == 0:
        # The runtime's own words, under HIP's name for the call, and the missing driver if it is.
        assert "hipGetDeviceCount" in entry["reason"] and "hipError" in entry["reason"], entry
    else:
        assert "gfx" in entry["devices"][0]["description"]


def test_it_is_a_well_formed_plugin_that_needs_only_hips_runtime():
    ldd = checked_plugin_libraries(PLUGIN)
    assert "libamdhip64.so" in ldd and "not found" not in ldd, ldd
    assert "cuda" not in ldd and "cublas" not in ldd, ldd  # nothing of NVIDIA's
    # The device code is AMD's: the objects carry a code object for the configured architecture.
    strings = subprocess.run(["strings", str(PLUGIN)], capture_output=True, text=True).stdout
    assert "amdgcn-amd-amdhsa" in strings


@pytest.mark.skipif(not built_with("cuda"), reason="built without the CUDA plugin to compare with")
def test_it_has_a_kernel_for_every_op_the_cuda_plugin_has_one_for():
    code, out, err = run_json(["list"])
    assert code == 0, err
    devices = {op["name"]: op["devices"] for op in out["operators"]}
    cuda = {name for name, on in devices.items() if "cuda" in on}
    hip = {name for name, on in devices.items() if "hip" in on}
    assert len(cuda) > 150 and hip == cuda, sorted(cuda ^ hip)
    code, text, _ = run_cli(["list"])
    assert re.search(r"^broadcast_add +tensor +cpu, cuda, hip", text, re.M), text[:500]


def test_a_hip_context_without_a_device_is_a_clear_error(mx, monkeypatch):
    entry = hip_entry_without_devices()
    monkeypatch.setenv("MXPLUG_GPU_BACKEND", "hip")
    assert mx.gpu()._dl() == (DL_ROCM, 0) and mx.context.num_gpus() == 0
    with pytest.raises(mx.base.MXNetError, match=r"hip\(0\) does not exist: hip has 0 device"):
        mx.nd.ones((2, 3), mx.gpu())
    assert entry["reason"]


def test_gpu_means_cuda_unless_only_hip_has_devices(mx, monkeypatch):
    hip_entry_without_devices()
    # Both loaded, neither with a device (this machine): gpu() is CUDA's, as in MXNet.
    if built_with("cuda"):
        assert mx.gpu(1)._dl() == (DL_CUDA, 1)
    # Where only HIP reports devices, gpu() is HIP's: the rule, fed the counts such a machine has.
    counts = {DL_CUDA: 0, DL_ROCM: 2}
    monkeypatch.setattr(mx.context._core, "device_types", lambda: [1, DL_CUDA, DL_ROCM])
    monkeypatch.setattr(mx.context._core, "device_count", lambda t: counts[t])
    assert mx.gpu(1)._dl() == (DL_ROCM, 1)
    assert mx.context._from_dl((DL_ROCM, 1)) == mx.gpu(1)
    # Both with devices: CUDA's, and HIP's where it is the only one loaded.
    counts[DL_CUDA] = 1
    assert mx.gpu(0)._dl() == (DL_CUDA, 0)
    monkeypatch.setattr(mx.context._core, "device_types", lambda: [1, DL_ROCM])
    assert mx.gpu(0)._dl() == (DL_ROCM, 0)
