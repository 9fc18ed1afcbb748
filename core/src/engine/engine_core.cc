#include "engine/engine_core.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "mxplug/error.h"
#include "mxplug/profiler.h"

namespace mxplug::engine_detail {
namespace {

// Removes duplicates, and reads of variables that are also written (they count as writes).
void Dedup(std::vector<Var*>* const_vars, std::vector<Var*>* mutate_vars) {
  auto unique = [](std::vector<Var*>* v) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  };
  unique(mutate_vars);
  unique(const_vars);
  if (!mutate_vars->empty())
    const_vars->erase(std::remove_if(const_vars->begin(), const_vars->end(),
                                     [&](Var* v) {
                                       return std::binary_search(mutate_vars->begin(),
                                                                 mutate_vars->end(), v);
                                     }),
                      const_vars->end());
}

template <typename T>
std::vector<T> Reserved(size_t n) {
  std::vector<T> list;
  list.reserve(n);
  return list;
}

// Note [Thread state]
// What the engine keeps per thread, in one thread_local object: in a shared library every access
// to a thread_local is a call into the dynamic linker (__tls_get_addr), and a small op's path
// made two dozen of them. A function that needs the state looks it up once.
struct ThreadState {
  int function_depth = 0;  // engine functions running on this thread, nested
  // True while this thread completes a synchronous function whose body has returned
  // (CompletingSyncFunction).
  bool completing_sync = false;
  // The dispatch loop running on this thread, if any, and its engine (Note [Dispatch loop]).
  std::vector<Opr*>* dispatch_ready = nullptr;
  const void* dispatch_engine = nullptr;
  // Lists of functions granted (scratch) and to run (outermost: the loop's list when no loop
  // runs yet), with room for a batch of 1,024 so that typical grants never allocate (larger
  // batches grow a list once); the events a function waits for (Note [Event completion]).
  std::vector<Opr*> scratch = Reserved<Opr*>(1024), outermost = Reserved<Opr*>(1024);
  std::vector<DeviceEvent*> await = Reserved<DeviceEvent*>(16);
};

ThreadState& Tls() {
  thread_local ThreadState state;
  return state;
}

}  // namespace

EngineCore::EngineCore() = default;
EngineCore::~EngineCore() = default;

bool EngineCore::InEngineFunction() { return Tls().function_depth > 0; }
bool EngineCore::CompletingSyncFunction() { return Tls().completing_sync; }

void EngineCore::CheckNotInEngineFunction(const char* what) const {
  if (InEngineFunction())
    throw Error(std::string(what) +
                    " was called from inside a function running on the engine; "
                    "it would wait for work queued behind the caller. Push the dependent work with "
                    "the variable as a dependency instead.",
                kMXPFailedPrecondition);
}

// A variable goes back to the pool reset (holding errors, as a new one does), so a new one is ready
// as it comes.
VarHandle EngineCore::NewVar() { return vars_.New(); }

VarHandle EngineCore::NewResourceVar() {
  Var* v = vars_.New();
  v->Reset(/*holds_errors=*/false);
  return v;
}

Opr* EngineCore::NewOpr(Context ctx, VarList const_vars, VarList mutate_vars, FnProperty prop,
                        int priority, const char* name) {
  Opr* opr = oprs_.New();
  opr->ctx = ctx.Compute();  // functions for pinned host memory run on CPU workers
  opr->const_vars.assign(const_vars.begin(), const_vars.end());
  opr->mutate_vars.assign(mutate_vars.begin(), mutate_vars.end());
  opr->prop = prop;
  opr->priority = priority;
  opr->name = name;
  Dedup(&opr->const_vars, &opr->mutate_vars);
  return opr;
}

void EngineCore::PushAsync(AsyncFn fn, Context ctx, VarList const_vars, VarList mutate_vars,
                           FnProperty prop, int priority, const char* name) {
  Opr* opr = NewOpr(ctx, const_vars, mutate_vars, prop, priority, name);
  opr->fn = std::move(fn);
  Push(opr);
}

void EngineCore::PushSync(SyncFn fn, Context ctx, VarList const_vars, VarList mutate_vars,
                          FnProperty prop, int priority, const char* name) {
  Opr* opr = NewOpr(ctx, const_vars, mutate_vars, prop, priority, name);
  opr->sync_fn = std::move(fn);
  Push(opr);
}

// Note [Free variables]
// Most small ops of a script find their variables free: the inputs were written long ago and
// nothing else is queued on them, the output is new. Such a FnProperty::kInline function would be
// granted everything at its push and run at once on the pusher's thread, so the block, the
// std::function, the queue entries and the dispatch loop around it are work without purpose (a
// third of a 1-element add's instructions). RunInlineIfFree takes each variable directly, under
// the same lock and by the same rule as a grant at the push, runs the function and hands the
// variables on as Release does: the engine's order, errors, profiler spans and WaitForAll's
// count are those of the push. A variable that is not free (something waits for it or holds it,
// device work or an error stays on it) gives back what was taken, and the caller pushes; so does
// a call from inside an engine function or a dispatch loop on this thread, where a push would run
// after the current function.
bool EngineCore::RunInlineIfFree(void (*fn)(void* arg, RunContext rctx), void* arg, Context ctx,
                                 VarList const_vars, VarList mutate_vars, const char* name) {
  ThreadState& t = Tls();
  if (!ctx.IsHost() || t.function_depth > 0 || t.dispatch_engine != nullptr) return false;
  pending_.fetch_add(1, std::memory_order_relaxed);  // WaitForAll from now on waits for it
  size_t reads = 0, writes = 0;
  while (reads < const_vars.size() && const_vars.begin()[reads]->TryTakeRead()) ++reads;
  if (reads == const_vars.size())
    while (writes < mutate_vars.size() && mutate_vars.begin()[writes]->TryTakeWrite()) ++writes;
  if (reads != const_vars.size() || writes != mutate_vars.size()) {
    // What another thread queued behind a taken variable meanwhile is granted here.
    ReleaseVars(VarList(const_vars.begin(), reads), VarList(mutate_vars.begin(), writes), nullptr,
                nullptr, /*wrote=*/false, &t.outermost);
    if (!t.outermost.empty()) Dispatch(&t.outermost);  // no loop runs here (checked above)
    EndPending();
    return false;
  }
  Profiler& profiler = Profiler::Get();
  const bool profiling = profiler.running();
  const int64_t start = profiling ? profiler.Now() : 0;
  std::exception_ptr error;
  ++t.function_depth;
  // As in a dispatch loop: what the function pushes and can run now runs after it.
  t.dispatch_ready = &t.outermost;
  t.dispatch_engine = this;
  try {
    fn(arg, RunContext{ctx.Compute(), nullptr});
  } catch (...) {
    error = std::current_exception();
  }
  t.dispatch_ready = nullptr;
  t.dispatch_engine = nullptr;
  --t.function_depth;
  if (profiling) profiler.Record(name, ctx.Compute(), start, profiler.Now());
  ReleaseVars(const_vars, mutate_vars, nullptr, std::move(error), /*wrote=*/true, &t.outermost);
  if (!t.outermost.empty()) Dispatch(&t.outermost);
  EndPending();
  return true;
}

// Note [Idle deletes]
// Most arrays die idle: a temporary's last reader finished long ago (a script's `a + b` whose
// result nobody keeps). Its variable then has nothing to order the delete after, so the delete
// runs at once on the caller's thread, as the engine would have run it there anyway (delete
// functions take no queue hop), without a function block or a trip through the variable's queue.
// Its error and its profiler span are those of a pushed delete. An owner that has only memory to
// free (an array's chunk) frees it itself after DeleteIfIdle, without a function to make.
void EngineCore::PushDelete(SyncFn fn, Context ctx, VarHandle var) {
  if (var->ResetIfIdle(/*holds_errors=*/true)) {  // nobody else holds it: reset before fn runs
    Profiler& profiler = Profiler::Get();
    const bool profiling = profiler.running();
    const int64_t start = profiling ? profiler.Now() : 0;
    std::exception_ptr error;
    if (fn) {
      ThreadState& t = Tls();
      ++t.function_depth;
      try {
        fn(RunContext{ctx.Compute(), nullptr});
      } catch (...) {
        error = std::current_exception();
      }
      --t.function_depth;
    }
    if (profiling) profiler.Record("DeleteVariable", ctx.Compute(), start, profiler.Now());
    vars_.Delete(var);
    if (error) {  // nobody can observe it through a variable: kept for WaitForAll
      std::lock_guard<std::mutex> lock(failures_mu_);
      failures_.push_back({nullptr, std::move(error)});
    }
    return;
  }
  Opr* opr = oprs_.New();
  // Run as a sync function (its exception is its error); an empty one does nothing. A lambda
  // without captures sits inside the std::function: no allocation.
  opr->sync_fn = fn ? std::move(fn) : SyncFn([](RunContext) {});
  opr->ctx = ctx.Compute();
  opr->mutate_vars.push_back(var);
  opr->prop = FnProperty::kDeleteVar;
  opr->name = "DeleteVariable";
  opr->always_run = true;
  opr->delete_var = var;
  Push(opr);
}

bool EngineCore::DeleteIfIdle(Context ctx, VarHandle var) {
  if (!var->ResetIfIdle(/*holds_errors=*/true)) return false;
  Profiler& profiler = Profiler::Get();
  if (profiler.running()) {
    const int64_t now = profiler.Now();
    profiler.Record("DeleteVariable", ctx.Compute(), now, now);
  }
  vars_.Delete(var);
  return true;
}

// Note [Wait counter]
// A function's wait counter starts at (number of variables + 1). Every grant, immediate or
// later from another thread's completion, takes one off; the pusher takes its extra one off
// last. Whoever brings it to zero dispatches the function, so it is dispatched exactly once and
// never before the pusher has appended it to every variable's queue.
void EngineCore::Push(Opr* opr) {
  pending_.fetch_add(1, std::memory_order_relaxed);
  const int deps = static_cast<int>(opr->const_vars.size() + opr->mutate_vars.size());
  opr->wait.store(deps + 1, std::memory_order_relaxed);
  opr->refs.store(1, std::memory_order_relaxed);
  opr->completed.store(false, std::memory_order_relaxed);
  int granted = 0;
  for (Var* v : opr->const_vars) granted += v->AppendRead(opr);
  for (Var* v : opr->mutate_vars) granted += v->AppendWrite(opr);
  if (opr->wait.fetch_sub(granted + 1, std::memory_order_acq_rel) == granted + 1)
    WithReadyList([opr](std::vector<Opr*>* ready) { ready->push_back(opr); });
}

std::exception_ptr EngineCore::FirstError(const Opr* opr) const {
  for (const auto* list : {&opr->const_vars, &opr->mutate_vars})
    for (Var* v : *list)
      if (v->has_error())
        if (std::exception_ptr e = v->error()) return e;
  return nullptr;
}

// Note [Dispatch loop]
// Running a function can complete it on the same thread (inline functions, the naive engine),
// and completing it makes more functions ready. Dispatching those from inside the callback would
// recurse once per function waiting in a queue: 8,000 pushes onto one variable, 8,000 frames.
// Instead, a dispatch nested in this engine's loop on this thread hands its functions to that
// loop, which runs them after the current one returns.
void EngineCore::PrepareThread() { (void)Tls(); }

template <typename Fill>
void EngineCore::WithReadyList(Fill&& fill) {
  ThreadState& t = Tls();
  if (t.dispatch_engine == this) {  // inside this engine's loop: it will run them
    fill(t.dispatch_ready);
    return;
  }
  std::vector<Opr*> nested;  // another engine's loop runs here (rare)
  // Free when no loop runs on this thread.
  std::vector<Opr*>* list = t.dispatch_engine == nullptr ? &t.outermost : &nested;
  fill(list);
  if (!list->empty()) Dispatch(list);
}

void EngineCore::Dispatch(std::vector<Opr*>* ready) {
  ThreadState& t = Tls();
  if (t.dispatch_engine == this) {
    t.dispatch_ready->insert(t.dispatch_ready->end(), ready->begin(), ready->end());
    ready->clear();
    return;
  }
  struct Scope {  // restores the outer loop's state, also when unwinding
    ThreadState& t;
    std::vector<Opr*>* ready = t.dispatch_ready;
    const void* engine = t.dispatch_engine;
    ~Scope() {
      t.dispatch_ready = ready;
      t.dispatch_engine = engine;
    }
  } scope{t};
  t.dispatch_ready = ready;
  t.dispatch_engine = this;
  DispatchLoop(ready);
}

void EngineCore::DispatchLoop(std::vector<Opr*>* ready) {
  while (!ready->empty()) {
    Opr* opr = ready->back();
    ready->pop_back();
    if (!opr->always_run) {
      if (std::exception_ptr error = FirstError(opr)) {
        // Skipped: it reads or writes a failed variable, and passes the error on.
        opr->completed.store(true, std::memory_order_relaxed);
        Release(opr, error, ready);
        continue;
      }
    }
    if (opr->marker) {
      // WaitForVar's marker only wakes its waiter: run it here, without a worker.
      opr->fn(RunContext{opr->ctx, nullptr}, CallbackOnComplete(this, opr));
      continue;
    }
    try {
      Execute(opr);
    } catch (...) {
      // It could not even be scheduled (say, no backend for its device): it fails like a
      // function that threw, and its error waits on its variables.
      if (!opr->completed.exchange(true, std::memory_order_acq_rel))
        Release(opr, std::current_exception(), ready);
    }
  }
}

// Note [Completion]
// A kernel or copy on an accelerator queues work on the worker's stream and returns before the
// work is done. Its engine function must not hand its variables on as if that work were done:
// readers on other streams would start too early, and a PushDelete would free memory the device
// still uses. There are two rules. The first, MXNet 1.x's, is the naive engine's: a sync function
// run for an accelerator completes only after its stream has been synchronised, and an error the
// stream reports then (a kernel fault found late) becomes the function's error; the stream is
// synchronised even when the function threw, as work it queued before throwing may still touch
// its arrays. The threaded engine follows the second, Note [Event completion].
//
// Note [Event completion]
// A function run on a stream records one event on it afterwards and completes at once; the
// event stands for its device work on every variable it touched (Var: the writer's event, and
// one event per stream of the readers since). Whoever is granted a variable next waits for what
// it needs of that work, where it needs it:
// - a function on another stream: its stream waits for the event (stream_wait_event), not the
//   host; on the same stream, nothing (the stream keeps order), so consecutive functions on one
//   stream never synchronise;
// - a function on the host (CPU, async or delete functions): the host waits for the event, so
//   the CPU reads what the device wrote, and memory goes back to the pool only once the device is
//   done with it; a host write leaves no device work behind and clears the variable's events;
// - a read waits for the last writer's event; a write also for the readers' (the device may still
//   read what the write would overwrite);
// - WaitForVar waits for the last writer's event, so every host read (asnumpy, SyncCopyToCPU)
//   sees the device's result; WaitForAll waits for every event.
// A device fault is reported by the event's wait: a host wait that meets it fails the waiting
// function (and so its outputs, as a failed input would) or the WaitForVar; WaitForAll reports
// every fault not reported yet. Each failure is reported once. Events come from a pool
// (device_event.h) and are recycled once unreferenced and complete.
void EngineCore::Run(Opr* opr, const RunContext& rctx, const DeviceEntry* device) {
  opr->refs.fetch_add(1, std::memory_order_relaxed);  // the runner's reference
  ThreadState& t = Tls();
  ++t.function_depth;
  // A function run inline from a completion is a body again; the completion resumes after it.
  struct Completing {
    ThreadState& t;
    bool outer = std::exchange(t.completing_sync, false);
    ~Completing() { t.completing_sync = outer; }
  } completing{t};
  Profiler& profiler = Profiler::Get();
  const bool profiling = profiler.running();
  const int64_t start = profiling ? profiler.Now() : 0;
  const char* name = opr->name;  // the block may be recycled once the callback has run
  const Context ctx = opr->ctx;
  const bool on_stream = device && rctx.stream;
  bool recorded = false;
  std::exception_ptr escaped;  // handed on after its catch block (Note [Last reference])
  try {
    std::exception_ptr error = AwaitDeviceWork(opr, rctx, on_stream ? device : nullptr);
    // A delete runs whatever the device reported: the memory is no longer in use either way, and
    // the fault stays with its event for WaitForAll.
    if (opr->always_run) error = nullptr;
    if (!on_stream)
      for (Var* v : opr->mutate_vars)
        if (v->has_events()) v->SetWriterEvent(nullptr);  // waited for: the host writes now
    if (opr->sync_fn) {
      if (!error) {
        try {
          opr->sync_fn(rctx);
        } catch (...) {
          error = std::current_exception();
        }
      }
      if (on_stream) {
        if (event_completion_)
          error = RecordDeviceWork(opr, rctx, device, std::move(error));
        else
          SynchronizeStream(rctx, device, &error);
      }
      // Recorded before completing: completion starts the dependents, possibly on another
      // worker, and wakes waiters, which may stop the profiler and dump it at once.
      if (profiling) {
        profiler.Record(name, ctx, start, profiler.Now());
        recorded = true;
      }
      t.completing_sync = true;
      Complete(opr, std::move(error));
      t.completing_sync = false;
    } else if (error) {
      Complete(opr, std::move(error));
    } else {
      opr->fn(rctx, CallbackOnComplete(this, opr));
    }
  } catch (...) {
    // An exception escaping an async function before its callback completes it.
    if (!opr->completed.exchange(true, std::memory_order_acq_rel))
      escaped = std::current_exception();
  }
  if (escaped)
    WithReadyList([&](std::vector<Opr*>* ready) { Release(opr, std::move(escaped), ready); });
  // An async function's span is its launch: from its start until it returns.
  if (profiling && !recorded) profiler.Record(name, ctx, start, profiler.Now());
  --t.function_depth;
  Unref(opr);
}

void EngineCore::SynchronizeStream(const RunContext& rctx, const DeviceEntry* device,
                                   std::exception_ptr* error) {
  try {
    device->SynchronizeStream(rctx.ctx.dev_id, rctx.stream);
  } catch (...) {
    if (!*error) *error = std::current_exception();
  }
}

std::exception_ptr EngineCore::AwaitDeviceWork(const Opr* opr, const RunContext& rctx,
                                               const DeviceEntry* device) {
  std::vector<DeviceEvent*>& events = Tls().await;
  const size_t mark = events.size();  // a nested engine on this thread may be using the list
  for (Var* v : opr->const_vars)
    if (v->has_events()) v->EventsToAwait(/*write=*/false, &events);
  for (Var* v : opr->mutate_vars)
    if (v->has_events()) v->EventsToAwait(/*write=*/true, &events);
  std::exception_ptr first;
  // Every event is waited for even after an error: the device may still use the memory.
  for (size_t i = mark; i < events.size(); ++i) {
    DeviceEvent* e = events[i];
    if (e->KnownComplete() || (device && e->RecordedOn(device, rctx.stream))) {
      // done, or ordered by the stream itself
    } else if (device && e->device == device) {
      try {
        device->WaitEvent(rctx.ctx.dev_id, rctx.stream, e->handle);
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    } else if (std::exception_ptr error = events_.Synchronize(e)) {
      if (!first) first = error;
    }
    e->Unref();
  }
  events.resize(mark);
  return first;
}

std::exception_ptr EngineCore::RecordDeviceWork(const Opr* opr, const RunContext& rctx,
                                                const DeviceEntry* device,
                                                std::exception_ptr error) {
  DeviceEvent* event = nullptr;
  try {
    event = events_.Record(device, rctx.ctx.dev_id, rctx.stream);
  } catch (...) {
    if (!error) error = std::current_exception();
    SynchronizeStream(rctx, device, &error);  // no event to stand for the work: wait here
  }
  for (Var* v : opr->mutate_vars) v->SetWriterEvent(event);
  if (event) {
    for (Var* v : opr->const_vars) v->AddReaderEvent(event);
    event->Unref();
  }
  return error;
}

void EngineCore::Complete(Opr* opr, std::exception_ptr error) {
  if (opr->completed.exchange(true, std::memory_order_acq_rel))
    throw Error(std::string("the callback of engine function '") + (opr->name ? opr->name : "?") +
                    "' was called twice",
                kMXPFailedPrecondition);
  WithReadyList([&](std::vector<Opr*>* ready) { Release(opr, std::move(error), ready); });
}

// Note [Last reference]
// An error is an exception shared by the variables and waiters it reaches, and freed by whichever
// thread drops the last reference. That count lives in libstdc++, which ThreadSanitizer does not
// see: when a worker drops its reference after a waiter has read the message, TSan reports the
// worker's free against the waiter's read. So a worker holds no reference once the error can be
// observed: Release drops its own before granting any variable (grants are what wake waiters),
// and a function's escaped exception is handed on after its catch block, whose end drops the
// in-flight reference.
void EngineCore::Release(Opr* opr, std::exception_ptr error, std::vector<Opr*>* ready) {
  ReleaseVars(opr->const_vars, opr->mutate_vars, opr->delete_var, std::move(error),
              /*wrote=*/true, ready);
  if (Var* v = opr->delete_var) {
    {
      std::lock_guard<std::mutex> lock(failures_mu_);
      for (Failure& f : failures_)
        if (f.var == v) f.var = nullptr;  // the error outlives its variable, for WaitForAll
    }
    v->Reset(/*holds_errors=*/true);
    vars_.Delete(v);
  }
  if (Done* done = opr->done) done->Signal();
  Unref(opr);
}

void EngineCore::ReleaseVars(VarList reads, VarList writes, const Var* delete_var,
                             std::exception_ptr error, bool wrote, std::vector<Opr*>* ready) {
  if (error) {
    for (Var* v : writes) {
      if (v == delete_var || !v->holds_errors()) continue;
      if (v->SetError(error)) {
        std::lock_guard<std::mutex> lock(failures_mu_);
        failures_.push_back({v, error});
      }
    }
    if (writes.size() == 0 || delete_var) {
      // Nobody could observe this error through a variable: keep it for WaitForAll.
      std::lock_guard<std::mutex> lock(failures_mu_);
      failures_.push_back({nullptr, error});
    }
    error = nullptr;  // before any grant (Note [Last reference])
  }
  std::vector<Opr*>& granted = Tls().scratch;
  size_t mark = granted.size();
  for (Var* v : reads) v->CompleteRead(&granted);
  for (Var* v : writes) v->CompleteWrite(&granted, wrote);
  for (size_t i = mark; i < granted.size(); ++i)
    if (granted[i]->wait.fetch_sub(1, std::memory_order_acq_rel) == 1) ready->push_back(granted[i]);
  granted.resize(mark);
}

// A function stays pending until its block is back in the pool, runner's reference included:
// when WaitForAll returns, no worker still touches a finished function.
void EngineCore::Unref(Opr* opr) {
  if (opr->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    opr->Clear();
    oprs_.Delete(opr);
    EndPending();
  }
}

// Note [Idle wakes]
// The last function to finish wakes whoever drains, under the drain's lock. A script of small ops
// brings the count to zero on every op (each runs at once), so the wake is skipped when nobody
// drains: a drainer counts itself in `draining_` under the lock before it reads `pending_`, and
// the last function reads `draining_` after it zeroed `pending_`. Both sequentially consistent,
// one of them sees the other: the drainer sees zero and does not sleep, or the finisher sees the
// drainer and wakes it (taking the lock, so the wake cannot fall between its check and its sleep).
void EngineCore::EndPending() {
  if (pending_.fetch_sub(1, std::memory_order_seq_cst) == 1 &&
      draining_.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> lock(idle_mu_);
    idle_cv_.notify_all();
  }
}

void EngineCore::WaitForVar(VarHandle var) {
  CheckNotInEngineFunction("WaitForVar");
  std::exception_ptr device_error;
  if (!var->IsReady() || var->has_events()) {
    Done done;
    done.var = var;
    Opr* opr = oprs_.New();
    opr->fn = [&done](RunContext, CallbackOnComplete cb) {
      // Granted after every earlier write has run: its event is the last writer's, and no later
      // write can replace it before the callback.
      if (done.var->has_events()) done.event = done.var->WriterEvent();
      cb();
    };
    opr->done = &done;
    opr->ctx = Context::CPU();
    opr->const_vars.push_back(var);
    opr->marker = true;
    opr->always_run = true;
    opr->name = "WaitForVar";
    Push(opr);
    done.Wait();
    if (done.event) {  // Note [Event completion]: the host reads what the device wrote
      device_error = events_.Synchronize(done.event);
      done.event->Unref();
    }
  }
  if (var->has_error()) {
    if (std::exception_ptr error = var->TakeError()) {
      ForgetReported(error, var);
      std::rethrow_exception(error);
    }
  }
  if (device_error) {
    ForgetReported(device_error, var);
    std::rethrow_exception(device_error);
  }
}

// Note [Errors stay with data]: reported once, the failure is cleared from every variable it
// reached, as MXNet's variables share one exception slot per failure, and from the events that
// carry it.
void EngineCore::ForgetReported(const std::exception_ptr& error, const Var* reported_on) {
  {
    std::lock_guard<std::mutex> lock(failures_mu_);
    std::erase_if(failures_, [&](const Failure& f) {
      if (f.var != reported_on && f.error != error) return false;
      if (f.var && f.var != reported_on) f.var->TakeErrorIf(error);
      return true;
    });
  }
  events_.Forget(error);
}

bool EngineCore::DrainFor(double seconds) {
  std::unique_lock<std::mutex> lock(idle_mu_);
  Draining draining(&draining_);
  return idle_cv_.wait_for(lock, std::chrono::duration<double>(seconds),
                           [this] { return pending_.load(std::memory_order_seq_cst) == 0; });
}

void EngineCore::Drain() {
  std::unique_lock<std::mutex> lock(idle_mu_);
  Draining draining(&draining_);
  idle_cv_.wait(lock, [this] { return pending_.load(std::memory_order_seq_cst) == 0; });
}

void EngineCore::WaitForAll() {
  CheckNotInEngineFunction("WaitForAll");
  Drain();
  // Note [Event completion]: and the device work the functions left behind, whose faults are
  // reported here if no other wait has.
  std::vector<std::exception_ptr> device_errors = events_.SynchronizeAll();
  std::exception_ptr first;
  {
    std::lock_guard<std::mutex> lock(failures_mu_);
    for (const std::exception_ptr& e : device_errors)
      if (std::none_of(failures_.begin(), failures_.end(),
                       [&](const Failure& f) { return f.error == e; }))
        failures_.push_back({nullptr, e});
    if (failures_.empty()) return;
    first = failures_.front().error;
    for (Failure& f : failures_)
      if (f.var) f.var->TakeError();
    failures_.clear();
  }
  std::rethrow_exception(first);
}

}  // namespace mxplug::engine_detail
