// Internal: the events that stand for device work an engine function queued on its stream
// (Note [Event completion], engine_core.cc), and the pool that recycles them.
#ifndef MXPLUG_CORE_ENGINE_DEVICE_EVENT_H_
#define MXPLUG_CORE_ENGINE_DEVICE_EVENT_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include "mxplug/device.h"

namespace mxplug::engine_detail {

class EventPool;

// One recording of a backend event on a worker's stream: it completes when the work the
// function queued before it has. Shared by the variables it stands for (as their last writer or
// as one of their readers since), and recycled once unreferenced and known complete.
struct DeviceEvent {
  EventPool* pool = nullptr;
  const DeviceEntry* device = nullptr;
  int32_t dev_id = 0;
  void* handle = nullptr;
  void* stream = nullptr;  // where it was recorded: later work on that stream is ordered after it
  std::atomic<int> refs{0};

  void Ref() { refs.fetch_add(1, std::memory_order_relaxed); }
  // Recorded on this stream of this backend (handles of different backends may coincide).
  bool RecordedOn(const DeviceEntry* on, const void* on_stream) const {
    return device == on && stream == on_stream;
  }
  void Unref();
  // Known complete (waited for or queried), without asking the device.
  bool KnownComplete() const { return complete_.load(std::memory_order_acquire); }

 private:
  friend class EventPool;
  std::mutex mu_;
  std::atomic<bool> complete_{false};
  std::exception_ptr error_;  // what the device reported for it, until reported to the user
};

class EventPool {
 public:
  EventPool() = default;
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;
  // Waits for every event and destroys the backends' handles.
  ~EventPool();

  // Records an event on `stream` of the device; returned with one reference.
  DeviceEvent* Record(const DeviceEntry* device, int32_t dev_id, void* stream);
  // Blocks until the event's work is done; the error the device reported for it, if any (the
  // same exception for every caller until it is forgotten).
  std::exception_ptr Synchronize(DeviceEvent* e);
  // Waits for every event recorded so far; returns the distinct errors not yet reported, the
  // ones found on events nobody references any more included, and forgets them (the caller
  // reports them).
  std::vector<std::exception_ptr> SynchronizeAll();
  // `error` has been reported to the user: no event reports it again.
  void Forget(const std::exception_ptr& error);

 private:
  friend struct DeviceEvent;
  // The last reference is gone: recycled once known complete (its error, if any, kept for
  // SynchronizeAll).
  void Retire(DeviceEvent* e);
  // Moves retired events that have completed to the free list, oldest first; stops at the first
  // still running. Called with mu_ held.
  void CollectRetiredLocked();
  static void SetComplete(DeviceEvent* e, std::exception_ptr error);

  std::mutex mu_;
  std::vector<std::unique_ptr<DeviceEvent>> all_;
  std::vector<DeviceEvent*> free_;    // complete and unreferenced: ready to record again
  std::deque<DeviceEvent*> retired_;  // unreferenced, perhaps still running
  std::vector<std::exception_ptr> orphan_errors_;  // found on retired events
};

}  // namespace mxplug::engine_detail

#endif  // MXPLUG_CORE_ENGINE_DEVICE_EVENT_H_
