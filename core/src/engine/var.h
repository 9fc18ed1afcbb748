// Internal: a variable's dependency state (the seeds' per-variable pending queue).
#ifndef MXPLUG_CORE_ENGINE_VAR_H_
#define MXPLUG_CORE_ENGINE_VAR_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <utility>
#include <vector>

#include "engine/device_event.h"
#include "engine/ring_queue.h"
#include "sync/spin_lock.h"

namespace mxplug {
namespace engine_detail {
struct Opr;
}  // namespace engine_detail

// Note [Variable queues]
// Each variable keeps the functions that wait for it in push order. The head of the queue is
// granted as soon as it can run: a run of reads while no write holds the variable, or one write
// once nothing holds it. A read pushed behind a waiting write waits too, so a write is never
// overtaken by later reads ("readers between two writes run together"). Granting is done under
// the variable's own lock (Note [Short locks]); the caller then decrements the granted
// functions' wait counters outside it. The count of running reads is atomic so that a read that
// completes while other reads still run takes no lock (a weight read by every op of a step, the
// engine benchmark's 64 readers of one variable): only the read that brings it to zero locks, to
// grant what waits. Every change of `waiting_` and every grant still happens under the lock, and
// whoever reads the count under it sees each decrement made before it locked, so a write is never
// granted while a read runs and a count that reached zero is never missed.
class Var {
 public:
  using Opr = engine_detail::Opr;
  using DeviceEvent = engine_detail::DeviceEvent;

  // Returns true when the read is granted at once.
  bool AppendRead(Opr* opr) {
    std::lock_guard<detail::SpinLock> lock(mu_);
    if (!write_running_ && waiting_.empty()) {
      reads_running_.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
    waiting_.push_back({opr, false});
    return false;
  }

  bool AppendWrite(Opr* opr) {
    std::lock_guard<detail::SpinLock> lock(mu_);
    ++writes_pending_;
    if (!write_running_ && ReadsRunning() == 0 && waiting_.empty()) {
      write_running_ = true;
      return true;
    }
    waiting_.push_back({opr, true});
    return false;
  }

  // Note [Free variables]: take the variable for a function that runs at once without being
  // queued (Engine::RunInlineIfFree), only when that waits for nothing: nothing waits for it or
  // holds it (a read: no write holds it), and it holds no device work and no error. Returns
  // false, changing nothing, otherwise. Given back with CompleteRead / CompleteWrite.
  bool TryTakeRead() {
    std::lock_guard<detail::SpinLock> lock(mu_);
    if (write_running_ || !waiting_.empty() || !FreeOfEventsAndErrorLocked()) return false;
    reads_running_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  bool TryTakeWrite() {
    std::lock_guard<detail::SpinLock> lock(mu_);
    if (write_running_ || ReadsRunning() != 0 || !waiting_.empty() || !FreeOfEventsAndErrorLocked())
      return false;
    ++writes_pending_;
    write_running_ = true;
    return true;
  }

  // Appends the functions granted by this completion to `granted`.
  void CompleteRead(std::vector<Opr*>* granted) {
    if (reads_running_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    std::lock_guard<detail::SpinLock> lock(mu_);
    GrantLocked(granted);  // grants nothing if another completion granted the head meanwhile
  }

  // `wrote` false: a write taken by TryTakeWrite and given back unused (no new version).
  void CompleteWrite(std::vector<Opr*>* granted, bool wrote = true) {
    std::lock_guard<detail::SpinLock> lock(mu_);
    write_running_ = false;
    --writes_pending_;
    if (wrote) version_.fetch_add(1, std::memory_order_release);
    GrantLocked(granted);
  }

  // When nothing waits for, holds or has left anything on the variable (no function, no device
  // event, no error), so that a delete has nothing to wait for (Note [Idle deletes]): resets it
  // as Reset(holds_errors) does and returns true. Else false, changing nothing.
  bool ResetIfIdle(bool holds_errors) {
    std::lock_guard<detail::SpinLock> lock(mu_);
    if (!IdleLocked()) return false;
    ResetLocked(holds_errors);
    return true;
  }

  bool IsReady() const {
    std::lock_guard<detail::SpinLock> lock(mu_);
    return writes_pending_ == 0;
  }
  uint64_t version() const { return version_.load(std::memory_order_acquire); }

  // Errors: the first error stays until it is taken (WaitForVar) or cleared (WaitForAll).
  bool has_error() const { return has_error_.load(std::memory_order_acquire); }
  // Returns true when this is the variable's first error.
  bool SetError(std::exception_ptr error) {
    std::lock_guard<detail::SpinLock> lock(mu_);
    if (error_) return false;
    error_ = std::move(error);
    has_error_.store(true, std::memory_order_release);
    return true;
  }
  std::exception_ptr error() const {
    std::lock_guard<detail::SpinLock> lock(mu_);
    return error_;
  }
  std::exception_ptr TakeError() {
    std::lock_guard<detail::SpinLock> lock(mu_);
    has_error_.store(false, std::memory_order_release);
    return std::exchange(error_, nullptr);
  }
  // Clears the error when it is `error` (another failure stays).
  void TakeErrorIf(const std::exception_ptr& error) {
    std::lock_guard<detail::SpinLock> lock(mu_);
    if (error_ != error) return;
    error_ = nullptr;
    has_error_.store(false, std::memory_order_release);
  }

  // False for a resource's variable (Engine::NewResourceVar): it orders, never fails.
  bool holds_errors() const { return holds_errors_; }

  // Note [Event completion]: the events of the device work that last wrote the variable and of
  // the device work that read it since. Read and changed only by functions granted the variable.
  bool has_events() const { return has_events_.load(std::memory_order_acquire); }
  // Appends, each with a reference, the events a function must wait for before it reads
  // (`write` false: the last writer's) or writes (the readers' too).
  void EventsToAwait(bool write, std::vector<DeviceEvent*>* out) const {
    std::lock_guard<detail::SpinLock> lock(mu_);
    if (writer_event_) writer_event_->Ref(), out->push_back(writer_event_);
    if (write)
      for (DeviceEvent* e : reader_events_) e->Ref(), out->push_back(e);
  }
  // The last writer's event, with a reference (null when none).
  DeviceEvent* WriterEvent() const {
    std::lock_guard<detail::SpinLock> lock(mu_);
    if (writer_event_) writer_event_->Ref();
    return writer_event_;
  }
  // A write recorded `e` (null: it left no device work behind); the events before it are no
  // longer needed, since it waited for them.
  void SetWriterEvent(DeviceEvent* e) {
    DeviceEvent* old_writer;
    std::vector<DeviceEvent*>& old_readers = DroppedEvents();
    {
      std::lock_guard<detail::SpinLock> lock(mu_);
      if (e) e->Ref();
      old_writer = std::exchange(writer_event_, e);
      old_readers.swap(reader_events_);
      has_events_.store(e != nullptr, std::memory_order_release);
    }
    if (old_writer) old_writer->Unref();
    for (DeviceEvent* r : old_readers) r->Unref();
    old_readers.clear();
  }
  // A read recorded `e`. A reader event recorded earlier on the same stream is replaced: `e`
  // completes after it. So a variable read on and on (weights) keeps one event per stream.
  void AddReaderEvent(DeviceEvent* e) {
    DeviceEvent* replaced = nullptr;
    {
      std::lock_guard<detail::SpinLock> lock(mu_);
      e->Ref();
      auto same = std::find_if(reader_events_.begin(), reader_events_.end(),
                               [&](DeviceEvent* r) { return r->RecordedOn(e->device, e->stream); });
      if (same != reader_events_.end())
        replaced = std::exchange(*same, e);
      else
        reader_events_.push_back(e);
      has_events_.store(true, std::memory_order_release);
    }
    if (replaced) replaced->Unref();
  }

  Var* pool_next = nullptr;  // ObjectPool's list (Note [Returning to the pool])

  // For the pool: a recycled variable starts fresh. Called by the variable's only holder.
  void Reset(bool holds_errors) {
    if (has_events()) SetWriterEvent(nullptr);
    std::lock_guard<detail::SpinLock> lock(mu_);
    ResetLocked(holds_errors);
  }

 private:
  void ResetLocked(bool holds_errors) {
    holds_errors_ = holds_errors;
    waiting_.clear();
    reads_running_.store(0, std::memory_order_relaxed);
    writes_pending_ = 0;
    write_running_ = false;
    version_.store(0, std::memory_order_relaxed);
    error_ = nullptr;
    has_error_.store(false, std::memory_order_relaxed);
  }

  struct Waiting {
    Opr* opr = nullptr;
    bool write = false;
  };

  void GrantLocked(std::vector<Opr*>* granted) {
    while (!waiting_.empty()) {
      Waiting& head = waiting_.front();
      if (head.write) {
        if (ReadsRunning() == 0 && !write_running_) {
          write_running_ = true;
          granted->push_back(head.opr);
          waiting_.pop_front();
        }
        return;
      }
      if (write_running_) return;
      reads_running_.fetch_add(1, std::memory_order_relaxed);
      granted->push_back(head.opr);
      waiting_.pop_front();
    }
  }

  int ReadsRunning() const { return reads_running_.load(std::memory_order_acquire); }
  bool IdleLocked() const {
    return waiting_.empty() && ReadsRunning() == 0 && writes_pending_ == 0 && !write_running_ &&
           FreeOfEventsAndErrorLocked();
  }
  bool FreeOfEventsAndErrorLocked() const {
    return !writer_event_ && reader_events_.empty() && !error_;
  }

  mutable detail::SpinLock mu_;  // Note [Short locks]
  engine_detail::RingQueue<Waiting> waiting_;
  std::atomic<int> reads_running_{0};  // changed under mu_, but for CompleteRead's decrement
  int writes_pending_ = 0;             // waiting or running
  bool write_running_ = false;
  std::atomic<uint64_t> version_{0};
  std::exception_ptr error_;
  std::atomic<bool> has_error_{false};
  bool holds_errors_ = true;
  DeviceEvent* writer_event_ = nullptr;
  std::vector<DeviceEvent*> reader_events_;
  std::atomic<bool> has_events_{false};

  // Scratch for SetWriterEvent: the readers it drops, released outside the lock without
  // allocating.
  static std::vector<DeviceEvent*>& DroppedEvents() {
    thread_local std::vector<DeviceEvent*> list;
    return list;
  }
};

}  // namespace mxplug

#endif  // MXPLUG_CORE_ENGINE_VAR_H_
