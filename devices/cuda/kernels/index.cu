// CUDA kernels of pick, one_hot, where, gather_nd and scatter_nd: the definition header's element
// functions (plugins/tensor/index.h), one thread per element.
#include <stdexcept>

#include "atomic.cuh"
#include "launch.cuh"
#include "tensor/index.h"

namespace mxplug_cuda {
namespace {

// The indices are in device memory.
struct CudaIndexLoop : CudaAddLoop {
  static constexpr bool kHostMemory = false;
};

[[maybe_unused]] const bool registered = [] {
  mxplug_tensor::ForEachIndexOp(mxplug_tensor::LayoutKernels<CudaIndexLoop>{kGpuDevice});
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
