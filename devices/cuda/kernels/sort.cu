// CUDA kernels of topk, sort and argsort: the definition header's element functions
// (plugins/tensor/sort.h), one thread per element, each counting the elements ranked before it.
#include "launch.cuh"
#include "tensor/sort.h"

namespace mxplug_cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
  mxplug_tensor::ForEachOrderOp(mxplug_tensor::LayoutKernels<CudaLoop>{kGpuDevice});
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
