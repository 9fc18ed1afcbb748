// Internal: a FIFO on a growable ring buffer. Unlike std::deque, which allocates and frees a
// chunk every few dozen elements, it reuses its storage, so a steady stream of pushes and pops
// allocates nothing once it has grown to the working size.
#ifndef MXPLUG_CORE_ENGINE_RING_QUEUE_H_
#define MXPLUG_CORE_ENGINE_RING_QUEUE_H_

#include <cstddef>
#include <utility>
#include <vector>

namespace mxplug::engine_detail {

template <typename T>
class RingQueue {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  T& front() { return slots_[head_]; }

  void push_back(T value) {
    if (size_ == slots_.size()) Grow();
    slots_[(head_ + size_) % slots_.size()] = std::move(value);
    ++size_;
  }
  void pop_front() {
    head_ = (head_ + 1) % slots_.size();
    --size_;
  }
  void clear() { head_ = size_ = 0; }

 private:
  void Grow() {
    std::vector<T> bigger(slots_.empty() ? 16 : slots_.size() * 2);
    for (size_t i = 0; i < size_; ++i) bigger[i] = std::move(slots_[(head_ + i) % slots_.size()]);
    slots_.swap(bigger);
    head_ = 0;
  }

  std::vector<T> slots_;
  size_t head_ = 0, size_ = 0;
};

}  // namespace mxplug::engine_detail

#endif  // MXPLUG_CORE_ENGINE_RING_QUEUE_H_
