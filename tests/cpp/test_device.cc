// Device backends through the core: a plugin built against ABI 1.1 still loads and works through
// the host's fallbacks for what 1.2 added; the CPU backend's 1.2 functions; and the completion
// contract (Note [Completion] in engine_core.cc) on the asynchronous test device, whose streams
// run their work later on threads of their own.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "mxplug/engine.h"
#include "mxplug/error.h"
#include "mxplug/ndarray.h"
#include "mxplug/runtime.h"
#include "test_errors.h"
#include "test_paths.h"

namespace mxplug {
namespace {

constexpr Context kLegacy{kDLMetal, 0};    // tests/plugins/device_abi_1_1.c
constexpr Context kTestDev{kDLExtDev, 0};  // tests/plugins/test_device.cc

std::shared_ptr<const DeviceEntry> Load(const std::string& file, int32_t device_type) {
  Runtime::Get().EnsureDefaultPluginsLoaded();
  const PluginRecord record = Runtime::Get().LoadFile(test::kDevicesDir + "/" + file);
  EXPECT_TRUE(record.loaded()) << record.reason;
  return Runtime::Get().GetDevice(device_type);
}

using test::ErrorText;

std::vector<float> ToHost(const NDArray& a) {
  std::vector<float> out(a.size());
  a.SyncCopyToCPU(out.data(), out.size() * sizeof(float));
  return out;
}

TEST(DeviceAbi, PluginBuiltAgainst11LoadsAndEveryAdditionFallsBack) {
  auto dev = Load("libtest_device_abi_1_1.so", kDLMetal);
  ASSERT_TRUE(dev);
  EXPECT_EQ(dev->name, "legacy");
  EXPECT_EQ(dev->Count(), 1);
  // memset: a host buffer copied over, with or without a stream.
  auto* p = static_cast<unsigned char*>(dev->Allocate(0, 300, 64));
  dev->Memset(0, p, 0x5A, 300);
  void* stream = dev->CreateStream(0);
  dev->Memset(0, p + 100, 0x11, 50, stream);
  for (int i = 0; i < 300; ++i) ASSERT_EQ(p[i], i >= 100 && i < 150 ? 0x11 : 0x5A) << i;
  dev->DestroyStream(0, stream);
  dev->Free(0, p);
  // memory_info: a clear refusal naming the device; attributes: all unknown.
  int32_t code = 0;
  const std::string text = ErrorText([&] { dev->MemoryInfo(0); }, &code);
  EXPECT_EQ(code, kMXPUnimplemented);
  EXPECT_NE(text.find("device 'legacy'"), std::string::npos) << text;
  EXPECT_NE(text.find("does not report its memory"), std::string::npos) << text;
  const MXPDeviceAttributes attrs = dev->Attributes(0);
  EXPECT_EQ(attrs.compute_capability_major, 0);
  EXPECT_EQ(attrs.multiprocessor_count, 0);
  EXPECT_EQ(attrs.total_memory, 0u);
  // Pinned memory: ordinary host memory; events: complete once waited for; thread_start: nothing.
  auto* h = static_cast<double*>(dev->HostAllocate(0, 1000 * sizeof(double)));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(h) % 64, 0u);
  for (int i = 0; i < 1000; ++i) h[i] = i;
  EXPECT_EQ(h[999], 999.0);
  dev->HostFree(0, h);
  void* event = dev->CreateEvent(0);
  EXPECT_TRUE(dev->QueryEvent(0, event));
  dev->DestroyEvent(0, event);
  dev->StartThread(0);
  // Arrays on it go through the engine's device workers and back.
  std::vector<float> values(1000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.5f * i;
  NDArray a(TShape{10, 100}, kLegacy);
  a.SyncCopyFromCPU(values.data(), values.size() * sizeof(float));
  EXPECT_EQ(ToHost(a.CopyTo(kLegacy)), values);
}

TEST(DeviceAbi, CpuBackendSetsBytesAndReportsTheMachinesMemory) {
  Runtime::Get().EnsureDefaultPluginsLoaded();
  auto cpu = Runtime::Get().GetDevice(kDLCPU);
  std::vector<unsigned char> bytes(77, 1);
  cpu->Memset(0, bytes.data() + 7, 0xC3, 60);
  for (int i = 0; i < 77; ++i) ASSERT_EQ(bytes[i], i >= 7 && i < 67 ? 0xC3 : 1) << i;
  const auto [free_bytes, total_bytes] = cpu->MemoryInfo(0);
  const uint64_t physical = uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE));
  EXPECT_EQ(total_bytes, physical);  // both are the kernel's MemTotal
  EXPECT_GT(free_bytes, 0u);
  EXPECT_LE(free_bytes, total_bytes);
}

TEST(DeviceAbi, AsyncTestDeviceReallyRunsStreamWorkLater) {
  auto dev = Load("libtest_device.so", kDLExtDev);
  dev->StartThread(0);
  void* stream = dev->CreateStream(0);
  void* event = dev->CreateEvent(0);
  std::vector<unsigned char> host(4096);
  void* p = dev->Allocate(0, host.size(), 64);
  // 200 jobs of at least 50 us each: the event recorded after them is far from complete now.
  for (int i = 0; i < 200; ++i) dev->Memset(0, p, i, host.size(), stream);
  dev->RecordEvent(0, event, stream);
  EXPECT_FALSE(dev->QueryEvent(0, event));
  dev->SynchronizeEvent(0, event);
  EXPECT_TRUE(dev->QueryEvent(0, event));
  dev->Copy(Context::CPU(), host.data(), kTestDev, p, host.size());
  EXPECT_EQ(host[0], 199);
  EXPECT_EQ(host[4095], 199);
  const auto [free_bytes, total_bytes] = dev->MemoryInfo(0);
  EXPECT_EQ(total_bytes - free_bytes, 4096u);
  EXPECT_EQ(dev->Attributes(1).multiprocessor_count, 5);
  dev->Free(0, p);
  dev->DestroyEvent(0, event);
  dev->DestroyStream(0, stream);
  // Stream work from a thread the host never bound to the device is refused.
  std::thread([&] {
    void* s = dev->CreateStream(1);
    std::vector<char> buf(8);
    EXPECT_NE(ErrorText([&] {
                dev->Memset(1, buf.data(), 0, 8, s);
              }).find("the host skipped thread_start"),
              std::string::npos);
    dev->DestroyStream(1, s);
  }).join();
}

class Completion : public ::testing::TestWithParam<EngineType> {};

// A function queues a fill on its worker's stream and returns at once; a copy to the CPU on the
// copy worker's stream reads the array next. The copy must see the fill: the filling function may
// not complete before its stream has.
TEST_P(Completion, ReadersSeeStreamWorkOfTheFunctionsBeforeThem) {
  auto dev = Load("libtest_device.so", kDLExtDev);
  auto engine = Engine::Create(GetParam());
  const size_t n = 1 << 18;
  NDArray a(TShape{static_cast<int64_t>(n)}, kTestDev, kMXPUint8);
  std::vector<unsigned char> seen(n);
  for (int round = 1; round <= 20; ++round) {
    void* data = a.data();
    engine->PushSync(
        [&, data, round](RunContext rctx) { dev->Memset(0, data, round, n, rctx.stream); },
        kTestDev, {}, {a.var()});
    engine->PushSync(
        [&, data](RunContext rctx) {
          dev->Copy(Context::CPU(), seen.data(), kTestDev, data, n, rctx.stream);
        },
        kTestDev, {a.var()}, {}, FnProperty::kCopyFromDevice);
    engine->WaitForAll();
    ASSERT_EQ(seen[0], round);
    ASSERT_EQ(seen[n - 1], round);
  }
}

// A fault the device reports only when its stream is synchronised fails the function that queued
// the work: the error lands on the variables it writes, and the next function still runs.
TEST_P(Completion, FaultsReportedByTheStreamFailTheFunction) {
  auto dev = Load("libtest_device.so", kDLExtDev);
  auto engine = Engine::Create(GetParam());
  std::vector<unsigned char> buf(64);
  VarHandle v = engine->NewVar();
  engine->PushSync([&](RunContext rctx) { dev->Memset(0, buf.data(), 999, 64, rctx.stream); },
                   kTestDev, {}, {v});
  const std::string text = ErrorText([&] { engine->WaitForVar(v); });
  EXPECT_NE(text.find("memset value 999 is not a byte"), std::string::npos) << text;
  EXPECT_NE(text.find("device 'testdev' (plugin test_device) synchronizing a stream of ext_dev(0)"),
            std::string::npos)
      << text;
  engine->PushSync([&](RunContext rctx) { dev->Memset(0, buf.data(), 7, 64, rctx.stream); },
                   kTestDev, {}, {v});
  engine->WaitForVar(v);
  EXPECT_EQ(buf[63], 7);
  engine->PushDelete(nullptr, Context::CPU(), v);
  engine->WaitForAll();
}

INSTANTIATE_TEST_SUITE_P(Engines, Completion,
                         ::testing::Values(EngineType::kThreaded, EngineType::kNaive),
                         [](const auto& info) {
                           return info.param == EngineType::kThreaded ? "Threaded" : "Naive";
                         });

TEST(DeviceWorkers, CountsComeFromMXNetsVariables) {
  auto dev = Load("libtest_device.so", kDLExtDev);
  setenv("MXNET_GPU_WORKER_NTHREADS", "3", 1);
  setenv("MXNET_GPU_COPY_NTHREADS", "1", 1);
  auto engine = Engine::Create(EngineType::kThreaded);
  unsetenv("MXNET_GPU_WORKER_NTHREADS");
  unsetenv("MXNET_GPU_COPY_NTHREADS");
  EXPECT_NE(engine->Describe().find("per accelerator 3 compute and 1 copy worker(s)"),
            std::string::npos)
      << engine->Describe();
  std::mutex mu;
  std::set<std::thread::id> compute, copy;
  for (int i = 0; i < 60; ++i) {
    const bool is_copy = i % 3 == 0;
    engine->PushSync(
        [&, is_copy](RunContext) {
          std::this_thread::sleep_for(std::chrono::microseconds(300));
          std::lock_guard<std::mutex> lock(mu);
          (is_copy ? copy : compute).insert(std::this_thread::get_id());
        },
        Context{kDLExtDev, 1}, {}, {}, is_copy ? FnProperty::kCopyToDevice : FnProperty::kNormal);
  }
  engine->WaitForAll();
  EXPECT_GE(compute.size(), 1u);
  EXPECT_LE(compute.size(), 3u);
  EXPECT_EQ(copy.size(), 1u);
  EXPECT_EQ(Engine::Create(EngineType::kThreaded)->Describe().find("3 compute"), std::string::npos);
}

}  // namespace
}  // namespace mxplug
