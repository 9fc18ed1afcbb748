// The dependency engine, both kinds, against a serial oracle and the MXNet rules: writers in push
// order, readers together, PushDelete last, async completion from any thread, and errors stored
// on variables, skipped downstream, rethrown at waits and cleared.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "mxplug/engine.h"
#include "mxplug/runtime.h"
#include "test_errors.h"
#include "test_paths.h"

namespace mxplug {
namespace {

class EngineTest : public ::testing::TestWithParam<EngineType> {
 protected:
  void SetUp() override {
    EngineOptions options;
    options.cpu_workers = 4;  // more workers than cores: overlap must come from the engine
    engine_ = Engine::Create(GetParam(), options);
  }
  bool threaded() const { return GetParam() == EngineType::kThreaded; }
  // Pushes a write of `v` that runs until `release` is set, then appends 1 to `order`.
  void PushHeldWrite(VarHandle v, const std::atomic<bool>* release, std::vector<int>* order) {
    engine_->PushSync(
        [release, order](RunContext) {
          while (!release->load()) std::this_thread::yield();
          order->push_back(1);
        },
        cpu_, {}, {v});
  }
  std::unique_ptr<Engine> engine_;
  const Context cpu_ = Context::CPU();
};

using test::ErrorText;

// 10,000 random functions over 100 variables, each reading 2 to 20 and writing one, with a
// computation whose result depends on the exact order of writes: the engine's results must be
// bit-identical to running the same functions one after another.
TEST_P(EngineTest, RandomProgramMatchesSerialOracleBitForBit) {
  constexpr int kVars = 100, kOps = 10000;
  struct Op {
    std::vector<int> reads;
    int write;
    double coef;
  };
  std::mt19937 gen(2024);
  std::vector<Op> ops(kOps);
  for (Op& op : ops) {
    int nreads = std::uniform_int_distribution<int>(2, 20)(gen);
    for (int i = 0; i < nreads; ++i)
      op.reads.push_back(std::uniform_int_distribution<int>(0, kVars - 1)(gen));
    op.write = std::uniform_int_distribution<int>(0, kVars - 1)(gen);
    op.coef = std::uniform_real_distribution<double>(-1, 1)(gen);
  }
  auto apply = [](const Op& op, std::vector<double>& data) {
    double acc = 0.5 * data[op.write];
    for (int r : op.reads) acc = acc * 0.999 + std::sin(data[r] + op.coef);
    data[op.write] = acc;
  };
  std::vector<double> serial(kVars), parallel(kVars);
  for (int i = 0; i < kVars; ++i) serial[i] = parallel[i] = i * 0.01;
  for (const Op& op : ops) apply(op, serial);

  std::vector<VarHandle> vars(kVars);
  for (auto& v : vars) v = engine_->NewVar();
  for (const Op& op : ops) {
    std::vector<VarHandle> reads;
    for (int r : op.reads) reads.push_back(vars[r]);
    // Every third one inline (Note [Inline functions]): run by whichever thread frees it, or at
    // once without a push when its variables are free (Note [Free variables]).
    const size_t i = static_cast<size_t>(&op - ops.data());
    const FnProperty prop = i % 3 == 0 ? FnProperty::kInline : FnProperty::kNormal;
    auto run = [&, op](RunContext) { apply(op, parallel); };
    if (i % 6 == 0 &&
        engine_->RunInlineIfFree(
            [](void* fn, RunContext rctx) { (*static_cast<decltype(run)*>(fn))(rctx); }, &run, cpu_,
            reads, {vars[op.write]}, "inline"))
      continue;
    engine_->PushSync(run, cpu_, reads, {vars[op.write]}, prop);
  }
  engine_->WaitForAll();
  EXPECT_EQ(0, std::memcmp(serial.data(), parallel.data(), sizeof(double) * kVars));
  for (auto v : vars) engine_->PushDelete(nullptr, cpu_, v);
  engine_->WaitForAll();
}

TEST_P(EngineTest, DuplicateVariablesCountOnceAndReadPlusWriteIsAWrite) {
  VarHandle a = engine_->NewVar();
  std::atomic<int> inside{0};
  bool overlapped = false;
  std::vector<int> order;
  for (int i = 0; i < 100; ++i) {
    auto fn = [&, i](RunContext) {
      if (inside.fetch_add(1) != 0) overlapped = true;
      order.push_back(i);
      inside.fetch_sub(1);
    };
    // Read and written, and listed twice in each list: one write of a.
    engine_->PushSync(fn, cpu_, {a, a}, {a, a});
  }
  engine_->WaitForVar(a);
  EXPECT_FALSE(overlapped);
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
  EXPECT_EQ(engine_->Version(a), 100u);
}

TEST_P(EngineTest, VersionCountsCompletedWrites) {
  VarHandle v = engine_->NewVar();
  EXPECT_EQ(engine_->Version(v), 0u);
  for (int i = 0; i < 5; ++i) engine_->PushSync([](RunContext) {}, cpu_, {}, {v});
  for (int i = 0; i < 3; ++i) engine_->PushSync([](RunContext) {}, cpu_, {v}, {});
  engine_->WaitForVar(v);
  EXPECT_EQ(engine_->Version(v), 5u);
  EXPECT_TRUE(engine_->IsReady(v));
}

TEST_P(EngineTest, WaitForVarOnFreshVarReturnsAtOnce) {
  VarHandle v = engine_->NewVar();
  EXPECT_TRUE(engine_->IsReady(v));
  auto start = std::chrono::steady_clock::now();
  engine_->WaitForVar(v);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(100));
}

TEST_P(EngineTest, WritersSerializeInPushOrder) {
  VarHandle v = engine_->NewVar();
  std::atomic<int> inside{0};
  std::vector<int> order;
  bool overlapped = false;
  for (int i = 0; i < 200; ++i)
    engine_->PushSync(
        [&, i](RunContext) {
          if (inside.fetch_add(1) != 0) overlapped = true;
          order.push_back(i);
          std::this_thread::yield();
          inside.fetch_sub(1);
        },
        cpu_, {}, {v});
  engine_->WaitForVar(v);
  EXPECT_FALSE(overlapped);
  ASSERT_EQ(order.size(), 200u);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(order[i], i);
}

// Tests that only make sense when functions run on workers.
class ThreadedEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    EngineOptions options;
    options.cpu_workers = 4;
    engine_ = Engine::Create(EngineType::kThreaded, options);
  }
  std::unique_ptr<Engine> engine_;
  const Context cpu_ = Context::CPU();
};

TEST_F(ThreadedEngineTest, ReadersBetweenWritesRunTogether) {
  VarHandle v = engine_->NewVar();
  int value = 0;
  engine_->PushSync([&](RunContext) { value = 7; }, cpu_, {}, {v});
  // Two readers that can only both finish if they run at the same time: each waits (bounded)
  // for the other to arrive.
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  std::atomic<int> met{0}, seen{0};
  for (int r = 0; r < 2; ++r)
    engine_->PushSync(
        [&](RunContext) {
          seen += value;
          std::unique_lock<std::mutex> lock(mu);
          ++arrived;
          cv.notify_all();
          if (cv.wait_for(lock, std::chrono::seconds(10), [&] { return arrived == 2; })) ++met;
        },
        cpu_, {v}, {});
  engine_->PushSync([&](RunContext) { value = 1; }, cpu_, {}, {v});
  engine_->WaitForVar(v);
  EXPECT_EQ(met.load(), 2) << "the readers did not run concurrently";
  EXPECT_EQ(seen.load(), 14) << "a reader ran before the write it follows, or after the next one";
  EXPECT_EQ(value, 1);
}

TEST_P(EngineTest, PushDeleteRunsAfterEveryEarlierUser) {
  VarHandle v = engine_->NewVar();
  std::atomic<int> done{0};
  int seen_at_delete = -1;
  for (int i = 0; i < 50; ++i)
    engine_->PushSync(
        [&](RunContext) {
          std::this_thread::yield();
          ++done;
        },
        cpu_, i % 2 ? std::vector<VarHandle>{v} : std::vector<VarHandle>{},
        i % 2 ? std::vector<VarHandle>{} : std::vector<VarHandle>{v});
  engine_->PushDelete([&](RunContext) { seen_at_delete = done.load(); }, cpu_, v);
  engine_->WaitForAll();
  EXPECT_EQ(seen_at_delete, 50);
}

// Note [Idle deletes]: the delete of a variable nothing waits for runs before PushDelete
// returns, on the caller's thread; its error is kept for WaitForAll, as a pushed delete's.
TEST_P(EngineTest, PushDeleteOfAnIdleVariableRunsAtOnceAndKeepsItsError) {
  VarHandle v = engine_->NewVar();
  engine_->PushSync([](RunContext) {}, cpu_, {}, {v});
  engine_->WaitForVar(v);
  std::thread::id ran_on;
  engine_->PushDelete([&](RunContext) { ran_on = std::this_thread::get_id(); }, cpu_, v);
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  VarHandle w = engine_->NewVar();
  engine_->PushDelete([](RunContext) { throw std::runtime_error("free failed"); }, cpu_, w);
  EXPECT_EQ(ErrorText([&] { engine_->WaitForAll(); }), "free failed");
  EXPECT_EQ(ErrorText([&] { engine_->WaitForAll(); }), "no error");
}

// DeleteIfIdle recycles a variable nothing uses, and leaves one that a pending function or a
// stored error holds (its owner then pushes the delete).
TEST_P(EngineTest, DeleteIfIdleRecyclesOnlyAVariableNothingHolds) {
  VarHandle idle = engine_->NewVar();
  engine_->PushSync([](RunContext) {}, cpu_, {}, {idle});
  engine_->WaitForVar(idle);
  EXPECT_TRUE(engine_->DeleteIfIdle(cpu_, idle));

  VarHandle failed = engine_->NewVar();
  engine_->PushSync([](RunContext) { throw std::runtime_error("write failed"); }, cpu_, {},
                    {failed});
  while (!engine_->IsReady(failed)) std::this_thread::yield();
  EXPECT_FALSE(engine_->DeleteIfIdle(cpu_, failed));  // its error waits to be taken
  EXPECT_EQ(ErrorText([&] { engine_->WaitForVar(failed); }), "write failed");
  EXPECT_TRUE(engine_->DeleteIfIdle(cpu_, failed));

  if (!threaded()) return;  // the naive engine runs a function before its push returns
  VarHandle busy = engine_->NewVar();
  std::atomic<bool> release{false};
  engine_->PushSync(
      [&](RunContext) {
        while (!release.load()) std::this_thread::yield();
      },
      cpu_, {}, {busy});
  EXPECT_FALSE(engine_->DeleteIfIdle(cpu_, busy));
  std::atomic<bool> deleted{false};
  engine_->PushDelete([&](RunContext) { deleted = release.load(); }, cpu_, busy);
  release = true;
  engine_->WaitForAll();
  EXPECT_TRUE(deleted.load());
}

// Note [Inline functions]: a kInline function whose variables are free runs on the pushing
// thread before the push returns; one behind other work runs after it, where its last dependency
// completes, and the push does not wait for it. Its error lands on what it writes.
TEST_P(EngineTest, InlineFunctionsRunWhereTheyBecomeReadyInOrderAndKeepTheirErrors) {
  VarHandle v = engine_->NewVar();
  const std::thread::id pusher = std::this_thread::get_id();
  std::thread::id first;
  engine_->PushSync([&](RunContext) { first = std::this_thread::get_id(); }, cpu_, {}, {v},
                    FnProperty::kInline);
  EXPECT_EQ(first, pusher);
  if (threaded()) {
    std::atomic<bool> release{false};
    std::vector<int> order;
    PushHeldWrite(v, &release, &order);
    std::thread::id second;
    engine_->PushSync(
        [&](RunContext) {
          second = std::this_thread::get_id();
          order.push_back(2);
        },
        cpu_, {v}, {v}, FnProperty::kInline);
    EXPECT_TRUE(order.empty());  // the push returned while the write it follows still runs
    release = true;
    engine_->WaitForVar(v);
    EXPECT_EQ(order, (std::vector<int>{1, 2}));
    EXPECT_NE(second, pusher);
  }
  engine_->PushSync([](RunContext) { throw std::runtime_error("inline op failed"); }, cpu_, {}, {v},
                    FnProperty::kInline);
  EXPECT_EQ(ErrorText([&] { engine_->WaitForVar(v); }), "inline op failed");
  engine_->PushDelete(nullptr, cpu_, v);
  engine_->WaitForAll();
}

// Note [Free variables]: RunInlineIfFree runs at once on the caller only when nothing waits for,
// holds or has left an error on its variables; otherwise it does nothing and says so.
TEST_P(EngineTest, RunInlineIfFreeRunsOnlyWhenItsVariablesAreFree) {
  VarHandle in = engine_->NewVar(), out = engine_->NewVar();
  struct Probe {
    int calls = 0;
    std::thread::id thread;
    bool fail = false;
    static void Run(void* self, RunContext) {
      auto* p = static_cast<Probe*>(self);
      ++p->calls;
      p->thread = std::this_thread::get_id();
      if (p->fail) throw std::runtime_error("free op failed");
    }
  } probe;
  auto try_run = [&](std::initializer_list<VarHandle> reads,
                     std::initializer_list<VarHandle> writes) {
    return engine_->RunInlineIfFree(&Probe::Run, &probe, cpu_, reads, writes, "probe");
  };
  ASSERT_TRUE(try_run({in, in}, {out}));  // a variable read twice is one read
  EXPECT_EQ(probe.calls, 1);
  EXPECT_EQ(probe.thread, std::this_thread::get_id());
  EXPECT_EQ(engine_->Version(out), 1u);
  EXPECT_EQ(engine_->Version(in), 0u);
  EXPECT_FALSE(try_run({out}, {out}));  // read and written: taken for the read, so not free
  EXPECT_EQ(probe.calls, 1);

  if (threaded()) {  // held by a function still running: not run, nothing changed, order kept
    std::atomic<bool> release{false};
    std::vector<int> order;
    PushHeldWrite(in, &release, &order);
    EXPECT_FALSE(try_run({in}, {out}));
    EXPECT_FALSE(try_run({}, {in}));
    engine_->PushSync([&](RunContext) { order.push_back(2); }, cpu_, {in}, {out});
    release = true;
    engine_->WaitForAll();
    EXPECT_EQ(order, (std::vector<int>{1, 2}));
    EXPECT_EQ(probe.calls, 1);
    EXPECT_EQ(engine_->Version(out), 2u);  // the refusals gave the write back unused
  }

  // Inside an engine function it would not run after the function, as a push would: refused.
  VarHandle other = engine_->NewVar();
  bool inside = true;
  engine_->PushSync([&](RunContext) { inside = try_run({}, {other}); }, cpu_, {}, {in});
  engine_->WaitForAll();
  EXPECT_FALSE(inside);
  EXPECT_TRUE(try_run({}, {other}));

  // Its exception is the error of what it writes; a variable holding an error is not free.
  probe.fail = true;
  ASSERT_TRUE(try_run({in}, {out}));
  EXPECT_FALSE(try_run({out}, {}));
  EXPECT_EQ(ErrorText([&] { engine_->WaitForVar(out); }), "free op failed");
  EXPECT_TRUE(try_run({out}, {}));  // reported and cleared: free again (and failing again)
  EXPECT_EQ(ErrorText([&] { engine_->WaitForAll(); }), "free op failed");  // nothing written
  for (VarHandle v : {in, out, other}) engine_->PushDelete(nullptr, cpu_, v);
  engine_->WaitForAll();
}

TEST_P(EngineTest, AsyncFunctionCompletedFromAnotherThread) {
  VarHandle v = engine_->NewVar();
  int value = 0;
  std::thread helper;
  std::mutex helper_mu;
  engine_->PushAsync(
      [&](RunContext, CallbackOnComplete done) {
        std::lock_guard<std::mutex> lock(helper_mu);
        helper = std::thread([&value, done] {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
          value = 42;
          done();
        });
      },
      cpu_, {}, {v}, FnProperty::kAsync);
  int read = 0;
  engine_->PushSync([&](RunContext) { read = value; }, cpu_, {v}, {});
  engine_->WaitForAll();
  EXPECT_EQ(read, 42);
  std::lock_guard<std::mutex> lock(helper_mu);
  helper.join();
}

TEST_P(EngineTest, AsyncFunctionThrowingBeforeItsCallbackFailsLikeAnyOther) {
  VarHandle a = engine_->NewVar(), b = engine_->NewVar();
  bool ran_dependent = false;
  int after = 0;
  engine_->PushAsync(
      [](RunContext, CallbackOnComplete) { throw std::runtime_error("launch failed in op L"); },
      cpu_, {}, {a}, FnProperty::kNormal, 0, "Launch");
  engine_->PushSync([&](RunContext) { ran_dependent = true; }, cpu_, {a}, {b});  // skipped
  engine_->PushSync([&](RunContext) { after = 1; }, cpu_, {}, {});               // independent
  EXPECT_EQ(ErrorText([&] { engine_->WaitForVar(b); }), "launch failed in op L");
  EXPECT_FALSE(ran_dependent);
  EXPECT_EQ(ErrorText([&] { engine_->WaitForAll(); }),
            "no error");  // reported, so cleared on a too
  EXPECT_EQ(after, 1);
}

TEST_P(EngineTest, CallbackCalledTwiceIsAnError) {
  VarHandle v = engine_->NewVar();
  std::string second;
  engine_->PushAsync(
      [&](RunContext, CallbackOnComplete done) {
        done();
        second = ErrorText([&] { done(); });
      },
      cpu_, {}, {v}, FnProperty::kAsync, 0, "Twice");
  engine_->WaitForAll();
  EXPECT_EQ(second, "the callback of engine function 'Twice' was called twice");
}

TEST_P(EngineTest, ErrorIsStoredOnMutatedVarsRethrownAtWaitAndCleared) {
  VarHandle a = engine_->NewVar(), b = engine_->NewVar();
  engine_->PushSync([](RunContext) { throw std::invalid_argument("shape mismatch in op X"); }, cpu_,
                    {}, {a, b});
  EXPECT_EQ(ErrorText([&] { engine_->WaitForVar(a); }), "shape mismatch in op X");
  EXPECT_EQ(ErrorText([&] { engine_->WaitForVar(a); }), "no error");  // cleared
  // One failure is reported once (MXNet's shared exception slot): b held the same one.
  EXPECT_EQ(ErrorText([&] { engine_->WaitForVar(b); }), "no error");
  EXPECT_EQ(ErrorText([&] { engine_->WaitForAll(); }), "no error");
  // Any exception type crosses: an int, and the core's Error.
  engine_->PushSync([](RunContext) { throw 42; }, cpu_, {}, {a});
  EXPECT_EQ(ErrorText([&] { engine_->WaitForVar(a); }), "int 42");
  engine_->PushSync([](RunContext) { throw Error("FullyConnected forward on cpu(0): bad"); }, cpu_,
                    {}, {a});
  EXPECT_EQ(ErrorText([&] { engine_->WaitForVar(a); }), "FullyConnected forward on cpu(0): bad");
  // After clearing, the variable works again.
  int value = 0;
  engine_->PushSync([&](RunContext) { value = 3; }, cpu_, {}, {a});
  engine_->WaitForVar(a);
  EXPECT_EQ(value, 3);
}

TEST_P(EngineTest, FunctionsReadingAFailedVarAreSkippedAndInheritTheError) {
  VarHandle a = engine_->NewVar(), b = engine_->NewVar(), c = engine_->NewVar();
  bool ran_b = false, ran_c = false;
  engine_->PushSync([](RunContext) { throw std::runtime_error("division by zero in op A"); }, cpu_,
                    {}, {a});
  engine_->PushSync([&](RunContext) { ran_b = true; }, cpu_, {a}, {b});  // b = f(a): skipped
  engine_->PushSync([&](RunContext) { ran_c = true; }, cpu_, {b}, {c});  // c = g(b): skipped too
  EXPECT_EQ(ErrorText([&] { engine_->WaitForVar(c); }), "division by zero in op A");
  EXPECT_FALSE(ran_b);
  EXPECT_FALSE(ran_c);
  // Reported through c, the failure is cleared from a and b too, so later work on them runs.
  EXPECT_EQ(ErrorText([&] { engine_->WaitForAll(); }), "no error");
  engine_->PushSync([&](RunContext) { ran_b = true; }, cpu_, {a}, {b});
  engine_->WaitForVar(b);
  EXPECT_TRUE(ran_b);
}

TEST_P(EngineTest, AnotherFailureStaysUntilItIsReported) {
  VarHandle x = engine_->NewVar(), y = engine_->NewVar();
  engine_->PushSync([](RunContext) { throw std::runtime_error("first"); }, cpu_, {}, {x});
  engine_->PushSync([](RunContext) { throw std::runtime_error("second"); }, cpu_, {}, {y});
  EXPECT_EQ(ErrorText([&] { engine_->WaitForVar(x); }), "first");
  EXPECT_EQ(ErrorText([&] { engine_->WaitForVar(y); }), "second");
  EXPECT_EQ(ErrorText([&] { engine_->WaitForAll(); }), "no error");
}

TEST_P(EngineTest, AResourceVariableOrdersButNeverHoldsAnError) {
  // Every op of a device writes its temp space; a failure stored there would skip them all.
  VarHandle data = engine_->NewVar(), other = engine_->NewVar(), temp = engine_->NewResourceVar();
  std::vector<int> order;
  engine_->PushSync(
      [&](RunContext) {
        order.push_back(1);
        throw std::runtime_error("failed op");
      },
      cpu_, {}, {data, temp});
  engine_->PushSync([&](RunContext) { order.push_back(2); }, cpu_, {}, {other, temp});
  engine_->WaitForVar(other);  // ran, after the failed op
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_EQ(ErrorText([&] { engine_->WaitForVar(data); }), "failed op");
  EXPECT_EQ(ErrorText([&] { engine_->WaitForAll(); }), "no error");
  engine_->PushDelete([](RunContext) {}, cpu_, temp);
}

TEST_P(EngineTest, WaitForAllRethrowsTheFirstErrorAndClearsAll) {
  VarHandle x = engine_->NewVar(), y = engine_->NewVar();
  engine_->PushSync([](RunContext) { throw std::runtime_error("first"); }, cpu_, {}, {x});
  while (!engine_->IsReady(x)) std::this_thread::yield();
  engine_->PushSync([](RunContext) { throw std::runtime_error("second"); }, cpu_, {}, {y});
  EXPECT_EQ(ErrorText([&] { engine_->WaitForAll(); }), "first");
  EXPECT_EQ(ErrorText([&] { engine_->WaitForVar(x); }), "no error");
  EXPECT_EQ(ErrorText([&] { engine_->WaitForVar(y); }), "no error");
  EXPECT_EQ(ErrorText([&] { engine_->WaitForAll(); }), "no error");
}

TEST_F(ThreadedEngineTest, LongChainBehindAFailureIsSkippedWithoutRecursion) {
  VarHandle a = engine_->NewVar();
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::thread completer;  // completes the root, and so skips the whole chain on its own stack
  engine_->PushAsync(
      [&](RunContext, CallbackOnComplete done) {
        std::lock_guard<std::mutex> lock(mu);
        completer = std::thread([&, done] {
          std::unique_lock<std::mutex> wait_lock(mu);
          cv.wait(wait_lock, [&] { return release; });
          wait_lock.unlock();
          done(std::make_exception_ptr(std::runtime_error("root failure")));
        });
        cv.notify_all();
      },
      cpu_, {}, {a}, FnProperty::kAsync);
  std::atomic<int> ran{0};
  for (int i = 0; i < 100000; ++i) engine_->PushSync([&](RunContext) { ++ran; }, cpu_, {}, {a});
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return completer.joinable(); });
    release = true;
  }
  cv.notify_all();
  // Joined before the error is read: the completer's last copy of the exception_ptr is released
  // in uninstrumented libstdc++, whose reference count ThreadSanitizer cannot see.
  completer.join();
  EXPECT_EQ(ErrorText([&] { engine_->WaitForAll(); }), "root failure");
  EXPECT_EQ(ran.load(), 0);
}

TEST_F(ThreadedEngineTest, PrioritizedFunctionsRunOnTheirOwnPool) {
  std::mutex mu;
  std::set<std::thread::id> normal, prioritized;
  for (int i = 0; i < 200; ++i) {
    VarHandle v = engine_->NewVar();
    bool prio = i % 10 == 0;
    engine_->PushSync(
        [&, prio](RunContext) {
          std::lock_guard<std::mutex> lock(mu);
          (prio ? prioritized : normal).insert(std::this_thread::get_id());
        },
        cpu_, {}, {v}, prio ? FnProperty::kCPUPrioritized : FnProperty::kNormal);
    engine_->PushDelete(nullptr, cpu_, v);
  }
  engine_->WaitForAll();
  EXPECT_EQ(prioritized.size(), 1u);  // priority_workers
  for (const auto& t : prioritized) EXPECT_EQ(normal.count(t), 0u);
}

TEST(NaiveEngine, EachFunctionCompletesBeforeItsPushReturns) {
  auto engine = Engine::Create(EngineType::kNaive);
  VarHandle v = engine->NewVar();
  int value = 0;
  std::thread helper;
  // Even an async function completed later from another thread.
  engine->PushAsync(
      [&](RunContext, CallbackOnComplete done) {
        helper = std::thread([&value, done] {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
          value = 5;
          done();
        });
      },
      Context::CPU(), {}, {v}, FnProperty::kAsync);
  EXPECT_EQ(value, 5);
  EXPECT_TRUE(engine->IsReady(v));
  std::thread::id ran_on;
  engine->PushSync([&](RunContext) { ran_on = std::this_thread::get_id(); }, Context::CPU(), {v},
                   {});
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  helper.join();
}

TEST_P(EngineTest, WaitingFromInsideAnEngineFunctionIsAnErrorNotADeadlock) {
  VarHandle v = engine_->NewVar(), w = engine_->NewVar();
  std::string for_var, for_all;
  engine_->PushSync(
      [&](RunContext) {
        for_var = ErrorText([&] { engine_->WaitForVar(w); });
        for_all = ErrorText([&] { engine_->WaitForAll(); });
      },
      cpu_, {}, {v});
  engine_->WaitForAll();
  EXPECT_NE(for_var.find("WaitForVar was called from inside a function running on the engine"),
            std::string::npos)
      << for_var;
  EXPECT_NE(for_all.find("WaitForAll was called from inside a function running on the engine"),
            std::string::npos)
      << for_all;
}

TEST_P(EngineTest, PushFromEightThreadsAtOnce) {
  VarHandle shared = engine_->NewVar();
  int64_t total = 0;
  std::vector<int64_t> own(8, 0);
  std::vector<VarHandle> own_vars(8);
  for (auto& v : own_vars) v = engine_->NewVar();
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) {
        engine_->PushSync([&total](RunContext) { ++total; }, cpu_, {}, {shared});
        engine_->PushSync([&own, t](RunContext) { own[t] += 2; }, cpu_, {shared}, {own_vars[t]});
        // And at once where free (Note [Free variables]), else as a push.
        auto add = [&own, t](RunContext) { own[t] += 1; };
        if (!engine_->RunInlineIfFree(
                [](void* fn, RunContext rctx) { (*static_cast<decltype(add)*>(fn))(rctx); }, &add,
                cpu_, {shared}, {own_vars[t]}, "add"))
          engine_->PushSync(add, cpu_, {shared}, {own_vars[t]}, FnProperty::kInline);
        auto count = [&total](RunContext) { ++total; };
        if (!engine_->RunInlineIfFree(
                [](void* fn, RunContext rctx) { (*static_cast<decltype(count)*>(fn))(rctx); },
                &count, cpu_, {}, {shared}, "count"))
          engine_->PushSync(count, cpu_, {}, {shared});
      }
    });
  for (auto& th : threads) th.join();
  engine_->WaitForAll();
  EXPECT_EQ(total, 16000);
  for (int64_t v : own) EXPECT_EQ(v, 3000);
}

TEST_P(EngineTest, AcceleratorFunctionsRunOnWorkersWithTheirOwnStreams) {
  Runtime::Get().EnsureDefaultPluginsLoaded();
  ASSERT_TRUE(Runtime::Get().LoadFile(test::kDevicesDir + "/libtest_device.so").loaded());
  const Context dev{kDLExtDev, 1};
  std::mutex mu;
  std::map<std::thread::id, std::set<void*>> streams_of_thread;
  std::set<std::thread::id> compute_threads, copy_threads;
  VarHandle v = engine_->NewVar();
  for (int i = 0; i < 40; ++i) {
    FnProperty prop = i % 4 == 0 ? FnProperty::kCopyToDevice : FnProperty::kNormal;
    engine_->PushSync(
        [&, prop](RunContext rctx) {
          std::lock_guard<std::mutex> lock(mu);
          EXPECT_EQ(rctx.ctx, dev);
          EXPECT_NE(rctx.stream, nullptr);
          streams_of_thread[std::this_thread::get_id()].insert(rctx.stream);
          (prop == FnProperty::kNormal ? compute_threads : copy_threads)
              .insert(std::this_thread::get_id());
        },
        dev, {v}, {}, prop);
  }
  engine_->WaitForAll();
  std::set<void*> all_streams;
  for (const auto& [thread, streams] : streams_of_thread) {
    EXPECT_EQ(streams.size(), 1u) << "a worker used more than one stream";
    all_streams.insert(streams.begin(), streams.end());
  }
  EXPECT_EQ(all_streams.size(), streams_of_thread.size()) << "two workers shared a stream";
  if (threaded()) {
    // Compute and copy functions run on different pools; never on the pushing thread.
    EXPECT_GE(compute_threads.size(), 1u);
    EXPECT_LE(compute_threads.size(), 2u);  // device_compute_workers
    EXPECT_LE(copy_threads.size(), 2u);     // device_copy_workers
    for (const auto& t : copy_threads) EXPECT_EQ(compute_threads.count(t), 0u);
    EXPECT_EQ(streams_of_thread.count(std::this_thread::get_id()), 0u);
  } else {
    EXPECT_EQ(streams_of_thread.size(), 1u);  // the pushing thread, with one stream per device
    EXPECT_EQ(streams_of_thread.count(std::this_thread::get_id()), 1u);
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, EngineTest,
                         ::testing::Values(EngineType::kThreaded, EngineType::kNaive),
                         [](const auto& info) {
                           return info.param == EngineType::kThreaded ? "Threaded" : "Naive";
                         });

// Note [Next function]: what a worker's completion makes ready runs next on that worker, ahead
// of what waits in the queue; what a running body pushes is left to the other workers, since the
// body may wait for it.
TEST(ThreadedEngine, WorkerRunsWhatItsCompletionMadeReadyButNotWhatItsBodyPushed) {
  const Context cpu = Context::CPU();
  {
    EngineOptions options;
    options.cpu_workers = 1;
    auto engine = Engine::Create(EngineType::kThreaded, options);
    VarHandle v = engine->NewVar(), w = engine->NewVar();
    std::atomic<bool> release{false};
    std::vector<std::string> order;  // written by the one worker
    engine->PushSync(
        [&](RunContext) {
          while (!release.load()) std::this_thread::yield();
        },
        cpu, {}, {v});
    // Queued while the worker holds the gate: X is ready at once, F waits for v.
    engine->PushSync([&](RunContext) { order.push_back("X"); }, cpu, {}, {w});
    engine->PushSync([&](RunContext) { order.push_back("F"); }, cpu, {}, {v});
    release = true;
    engine->WaitForAll();
    EXPECT_EQ(order, (std::vector<std::string>{"F", "X"}));
    engine->PushDelete(nullptr, cpu, v);
    engine->PushDelete(nullptr, cpu, w);
    engine->WaitForAll();
  }
  EngineOptions options;
  options.cpu_workers = 2;
  auto engine = Engine::Create(EngineType::kThreaded, options);
  VarHandle v = engine->NewVar(), w = engine->NewVar();
  std::atomic<bool> helper_ran{false};
  bool body_saw_helper = false;
  engine->PushSync(
      [&](RunContext) {
        engine->PushSync([&](RunContext) { helper_ran = true; }, cpu, {}, {w});
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!helper_ran.load() && std::chrono::steady_clock::now() < give_up)
          std::this_thread::yield();
        body_saw_helper = helper_ran.load();
      },
      cpu, {}, {v});
  engine->WaitForAll();
  EXPECT_TRUE(body_saw_helper) << "the function a body pushed waited for that body to return";
  engine->PushDelete(nullptr, cpu, v);
  engine->PushDelete(nullptr, cpu, w);
  engine->WaitForAll();
}

TEST(EngineGlobal, ProcessWideEngineIsThreadedByDefault) {
  EXPECT_EQ(Engine::Get()->type(), EngineType::kThreaded);
  EXPECT_EQ(Engine::Get(), Engine::Get());
  EXPECT_NE(ErrorText([] { Engine::SetDefaultType(EngineType::kNaive); }).find("already exists"),
            std::string::npos);
}

}  // namespace
}  // namespace mxplug

namespace mxplug {
namespace {

TEST(EngineErrors, PushToADeviceWithoutBackendFailsItsVariablesNotTheProcess) {
  for (EngineType type : {EngineType::kThreaded, EngineType::kNaive}) {
    auto engine = Engine::Create(type);
    VarHandle v = engine->NewVar();
    bool ran = false;
    engine->PushSync([&](RunContext) { ran = true; }, Context{kDLVulkan, 0}, {}, {v});
    EXPECT_EQ(ErrorText([&] { engine->WaitForVar(v); }),
              "no device backend for vulkan is loaded (see `mxplug devices` and `mxplug plugins`)");
    EXPECT_FALSE(ran);
  }
}

}  // namespace
}  // namespace mxplug
