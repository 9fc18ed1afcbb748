// Communication backends as the core sees them: the calls of an MXPCommDef with statuses turned
// into errors that name the backend, and waits that poll under a deadline.
//
// Note [Polling, not spinning]
// A process of a distributed job spends much of its time waiting for its peers: a worker for the
// slowest worker's gradients, a server for the next push. A blocking MPI call would spin a core
// all that time, and on a machine with fewer cores than processes it would take the core from
// the very peer it waits for. So every wait here tests its request, yields the core between
// tests for the first SpinWindow (an operation whose peers are ready completes within it at full
// speed), then sleeps between tests, from 50 us doubling to 1 ms: an idle waiter costs about one
// test per millisecond, and an operation whose peer arrives late is noticed within a millisecond.
// The deadline is checked at each test, so a peer that died or stalls ends the wait with an error
// naming the operation instead of a hang.
#include "mxplug/comm.h"

#include <sched.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <thread>

#include "mxplug/error.h"
#include "registry/host_api.h"

namespace mxplug {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kSpinWindow = std::chrono::milliseconds(2);
constexpr auto kFirstSleep = std::chrono::microseconds(50);
constexpr auto kLongestSleep = std::chrono::milliseconds(1);

std::string Where(const CommEntry& c, const std::string& what) {
  return "communication backend '" + c.name + "' (plugin " + c.plugin + ") " + what;
}

std::string Seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", s);
  return text;
}

}  // namespace

Deadline Deadline::After(double seconds) {
  Deadline d;
  d.started = Clock::now();
  d.at = seconds > 0 ? d.started + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(seconds))
                     : Clock::time_point::max();
  return d;
}

double Deadline::Elapsed() const {
  return std::chrono::duration<double>(Clock::now() - started).count();
}

int64_t Deadline::RemainingMs() const {
  if (at == Clock::time_point::max()) return INT64_MAX;
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(at - Clock::now()).count();
  return std::max<int64_t>(1, left);
}

bool Deadline::Passed() const { return Clock::now() >= at; }

bool CommEntry::Available(std::string* reason) const {
  int32_t yes = 0;
  const char* why = nullptr;
  ThrowIfError(def.available(def.user, &yes, &why), Where(*this, "available"));
  if (reason) *reason = yes ? "" : detail::Str(why);
  return yes != 0;
}

bool CommEntry::Serves(int32_t device_type) const {
  return std::find(memory_types.begin(), memory_types.end(), device_type) != memory_types.end();
}

std::shared_ptr<Communicator> CommEntry::World(const Deadline& deadline) const {
  std::lock_guard<std::mutex> lock(world_mu);
  if (world) return world;
  MXPComm* handle = nullptr;
  ThrowIfError(def.init(def.user, nullptr, deadline.RemainingMs(), &handle),
               Where(*this, "joining the job"));
  world = std::make_shared<Communicator>(shared_from_this(), handle);
  return world;
}

void CommEntry::Finalize() const {
  std::lock_guard<std::mutex> lock(world_mu);
  world.reset();  // freed while the backend can; a later World() is the backend's error
  ThrowIfError(def.finalize(def.user), Where(*this, "leaving the job"));
}

CommRequest::CommRequest(std::shared_ptr<const CommEntry> entry, MXPCommRequest* handle,
                         std::string what)
    : entry_(std::move(entry)), handle_(handle), what_(std::move(what)) {}

CommRequest::CommRequest(CommRequest&& other) noexcept
    : entry_(std::move(other.entry_)), handle_(other.handle_), what_(std::move(other.what_)) {
  other.handle_ = nullptr;
}

CommRequest::~CommRequest() {
  if (handle_) detail::TakeMessage(entry_->def.cancel(entry_->def.user, handle_));
}

bool CommRequest::Test(MXPCommMessageInfo* info) {
  if (!handle_) return true;
  int32_t done = 0;
  MXPCommMessageInfo mine{};
  mine.struct_size = sizeof mine;
  MXPStatus* status = entry_->def.test(entry_->def.user, handle_, &done, info ? info : &mine);
  if (status) {
    handle_ = nullptr;  // a failed request is the backend's to have freed
    ThrowIfError(status, Where(*entry_, what_));
  }
  if (done) handle_ = nullptr;
  return done != 0;
}

void PollBackoff::Reset() {
  start_ = Clock::now();
  sleep_ = kFirstSleep;
}

void PollBackoff::Pause() {
  // Note [Polling, not spinning].
  if (Clock::now() - start_ < kSpinWindow) {
    sched_yield();
    return;
  }
  std::this_thread::sleep_for(sleep_);
  sleep_ = std::min<std::chrono::microseconds>(sleep_ * 2, kLongestSleep);
}

void CommRequest::Wait(const Deadline& deadline, MXPCommMessageInfo* info) {
  PollBackoff backoff;
  while (!Test(info)) {
    if (deadline.Passed())
      throw Error(
          what_ + ": no answer after " + Seconds(deadline.Elapsed()) + " (MXPLUG_KVSTORE_TIMEOUT)",
          kMXPDeadlineExceeded);
    backoff.Pause();
  }
}

Communicator::Communicator(std::shared_ptr<const CommEntry> entry, MXPComm* handle)
    : entry_(std::move(entry)), handle_(handle) {
  const MXPCommDef& d = entry_->def;
  int32_t value = 0;
  ThrowIfError(d.rank(d.user, handle_, &value), Where(*entry_, "rank"));
  rank_ = value;
  ThrowIfError(d.size(d.user, handle_, &value), Where(*entry_, "size"));
  size_ = value;
}

Communicator::~Communicator() {
  detail::TakeMessage(entry_->def.comm_free(entry_->def.user, handle_));
}

std::shared_ptr<Communicator> Communicator::Split(int color, int key,
                                                  const Deadline& deadline) const {
  MXPComm* out = nullptr;
  ThrowIfError(
      entry_->def.split(entry_->def.user, handle_, color, key, deadline.RemainingMs(), &out),
      Where(*entry_, "split"));
  return std::make_shared<Communicator>(entry_, out);
}

namespace {
template <typename Start>
CommRequest Started(const std::shared_ptr<const CommEntry>& entry, std::string what, Start start) {
  MXPCommRequest* request = nullptr;
  ThrowIfError(start(&request), Where(*entry, what));
  return CommRequest(entry, request, std::move(what));
}
}  // namespace

CommRequest Communicator::StartAllreduce(DLTensor* buffer, MXPCommReduceOp op, std::string what,
                                         void* stream) const {
  const MXPCommDef& d = entry_->def;
  return Started(entry_, std::move(what), [&](MXPCommRequest** r) {
    return d.allreduce(d.user, handle_, buffer, op, stream, r);
  });
}

CommRequest Communicator::StartBroadcast(DLTensor* buffer, int root, std::string what,
                                         void* stream) const {
  const MXPCommDef& d = entry_->def;
  return Started(entry_, std::move(what), [&](MXPCommRequest** r) {
    return d.broadcast(d.user, handle_, buffer, root, stream, r);
  });
}

CommRequest Communicator::StartBarrier(std::string what) const {
  const MXPCommDef& d = entry_->def;
  return Started(entry_, std::move(what),
                 [&](MXPCommRequest** r) { return d.barrier(d.user, handle_, r); });
}

CommRequest Communicator::StartSend(const void* data, uint64_t bytes, int dest, int tag,
                                    std::string what) const {
  const MXPCommDef& d = entry_->def;
  return Started(entry_, std::move(what), [&](MXPCommRequest** r) {
    return d.send(d.user, handle_, data, bytes, dest, tag, r);
  });
}

CommRequest Communicator::StartRecv(void* data, uint64_t bytes, int source, int tag,
                                    std::string what) const {
  const MXPCommDef& d = entry_->def;
  return Started(entry_, std::move(what), [&](MXPCommRequest** r) {
    return d.recv(d.user, handle_, data, bytes, source, tag, r);
  });
}

bool Communicator::Probe(int source, int tag, MXPCommMessageInfo* info) const {
  int32_t found = 0;
  MXPCommMessageInfo mine{};
  mine.struct_size = sizeof mine;
  ThrowIfError(
      entry_->def.probe(entry_->def.user, handle_, source, tag, &found, info ? info : &mine),
      Where(*entry_, "probe"));
  return found != 0;
}

void Communicator::Allreduce(DLTensor* buffer, MXPCommReduceOp op, const std::string& what,
                             const Deadline& deadline) const {
  StartAllreduce(buffer, op, what).Wait(deadline);
}

void Communicator::Broadcast(DLTensor* buffer, int root, const std::string& what,
                             const Deadline& deadline) const {
  StartBroadcast(buffer, root, what).Wait(deadline);
}

void Communicator::Barrier(const std::string& what, const Deadline& deadline) const {
  StartBarrier(what).Wait(deadline);
}

void Communicator::Abort(int exit_code) const {
  std::fflush(stdout);
  std::fflush(stderr);
  entry_->def.abort(entry_->def.user, handle_, exit_code);
  std::_Exit(exit_code);  // a backend whose abort returned
}

}  // namespace mxplug
