// Internal: this process's place in a distributed job (docs/distributed.md): its role (worker or
// server, from DMLC_ROLE as MXNet's launcher sets it), the communicators of the job, and, on a
// worker, the thread that performs its communication in program order.
//
// Note [One communication thread, in program order]
// Collectives must be started in the same order on every worker. The engine runs a push's
// functions when their inputs are ready, an order that differs between workers (one finishes the
// gradient of layer 2 first, another that of layer 3). So a push reserves its collective's place
// in a FIFO when it is called (program order, the same on every worker running the same script),
// and the engine function that becomes ready only releases it: the communication thread runs the
// queue's head once released, then completes the engine function. No engine worker ever waits on
// a peer. The head can only wait for functions pushed before it, never for a later collective, so
// the queue cannot deadlock. The same thread joins and leaves the job: every MPI call of a worker
// is made by one thread.
#ifndef MXPLUG_CORE_KVSTORE_DIST_JOB_H_
#define MXPLUG_CORE_KVSTORE_DIST_JOB_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "mxplug/comm.h"
#include "mxplug/engine.h"

namespace mxplug {

enum class DistRole { kWorker, kServer };

/*! \brief Message tags between workers and servers (all on the world communicator). */
enum DistTag : int {
  kTagStop = 1,     // a worker has finished: no body
  kTagCommand = 2,  // _send_command_to_servers: int32 head, then the body
  kTagRequest = 3,  // dist_async: a request's header (dist_store.cc), to a server
  kTagData = 4,     // dist_async: the bytes of the init or push whose header came before
  kTagReply = 5,    // dist_async: a server's answer to a pull (the part's bytes) or init (empty)
};

/*! \brief Replaces each of `values` by its maximum over the processes of `comm` (every one
 * calls it with as many values). */
void AllreduceMax(const Communicator& comm, std::vector<int64_t>* values, const std::string& what,
                  const Deadline& deadline);

class DistJob {
 public:
  /*!
   * \brief The job, joined on first use. \throws Error when no communication backend is loaded
   * or this process was not started as part of a job (saying how to start one), naming `type`.
   */
  static DistJob& Get(const std::string& type);
  /*! \brief The job if this process joined one, else nullptr. */
  static DistJob* IfJoined();

  DistRole role() const { return role_; }
  /*! \brief Index among the workers (or among the servers, on a server). */
  int rank() const { return rank_; }
  int num_workers() const { return num_workers_; }
  int num_servers() const { return static_cast<int>(server_ranks_.size()); }
  const std::vector<int>& server_ranks() const { return server_ranks_; }
  const Communicator& world() const { return *world_; }
  /*! \brief The workers' communicator (on a worker). */
  const Communicator& workers() const { return *group_; }
  /*! \brief A new deadline of MXPLUG_KVSTORE_TIMEOUT seconds from now. */
  Deadline NewDeadline() const { return Deadline::After(timeout_); }
  /*! \brief "worker 1 of 2 (process 3 of 4)". */
  std::string Who() const;

  /*!
   * \brief Note [One communication thread, in program order]: `work` runs on the communication
   * thread after every job queued before it and once the engine has the vars ready; pulled arrays
   * that mutate_vars protect are readable after it. `work` throwing Error(kMXPDeadlineExceeded)
   * ends the job (Fail); another error is stored on mutate_vars, as a failed op's.
   */
  void Push(std::function<void()> work, std::vector<VarHandle> const_vars,
            std::vector<VarHandle> mutate_vars, const char* name);
  /*! \brief Runs `work` on the communication thread after the queued jobs, and waits for it. */
  void Run(std::function<void()> work);

  /*!
   * \brief Says what failed, naming this process, and ends every process of the job with
   * exit_code (124, timeout(1)'s, for a wait that ran out).
   */
  [[noreturn]] void Fail(const std::string& message, int exit_code = 124) const;

  /*!
   * \brief A worker's last act: waits for its work, tells each server it has finished, and leaves
   * the job. Called at exit; also joins first when this worker never did but servers wait for it.
   */
  static void Finish();
  /*! \brief Leaves the job: a barrier of every process under the deadline, then the backend's
   * finalize. */
  void Leave(const Deadline& deadline);
  /*! \brief Ends the job with `message` (Fail) if this process joined one; else nothing. */
  static void Abandon(const std::string& message);

 private:
  struct Job {
    std::function<void()> work;
    bool released = false;
    std::function<void(std::exception_ptr)> complete;
  };

  explicit DistJob(const std::string& type);
  void Join(const std::string& type);
  void Loop();
  void Enqueue(std::shared_ptr<Job> job);

  DistRole role_ = DistRole::kWorker;
  double timeout_ = 600;
  int rank_ = 0, num_workers_ = 1;
  std::vector<int> server_ranks_;  // world ranks of the servers
  std::shared_ptr<const CommEntry> backend_;
  std::shared_ptr<Communicator> world_, group_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace mxplug

#endif  // MXPLUG_CORE_KVSTORE_DIST_JOB_H_
