#include "kvstore/dist_job.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "mxplug/error.h"
#include "mxplug/runtime.h"

namespace mxplug {

namespace {

// The job, once joined; never destroyed (its thread and communicators live until the process
// ends, as the plugins they call into: Note [No dlclose]).
std::mutex g_job_mu;
DistJob* g_job = nullptr;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// MXPLUG_KVSTORE_TIMEOUT: seconds every communication may wait for its peers (default 600).
double TimeoutSeconds() {
  const std::string text = Env("MXPLUG_KVSTORE_TIMEOUT");
  if (text.empty()) return 600;
  char* end = nullptr;
  const double seconds = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !(seconds > 0))
    throw Error("MXPLUG_KVSTORE_TIMEOUT='" + text + "': expected a number of seconds above 0",
                kMXPInvalidArgument);
  return seconds;
}

DistRole RoleFromEnvironment() {
  const std::string role = Env("DMLC_ROLE");
  if (role.empty() || role == "worker") return DistRole::kWorker;
  if (role == "server") return DistRole::kServer;
  throw Error("DMLC_ROLE='" + role +
                  "': mxplug's jobs have workers and servers (no scheduler: MPI "
                  "starts the job)",
              kMXPInvalidArgument);
}

// A communication backend that serves host memory and whose job this process is part of.
std::shared_ptr<const CommEntry> ChooseBackend(const std::string& type) {
  Runtime& rt = Runtime::Get();
  rt.EnsureDefaultPluginsLoaded();
  const auto comms = rt.comms().List();
  if (comms.empty())
    throw Error("kvstore '" + type +
                    "': no communication backend is loaded (`mxplug comms` lists "
                    "them; the mpi plugin needs a build with Open MPI: libopenmpi-dev)",
                kMXPFailedPrecondition);
  std::string reasons;
  for (const auto& c : comms) {
    std::string reason;
    if (c->Serves(kDLCPU) && c->Available(&reason)) return c;
    reasons += (reasons.empty() ? "" : "; ") + c->name + ": " +
               (reason.empty() ? "does not take host memory" : reason);
  }
  throw Error("kvstore '" + type + "' needs a distributed job: " + reasons, kMXPFailedPrecondition);
}

}  // namespace

void AllreduceMax(const Communicator& comm, std::vector<int64_t>* values, const std::string& what,
                  const Deadline& deadline) {
  int64_t shape[1] = {static_cast<int64_t>(values->size())};
  DLTensor t{};
  t.data = values->data();
  t.device = {kDLCPU, 0};
  t.ndim = 1;
  t.shape = shape;
  t.dtype = {kDLInt, 64, 1};
  comm.Allreduce(&t, kMXPCommMax, what, deadline);
}

DistJob& DistJob::Get(const std::string& type) {
  std::lock_guard<std::mutex> lock(g_job_mu);
  if (!g_job) g_job = new DistJob(type);
  return *g_job;
}

DistJob* DistJob::IfJoined() {
  std::lock_guard<std::mutex> lock(g_job_mu);
  return g_job;
}

DistJob::DistJob(const std::string& type) {
  role_ = RoleFromEnvironment();
  timeout_ = TimeoutSeconds();
  backend_ = ChooseBackend(type);
  if (role_ == DistRole::kServer) {  // a server makes its calls from its own (main) thread
    Join(type);
    return;
  }
  thread_ = std::thread([this] { Loop(); });
  try {
    Run([this, type] { Join(type); });
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
    throw;
  }
}

void DistJob::Join(const std::string& type) {
  const Deadline deadline = NewDeadline();
  world_ = backend_->World(deadline);
  // Which processes are servers: each marks its own slot, a max over the world gathers them.
  std::vector<int64_t> is_server(world_->size(), 0);
  is_server[world_->rank()] = role_ == DistRole::kServer;
  AllreduceMax(*world_, &is_server, "kvstore '" + type + "': finding the servers of the job",
               deadline);
  for (int r = 0; r < world_->size(); ++r)
    if (is_server[r]) server_ranks_.push_back(r);
  group_ = world_->Split(role_ == DistRole::kServer, world_->rank(), deadline);
  rank_ = group_->rank();
  num_workers_ = world_->size() - num_servers();
  if (num_workers_ == 0)
    throw Error("kvstore '" + type + "': the job has no worker", kMXPFailedPrecondition);
}

void DistJob::Leave(const Deadline& deadline) {
  // MPI_Finalize waits for every process of the job: meeting them first in a polled barrier
  // bounds that wait by the deadline when one of them never comes.
  world_->Barrier("leaving the job: waiting for every process to finish", deadline);
  group_.reset();
  world_.reset();
  backend_->Finalize();
}

void DistJob::Abandon(const std::string& message) {
  DistJob* job = IfJoined();
  if (job && job->world_) job->Fail(message, 1);
}

std::string DistJob::Who() const {
  std::string who = role_ == DistRole::kServer
                        ? "server " + std::to_string(rank_) + " of " + std::to_string(num_servers())
                        : "worker " + std::to_string(rank_) + " of " + std::to_string(num_workers_);
  if (world_)
    who += " (process " + std::to_string(world_->rank()) + " of " + std::to_string(world_->size()) +
           ")";
  return who;
}

void DistJob::Fail(const std::string& message, int exit_code) const {
  std::fprintf(stderr, "mxplug kvstore: %s: %s; ending the job\n", Who().c_str(), message.c_str());
  std::fflush(stderr);
  if (world_) world_->Abort(exit_code);
  std::_Exit(exit_code);
}

void DistJob::Enqueue(std::shared_ptr<Job> job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(job));
  }
  cv_.notify_all();
}

void DistJob::Push(std::function<void()> work, std::vector<VarHandle> const_vars,
                   std::vector<VarHandle> mutate_vars, const char* name) {
  auto job = std::make_shared<Job>();
  job->work = std::move(work);
  Enqueue(job);
  Engine::Get()->PushAsync(
      [this, job](RunContext, CallbackOnComplete done) {
        {
          std::lock_guard<std::mutex> lock(mu_);
          job->complete = [done](std::exception_ptr error) { done(error); };
          job->released = true;
        }
        cv_.notify_all();
      },
      Context::CPU(), const_vars, mutate_vars, FnProperty::kAsync, 0, name);
}

void DistJob::Run(std::function<void()> work) {
  auto job = std::make_shared<Job>();
  job->work = std::move(work);
  std::promise<void> finished;
  job->complete = [&finished](std::exception_ptr error) {
    if (error)
      finished.set_exception(error);
    else
      finished.set_value();
  };
  job->released = true;
  Enqueue(job);
  finished.get_future().get();
}

void DistJob::Loop() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] {
        return (stopping_ && queue_.empty()) || (!queue_.empty() && queue_.front()->released);
      });
      if (queue_.empty()) return;
      job = queue_.front();
      queue_.pop_front();
    }
    std::exception_ptr error;
    try {
      job->work();
    } catch (const Error& e) {
      if (e.code() == kMXPDeadlineExceeded && world_) Fail(e.what());
      error = std::current_exception();
    } catch (...) {
      error = std::current_exception();
    }
    job->complete(error);
  }
}

void DistJob::Finish() {
  DistJob* job = IfJoined();
  if (!job) {
    // A worker that never made a distributed store still tells the servers it has finished.
    if (Env("DMLC_ROLE") != "worker" || Env("DMLC_NUM_SERVER").empty() ||
        Env("DMLC_NUM_SERVER") == "0")
      return;
    job = &Get("dist_sync");
  }
  if (job->role_ != DistRole::kWorker || !job->thread_.joinable()) return;  // or finished
  try {
    Engine::Get()->WaitForAll();
  } catch (const std::exception&) {
    // errors of the script's own work were the script's to read; leaving the job goes on
  }
  job->Run([job] {
    const Deadline deadline = job->NewDeadline();
    for (int server : job->server_ranks_)
      job->world_
          ->StartSend(
              nullptr, 0, server, kTagStop,
              "telling server process " + std::to_string(server) + " this worker has finished")
          .Wait(deadline);
    job->Leave(deadline);
  });
  {
    std::lock_guard<std::mutex> lock(job->mu_);
    job->stopping_ = true;
  }
  job->cv_.notify_all();
  job->thread_.join();
}

}  // namespace mxplug
