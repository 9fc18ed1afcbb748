// The CPU device backend: 64-byte aligned host memory, memcpy copies, and streams and events
// that are tokens only, since CPU work runs inline on the calling engine thread.
//
// Like MXNet's cpu(i), cpu(0) ... cpu(N-1) are logical contexts over the same host memory, so
// that code written for several devices (a list of contexts for data parallelism, a kvstore fed
// from several devices) runs on one machine. N is 8, or MXPLUG_CPU_CONTEXTS (1 to 1024).
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>

#include "mxplug/plugin.hpp"

namespace {

class CpuBackend : public mxplug::DeviceBackend {
 public:
  int DeviceCount(std::string*) override { return Contexts(); }

  std::string Describe(int dev_id) override {
    CheckId(dev_id);
    if (dev_id != 0) return "a logical context over the host memory of cpu(0)";
    std::string model = "unknown processor";
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);)
      if (line.rfind("model name", 0) == 0) {
        model = line.substr(line.find(':') + 2);
        break;
      }
    return model + ", " + std::to_string(std::thread::hardware_concurrency()) + " hardware threads";
  }

  void* Allocate(int dev_id, size_t bytes, size_t alignment) override {
    CheckId(dev_id);
    if (alignment < 64) alignment = 64;
    // aligned_alloc wants a size that is a multiple of the alignment.
    size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    void* ptr = std::aligned_alloc(alignment, rounded ? rounded : alignment);
    if (!ptr) throw std::bad_alloc();
    return ptr;
  }

  void Free(int, void* ptr) override { std::free(ptr); }

  void Copy(DLDevice dst_device, void* dst, DLDevice src_device, const void* src, size_t bytes,
            void*) override {
    if (dst_device.device_type != kDLCPU || src_device.device_type != kDLCPU)
      throw std::invalid_argument("the cpu backend copies only between cpu buffers");
    if (bytes) std::memmove(dst, src, bytes);
  }

  void Memset(int dev_id, void* ptr, int value, size_t bytes, void*) override {
    CheckId(dev_id);
    if (bytes) std::memset(ptr, value, bytes);
  }

  // The machine's memory, as the kernel counts it (MemAvailable: what can be had without swap).
  void MemoryInfo(int dev_id, uint64_t* free_bytes, uint64_t* total_bytes) override {
    CheckId(dev_id);
    *free_bytes = *total_bytes = 0;
    std::ifstream meminfo("/proc/meminfo");
    for (std::string key; meminfo >> key;) {
      uint64_t kib = 0;
      meminfo >> kib;
      if (key == "MemTotal:") *total_bytes = kib << 10;
      if (key == "MemAvailable:") *free_bytes = kib << 10;
      meminfo.ignore(64, '\n');
    }
    if (!*total_bytes) throw std::runtime_error("cannot read the memory size from /proc/meminfo");
  }

  // Tokens: non-null handles so that callers can treat every device alike.
  void* CreateStream(int dev_id) override { return CheckId(dev_id), new int(dev_id); }
  void DestroyStream(int, void* stream) override { delete static_cast<int*>(stream); }
  void* CreateEvent(int dev_id) override { return CheckId(dev_id), new int(dev_id); }
  void DestroyEvent(int, void* event) override { delete static_cast<int*>(event); }

 private:
  static int Contexts() {
    static const int contexts = [] {
      const char* env = std::getenv("MXPLUG_CPU_CONTEXTS");
      const int n = env ? std::atoi(env) : 8;
      return n >= 1 && n <= 1024 ? n : 8;
    }();
    return contexts;
  }
  static void CheckId(int dev_id) {
    if (dev_id < 0 || dev_id >= Contexts())
      throw std::out_of_range("cpu(" + std::to_string(dev_id) +
                              ") does not exist; the cpu backend has " +
                              std::to_string(Contexts()) + " contexts (MXPLUG_CPU_CONTEXTS)");
  }
};

}  // namespace

MXPLUG_REGISTER_DEVICE(cpu, kDLCPU, CpuBackend);

MXPLUG_PLUGIN("cpu", MXPLUG_PLUGIN_VERSION, "mxplug")
