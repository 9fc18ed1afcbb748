// The suite every device backend must pass, through the core's DeviceEntry (the calls the engine,
// the storage pool and NDArray make): allocation and alignment, copies host -> device -> device ->
// host with and without a stream, at unaligned offsets and of zero bytes, memset, streams that
// keep their order, events (record, query, wait on another stream, synchronize), pinned host
// memory, attributes, collectives among devices where the backend has them, and a clear error for
// a device id the backend does not have. Run on the CPU backend, the asynchronous test device, a
// backend built against ABI 1.1 (through the host's fallbacks) and CUDA; a backend with no device
// here is skipped with its reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "mxplug/device.h"
#include "mxplug/runtime.h"
#include "test_errors.h"
#include "test_paths.h"

namespace mxplug {
namespace {

struct Backend {
  const char* name;
  int32_t device_type;
  const char* test_plugin;  // a file in the test devices folder, or null for a default plugin
};

// Test names and ctest's list show the backend's name, not gtest's dump of the struct's bytes.
void PrintTo(const Backend& b, std::ostream* os) { *os << b.name; }

const Backend kBackends[] = {{"cpu", kDLCPU, nullptr},
                             {"testdev", kDLExtDev, "libtest_device.so"},
                             {"legacy_abi_1_1", kDLMetal, "libtest_device_abi_1_1.so"},
                             {"cuda", kDLCUDA, nullptr},
                             {"hip", kDLROCM, nullptr}};

std::shared_ptr<const DeviceEntry> Loaded(int32_t device_type) {
  for (const auto& d : Runtime::Get().devices().List())
    if (d->device_type == device_type) return d;
  return nullptr;
}

class DeviceConformance : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    Runtime::Get().EnsureDefaultPluginsLoaded();
    const Backend& b = GetParam();
    if (b.test_plugin && !Loaded(b.device_type)) {
      const PluginRecord record = Runtime::Get().LoadFile(test::kDevicesDir + "/" + b.test_plugin);
      ASSERT_TRUE(record.loaded()) << record.reason;
    }
    dev_ = Loaded(b.device_type);
    if (!dev_) GTEST_SKIP() << b.name << ": no such backend is loaded (built without it)";
    std::string reason;
    count_ = dev_->Count(&reason);
    if (count_ == 0) GTEST_SKIP() << b.name << " has no device here: " << reason;
    dev_->StartThread(0);  // as the engine's workers do before they queue work
  }

  Context Dev(int32_t id = 0) const { return Context{GetParam().device_type, id}; }

  // Device memory filled from `bytes`, synchronously.
  void* Upload(const std::vector<unsigned char>& bytes) {
    void* p = dev_->Allocate(0, bytes.size(), 64);
    dev_->Copy(Dev(), p, Context::CPU(), bytes.data(), bytes.size());
    return p;
  }
  std::vector<unsigned char> Download(const void* p, size_t n) {
    std::vector<unsigned char> out(n);
    dev_->Copy(Context::CPU(), out.data(), Dev(), p, n);
    return out;
  }

  std::shared_ptr<const DeviceEntry> dev_;
  int32_t count_ = 0;
};

std::vector<unsigned char> Pattern(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>((i * 131 + seed * 17) % 251);
  return v;
}

TEST_P(DeviceConformance, AllocationsAreAlignedDistinctAndHoldWhatIsWritten) {
  std::vector<void*> blocks;
  for (size_t alignment : {size_t(1), size_t(64), size_t(256), size_t(4096)}) {
    for (size_t bytes : {size_t(1), size_t(7), size_t(4096), size_t(3) << 20}) {
      void* p = dev_->Allocate(0, bytes, alignment);
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % alignment, 0u) << bytes << " bytes";
      const auto data = Pattern(bytes, unsigned(bytes + alignment));
      dev_->Copy(Dev(), p, Context::CPU(), data.data(), bytes);
      blocks.push_back(p);
      EXPECT_EQ(Download(p, bytes), data);
    }
  }
  std::sort(blocks.begin(), blocks.end());
  EXPECT_EQ(std::adjacent_find(blocks.begin(), blocks.end()), blocks.end());
  for (void* p : blocks) dev_->Free(0, p);
  // Zero bytes: a valid allocation that can be freed; a null pointer may be freed too.
  void* empty = dev_->Allocate(0, 0, 64);
  dev_->Free(0, empty);
  dev_->Free(0, nullptr);
}

TEST_P(DeviceConformance, CopiesBothWaysAndBetweenBuffersAtUnalignedOffsets) {
  const size_t n = 10007;  // prime: no copy is a whole number of words
  const auto data = Pattern(n, 1);
  void* a = Upload(data);
  void* b = dev_->Allocate(0, n, 64);
  dev_->Memset(0, b, 0, n);
  // Device to device, from offset 3 to offset 5, an odd count.
  dev_->Copy(Dev(), static_cast<char*>(b) + 5, Dev(), static_cast<char*>(a) + 3, 9001);
  auto back = Download(b, n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(back[i], i >= 5 && i < 5 + 9001 ? data[i - 2] : 0) << i;
  // Host to device and back at odd offsets on both sides.
  std::vector<unsigned char> host(n + 16, 0);
  dev_->Copy(Context::CPU(), host.data() + 7, Dev(), static_cast<char*>(a) + 1, n - 1);
  for (size_t i = 0; i < n - 1; ++i) ASSERT_EQ(host[7 + i], data[1 + i]) << i;
  // Zero bytes: nothing happens, even at the end of a buffer.
  dev_->Copy(Dev(), static_cast<char*>(b) + n, Context::CPU(), host.data(), 0);
  dev_->Copy(Context::CPU(), host.data(), Dev(), a, 0);
  EXPECT_EQ(host[0], 0);
  dev_->Free(0, a);
  dev_->Free(0, b);
}

TEST_P(DeviceConformance, MemsetSetsExactlyTheRangeGiven) {
  const size_t n = 5000;
  void* p = Upload(std::vector<unsigned char>(n, 0xEE));
  dev_->Memset(0, static_cast<char*>(p) + 13, 0x00, 2001);
  dev_->Memset(0, static_cast<char*>(p) + 4000, 0xA5, 999);
  dev_->Memset(0, static_cast<char*>(p) + 1, 0x11, 0);
  const auto got = Download(p, n);
  for (size_t i = 0; i < n; ++i) {
    const unsigned char want = i >= 13 && i < 2014 ? 0x00 : i >= 4000 && i < 4999 ? 0xA5 : 0xEE;
    ASSERT_EQ(got[i], want) << i;
  }
  dev_->Free(0, p);
}

// Work queued on one stream runs in order: each memset and copy sees the one before it.
TEST_P(DeviceConformance, AStreamRunsItsWorkInOrder) {
  const size_t n = 1 << 16;
  void* stream = dev_->CreateStream(0);
  void* a = dev_->Allocate(0, n, 256);
  void* b = dev_->Allocate(0, n, 256);
  std::vector<unsigned char> host(n, 0);
  for (int round = 1; round <= 8; ++round) {
    dev_->Memset(0, a, round, n, stream);
    dev_->Copy(Dev(), b, Dev(), a, n, stream);
    dev_->Memset(0, a, 0, n / 2, stream);
  }
  dev_->Copy(Context::CPU(), host.data(), Dev(), b, n, stream);
  dev_->SynchronizeStream(0, stream);
  EXPECT_EQ(host[0], 8);
  EXPECT_EQ(host[n - 1], 8);
  dev_->Copy(Context::CPU(), host.data(), Dev(), a, n, stream);
  dev_->SynchronizeStream(0, stream);
  EXPECT_EQ(host[0], 0);
  EXPECT_EQ(host[n - 1], 8);
  dev_->Free(0, a);
  dev_->Free(0, b);
  dev_->DestroyStream(0, stream);
}

// An event recorded on one stream orders another stream's later work after it, without the host
// waiting; once synchronised it reads as complete.
TEST_P(DeviceConformance, EventsOrderStreamsAndReportCompletion) {
  const size_t n = 1 << 18;
  void* first = dev_->CreateStream(0);
  void* second = dev_->CreateStream(0);
  void* event = dev_->CreateEvent(0);
  EXPECT_TRUE(dev_->QueryEvent(0, event));  // nothing recorded: nothing to wait for
  void* a = dev_->Allocate(0, n, 256);
  void* b = dev_->Allocate(0, n, 256);
  std::vector<unsigned char> host(n, 0);
  for (int round = 1; round <= 5; ++round) {
    for (int i = 0; i < 10; ++i) dev_->Memset(0, a, round * 10 + i, n, first);
    dev_->RecordEvent(0, event, first);
    dev_->WaitEvent(0, second, event);
    dev_->Copy(Dev(), b, Dev(), a, n, second);
    dev_->Copy(Context::CPU(), host.data(), Dev(), b, n, second);
    dev_->SynchronizeStream(0, second);
    ASSERT_EQ(host[0], round * 10 + 9);
    ASSERT_EQ(host[n - 1], round * 10 + 9);
    dev_->SynchronizeEvent(0, event);
    EXPECT_TRUE(dev_->QueryEvent(0, event));
  }
  dev_->Synchronize(0);
  dev_->Free(0, a);
  dev_->Free(0, b);
  dev_->DestroyEvent(0, event);
  dev_->DestroyStream(0, first);
  dev_->DestroyStream(0, second);
}

TEST_P(DeviceConformance, PinnedHostMemoryIsHostMemoryThatCopiesUse) {
  const size_t n = 100003;
  auto* pinned = static_cast<unsigned char*>(dev_->HostAllocate(0, n));
  ASSERT_NE(pinned, nullptr);
  const auto data = Pattern(n, 9);
  std::memcpy(pinned, data.data(), n);  // the host writes it directly
  void* p = dev_->Allocate(0, n, 64);
  void* stream = dev_->CreateStream(0);
  dev_->Copy(Dev(), p, Context::CPU(), pinned, n, stream);
  dev_->Memset(0, p, 0x3C, 10, stream);
  dev_->Copy(Context::CPU(), pinned, Dev(), p, n, stream);
  dev_->SynchronizeStream(0, stream);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(pinned[i], i < 10 ? 0x3C : data[i]) << i;
  dev_->DestroyStream(0, stream);
  dev_->Free(0, p);
  dev_->HostFree(0, pinned);
}

TEST_P(DeviceConformance, EveryDeviceDescribesItselfAndItsMemory) {
  for (int32_t id = 0; id < count_; ++id) {
    EXPECT_FALSE(dev_->Describe(id).empty()) << id;
    const MXPDeviceAttributes attrs = dev_->Attributes(id);
    EXPECT_GE(attrs.multiprocessor_count, 0);
    if (GetParam().device_type == kDLMetal) continue;  // a 1.1 backend reports no memory
    const auto [free_bytes, total_bytes] = dev_->MemoryInfo(id);
    EXPECT_GT(total_bytes, 0u) << id;
    EXPECT_LE(free_bytes, total_bytes) << id;
  }
}

TEST_P(DeviceConformance, ADeviceIdItDoesNotHaveIsAClearError) {
  const std::string name = GetParam().name;
  for (int32_t bad : {count_, -1}) {
    const std::string text = test::ErrorText([&] { dev_->Allocate(bad, 64, 64); });
    // The core names the call and the device; the backend says what is wrong.
    EXPECT_NE(text.find("allocating 64 bytes on " + Dev(bad).ToString()), std::string::npos)
        << text;
    EXPECT_NE(test::ErrorText([&] { dev_->CreateStream(bad); }), "no error") << name;
  }
  // The backend still works afterwards.
  void* p = dev_->Allocate(0, 64, 64);
  dev_->Free(0, p);
}

// ABI 1.4's collectives among a backend's devices (NCCL's on CUDA), against sums on the host:
// over every device there is (one on a machine with one GPU: NCCL with one rank), the root last,
// buffers at an offset into their blocks.
TEST_P(DeviceConformance, CollectivesSumIntoTheRootAndBroadcastFromIt) {
  if (!dev_->HasCollectives())
    GTEST_SKIP() << GetParam().name << " has no collectives (built without them, or none exist)";
  const int32_t n = std::min<int32_t>(count_, 4);
  const int32_t root = n - 1;
  const int64_t size = 1003;
  const size_t offset = 64, bytes = size * sizeof(float);
  std::vector<void*> blocks;
  std::vector<DLTensor> tensors;
  int64_t shape[1] = {size};
  std::vector<float> want(size, 0.f);
  for (int32_t d = 0; d < n; ++d) {
    dev_->StartThread(d);
    std::vector<float> mine(size);
    for (int64_t i = 0; i < size; ++i) mine[i] = float((i * 7 + d * 13) % 101) - 50.f;
    for (int64_t i = 0; i < size; ++i) want[i] += mine[i];
    void* p = dev_->Allocate(d, offset + bytes, 64);
    dev_->Copy(Dev(d), static_cast<char*>(p) + offset, Context::CPU(), mine.data(), bytes);
    blocks.push_back(p);
    tensors.push_back(
        DLTensor{p, Dev(d).ToDLDevice(), 1, DLDataType{kDLFloat, 32, 1}, shape, nullptr, offset});
  }
  void* out_block = dev_->Allocate(root, offset + bytes, 64);
  DLTensor out{out_block, Dev(root).ToDLDevice(), 1, DLDataType{kDLFloat, 32, 1}, shape, nullptr,
               offset};
  std::vector<const DLTensor*> inputs;
  for (const DLTensor& t : tensors) inputs.push_back(&t);
  dev_->CollectiveReduce(inputs, &out, root);
  std::vector<float> got(size);
  dev_->Copy(Context::CPU(), got.data(), Dev(root), static_cast<char*>(out_block) + offset, bytes);
  EXPECT_EQ(got, want);

  // The sum, from the root's own buffer, into every other one.
  dev_->Copy(Dev(root), static_cast<char*>(blocks[root]) + offset, Dev(root),
             static_cast<char*>(out_block) + offset, bytes);
  std::vector<DLTensor*> buffers;
  for (DLTensor& t : tensors) buffers.push_back(&t);
  dev_->CollectiveBroadcast(buffers, root);
  for (int32_t d = 0; d < n; ++d) {
    dev_->Copy(Context::CPU(), got.data(), Dev(d), static_cast<char*>(blocks[d]) + offset, bytes);
    EXPECT_EQ(got, want) << Dev(d).ToString();
  }

  // The host refuses what breaks the contract before the backend sees it, naming the call, the
  // devices and what was expected: two buffers on one device, a root that is not one of the
  // buffers, an output off the root's device.
  const std::string d0 = Dev(0).ToString();
  std::vector<const DLTensor*> twice{&tensors[0], &tensors[0]};
  std::string text = test::ErrorText([&] { dev_->CollectiveReduce(twice, &out, 0); });
  EXPECT_NE(text.find("summing over " + d0 + ", " + d0), std::string::npos) << text;
  EXPECT_NE(text.find("two buffers on " + d0 + "; expected one per device"), std::string::npos)
      << text;
  text = test::ErrorText([&] { dev_->CollectiveBroadcast(buffers, n); });
  EXPECT_NE(text.find("root " + std::to_string(n) + " is not one of the " + std::to_string(n) +
                      " buffers"),
            std::string::npos)
      << text;
  if (n > 1) {
    text = test::ErrorText([&] { dev_->CollectiveReduce(inputs, &out, 0); });
    EXPECT_NE(text.find("the output is not on the root's device (" + d0 + ")"), std::string::npos)
        << text;
  }
  for (int32_t d = 0; d < n; ++d) dev_->Free(d, blocks[d]);
  dev_->Free(root, out_block);
}

INSTANTIATE_TEST_SUITE_P(Backends, DeviceConformance, ::testing::ValuesIn(kBackends),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace mxplug
