// Internal: a thread-safe free list, so that pushing a function or making a variable allocates
// nothing once the pool is warm. The pool owns every object it made and frees them all when it
// is destroyed (with its engine, after the engine has drained).
#ifndef MXPLUG_CORE_ENGINE_OBJECT_POOL_H_
#define MXPLUG_CORE_ENGINE_OBJECT_POOL_H_

#include <mutex>
#include <vector>

namespace mxplug::engine_detail {

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
      std::lock_guard<std::mutex> lock(mu_);
      if (!free_.empty()) {
        T* t = free_.back();
        free_.pop_back();
        return t;
      }
    }
    T* t = new T();
    std::lock_guard<std::mutex> lock(mu_);
    all_.push_back(t);
    return t;
  }

  // `t` must be reset by the caller; its capacity (vectors inside) is kept for the next use.
  void Delete(T* t) {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(t);
  }

 private:
  std::mutex mu_;
  std::vector<T*> free_;
  std::vector<T*> all_;
};

}  // namespace mxplug::engine_detail

#endif  // MXPLUG_CORE_ENGINE_OBJECT_POOL_H_
