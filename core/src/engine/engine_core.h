// Internal: what the threaded and the naive engine share: variables, pushes, the dependency
// bookkeeping, completion, and the exception rules. They differ only in Execute: where a
// function whose dependencies are met actually runs.
#ifndef MXPLUG_CORE_ENGINE_ENGINE_CORE_H_
#define MXPLUG_CORE_ENGINE_ENGINE_CORE_H_

#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <vector>

#include "engine/device_event.h"
#include "engine/object_pool.h"
#include "engine/var.h"
#include "mxplug/device.h"
#include "mxplug/engine.h"

namespace mxplug::engine_detail {

// One pushed function and its dependency state.
struct Opr {
  AsyncFn fn;
  SyncFn sync_fn;  // set instead of fn by PushSync: no wrapper to allocate
  Context ctx;
  std::vector<Var*> const_vars;
  std::vector<Var*> mutate_vars;
  FnProperty prop = FnProperty::kNormal;
  int priority = 0;
  const char* name = nullptr;
  // Unmet dependencies, plus one held by the pusher until it has appended them all
  // (Note [Wait counter]).
  std::atomic<int> wait{0};
  // Owners of this block: the callback and, while the function runs, the runner.
  std::atomic<int> refs{0};
  std::atomic<bool> completed{false};
  bool always_run = false;  // waits and deletes run even when a variable holds an error
  bool marker = false;      // WaitForVar's marker: runs in the thread that grants it
  Var* delete_var = nullptr;
  // Set by an Execute that must block until the function has completed (the naive engine).
  struct Done* done = nullptr;
  Opr* pool_next = nullptr;  // ObjectPool's list (Note [Returning to the pool])

  // Blocks are recycled for functions of any shape: room for a few variables from the start
  // keeps a reused block from allocating (more than 4 grows the vector once).
  Opr() {
    const_vars.reserve(4);
    mutate_vars.reserve(4);
  }

  void Clear() {
    fn = nullptr;
    sync_fn = nullptr;
    const_vars.clear();
    mutate_vars.clear();
    always_run = marker = false;
    delete_var = nullptr;
    done = nullptr;
    name = nullptr;
  }
};

struct Done {
  // WaitForVar's: the variable waited for, and its last writer's event, taken when the wait is
  // granted (Note [Event completion]).
  Var* var = nullptr;
  DeviceEvent* event = nullptr;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  void Signal() {
    std::lock_guard<std::mutex> lock(mu);
    done = true;
    cv.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [this] { return done; });
  }
};

class EngineCore : public Engine {
 public:
  EngineCore();
  ~EngineCore() override;

  VarHandle NewVar() override;
  VarHandle NewResourceVar() override;
  void PushAsync(AsyncFn fn, Context ctx, VarList const_vars, VarList mutate_vars, FnProperty prop,
                 int priority, const char* name) override;
  void PushSync(SyncFn fn, Context ctx, VarList const_vars, VarList mutate_vars, FnProperty prop,
                int priority, const char* name) override;
  bool RunInlineIfFree(void (*fn)(void* arg, RunContext rctx), void* arg, Context ctx,
                       VarList const_vars, VarList mutate_vars, const char* name) override;
  void PushDelete(SyncFn fn, Context ctx, VarHandle var) override;
  bool DeleteIfIdle(Context ctx, VarHandle var) override;
  void WaitForVar(VarHandle var) override;
  void WaitForAll() override;
  bool IsReady(VarHandle var) const override { return var->IsReady(); }
  uint64_t Version(VarHandle var) const override { return var->version(); }

  // The callback's entry: the function `opr` has finished, with `error` or none.
  void Complete(Opr* opr, std::exception_ptr error);
  // Waits for all work without reporting errors; for shutdown.
  void Drain();
  // Drain for at most `seconds`; false when work is still pending then.
  bool DrainFor(double seconds);
  // Functions not yet finished (pushed, waiting or running).
  int64_t Pending() const { return pending_.load(std::memory_order_acquire); }
  // What each worker is running now: "'name' on cpu(0) (worker 'mxp cpu')".
  virtual std::vector<std::string> Running() const { return {}; }
  // Note [Fork]: the process-wide engine's pthread_atfork handlers. Before a fork, all work is
  // drained and the worker threads are joined (a child inherits no threads, so a worker that
  // existed only in the parent would never run the child's work); after it, parent and child
  // each start their workers again. The naive engine has no threads.
  virtual void StopWorkersForFork() {}
  virtual void StartWorkersAfterFork() {}

 protected:
  // Runs or schedules a function whose dependencies are met.
  virtual void Execute(Opr* opr) = 0;
  // Calls the function on this thread with the given run context. With `device`, the function
  // runs for an accelerator on rctx.stream: it completes after the stream has been synchronised
  // (Note [Completion]) or, once UseEventCompletion was called, when it has recorded an event
  // on the stream (Note [Event completion]).
  void Run(Opr* opr, const RunContext& rctx, const DeviceEntry* device = nullptr);
  // Note [Event completion]: functions on streams complete at once, leaving events behind.
  void UseEventCompletion() { event_completion_ = true; }
  // True while the calling thread runs an engine function.
  static bool InEngineFunction();
  // True while the calling thread completes a synchronous function after its body returned:
  // what Execute is handed then was made ready by that completion, not pushed by a body that
  // may go on to wait for it (Note [Next function]).
  static bool CompletingSyncFunction();
  // Sets up a worker thread's per-thread lists, so that its first completions do not allocate.
  static void PrepareThread();

 private:
  Opr* NewOpr(Context ctx, VarList const_vars, VarList mutate_vars, FnProperty prop, int priority,
              const char* name);
  // Calls fill(list) with the list that the dispatch loop on this thread will run, then runs it
  // if no loop is running yet (Note [Dispatch loop]). Allocates nothing on the steady path.
  template <typename Fill>
  void WithReadyList(Fill&& fill);
  void Push(Opr* opr);
  // Executes each ready function; functions skipped for an error complete here, which may make
  // more functions ready. A loop, not recursion: a chain of 100,000 skipped functions must not
  // exhaust the stack.
  void Dispatch(std::vector<Opr*>* ready);
  void DispatchLoop(std::vector<Opr*>* ready);
  // Updates the variables of a finished function and collects the functions it unblocks.
  void Release(Opr* opr, std::exception_ptr error, std::vector<Opr*>* ready);
  // Release's work on the variables: the error onto what was written (else the failure list),
  // then every variable handed on. `wrote` false: the writes are given back unused.
  void ReleaseVars(VarList reads, VarList writes, const Var* delete_var, std::exception_ptr error,
                   bool wrote, std::vector<Opr*>* ready);
  void EndPending();
  void Unref(Opr* opr);
  std::exception_ptr FirstError(const Opr* opr) const;
  // Note [Event completion]: makes the function's stream wait for (or, without a stream, waits
  // on the host for) the device work its variables still have running; the first error a host
  // wait met, if any.
  std::exception_ptr AwaitDeviceWork(const Opr* opr, const RunContext& rctx,
                                     const DeviceEntry* device);
  // After a function on a stream: records its event on its variables (or, when it cannot be
  // recorded, synchronises the stream). Returns the function's error, the recording's if none.
  std::exception_ptr RecordDeviceWork(const Opr* opr, const RunContext& rctx,
                                      const DeviceEntry* device, std::exception_ptr error);
  // Synchronises the function's stream; a failure becomes `*error` unless it holds one already.
  static void SynchronizeStream(const RunContext& rctx, const DeviceEntry* device,
                                std::exception_ptr* error);
  // A failure reported by a wait: no variable, failure list or event reports it again.
  void ForgetReported(const std::exception_ptr& error, const Var* reported_on);
  void CheckNotInEngineFunction(const char* what) const;

  ObjectPool<Opr> oprs_;
  ObjectPool<Var> vars_;
  std::atomic<int64_t> pending_{0};
  std::mutex idle_mu_;
  std::condition_variable idle_cv_;
  std::atomic<int> draining_{0};  // Drain calls waiting (Note [Idle wakes])
  struct Draining {               // counts one, under idle_mu_
    explicit Draining(std::atomic<int>* n) : n_(n) { n_->fetch_add(1, std::memory_order_seq_cst); }
    ~Draining() { n_->fetch_sub(1, std::memory_order_seq_cst); }
    std::atomic<int>* n_;
  };

  // Errors not yet reported, oldest first. `var` is cleared when the variable is recycled.
  struct Failure {
    Var* var;
    std::exception_ptr error;
  };
  std::mutex failures_mu_;
  std::vector<Failure> failures_;

  bool event_completion_ = false;
  EventPool events_;
};

}  // namespace mxplug::engine_detail

#endif  // MXPLUG_CORE_ENGINE_ENGINE_CORE_H_
