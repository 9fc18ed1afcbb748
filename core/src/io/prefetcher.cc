#include "io/prefetcher.h"

#include <pthread.h>

#include <algorithm>
#include <utility>

namespace mxplug::io {

Prefetcher::Prefetcher(int num_threads, int capacity)
    : num_threads_(std::max(1, num_threads)), capacity_(static_cast<size_t>(std::max(1, capacity))) {}

Prefetcher::~Prefetcher() { Stop(); }

void Prefetcher::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  made_.clear();
  stopping_ = false;
}

void Prefetcher::Start(size_t num_batches, MakeBatch make) {
  Stop();
  make_ = std::move(make);
  num_batches_ = num_batches;
  next_to_make_ = 0;
  next_to_take_ = 0;
  const size_t threads = std::min<size_t>(static_cast<size_t>(num_threads_), num_batches);
  for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
}

void Prefetcher::Work() {
  pthread_setname_np(pthread_self(), "mxp prefetch");  // for top -H, gdb and /proc
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    changed_.wait(lock, [this] {
      return stopping_ || next_to_make_ >= num_batches_ || next_to_make_ < next_to_take_ + capacity_;
    });
    if (stopping_ || next_to_make_ >= num_batches_) return;
    const size_t batch = next_to_make_++;
    lock.unlock();
    Made made;
    try {
      make_(batch, &made.batch);
    } catch (...) {
      made.error = std::current_exception();
    }
    lock.lock();
    made_.emplace(batch, std::move(made));
    changed_.notify_all();
  }
}

bool Prefetcher::Next(DataBatch* out) {
  Made made;
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (next_to_take_ >= num_batches_) return false;
    changed_.wait(lock, [this] { return made_.count(next_to_take_) > 0; });
    auto it = made_.find(next_to_take_);
    made = std::move(it->second);
    made_.erase(it);
    ++next_to_take_;
    if (made.error) num_batches_ = next_to_take_;  // an error ends the epoch
  }
  changed_.notify_all();
  if (made.error) std::rethrow_exception(made.error);
  *out = std::move(made.batch);
  return true;
}

}  // namespace mxplug::io
