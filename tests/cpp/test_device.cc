// Device backends through the core: a plugin built against ABI 1.1 still loads and works through
// the host's fallbacks for what 1.2 added; the CPU backend's 1.2 functions; and the completion
// contract (Note [Completion] in engine_core.cc) on the asynchronous test device, whose streams
// run their work later on threads of their own.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
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
  // The private engine's own variable (an NDArray's belongs to the process-wide engine).
  void* data = dev->Allocate(0, n, 64);
  VarHandle var = engine->NewVar();
  std::vector<unsigned char> seen(n);
  for (int round = 1; round <= 20; ++round) {
    engine->PushSync([&, round](RunContext rctx) { dev->Memset(0, data, round, n, rctx.stream); },
                     kTestDev, {}, {var});
    engine->PushSync(
        [&](RunContext rctx) {
          dev->Copy(Context::CPU(), seen.data(), kTestDev, data, n, rctx.stream);
        },
        kTestDev, {var}, {}, FnProperty::kCopyFromDevice);
    engine->WaitForAll();
    ASSERT_EQ(seen[0], round);
    ASSERT_EQ(seen[n - 1], round);
  }
  engine->PushDelete([&](RunContext) { dev->Free(0, data); }, kTestDev, var);
  engine->WaitForAll();
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
  // The naive engine synchronises the stream after each function; the threaded engine's wait
  // meets the fault at the function's event (Note [Event completion]).
  const std::string where = GetParam() == EngineType::kNaive
                                ? "synchronizing a stream of ext_dev(0)"
                                : "waiting for an event of ext_dev(0)";
  EXPECT_NE(text.find("device 'testdev' (plugin test_device) " + where), std::string::npos) << text;
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

// ---- Note [Event completion], on the threaded engine with one compute and one copy stream ----

// The test device's hooks (tests/plugins/test_device.cc).
struct TestDeviceHooks {
  void (*hold_streams)(int) = nullptr;
  int64_t (*live_events)() = nullptr;
};

TestDeviceHooks Hooks() {
  void* lib = dlopen((test::kDevicesDir + "/libtest_device.so").c_str(), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(lib, nullptr) << "the test device is not loaded";
  TestDeviceHooks h;
  h.hold_streams = reinterpret_cast<void (*)(int)>(dlsym(lib, "mxplug_testdev_hold_streams"));
  h.live_events = reinterpret_cast<int64_t (*)()>(dlsym(lib, "mxplug_testdev_live_events"));
  EXPECT_TRUE(h.hold_streams && h.live_events);
  return h;
}

// Every stream of the test device stays still while it lives (released on any exit).
class HeldStreams {
 public:
  explicit HeldStreams(const TestDeviceHooks& h) : h_(h) { h_.hold_streams(1); }
  ~HeldStreams() { Release(); }
  void Release() { h_.hold_streams(0); }

 private:
  TestDeviceHooks h_;
};

class EventCompletion : public ::testing::Test {
 protected:
  void SetUp() override {
    dev_ = Load("libtest_device.so", kDLExtDev);
    hooks_ = Hooks();
    EngineOptions options;
    options.device_compute_workers = 1;
    options.device_copy_workers = 1;
    engine_ = Engine::Create(EngineType::kThreaded, options);
  }
  void TearDown() override {
    hooks_.hold_streams(0);
    engine_->WaitForAll();
  }
  // Polls until `var` has seen `writes` completed writes; false after 10 s.
  bool CompletesWithoutTheDevice(VarHandle var, uint64_t writes) {
    for (int i = 0; i < 10000 && engine_->Version(var) < writes; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return engine_->Version(var) >= writes;
  }
  // Pushes a function that sets `bytes` bytes at `p` to `value` on the compute stream.
  void PushFill(void* p, int value, size_t bytes, VarHandle var) {
    engine_->PushSync(
        [this, p, value, bytes](RunContext rctx) { dev_->Memset(0, p, value, bytes, rctx.stream); },
        kTestDev, {}, {var});
  }

  std::shared_ptr<const DeviceEntry> dev_;
  TestDeviceHooks hooks_;
  std::unique_ptr<Engine> engine_;
};

// Functions on one stream follow each other without synchronising: all 50 complete for the
// engine while the stream has run none of their work, which a host read then waits for.
TEST_F(EventCompletion, FunctionsOnOneStreamCompleteWithoutWaitingForIt) {
  std::vector<unsigned char> host(1024);
  unsigned char* p = static_cast<unsigned char*>(dev_->Allocate(0, host.size(), 64));
  std::memset(p, 0, host.size());
  VarHandle v = engine_->NewVar();
  {
    HeldStreams held(hooks_);
    for (int i = 1; i <= 50; ++i) PushFill(p, i, host.size(), v);
    ASSERT_TRUE(CompletesWithoutTheDevice(v, 50)) << "a function waited for its stream";
    EXPECT_EQ(p[0], 0);  // the stream has not moved
  }
  engine_->WaitForVar(v);  // a host read waits for the last writer's event
  EXPECT_EQ(p[0], 50);
  EXPECT_EQ(p[host.size() - 1], 50);
  engine_->PushDelete([&](RunContext) { dev_->Free(0, p); }, kTestDev, v);
}

// A reader on another stream (the copy stream) waits for the writer's event on its stream: 20
// fills queued behind each other on the compute stream, then a copy to the host on the copy
// stream, which must see the last fill.
TEST_F(EventCompletion, ReaderOnAnotherStreamWaitsForTheWritersEvent) {
  const size_t n = 4096;
  unsigned char* p = static_cast<unsigned char*>(dev_->Allocate(0, n, 64));
  std::vector<unsigned char> seen(n, 0);
  VarHandle v = engine_->NewVar();
  for (int round = 1; round <= 5; ++round) {
    for (int i = 0; i < 20; ++i) PushFill(p, round * 20 + i, n, v);
    engine_->PushSync(
        [&](RunContext rctx) {
          dev_->Copy(Context::CPU(), seen.data(), kTestDev, p, n, rctx.stream);
        },
        kTestDev, {v}, {}, FnProperty::kCopyFromDevice);
    engine_->WaitForAll();
    ASSERT_EQ(seen[0], round * 20 + 19) << "round " << round;
    ASSERT_EQ(seen[n - 1], round * 20 + 19) << "round " << round;
  }
  engine_->PushDelete([&](RunContext) { dev_->Free(0, p); }, kTestDev, v);
}

// A writer on another stream waits for the readers' events: the copy stream reads the array
// behind 20 slow jobs of its own; the fill queued after it on the compute stream must not land
// before the read.
TEST_F(EventCompletion, WriterOnAnotherStreamWaitsForTheReadersEvents) {
  const size_t n = 4096;
  unsigned char* p = static_cast<unsigned char*>(dev_->Allocate(0, n, 64));
  unsigned char* other = static_cast<unsigned char*>(dev_->Allocate(0, n, 64));
  std::vector<unsigned char> seen(n, 0);
  VarHandle v = engine_->NewVar(), busy = engine_->NewVar();
  {
    HeldStreams held(hooks_);  // everything is queued before either stream starts
    PushFill(p, 1, n, v);
    for (int i = 0; i < 20; ++i)  // keeps the copy stream busy
      engine_->PushSync([&](RunContext rctx) { dev_->Memset(0, other, 3, n, rctx.stream); },
                        kTestDev, {}, {busy}, FnProperty::kCopyToDevice);
    engine_->PushSync(  // reads `busy` too, so it is queued behind the 20 jobs
        [&](RunContext rctx) {
          dev_->Copy(Context::CPU(), seen.data(), kTestDev, p, n, rctx.stream);
        },
        kTestDev, {v, busy}, {}, FnProperty::kCopyFromDevice);
    PushFill(p, 2, n, v);
    ASSERT_TRUE(CompletesWithoutTheDevice(v, 2));
  }
  engine_->WaitForAll();
  EXPECT_EQ(seen[0], 1) << "the write overtook a read on another stream";
  EXPECT_EQ(seen[n - 1], 1);
  EXPECT_EQ(p[0], 2);
  engine_->PushDelete([&](RunContext) { dev_->Free(0, p); }, kTestDev, v);
  engine_->PushDelete([&](RunContext) { dev_->Free(0, other); }, kTestDev, busy);
}

// A CPU function that reads what the device wrote waits on the host for the device's event. The
// streams are held while it is pushed; it must still see the copied values.
TEST_F(EventCompletion, HostFunctionWaitsForTheDeviceWorkItReads) {
  // Raw memory and this engine's own variables: an NDArray's variable belongs to the process-wide
  // engine, and one engine's events must not be left on another's variables.
  const int n = 1000;
  std::vector<float> values(n), host(n, -1.0f), seen;
  for (int i = 0; i < n; ++i) values[i] = 0.25f * i + 1;
  void* a = dev_->Allocate(0, n * sizeof(float), 64);
  dev_->Copy(kTestDev, a, Context::CPU(), values.data(), n * sizeof(float));
  VarHandle va = engine_->NewVar(), vh = engine_->NewVar();
  {
    HeldStreams held(hooks_);
    engine_->PushSync(
        [&](RunContext rctx) {
          dev_->Copy(Context::CPU(), host.data(), kTestDev, a, n * sizeof(float), rctx.stream);
        },
        kTestDev, {va}, {vh}, FnProperty::kCopyFromDevice);
    engine_->PushSync([&](RunContext) { seen = host; }, Context::CPU(), {vh}, {});
    // Without the host's wait, the CPU function would have read -1s by now.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  engine_->WaitForAll();
  EXPECT_EQ(seen, values);
  engine_->PushDelete([&](RunContext) { dev_->Free(0, a); }, kTestDev, va);
}

// A delete (which returns memory to the pool) waits for the device work on its variable: at the
// moment it runs, every fill queued before it has landed.
TEST_F(EventCompletion, DeleteWaitsForTheDeviceWorkOnItsVariable) {
  const size_t n = 4096;
  unsigned char* p = static_cast<unsigned char*>(dev_->Allocate(0, n, 64));
  std::memset(p, 0, n);
  VarHandle v = engine_->NewVar();
  int seen_at_free = -1;
  {
    HeldStreams held(hooks_);
    for (int i = 1; i <= 20; ++i) PushFill(p, i, n, v);
    engine_->PushDelete(
        [&](RunContext) {
          seen_at_free = p[n - 1];
          dev_->Free(0, p);
        },
        kTestDev, v);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(seen_at_free, -1) << "the delete ran while the device still had work on the memory";
  }
  engine_->WaitForAll();
  EXPECT_EQ(seen_at_free, 20);
}

// A fault is reported once: by the first wait that meets it. A CPU function reading the faulty
// function's output fails with its error (as a failed input fails its readers); a fault nobody
// reads is reported by WaitForAll.
TEST_F(EventCompletion, FaultsAreReportedByTheWaitThatMeetsThem) {
  std::vector<unsigned char> buf(64, 0);
  VarHandle v = engine_->NewVar(), w = engine_->NewVar();
  PushFill(buf.data(), 999, 64, v);
  bool ran = false;
  engine_->PushSync([&](RunContext) { ran = true; }, Context::CPU(), {v}, {w});
  std::string text = ErrorText([&] { engine_->WaitForVar(w); });
  EXPECT_NE(text.find("memset value 999 is not a byte"), std::string::npos) << text;
  EXPECT_FALSE(ran);
  EXPECT_NO_THROW(engine_->WaitForVar(v));  // reported once
  EXPECT_NO_THROW(engine_->WaitForAll());
  // Nobody reads it: WaitForAll reports it, once.
  PushFill(buf.data(), 777, 64, v);
  text = ErrorText([&] { engine_->WaitForAll(); });
  EXPECT_NE(text.find("memset value 777 is not a byte"), std::string::npos) << text;
  EXPECT_NO_THROW(engine_->WaitForAll());
  // Work on another stream that waited for the faulty work inherits the fault (as CUDA's sticky
  // errors reach later work): both functions' outputs report it.
  PushFill(buf.data(), 555, 64, v);
  engine_->PushSync([&](RunContext rctx) { dev_->Memset(0, buf.data() + 32, 1, 32, rctx.stream); },
                    kTestDev, {v}, {w}, FnProperty::kCopyToDevice);
  text = ErrorText([&] { engine_->WaitForVar(w); });
  EXPECT_NE(text.find("memset value 555 is not a byte"), std::string::npos) << text;
  text = ErrorText([&] { engine_->WaitForVar(v); });
  EXPECT_NE(text.find("memset value 555 is not a byte"), std::string::npos) << text;
  EXPECT_NO_THROW(engine_->WaitForAll());
  // The device goes on working.
  PushFill(buf.data(), 9, 64, v);
  engine_->WaitForVar(v);
  EXPECT_EQ(buf[0], 9);
}

// Events are recycled: 4,200 functions in rounds of 200 leave no more events than a round can
// have in flight.
TEST_F(EventCompletion, EventsAreRecycled) {
  const size_t n = 64;
  std::vector<unsigned char> a(n), b(n);
  VarHandle va = engine_->NewVar(), vb = engine_->NewVar();
  auto push_pairs = [&](int count) {
    for (int i = 0; i < count; ++i) {
      PushFill(a.data(), i & 0xFF, n, va);
      engine_->PushSync(
          [&](RunContext rctx) {
            dev_->Copy(kTestDev, b.data(), kTestDev, a.data(), n, rctx.stream);
          },
          kTestDev, {va}, {vb}, FnProperty::kCopyToDevice);
    }
    engine_->WaitForAll();
  };
  const int64_t before = hooks_.live_events();
  for (int round = 0; round < 21; ++round) push_pairs(100);
  // At most one round's functions are in flight at once, each with its event.
  EXPECT_EQ(b[0], 99);
  EXPECT_LE(hooks_.live_events() - before, 2 * 100 + 16) << "4,200 functions later";
}

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
