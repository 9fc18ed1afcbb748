// CUDA kernels of pick, one_hot, where, gather_nd and scatter_nd: the definition header's element
// functions (plugins/tensor/index.h), one thread per element.
#include <stdexcept>

#include "atomic.cuh"
#include "launch.cuh"
#include "tensor/index.h"

namespace mxplug_cuda {
namespace {

// One thread per element: adds into one place are atomic. The indices are in device memory.
struct CudaIndexLoop : CudaLoop {
  static constexpr bool kHostMemory = false;
  template <class T>
  static constexpr bool CanAdd() {
    return kHasAtomicAdd<T>;
  }
  template <class T>
  __host__ __device__ static void AddTo(T* p, T v) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    if constexpr (kHasAtomicAdd<T>) AtomicAdd(p, v);
#else
    (void)p, (void)v;
#endif
  }
};

[[maybe_unused]] const bool registered = [] {
  mxplug_tensor::ForEachIndexOp(mxplug_tensor::LayoutKernels<CudaIndexLoop>{kGpuDevice});
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
