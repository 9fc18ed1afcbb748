#include "io/prefetcher.h"

#include <pthread.h>

#include <algorithm>
#include <new>
#include <set>
#include <utility>

namespace mxplug::io {

// Note [Prefetching across fork]
// Data-loading code forks after its iterators have started (MXNet's engine restarts itself in
// the child; Note [Fork] in engine_core.h does the same here). A child inherits no threads, so a
// prefetcher's workers exist only in the parent, and a mutex one of them held at the fork would
// stay locked in the child. The handlers below hold every live prefetcher's mutex across the
// fork; in the child each one marks its threads as the parent's and takes a new condition
// variable (the copy still counts the parent's waiters), and its next use abandons the threads
// (they cannot be joined there) and makes the batches not yet taken again: a batch is a function
// of its index alone (the order is fixed when the epoch starts), so the child reads the same
// epoch the parent would.
namespace {

std::mutex& LiveMutex() {
  static auto* mu = new std::mutex();
  return *mu;
}
std::set<Prefetcher*>& Live() {
  static auto* live = new std::set<Prefetcher*>();
  return *live;
}

}  // namespace

void Prefetcher::BeforeFork() {
  LiveMutex().lock();
  for (Prefetcher* p : Live()) p->mu_.lock();
}

void Prefetcher::InParentAfterFork() {
  for (Prefetcher* p : Live()) p->mu_.unlock();
  LiveMutex().unlock();
}

void Prefetcher::InChildAfterFork() {
  for (Prefetcher* p : Live()) {
    p->forked_ = !p->threads_.empty();
    // The copy of the condition variable still counts the parent's waiting threads, and glibc's
    // notify_all would wait for them forever: the child starts from a new one (the old one is
    // not destroyed, as destroying one with waiters is undefined).
    if (p->forked_) new (&p->changed_) std::condition_variable();
    p->mu_.unlock();
  }
  LiveMutex().unlock();
}

Prefetcher::Prefetcher(int num_threads, int capacity)
    : num_threads_(std::max(1, num_threads)),
      capacity_(static_cast<size_t>(std::max(1, capacity))) {
  // Once per process; a static's initialization, not std::call_once (Note [No std::call_once]).
  [[maybe_unused]] static const int handlers =
      pthread_atfork(&BeforeFork, &InParentAfterFork, &InChildAfterFork);
  std::lock_guard<std::mutex> lock(LiveMutex());
  Live().insert(this);
}

Prefetcher::~Prefetcher() {
  {
    std::lock_guard<std::mutex> lock(LiveMutex());
    Live().erase(this);
  }
  Stop();
}

void Prefetcher::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    RestartIfForkedLocked();  // no parent's thread to join
  }
  changed_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  made_.clear();
  stopping_ = false;
}

void Prefetcher::RestartIfForkedLocked() {
  if (!forked_) return;
  forked_ = false;
  // The parent's threads: never joined or destroyed here (a joinable std::thread would end the
  // process), so their objects are left behind on purpose.
  new std::vector<std::thread>(std::move(threads_));
  threads_.clear();
  made_.clear();  // some were being made when the fork came: make them all again
  next_to_make_ = next_to_take_;
  if (!stopping_) StartThreads();
}

void Prefetcher::StartThreads() {
  const size_t threads =
      std::min<size_t>(static_cast<size_t>(num_threads_), num_batches_ - next_to_make_);
  for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
}

void Prefetcher::Start(size_t num_batches, MakeBatch make) {
  Stop();
  make_ = std::move(make);
  num_batches_ = num_batches;
  next_to_make_ = 0;
  next_to_take_ = 0;
  StartThreads();
}

void Prefetcher::Work() {
  pthread_setname_np(pthread_self(), "mxp prefetch");  // for top -H, gdb and /proc
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    changed_.wait(lock, [this] {
      return stopping_ || next_to_make_ >= num_batches_ ||
             next_to_make_ < next_to_take_ + capacity_;
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
    RestartIfForkedLocked();
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
