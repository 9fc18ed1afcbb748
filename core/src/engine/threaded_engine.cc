// The threaded engine: per-device worker pools. CPU functions run on a CPU pool; prioritized CPU
// work on a small pool of its own; on an accelerator, compute and copy functions run on separate
// pools whose workers each own a stream from the device's plugin.
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <utility>

#include "engine/engine_core.h"
#include "engine/ring_queue.h"
#include "mxplug/runtime.h"

namespace mxplug::engine_detail {
namespace {

// A FIFO with a lane for functions of positive priority, served first.
//
// Note [Waking workers]
// A futex wake costs more than an empty function, so a push wakes a worker only when one is
// asleep, and an idle worker first polls the queue's size for a short while (20 us) before it
// sleeps: under a stream of pushes the next function usually arrives within that time. Between
// two looks it yields its core (sched_yield) rather than spinning on it: with more busy threads
// than cores (2 workers and the pushing thread on 2 cores) a spinning worker took time slices
// from the pusher, which then fed both workers more slowly than it fed one (the engine
// benchmark's independent tasks with 2 workers: 0.41-1.07x of 1 worker, against 0.89-1.07x
// yielding; fanout 0.68-0.73x against 0.99-1.17x; medians of 3 rounds, three interleaved runs).
class TaskQueue {
 public:
  void Push(Opr* opr) {
    bool wake;
    {
      std::lock_guard<std::mutex> lock(mu_);
      (opr->priority > 0 ? high_ : normal_).push_back(opr);
      size_.fetch_add(1, std::memory_order_release);
      wake = sleepers_ > 0;
    }
    if (wake) cv_.notify_one();
  }
  // Blocks until a function is available; false once stopped and empty.
  bool Pop(Opr** out) {
    const auto deadline = std::chrono::steady_clock::now() + kPoll;
    do {
      if (size_.load(std::memory_order_acquire) > 0 && TryPop(out)) return true;
      std::this_thread::yield();
    } while (std::chrono::steady_clock::now() < deadline);
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_ && high_.empty() && normal_.empty()) {
      ++sleepers_;
      cv_.wait(lock);
      --sleepers_;
    }
    return PopLocked(out);
  }
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
  }
  // Accepts work again after a Stop (Note [Fork]).
  void Restart() {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = false;
  }

 private:
  static constexpr std::chrono::microseconds kPoll{20};
  bool TryPop(Opr** out) {
    std::lock_guard<std::mutex> lock(mu_);
    return PopLocked(out);
  }
  bool PopLocked(Opr** out) {
    RingQueue<Opr*>& lane = !high_.empty() ? high_ : normal_;
    if (lane.empty()) return false;
    *out = lane.front();
    lane.pop_front();
    size_.fetch_sub(1, std::memory_order_relaxed);
    return true;
  }

  std::mutex mu_;
  std::condition_variable cv_;
  RingQueue<Opr*> high_, normal_;
  std::atomic<int> size_{0};
  int sleepers_ = 0;
  bool stop_ = false;
};

// Note [Next function]
// When a worker completes a function and that makes another function of its own pool ready, the
// worker keeps the first such function and runs it next, instead of a round trip through the
// queue's lock, where another worker may take it and pull its variables to another core. A chain
// of dependent functions so runs on one worker while it lasts; the other functions made ready at
// the same time go to the queue for the other workers. Only normal priorities are kept (a
// prioritized function waits in its lane), and only what a completion made ready: a function
// pushed by a running body may be what that body goes on to wait for on another worker. With 2
// workers on 2 cores the engine benchmark's chain of empty functions went from 1.51 to 2.07
// million a second (1 worker: 1.75 to 2.04; medians of 6 interleaved rounds).
// The pool this thread works for (null off the workers), and the function it will run next.
thread_local const void* tls_pool = nullptr;
thread_local Opr* tls_next = nullptr;

}  // namespace

// Note [Inline functions]
// A 1-element add costs its kernel well under a microsecond, and its trip through a worker more:
// the queue's lock, the worker's wake or poll, and every cache line of the function, its call
// and its arrays moving to the worker's core and back. A function pushed FnProperty::kInline
// (the imperative path's small CPU calls, ImperativeOp::Push) is therefore run by whichever
// thread makes it ready: the pusher, when its dependencies are met at the push (the common case
// of a script's small ops), else the thread that completes its last dependency. It still takes
// its variables through their queues first, so the order is the engine's as for any function,
// and its error lands on what it writes. What it gives up is overlap with the pusher, which for
// small work is less than the hop. The pusher must never wait long, as MXNet's never does (a
// kernel that hangs must leave the script running and the exit able to say so), so the imperative
// path pushes a kernel's small calls inline only after a few of them ran quickly on a worker
// (Kernel::RunsInline).
class ThreadedEngine : public EngineCore {
 public:
  explicit ThreadedEngine(const EngineOptions& options) : options_(options) {
    // One CPU worker unless asked, as MXNet's MXNET_CPU_WORKER_NTHREADS: the kernels spread
    // over the cores with OpenMP, and a second worker running another op's OpenMP team at the
    // same time oversubscribes the cores (LeNet training ran at half the speed with one worker
    // per core on 2 cores, docs/performance.md).
    if (options_.cpu_workers <= 0) {
      const char* env = std::getenv("MXPLUG_CPU_WORKER_NTHREADS");
      if (!env) env = std::getenv("MXNET_CPU_WORKER_NTHREADS");  // MXNet users' habit
      options_.cpu_workers = std::max(1, env ? std::atoi(env) : 1);
    }
    // Per accelerator: MXNet's MXNET_GPU_WORKER_NTHREADS and MXNET_GPU_COPY_NTHREADS (2 each).
    auto from_env = [](int given, const char* ours, const char* mxnets, int fallback) {
      if (given > 0) return given;
      const char* env = std::getenv(ours);
      if (!env) env = std::getenv(mxnets);
      return std::max(1, env ? std::atoi(env) : fallback);
    };
    options_.device_compute_workers =
        from_env(options_.device_compute_workers, "MXPLUG_GPU_WORKER_NTHREADS",
                 "MXNET_GPU_WORKER_NTHREADS", 2);
    options_.device_copy_workers = from_env(
        options_.device_copy_workers, "MXPLUG_GPU_COPY_NTHREADS", "MXNET_GPU_COPY_NTHREADS", 2);
    cpu_ = MakePool(Context::CPU(), options_.cpu_workers, /*device=*/nullptr, "mxp cpu");
    UseEventCompletion();
  }

  ~ThreadedEngine() override {
    Drain();
    std::lock_guard<std::mutex> lock(pools_mu_);
    for (auto* pool : AllPools()) pool->queue.Stop();
    for (auto* pool : AllPools())
      for (std::thread& t : pool->threads) t.join();
  }

  void StopWorkersForFork() override {
    Drain();
    std::lock_guard<std::mutex> lock(pools_mu_);
    for (auto* pool : AllPools()) pool->queue.Stop();
    for (auto* pool : AllPools()) {
      for (std::thread& t : pool->threads) t.join();
      pool->threads.clear();
    }
  }

  void StartWorkersAfterFork() override {
    std::lock_guard<std::mutex> lock(pools_mu_);
    for (auto* pool : AllPools()) {
      pool->queue.Restart();
      StartWorkers(pool, pool->workers);
    }
  }

  std::vector<std::string> Running() const override {
    std::vector<std::string> out;
    std::lock_guard<std::mutex> lock(pools_mu_);
    for (const Pool* pool : AllPools())
      for (const auto& slot : pool->running)
        if (const char* name = slot.load(std::memory_order_relaxed))
          out.push_back("'" + std::string(*name ? name : "unnamed") + "' on " +
                        pool->ctx.ToString() + " (worker '" + pool->thread_name + "')");
    return out;
  }

  EngineType type() const override { return EngineType::kThreaded; }
  std::string Describe() const override {
    return "threaded engine: " + std::to_string(options_.cpu_workers) + " CPU worker(s), " +
           std::to_string(options_.priority_workers) + " priority worker(s); per accelerator " +
           std::to_string(options_.device_compute_workers) + " compute and " +
           std::to_string(options_.device_copy_workers) + " copy worker(s)";
  }
  int Workers(Context ctx) const override {
    return ctx.IsHost() ? options_.cpu_workers : options_.device_compute_workers;
  }

 protected:
  void Execute(Opr* opr) override {
    // Async and delete functions only start work or free memory, and inline ones are small: run
    // them where they became ready instead of paying a queue hop (Note [Inline functions]).
    if (opr->prop == FnProperty::kAsync || opr->prop == FnProperty::kDeleteVar ||
        (opr->prop == FnProperty::kInline && opr->ctx.IsHost())) {
      Run(opr, RunContext{opr->ctx, nullptr});
      return;
    }
    Pool* pool = PoolFor(opr);
    if (tls_pool == pool && !tls_next && opr->priority <= 0 && CompletingSyncFunction()) {
      tls_next = opr;
      return;
    }
    pool->queue.Push(opr);
  }

 private:
  struct Pool {
    Context ctx;
    std::string thread_name;                    // for top -H, gdb and /proc: at most 15 characters
    std::shared_ptr<const DeviceEntry> device;  // null for CPU pools
    TaskQueue queue;
    int workers = 0;
    std::vector<std::thread> threads;
    // Per worker, the name of the function it runs now (null when idle), for Running().
    std::deque<std::atomic<const char*>> running;
    // Workers that have finished starting (per-thread lists, stream).
    std::mutex started_mu;
    std::condition_variable started_cv;
    int started = 0;
  };

  std::unique_ptr<Pool> MakePool(Context ctx, int workers,
                                 std::shared_ptr<const DeviceEntry> device,
                                 std::string thread_name) {
    auto pool = std::make_unique<Pool>();
    pool->ctx = ctx;
    pool->thread_name = thread_name.substr(0, 15);
    pool->device = std::move(device);
    pool->workers = workers;
    StartWorkers(pool.get(), workers);
    return pool;
  }

  // Returns once the workers are ready, so their start-up never lands in later work.
  void StartWorkers(Pool* pool, int workers) {
    {
      std::lock_guard<std::mutex> lock(pool->started_mu);
      pool->started = 0;
    }
    while (pool->running.size() < static_cast<size_t>(workers)) pool->running.emplace_back(nullptr);
    for (int i = 0; i < workers; ++i)
      pool->threads.emplace_back(
          [this, pool, slot = &pool->running[i]] { WorkerLoop(pool, slot); });
    std::unique_lock<std::mutex> lock(pool->started_mu);
    pool->started_cv.wait(lock, [&] { return pool->started == workers; });
  }

  void WorkerLoop(Pool* pool, std::atomic<const char*>* running) {
    pthread_setname_np(pthread_self(), pool->thread_name.c_str());
    PrepareThread();
    const DeviceEntry* device = pool->device.get();
    void* stream = nullptr;
    if (device) {
      // Bound to its device first (cudaSetDevice), then each worker owns a stream, so functions
      // on different workers overlap on the device. A failure is logged; the worker still serves
      // its queue, and the functions fail on the device's own errors.
      try {
        device->StartThread(pool->ctx.dev_id);
        stream = device->CreateStream(pool->ctx.dev_id);
      } catch (const Error& e) {
        std::fprintf(stderr, "[mxplug error] engine worker for %s: %s\n",
                     pool->ctx.ToString().c_str(), e.what());
      }
    }
    {
      std::lock_guard<std::mutex> lock(pool->started_mu);
      ++pool->started;
    }
    pool->started_cv.notify_all();
    tls_pool = pool;
    Opr* opr = nullptr;
    while ((opr = std::exchange(tls_next, nullptr)) || pool->queue.Pop(&opr)) {
      running->store(opr->name ? opr->name : "", std::memory_order_relaxed);
      Run(opr, RunContext{opr->ctx, stream}, device);  // Note [Event completion]
      running->store(nullptr, std::memory_order_relaxed);
    }
    if (device && stream) device->DestroyStream(pool->ctx.dev_id, stream);
  }

  enum class Kind { kCompute, kCopy, kPriority };

  Pool* PoolFor(const Opr* opr) {
    if (opr->prop == FnProperty::kCPUPrioritized) return Get(Kind::kPriority, Context::CPU());
    if (opr->ctx.IsHost()) return cpu_.get();
    bool copy = opr->prop == FnProperty::kCopyToDevice || opr->prop == FnProperty::kCopyFromDevice;
    return Get(copy ? Kind::kCopy : Kind::kCompute, opr->ctx);
  }

  Pool* Get(Kind kind, Context ctx) {
    auto key = std::make_tuple(static_cast<int>(kind), ctx.dev_type, ctx.dev_id);
    std::lock_guard<std::mutex> lock(pools_mu_);
    auto it = pools_.find(key);
    if (it != pools_.end()) return it->second.get();
    std::shared_ptr<const DeviceEntry> device;
    int workers = options_.priority_workers;
    if (kind != Kind::kPriority) {
      device = Runtime::Get().GetDevice(ctx.dev_type);
      workers =
          kind == Kind::kCopy ? options_.device_copy_workers : options_.device_compute_workers;
    }
    // "mxp cpu prio", "mxp gpu(1)", "mxp gpu(1) copy".
    std::string name = kind == Kind::kPriority
                           ? "mxp cpu prio"
                           : "mxp " + ctx.ToString() + (kind == Kind::kCopy ? " copy" : "");
    Pool* pool = (pools_[key] = MakePool(ctx, std::max(1, workers), device, name)).get();
    return pool;
  }

  std::vector<Pool*> AllPools() const {
    std::vector<Pool*> all{cpu_.get()};
    for (auto& kv : pools_) all.push_back(kv.second.get());
    return all;
  }

  EngineOptions options_;
  std::unique_ptr<Pool> cpu_;
  mutable std::mutex pools_mu_;
  std::map<std::tuple<int, int32_t, int32_t>, std::unique_ptr<Pool>> pools_;
};

std::unique_ptr<EngineCore> MakeThreadedEngine(const EngineOptions& options) {
  return std::make_unique<ThreadedEngine>(options);
}

}  // namespace mxplug::engine_detail
