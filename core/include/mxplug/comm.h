/*!
 * \file mxplug/comm.h
 * \brief A registered communication backend (from a plugin's MXPCommDef, abi/comm.h) and the
 * communicators it makes, with blocking calls that end at a deadline.
 *
 * Every operation with a peer is started by the backend and completed here by polling its
 * `test` (Note [Deadlines are the host's] in abi/comm.h), as Note [Polling, not spinning] in
 * comm.cc describes: so a waiting process leaves its core to the others, and an operation whose
 * peer never comes throws Error(kMXPDeadlineExceeded) naming what it waited for, instead of
 * hanging. After such an error the job cannot go on (the peers are out of step): the caller says
 * what failed and calls Abort.
 */
#ifndef MXPLUG_COMM_H_
#define MXPLUG_COMM_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mxplug/abi/comm.h"

namespace mxplug {

/*! \brief When a blocking call gives up, and what it is called in the error. */
struct Deadline {
  std::chrono::steady_clock::time_point at;
  std::chrono::steady_clock::time_point started;

  /*! \brief `seconds` from now; 0 or less: never. */
  static Deadline After(double seconds);
  double Elapsed() const;
  int64_t RemainingMs() const;  // at least 1; INT64_MAX for never
  bool Passed() const;
};

/*!
 * \brief How a process waits for its peers (Note [Polling, not spinning] in comm.cc): Pause
 * yields the core for the first 2 ms of a wait, then sleeps from 50 us doubling to 1 ms; Reset
 * starts a new wait.
 */
class PollBackoff {
 public:
  PollBackoff() { Reset(); }
  void Reset();
  void Pause();

 private:
  std::chrono::steady_clock::time_point start_;
  std::chrono::microseconds sleep_;
};

class Communicator;

struct CommEntry : std::enable_shared_from_this<CommEntry> {
  std::string name;  // "mpi"
  std::string plugin;
  std::string plugin_path;
  std::vector<int32_t> memory_types;
  MXPCommDef def{};
  mutable std::mutex world_mu;
  mutable std::shared_ptr<Communicator> world;  // once joined

  /*! \brief Whether this process is part of a job the backend can join; if not, why. */
  bool Available(std::string* reason = nullptr) const;
  /*! \brief Whether allreduce and broadcast take memory of this DLDeviceType. */
  bool Serves(int32_t device_type) const;
  /*!
   * \brief The communicator of the whole job, joined on the first call (later calls return the
   * same one). \throws Error naming the backend, with kMXPDeadlineExceeded when the peers did
   * not all join in time.
   */
  std::shared_ptr<Communicator> World(const Deadline& deadline) const;
  /*! \brief Leaves the job (the world must have been joined), freeing the world first; joining
   * again is then the backend's error. */
  void Finalize() const;
};

/*! \brief A started operation; Wait polls it to completion. Not copyable. */
class CommRequest {
 public:
  CommRequest(std::shared_ptr<const CommEntry> entry, MXPCommRequest* handle, std::string what);
  CommRequest(CommRequest&& other) noexcept;
  CommRequest& operator=(CommRequest&&) = delete;
  ~CommRequest();  // cancels a request still pending

  /*! \brief Advances it without waiting; true once done (then `info` is filled if given). */
  bool Test(MXPCommMessageInfo* info = nullptr);
  /*! \brief Polls until done. \throws Error(kMXPDeadlineExceeded) naming `what` and the time. */
  void Wait(const Deadline& deadline, MXPCommMessageInfo* info = nullptr);
  const std::string& what() const { return what_; }

 private:
  std::shared_ptr<const CommEntry> entry_;
  MXPCommRequest* handle_;
  std::string what_;
};

/*! \brief One communicator of a backend. Calls come from one thread at a time. */
class Communicator {
 public:
  Communicator(std::shared_ptr<const CommEntry> entry, MXPComm* handle);
  ~Communicator();

  const CommEntry& entry() const { return *entry_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

  std::shared_ptr<Communicator> Split(int color, int key, const Deadline& deadline) const;

  // Non-blocking starts; `what` names the operation in errors ("allreduce of key 'w'").
  CommRequest StartAllreduce(DLTensor* buffer, MXPCommReduceOp op, std::string what,
                             void* stream = nullptr) const;
  CommRequest StartBroadcast(DLTensor* buffer, int root, std::string what,
                             void* stream = nullptr) const;
  CommRequest StartBarrier(std::string what) const;
  CommRequest StartSend(const void* data, uint64_t bytes, int dest, int tag,
                        std::string what) const;
  CommRequest StartRecv(void* data, uint64_t bytes, int source, int tag, std::string what) const;
  /*! \brief Whether a message from source with tag is ready (MXP_COMM_ANY_* allowed). */
  bool Probe(int source, int tag, MXPCommMessageInfo* info) const;

  // Blocking forms: start, then Wait under the deadline.
  void Allreduce(DLTensor* buffer, MXPCommReduceOp op, const std::string& what,
                 const Deadline& deadline) const;
  void Broadcast(DLTensor* buffer, int root, const std::string& what,
                 const Deadline& deadline) const;
  void Barrier(const std::string& what, const Deadline& deadline) const;

  /*! \brief Ends every process of the job with exit_code. Does not return. */
  [[noreturn]] void Abort(int exit_code) const;

 private:
  std::shared_ptr<const CommEntry> entry_;
  MXPComm* handle_;
  int rank_ = 0, size_ = 1;
};

}  // namespace mxplug

#endif  // MXPLUG_COMM_H_
