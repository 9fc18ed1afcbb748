// A device backend for tests: host memory under DLPack's kDLExtDev, two devices, and streams that
// are real objects with an id, so tests can see which stream each engine function ran on.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "mxplug/plugin.hpp"

namespace {

struct Stream {
  int device;
  int id;
};

class TestDevice : public mxplug::DeviceBackend {
 public:
  int DeviceCount(std::string*) override { return 2; }
  std::string Describe(int dev_id) override { return "test device " + std::to_string(dev_id); }
  void* Allocate(int, size_t bytes, size_t alignment) override {
    void* p = std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
    if (!p) throw std::bad_alloc();
    return p;
  }
  void Free(int, void* ptr) override { std::free(ptr); }
  void Copy(DLDevice, void* dst, DLDevice, const void* src, size_t bytes, void*) override {
    std::memmove(dst, src, bytes);
  }
  void* CreateStream(int dev_id) override { return new Stream{dev_id, next_id_++}; }
  void DestroyStream(int, void* stream) override { delete static_cast<Stream*>(stream); }

 private:
  std::atomic<int> next_id_{1};
};

}  // namespace

MXPLUG_REGISTER_DEVICE(testdev, kDLExtDev, TestDevice);

MXPLUG_PLUGIN("test_device", "1.0.0", "tests")
