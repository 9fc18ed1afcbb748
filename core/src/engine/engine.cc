// The Engine facade: PushSync, the factory, and the process-wide engine.
#include <pthread.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "engine/engine_core.h"
#include "mxplug/error.h"
#include "mxplug/profiler.h"
#include "registry/host_api.h"

namespace mxplug {

namespace engine_detail {
std::unique_ptr<EngineCore> MakeThreadedEngine(const EngineOptions& options);
std::unique_ptr<EngineCore> MakeNaiveEngine();
}  // namespace engine_detail

void CallbackOnComplete::operator()(std::exception_ptr error) const {
  engine_->Complete(opr_, std::move(error));
}

std::unique_ptr<Engine> Engine::Create(EngineType type, const EngineOptions& options) {
  if (type == EngineType::kNaive) return engine_detail::MakeNaiveEngine();
  return engine_detail::MakeThreadedEngine(options);
}

namespace {

std::mutex g_engine_mu;
std::atomic<Engine*> g_engine{nullptr};
int g_default_type = -1;  // -1: not chosen by SetDefaultType

EngineType TypeFromEnvironment() {
  const char* env = std::getenv("MXPLUG_ENGINE");
  if (!env) env = std::getenv("MXNET_ENGINE_TYPE");  // MXNet users' habit
  if (env && (std::strcmp(env, "naive") == 0 || std::strcmp(env, "NaiveEngine") == 0))
    return EngineType::kNaive;
  return EngineType::kThreaded;
}

engine_detail::EngineCore* ForkEngine() {
  return static_cast<engine_detail::EngineCore*>(g_engine.load());
}

}  // namespace

// At exit the queued work is finished, but not forever: a kernel that never returns would keep
// the interpreter from ending. After MXPLUG_EXIT_TIMEOUT seconds (default 60) the process says
// what is still running and ends with status 1.
void Engine::FinishAtExit() {
  auto* engine = static_cast<engine_detail::EngineCore*>(g_engine.load());
  if (!engine) return;
  const char* env = std::getenv("MXPLUG_EXIT_TIMEOUT");
  const double seconds = env ? std::atof(env) : 60.0;
  if (engine->DrainFor(seconds)) return;
  std::string running;
  for (const std::string& r : engine->Running()) running += (running.empty() ? "" : ", ") + r;
  std::fflush(nullptr);
  std::fprintf(
      stderr,
      "[mxplug error] exit: engine work is still running after waiting %g s (MXPLUG_EXIT_TIMEOUT): "
      "%s; %lld function(s) unfinished. Exiting without it.\n",
      seconds,
      running.empty() ? "no worker is running a function (waiting for an asynchronous completion)"
                      : ("running " + running).c_str(),
      static_cast<long long>(engine->Pending()));
  std::_Exit(EXIT_FAILURE);
}

Engine* Engine::Get() {
  if (Engine* e = g_engine.load(std::memory_order_acquire)) return e;
  std::lock_guard<std::mutex> lock(g_engine_mu);
  if (Engine* e = g_engine.load(std::memory_order_relaxed)) return e;
  EngineType type =
      g_default_type >= 0 ? static_cast<EngineType>(g_default_type) : TypeFromEnvironment();
  // Never destroyed, so no static destructor can run it down; at exit, the handler below drains
  // the queued work and stops the workers before static objects it may touch are destroyed.
  // The profiler's exit handler (MXPLUG_PROFILER) must run after the engine's drain below:
  // handlers run in reverse order of registration, so make the profiler register first.
  Profiler::Get();
  Engine* engine = Create(type).release();
  detail::HostApi()->log(kMXPLogInfo, "engine", engine->Describe().c_str());
  g_engine.store(engine, std::memory_order_release);
  std::atexit(FinishAtExit);
  // Note [Fork] (engine_core.h), as MXNet 1.9.1's engine does: data-loading code forks after the
  // engine has started, and the child's first op would wait forever for workers it does not have.
  pthread_atfork([] { ForkEngine()->StopWorkersForFork(); },
                 [] { ForkEngine()->StartWorkersAfterFork(); },
                 [] { ForkEngine()->StartWorkersAfterFork(); });
  return engine;
}

void Engine::SetDefaultType(EngineType type) {
  std::lock_guard<std::mutex> lock(g_engine_mu);
  if (g_engine.load() && g_engine.load()->type() != type)
    throw Error("Engine::SetDefaultType: the process-wide engine already exists (" +
                    g_engine.load()->Describe() + ")",
                kMXPFailedPrecondition);
  g_default_type = static_cast<int>(type);
}

}  // namespace mxplug
