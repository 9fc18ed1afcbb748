/*!
 * \file mxplug/sdk/once.hpp
 * \brief mxplug::sdk::Once: runs a function the first time any thread asks, and again after a run
 * that threw. What std::call_once promises, without std::call_once (Note [No std::call_once]).
 *
 * Note [No std::call_once]: libstdc++'s call_once hands the function to pthread_once through two
 * thread-local pointers of libstdc++'s (std::__once_call, std::__once_callable), written by code
 * inlined into the caller and read by libstdc++'s __once_proxy. Both sides must bind to the same
 * copies, which holds only while no other library in the process exports them. On the GPU
 * machine one did (a Python extension whose compiler linked libstdc++ statically; the extension
 * now keeps it private, python/CMakeLists.txt), and every call_once in a plugin called a null
 * pointer. A plugin cannot choose the process it is loaded into, so the SDK and the core guard
 * their one-time work with a mutex and an atomic flag instead, which cross no such seam.
 */
#ifndef MXPLUG_SDK_ONCE_HPP_
#define MXPLUG_SDK_ONCE_HPP_

#include <atomic>
#include <mutex>

namespace mxplug {
namespace sdk {

class Once {
 public:
  /*! \brief Runs fn() unless a run has completed; callers wait for a run in progress. */
  template <typename Fn>
  void Run(Fn&& fn) {
    if (done_.load(std::memory_order_acquire)) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (done_.load(std::memory_order_relaxed)) return;
    fn();  // a throw leaves done_ false: the next caller runs it again
    done_.store(true, std::memory_order_release);
  }

 private:
  std::atomic<bool> done_{false};
  std::mutex mutex_;
};

}  // namespace sdk
}  // namespace mxplug

#endif  // MXPLUG_SDK_ONCE_HPP_
