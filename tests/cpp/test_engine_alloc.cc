// The engine's steady path allocates nothing: pushing and running functions reuses pooled
// blocks and queue storage. Counted with a global operator new in this test binary.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <cstdlib>
#include <new>

#include "mxplug/engine.h"

namespace {
std::atomic<long> g_allocations{0};
}  // namespace

void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace mxplug {
namespace {

void Empty(RunContext) {}

TEST(EngineAllocations, SteadyPushesAllocateNothing) {
  for (EngineType type : {EngineType::kThreaded, EngineType::kNaive}) {
    auto engine = Engine::Create(type);
    const Context cpu = Context::CPU();
    VarHandle a = engine->NewVar(), b = engine->NewVar();
    auto round = [&](bool hold_first) {
      std::atomic<bool> release{!hold_first};
      // Held: every later function queues behind this one, so the pools and queues grow to the
      // largest size a round can need.
      engine->PushSync([&release](RunContext) {
        while (!release.load()) std::this_thread::yield();
      }, cpu, {}, {a});
      for (int i = 0; i < 300; ++i) {  // batches stay under the engine's reserved list sizes
        engine->PushSync(Empty, cpu, {}, {a});      // chain on a
        engine->PushSync(Empty, cpu, {a}, {b});     // read a, write b
        engine->PushSync(Empty, cpu, {b}, {});      // read b
      }
      release = true;
      engine->WaitForAll();
    };
    if (type == EngineType::kThreaded) round(true);  // the naive engine never queues
    round(false);
    for (int attempt = 0; attempt < 3; ++attempt) {
      long before = g_allocations.load();
      round(false);
      long allocations = g_allocations.load() - before;
      EXPECT_EQ(allocations, 0) << (type == EngineType::kThreaded ? "threaded" : "naive")
                                << " engine: " << allocations << " allocations in a round of 901 pushes";
    }
  }
}

}  // namespace
}  // namespace mxplug
