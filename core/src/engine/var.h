// Internal: a variable's dependency state (the seeds' per-variable pending queue).
#ifndef MXPLUG_CORE_ENGINE_VAR_H_
#define MXPLUG_CORE_ENGINE_VAR_H_

#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <utility>
#include <vector>

#include "engine/ring_queue.h"

namespace mxplug {
namespace engine_detail {
struct Opr;
}  // namespace engine_detail

// Note [Variable queues]
// Each variable keeps the functions that wait for it in push order. The head of the queue is
// granted as soon as it can run: a run of reads while no write holds the variable, or one write
// once nothing holds it. A read pushed behind a waiting write waits too, so a write is never
// overtaken by later reads ("readers between two writes run together"). Granting is done under
// the variable's own mutex; the caller then decrements the granted functions' wait counters
// outside it.
class Var {
 public:
  using Opr = engine_detail::Opr;

  // Returns true when the read is granted at once.
  bool AppendRead(Opr* opr) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!write_running_ && waiting_.empty()) {
      ++reads_running_;
      return true;
    }
    waiting_.push_back({opr, false});
    return false;
  }

  bool AppendWrite(Opr* opr) {
    std::lock_guard<std::mutex> lock(mu_);
    ++writes_pending_;
    if (!write_running_ && reads_running_ == 0 && waiting_.empty()) {
      write_running_ = true;
      return true;
    }
    waiting_.push_back({opr, true});
    return false;
  }

  // Appends the functions granted by this completion to `granted`.
  void CompleteRead(std::vector<Opr*>* granted) {
    std::lock_guard<std::mutex> lock(mu_);
    if (--reads_running_ == 0) GrantLocked(granted);
  }

  void CompleteWrite(std::vector<Opr*>* granted) {
    std::lock_guard<std::mutex> lock(mu_);
    write_running_ = false;
    --writes_pending_;
    version_.fetch_add(1, std::memory_order_release);
    GrantLocked(granted);
  }

  bool IsReady() const {
    std::lock_guard<std::mutex> lock(mu_);
    return writes_pending_ == 0;
  }
  uint64_t version() const { return version_.load(std::memory_order_acquire); }

  // Errors: the first error stays until it is taken (WaitForVar) or cleared (WaitForAll).
  bool has_error() const { return has_error_.load(std::memory_order_acquire); }
  // Returns true when this is the variable's first error.
  bool SetError(std::exception_ptr error) {
    std::lock_guard<std::mutex> lock(mu_);
    if (error_) return false;
    error_ = std::move(error);
    has_error_.store(true, std::memory_order_release);
    return true;
  }
  std::exception_ptr error() const {
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  }
  std::exception_ptr TakeError() {
    std::lock_guard<std::mutex> lock(mu_);
    has_error_.store(false, std::memory_order_release);
    return std::exchange(error_, nullptr);
  }
  // Clears the error when it is `error` (another failure stays).
  void TakeErrorIf(const std::exception_ptr& error) {
    std::lock_guard<std::mutex> lock(mu_);
    if (error_ != error) return;
    error_ = nullptr;
    has_error_.store(false, std::memory_order_release);
  }

  // False for a resource's variable (Engine::NewResourceVar): it orders, never fails.
  bool holds_errors() const { return holds_errors_; }

  // For the pool: a recycled variable starts fresh.
  void Reset(bool holds_errors) {
    std::lock_guard<std::mutex> lock(mu_);
    holds_errors_ = holds_errors;
    waiting_.clear();
    reads_running_ = 0;
    writes_pending_ = 0;
    write_running_ = false;
    version_.store(0, std::memory_order_relaxed);
    error_ = nullptr;
    has_error_.store(false, std::memory_order_relaxed);
  }

 private:
  struct Waiting {
    Opr* opr = nullptr;
    bool write = false;
  };

  void GrantLocked(std::vector<Opr*>* granted) {
    while (!waiting_.empty()) {
      Waiting& head = waiting_.front();
      if (head.write) {
        if (reads_running_ == 0 && !write_running_) {
          write_running_ = true;
          granted->push_back(head.opr);
          waiting_.pop_front();
        }
        return;
      }
      if (write_running_) return;
      ++reads_running_;
      granted->push_back(head.opr);
      waiting_.pop_front();
    }
  }

  mutable std::mutex mu_;
  engine_detail::RingQueue<Waiting> waiting_;
  int reads_running_ = 0;
  int writes_pending_ = 0;  // waiting or running
  bool write_running_ = false;
  std::atomic<uint64_t> version_{0};
  std::exception_ptr error_;
  std::atomic<bool> has_error_{false};
  bool holds_errors_ = true;
};

}  // namespace mxplug

#endif  // MXPLUG_CORE_ENGINE_VAR_H_
