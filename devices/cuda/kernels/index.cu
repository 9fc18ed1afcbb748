// CUDA kernels of pick, one_hot and where: the definition header's element functions
// (plugins/tensor/index.h), one thread per element.
#include "launch.cuh"
#include "tensor/index.h"

namespace mxplug_cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
  mxplug_tensor::ForEachIndexOp(mxplug_tensor::LayoutKernels<CudaLoop>{kGpuDevice});
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
