// Internal: a lock for short critical sections taken on every op (the engine's variables and
// pools, the storage pool).
#ifndef MXPLUG_CORE_SYNC_SPIN_LOCK_H_
#define MXPLUG_CORE_SYNC_SPIN_LOCK_H_

#include <atomic>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace mxplug::detail {

// Note [Short locks]
// Some locks are taken on every op and held for a few dozen instructions: an engine variable's
// (a grant, a count, a flag; a small op takes six, for its inputs and output, taken and handed
// on), the function and variable pools' and the storage pool's. They are rarely contended. A
// std::mutex costs a call into the C library, a locked instruction to lock and another to
// unlock; this lock is one exchange to take and a plain store to release. A thread that finds it
// taken spins briefly, then gives its core away (sched_yield) between looks, so that a holder
// that lost its core to the spinner gets it back (more threads than cores is the engine's normal
// case: workers beside the pushing thread). Locks held across calls into plugins or for long
// work stay std::mutex.
class SpinLock {
 public:
  void lock() {
    while (held_.exchange(true, std::memory_order_acquire)) {
      for (int spins = 0; held_.load(std::memory_order_relaxed); ++spins) {
        if (spins < kSpins)
          Pause();
        else
          std::this_thread::yield();
      }
    }
  }
  bool try_lock() { return !held_.exchange(true, std::memory_order_acquire); }
  void unlock() { held_.store(false, std::memory_order_release); }

 private:
  static constexpr int kSpins = 64;
  static void Pause() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
  }
  std::atomic<bool> held_{false};
};

}  // namespace mxplug::detail

#endif  // MXPLUG_CORE_SYNC_SPIN_LOCK_H_
