// Internal: a thread-safe free list, so that pushing a function or making a variable allocates
// nothing once the pool is warm. The pool owns every object it made and frees them all when it
// is destroyed (with its engine, after the engine has drained).
#ifndef MXPLUG_CORE_ENGINE_OBJECT_POOL_H_
#define MXPLUG_CORE_ENGINE_OBJECT_POOL_H_

#include <atomic>
#include <mutex>
#include <vector>

#include "sync/spin_lock.h"

namespace mxplug::engine_detail {

// Note [Returning to the pool]
// Objects are taken by the threads that push (New) and given back by the workers that complete
// them (Delete), hundreds of thousands of times a second, so one lock for both made the pusher
// and every worker take turns on it (with 2 workers, 13% of the engine benchmark's profile was
// that lock's). Delete therefore takes no lock: it pushes the object onto an
// atomic list (`returned_`, linked through T::pool_next). New takes the pool's lock, which only
// concurrent New calls share, and when its own list is empty moves the whole returned list into
// it with one exchange. Pushing one node and taking all of them are the two operations of such
// a list that need no ABA guard.
template <typename T>
class ObjectPool {
 public:
  ObjectPool() = default;
  ObjectPool(const ObjectPool&) = delete;
  ObjectPool& operator=(const ObjectPool&) = delete;
  ~ObjectPool() {
    for (T* t : all_) delete t;
  }

  T* New() {
    {
      std::lock_guard<detail::SpinLock> lock(mu_);
      if (!free_) free_ = returned_.exchange(nullptr, std::memory_order_acquire);
      if (T* t = free_) {
        free_ = t->pool_next;
        t->pool_next = nullptr;
        return t;
      }
    }
    T* t = new T();
    std::lock_guard<detail::SpinLock> lock(mu_);
    all_.push_back(t);
    return t;
  }

  // `t` must be reset by the caller; its capacity (vectors inside) is kept for the next use.
  void Delete(T* t) {
    T* head = returned_.load(std::memory_order_relaxed);
    do {
      t->pool_next = head;
    } while (!returned_.compare_exchange_weak(head, t, std::memory_order_release,
                                              std::memory_order_relaxed));
  }

 private:
  detail::SpinLock mu_;                // Note [Short locks]
  T* free_ = nullptr;                  // under mu_
  std::atomic<T*> returned_{nullptr};  // given back since New last took them
  std::vector<T*> all_;
};

}  // namespace mxplug::engine_detail

#endif  // MXPLUG_CORE_ENGINE_OBJECT_POOL_H_
