// The CUDA device backend: device memory from cudaMalloc (the host's pool keeps freed blocks),
// page-locked host memory, the runtime's own streams and events (Note [Native streams] in
// abi/device.h), and copies in every direction that touches a CUDA device. The HIP plugin
// (devices/hip) builds this file too, through gpu_vendor.h: there it is the ROCm backend "hip".
//
// On a machine without a driver or a GPU the plugin still loads: cudaGetDeviceCount's error
// becomes the reason for a count of zero, and nothing else is called. The CUDA runtime is linked
// statically, so the plugin needs no libcudart at run time; the driver (libcuda.so.1) is opened
// by the runtime when there is one. HIP's runtime is a shared library (libamdhip64) that loads
// without a GPU; its driver is the kernel's amdgpu, reached through /dev/kfd.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include "cuda_check.h"
#include "mxplug/plugin.hpp"
#if MXPLUG_NCCL
#include "nccl_collectives.h"
#endif

namespace {

using mxplug_cuda::Check;

class CudaBackend : public mxplug::DeviceBackend {
 public:
  int DeviceCount(std::string* reason) override {
    const Probe& probe = Probed();
    *reason = probe.reason;
    return probe.count;
  }

  std::string Describe(int dev_id) override {
    CheckId(dev_id);
    cudaDeviceProp prop{};
    Check(cudaGetDeviceProperties(&prop, dev_id), "cudaGetDeviceProperties", dev_id);
    char memory[32];
    std::snprintf(memory, sizeof(memory), "%.1f GiB",
                  static_cast<double>(prop.totalGlobalMem) / (1 << 30));
#if defined(MXPLUG_HIP)
    const std::string arch = std::string(", ") + prop.gcnArchName;  // "gfx90a:sramecc+:xnack-"
#else
    const std::string arch =
        ", compute capability " + std::to_string(prop.major) + "." + std::to_string(prop.minor);
#endif
    return std::string(prop.name) + arch + ", " + std::to_string(prop.multiProcessorCount) +
           " multiprocessors, " + memory;
  }

  // cudaMalloc's blocks are aligned to 256 bytes, all the host's pool asks for. A larger
  // alignment (abi/device.h allows any power of two) over-allocates and hands out the aligned
  // address inside; Free finds the block it came from in `offset_blocks_`.
  void* Allocate(int dev_id, size_t bytes, size_t alignment) override {
    Bind(dev_id);
    constexpr size_t kMallocAlignment = 256;
    const size_t extra = alignment > kMallocAlignment ? alignment : 0;
    void* ptr = nullptr;
    Check(cudaMalloc(&ptr, (bytes ? bytes : 1) + extra), "cudaMalloc", dev_id);
    if (!extra) return ptr;
    const uintptr_t base = reinterpret_cast<uintptr_t>(ptr);
    void* aligned = reinterpret_cast<void*>((base + alignment - 1) & ~uintptr_t(alignment - 1));
    std::lock_guard<std::mutex> lock(offset_mu_);
    offset_blocks_[aligned] = ptr;
    return aligned;
  }

  void Free(int dev_id, void* ptr) override {
    Bind(dev_id);
    if (ptr) {
      std::lock_guard<std::mutex> lock(offset_mu_);
      auto it = offset_blocks_.find(ptr);
      if (it != offset_blocks_.end()) ptr = it->second, offset_blocks_.erase(it);
    }
    (void)cudaFree(ptr);  // free has no status to report to (abi/device.h)
    (void)cudaGetLastError();
  }

  // cudaMemcpyDefault: unified addressing tells host from device and one device from another.
  // Between two devices that can reach each other's memory, peer access is on (see EnablePeers),
  // so the copy goes over NVLink or PCIe directly instead of through host memory.
  void Copy(DLDevice dst_device, void* dst, DLDevice src_device, const void* src, size_t bytes,
            void* stream) override {
    const int dev_id = dst_device.device_type == mxplug_cuda::kGpuDevice ? dst_device.device_id
                                                                         : src_device.device_id;
    if (bytes == 0) return;
    if (dst_device.device_type == src_device.device_type &&
        dst_device.device_id != src_device.device_id)
      EnablePeers(dst_device.device_id, src_device.device_id);
    Bind(dev_id);
    if (stream) {
      Check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, Native(stream)), "cudaMemcpyAsync",
            dev_id);
    } else {
      Check(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), "cudaMemcpy", dev_id);
    }
  }

  void Memset(int dev_id, void* ptr, int value, size_t bytes, void* stream) override {
    if (value < 0 || value > 255)
      throw std::invalid_argument(std::string("memset on ") + mxplug_cuda::kGpuName + "(" +
                                  std::to_string(dev_id) + "): value " + std::to_string(value) +
                                  " is not a byte (expected 0 to 255)");
    if (bytes == 0) return;
    Bind(dev_id);
    if (stream)
      Check(cudaMemsetAsync(ptr, value, bytes, Native(stream)), "cudaMemsetAsync", dev_id);
    else
      Check(cudaMemset(ptr, value, bytes), "cudaMemset", dev_id);
  }

  void MemoryInfo(int dev_id, uint64_t* free_bytes, uint64_t* total_bytes) override {
    Bind(dev_id);
    size_t free_b = 0, total_b = 0;
    Check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo", dev_id);
    *free_bytes = free_b, *total_bytes = total_b;
  }

  // Portable: any device's copies see it as pinned, not only dev_id's.
  void* HostAllocate(int dev_id, size_t bytes) override {
    Bind(dev_id);
    void* ptr = nullptr;
    Check(cudaHostAlloc(&ptr, bytes ? bytes : 1, cudaHostAllocPortable), "cudaHostAlloc", dev_id);
    return ptr;
  }
  void HostFree(int, void* ptr) override {
    (void)cudaFreeHost(ptr);
    (void)cudaGetLastError();
  }

  // Non-blocking streams: work on them never waits for the legacy default stream, which the
  // NULL-stream copies use.
  void* CreateStream(int dev_id) override {
    Bind(dev_id);
    cudaStream_t stream = nullptr;
    Check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate", dev_id);
    return stream;
  }
  void DestroyStream(int dev_id, void* stream) override {
    if (dev_id >= 0 && dev_id < Probed().count) (void)cudaSetDevice(dev_id);
    (void)cudaStreamDestroy(Native(stream));
    (void)cudaGetLastError();
  }
  void SynchronizeStream(int dev_id, void* stream) override {
    Check(cudaStreamSynchronize(Native(stream)), "cudaStreamSynchronize", dev_id);
  }

  void* CreateEvent(int dev_id) override {
    Bind(dev_id);
    cudaEvent_t event = nullptr;
    Check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate", dev_id);
    return event;
  }
  void DestroyEvent(int, void* event) override {
    (void)cudaEventDestroy(static_cast<cudaEvent_t>(event));
    (void)cudaGetLastError();
  }
  void RecordEvent(int dev_id, void* event, void* stream) override {
    Check(cudaEventRecord(static_cast<cudaEvent_t>(event), Native(stream)), "cudaEventRecord",
          dev_id);
  }
  void WaitEvent(int dev_id, void* stream, void* event) override {
    Check(cudaStreamWaitEvent(Native(stream), static_cast<cudaEvent_t>(event), 0),
          "cudaStreamWaitEvent", dev_id);
  }
  void SynchronizeEvent(int dev_id, void* event) override {
    Check(cudaEventSynchronize(static_cast<cudaEvent_t>(event)), "cudaEventSynchronize", dev_id);
  }
  bool QueryEvent(int dev_id, void* event) override {
    const cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(event));
    if (err == cudaErrorNotReady) return false;
    Check(err, "cudaEventQuery", dev_id);
    return true;
  }
  void Synchronize(int dev_id) override {
    Bind(dev_id);
    Check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", dev_id);
  }

  void Attributes(int dev_id, MXPDeviceAttributes* out) override {
    CheckId(dev_id);
    auto get = [&](cudaDeviceAttr attr) {
      int value = 0;
      Check(cudaDeviceGetAttribute(&value, attr, dev_id), "cudaDeviceGetAttribute", dev_id);
      return value;
    };
    out->compute_capability_major = get(cudaDevAttrComputeCapabilityMajor);
    out->compute_capability_minor = get(cudaDevAttrComputeCapabilityMinor);
    out->multiprocessor_count = get(cudaDevAttrMultiProcessorCount);
    out->warp_size = get(cudaDevAttrWarpSize);
    out->max_threads_per_block = get(cudaDevAttrMaxThreadsPerBlock);
    out->shared_memory_per_block = static_cast<uint64_t>(get(cudaDevAttrMaxSharedMemoryPerBlock));
    size_t free_b = 0, total_b = 0;
    Bind(dev_id);
    Check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo", dev_id);
    out->total_memory = total_b;
  }

  void StartThread(int dev_id) override { Bind(dev_id); }

#if MXPLUG_NCCL
  // MXNet's 'nccl' kvstore (Note [NCCL collectives] in nccl_collectives.cc).
  void CollectiveReduce(int count, const DLTensor* const* inputs, DLTensor* output,
                        int root) override {
    for (int i = 0; i < count; ++i) CheckId(inputs[i]->device.device_id);
    mxplug_cuda::NcclReduce(count, inputs, output, root);
  }
  void CollectiveBroadcast(int count, DLTensor* const* buffers, int root) override {
    for (int i = 0; i < count; ++i) CheckId(buffers[i]->device.device_id);
    mxplug_cuda::NcclBroadcast(count, buffers, root);
  }
#endif

 private:
  std::mutex offset_mu_;
  std::map<void*, void*> offset_blocks_;  // aligned address -> cudaMalloc's, for alignments > 256
  static cudaStream_t Native(void* stream) { return static_cast<cudaStream_t>(stream); }

  // What cudaGetDeviceCount said, asked once: the answer does not change while the process runs.
  struct Probe {
    int count = 0;
    std::string reason;  // why count is 0
  };
  static const Probe& Probed() {
    static const Probe probe = [] {
      Probe p;
      const cudaError_t err = cudaGetDeviceCount(&p.count);
      if (err != cudaSuccess) {
        (void)cudaGetLastError();
        p.count = 0;
        p.reason = mxplug_cuda::ErrorText(err, "cudaGetDeviceCount", -1);
        // The runtime's wording ("driver version is insufficient", "no ROCm-capable device") also
        // covers no driver at all: say which it is.
        if (const char* missing = MissingDriver()) p.reason = missing + (" (" + p.reason + ")");
      } else if (p.count == 0) {
        p.reason = "the CUDA driver reports no device";
      }
      return p;
    }();
    return probe;
  }

  // Why the vendor's driver cannot be reached, or nullptr when it can.
  static const char* MissingDriver() {
#if defined(MXPLUG_HIP)
    if (access("/dev/kfd", R_OK | W_OK) != 0)
      return "no AMD GPU driver: /dev/kfd (amdgpu's compute interface) cannot be opened";
#else
    if (void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL)) {
      dlclose(driver);
    } else {
      return "no NVIDIA driver: libcuda.so.1 cannot be loaded";
    }
#endif
    return nullptr;
  }

  static void CheckId(int dev_id) {
    const int count = Probed().count;
    if (dev_id < 0 || dev_id >= count)
      throw std::out_of_range(std::string(mxplug_cuda::kGpuName) + "(" + std::to_string(dev_id) +
                              ") does not exist; this machine has " + std::to_string(count) + " " +
                              mxplug_cuda::kGpuName + " device(s)" +
                              (count ? "" : " (" + Probed().reason + ")"));
  }
  // Turns on peer access between two devices, both ways, the first time they exchange data
  // (MXNet's CommDevice does it for every pair when its kvstore starts): where the hardware
  // cannot, copies are staged through host memory by the runtime, as they were.
  static void EnablePeers(int a, int b) {
    static std::mutex mu;
    static std::set<std::pair<int, int>> tried;
    std::lock_guard<std::mutex> lock(mu);
    if (!tried.insert({std::min(a, b), std::max(a, b)}).second) return;
    for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
      int can = 0;
      Check(cudaDeviceCanAccessPeer(&can, from, to), "cudaDeviceCanAccessPeer", from);
      if (!can) continue;
      Bind(from);
      const cudaError_t err = cudaDeviceEnablePeerAccess(to, 0);
      if (err == cudaErrorPeerAccessAlreadyEnabled)
        (void)cudaGetLastError();
      else
        Check(err, "cudaDeviceEnablePeerAccess", from);
    }
  }
  // Makes dev_id the calling thread's current device (cheap when it already is).
  static void Bind(int dev_id) {
    CheckId(dev_id);
    Check(cudaSetDevice(dev_id), "cudaSetDevice", dev_id);
  }
};

}  // namespace

#if defined(MXPLUG_HIP)
MXPLUG_REGISTER_DEVICE(hip, kDLROCM, CudaBackend);
MXPLUG_PLUGIN("hip", MXPLUG_PLUGIN_VERSION, "mxplug")
#else
MXPLUG_REGISTER_DEVICE(cuda, kDLCUDA, CudaBackend);
MXPLUG_PLUGIN("cuda", MXPLUG_PLUGIN_VERSION, "mxplug")
#endif
