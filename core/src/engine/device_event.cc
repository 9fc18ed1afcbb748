#include "engine/device_event.h"

#include <algorithm>

namespace mxplug::engine_detail {

void DeviceEvent::Unref() {
  if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) pool->Retire(this);
}

// Backends outlive the engine's events: the runtime keeps every registered device for the
// process, and an engine's pool is destroyed with the engine.
EventPool::~EventPool() {
  for (auto& e : all_) {
    if (!e->KnownComplete()) {
      try {
        e->device->SynchronizeEvent(e->dev_id, e->handle);
      } catch (...) {  // nobody is left to report it to
      }
    }
    e->device->DestroyEvent(e->dev_id, e->handle);
  }
}

void EventPool::SetComplete(DeviceEvent* e, std::exception_ptr error) {
  std::lock_guard<std::mutex> lock(e->mu_);
  if (e->complete_.load(std::memory_order_relaxed)) return;
  e->error_ = std::move(error);
  e->complete_.store(true, std::memory_order_release);
}

DeviceEvent* EventPool::Record(const DeviceEntry* device, int32_t dev_id, void* stream) {
  DeviceEvent* e = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    CollectRetiredLocked();
    for (size_t i = free_.size(); i-- > 0;) {
      if (free_[i]->device == device && free_[i]->dev_id == dev_id) {
        e = free_[i];
        free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
    if (!e) {
      auto made = std::make_unique<DeviceEvent>();
      made->pool = this;
      made->device = device;
      made->dev_id = dev_id;
      made->handle = device->CreateEvent(dev_id);  // throws before anything is kept
      e = all_.emplace_back(std::move(made)).get();
    }
  }
  try {
    device->RecordEvent(dev_id, e->handle, stream);
  } catch (...) {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(e);  // never recorded: its last recording is still complete
    throw;
  }
  e->stream = stream;
  {
    std::lock_guard<std::mutex> lock(e->mu_);
    e->error_ = nullptr;
    e->complete_.store(false, std::memory_order_release);
  }
  e->refs.store(1, std::memory_order_release);
  return e;
}

std::exception_ptr EventPool::Synchronize(DeviceEvent* e) {
  if (!e->KnownComplete()) {
    std::exception_ptr error;
    try {
      e->device->SynchronizeEvent(e->dev_id, e->handle);
    } catch (...) {
      error = std::current_exception();
    }
    SetComplete(e, std::move(error));  // the first waiter's answer is everyone's
  }
  std::lock_guard<std::mutex> lock(e->mu_);
  return e->error_;
}

void EventPool::Retire(DeviceEvent* e) {
  std::lock_guard<std::mutex> lock(mu_);
  retired_.push_back(e);
}

// At most a few per recording, so a long queue of running work costs nothing per function; the
// oldest are the likeliest to have completed.
void EventPool::CollectRetiredLocked() {
  constexpr int kChecks = 8;
  for (int checked = 0; checked < kChecks && !retired_.empty(); ++checked) {
    DeviceEvent* e = retired_.front();
    if (!e->KnownComplete()) {
      std::exception_ptr error;
      bool done = true;
      try {
        done = e->device->QueryEvent(e->dev_id, e->handle);
      } catch (...) {
        error = std::current_exception();
      }
      if (!done) break;
      SetComplete(e, std::move(error));
    }
    retired_.pop_front();
    std::lock_guard<std::mutex> lock(e->mu_);
    if (e->error_) orphan_errors_.push_back(std::exchange(e->error_, nullptr));
    free_.push_back(e);
  }
}

std::vector<std::exception_ptr> EventPool::SynchronizeAll() {
  // Under the pool's lock: no event can be recycled and recorded again while it is waited for.
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::exception_ptr> errors = std::move(orphan_errors_);
  orphan_errors_.clear();
  for (auto& e : all_) {
    if (std::exception_ptr error = Synchronize(e.get())) {
      if (std::find(errors.begin(), errors.end(), error) == errors.end()) errors.push_back(error);
      std::lock_guard<std::mutex> event_lock(e->mu_);
      e->error_ = nullptr;  // the caller reports it
    }
  }
  free_.insert(free_.end(), retired_.begin(), retired_.end());  // all complete now
  retired_.clear();
  return errors;
}

void EventPool::Forget(const std::exception_ptr& error) {
  std::lock_guard<std::mutex> lock(mu_);
  std::erase(orphan_errors_, error);
  for (auto& e : all_) {
    std::lock_guard<std::mutex> event_lock(e->mu_);
    if (e->error_ == error) e->error_ = nullptr;
  }
}

}  // namespace mxplug::engine_detail
