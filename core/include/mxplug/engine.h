/*!
 * \file mxplug/engine.h
 * \brief The dependency engine: executes pushed functions following their dependencies on
 * variables (the seeds' Execution Engine). Two functions that share a variable, at least one of
 * them mutating it, run in push order; functions that only read it may run together.
 *
 * Unlike the seeds' engine, every member is safe to call from any thread. See docs/engine.md for
 * the algorithm, the threading model and the exception rules.
 */
#ifndef MXPLUG_ENGINE_H_
#define MXPLUG_ENGINE_H_

#include <cstdint>
#include <exception>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "mxplug/sdk/context.hpp"

namespace mxplug {

/*! \brief A variable: a token that names a resource functions read or mutate. */
class Var;
using VarHandle = Var*;

/*!
 * \brief A non-owning list of variables for a push: a std::vector or a braced list
 * (`{a, b}`), without building a vector. A parameter type only: it views the caller's list for
 * the duration of the call, so never keep one in a variable (`VarList l = {a};` dangles).
 */
class VarList {
 public:
  VarList(const std::vector<VarHandle>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
  VarList(const VarHandle* data, size_t size) : data_(data), size_(size) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"  // intended: see the class comment
#endif
  VarList(std::initializer_list<VarHandle> v) : data_(v.begin()), size_(v.size()) {}  // NOLINT
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  const VarHandle* begin() const { return data_; }
  const VarHandle* end() const { return data_ + size_; }
  size_t size() const { return size_; }

 private:
  const VarHandle* data_;
  size_t size_;
};

/*! \brief What kind of work a function is; selects the worker pool that runs it. */
enum class FnProperty {
  kNormal,          // compute on the function's context
  kCopyToDevice,    // a copy into an accelerator: its copy workers
  kCopyFromDevice,  // a copy out of an accelerator: its copy workers
  kCPUPrioritized,  // small, latency-sensitive CPU work (kvstore, optimizer): the priority pool
  kAsync,           // returns at once and completes later through its callback
  kDeleteVar,       // frees a variable (PushDelete)
  // Small CPU work (an op on a few elements): runs on the thread where it becomes ready, the
  // pusher's or the one that completed its last dependency, instead of a queue hop to a worker,
  // which costs more than the work (Note [Inline functions]). Elsewhere than on the CPU: kNormal.
  kInline,
};

namespace engine_detail {
struct Opr;
class EngineCore;
}  // namespace engine_detail

/*!
 * \brief Tells the engine an async function has finished. Call it exactly once, from any thread,
 * with the error the function failed with, if any. A second call throws Error.
 */
class CallbackOnComplete {
 public:
  void operator()(std::exception_ptr error = nullptr) const;

 private:
  friend class engine_detail::EngineCore;
  CallbackOnComplete(engine_detail::EngineCore* engine, engine_detail::Opr* opr)
      : engine_(engine), opr_(opr) {}
  engine_detail::EngineCore* engine_;
  engine_detail::Opr* opr_;
};

using SyncFn = std::function<void(RunContext)>;
using AsyncFn = std::function<void(RunContext, CallbackOnComplete)>;

enum class EngineType { kThreaded, kNaive };

struct EngineOptions {
  int cpu_workers = 0;       // 0: MXPLUG_CPU_WORKER_NTHREADS, else 1 (as MXNet)
  int priority_workers = 1;  // for FnProperty::kCPUPrioritized
  // Per accelerator device, each worker with its own stream. 0: MXPLUG_GPU_WORKER_NTHREADS /
  // MXPLUG_GPU_COPY_NTHREADS, else MXNet's MXNET_GPU_WORKER_NTHREADS / MXNET_GPU_COPY_NTHREADS,
  // else 2 (MXNet's defaults).
  int device_compute_workers = 0;
  int device_copy_workers = 0;
};

class Engine {
 public:
  virtual ~Engine() = default;

  /*! \brief A new variable; cheap. Free it with PushDelete. */
  virtual VarHandle NewVar() = 0;
  /*!
   * \brief A variable that orders its users but never holds an error: a resource shared by every
   * op of a device (temp space, a random stream). A failed function's error goes to the data it
   * writes; stored on a resource, it would skip every later user of that resource, in any graph,
   * and no one waits on a resource to take the error back (Note [Errors stay with data]).
   */
  virtual VarHandle NewResourceVar() = 0;

  /*!
   * \brief Pushes a function that is finished only when it calls its callback.
   * \param const_vars variables it reads; mutate_vars variables it writes. Duplicates are
   *        removed; a variable in both lists counts as written.
   * \param priority higher runs earlier among functions ready at the same time.
   * \param name shown by the profiler; must outlive the function (a literal).
   */
  virtual void PushAsync(AsyncFn fn, Context ctx, VarList const_vars, VarList mutate_vars,
                         FnProperty prop = FnProperty::kNormal, int priority = 0,
                         const char* name = nullptr) = 0;

  /*! \brief Pushes a function that is finished when it returns. An exception it throws is
   * stored on the variables it mutates (see WaitForVar). */
  virtual void PushSync(SyncFn fn, Context ctx, VarList const_vars, VarList mutate_vars,
                        FnProperty prop = FnProperty::kNormal, int priority = 0,
                        const char* name = nullptr) = 0;

  /*!
   * \brief Runs small CPU work on the calling thread now, as a FnProperty::kInline push whose
   * variables are free would run, without making an engine function of it: when nothing waits
   * for, holds, or has left device work or an error on any of its variables. `fn(arg, rctx)`'s
   * exception becomes the error of what it mutates, as a pushed function's. Returns false, having
   * done nothing, when a variable is not free, `ctx` is not the host, or the caller runs inside
   * an engine function: then push it.
   */
  virtual bool RunInlineIfFree(void (*fn)(void* arg, RunContext rctx), void* arg, Context ctx,
                               VarList const_vars, VarList mutate_vars, const char* name) = 0;

  /*! \brief Runs `fn` after every function pushed earlier that uses `var`, then recycles `var`.
   * `fn` may be empty. `var` must not be used afterwards. */
  virtual void PushDelete(SyncFn fn, Context ctx, VarHandle var) = 0;
  /*!
   * \brief Recycles `var` at once when nothing could order a delete: no function that uses it is
   * pending, and it holds no error and no device work (a PushDelete would then run its function
   * on this thread straight away). The caller frees what the delete function would have freed.
   * \returns false, changing nothing, otherwise: then PushDelete.
   */
  virtual bool DeleteIfIdle(Context ctx, VarHandle var) = 0;

  /*!
   * \brief Waits until every function pushed so far that mutates `var` has finished. Rethrows
   * (and clears) an error stored on `var`. From inside an engine function it throws Error
   * instead of deadlocking.
   */
  virtual void WaitForVar(VarHandle var) = 0;
  /*! \brief Waits for every function pushed so far; rethrows the first stored error and clears
   * all of them. */
  virtual void WaitForAll() = 0;

  /*! \brief True when no pushed function that mutates `var` is pending: reading it now is safe. */
  virtual bool IsReady(VarHandle var) const = 0;
  /*! \brief Number of completed writes to `var`. */
  virtual uint64_t Version(VarHandle var) const = 0;

  virtual EngineType type() const = 0;
  virtual std::string Describe() const = 0;
  /*! \brief How many functions on ctx's device can run at once: its compute workers (the naive
   * engine: 1). */
  virtual int Workers(Context ctx) const = 0;

  /*! \brief A new engine of its own (tests, benchmarks). */
  static std::unique_ptr<Engine> Create(EngineType type, const EngineOptions& options = {});
  /*!
   * \brief The process-wide engine, made on first use: MXPLUG_ENGINE=naive (or MXNet's
   * NaiveEngine) selects the synchronous engine for debugging, otherwise the threaded one; the
   * choice is logged once. It drains its work at process exit.
   */
  static Engine* Get();
  /*! \brief Chooses the process-wide engine's type before its first use. \throws Error after. */
  static void SetDefaultType(EngineType type);
  /*!
   * \brief Finishes the process-wide engine's queued work as the process ends; after
   * MXPLUG_EXIT_TIMEOUT seconds (default 60) says what still runs and ends the process with
   * status 1. Get() registers it with atexit; a host calls it earlier where its own exit comes
   * first (Python's atexit), since a static object a library made after the engine (oneDNN's
   * caches) is destroyed before that handler runs, under a kernel still using it. Without an
   * engine it does nothing; calling it again costs nothing.
   */
  static void FinishAtExit();
};

}  // namespace mxplug

#endif  // MXPLUG_ENGINE_H_
