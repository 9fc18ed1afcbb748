// CUDA kernels of Pad: the definition header's element functions (plugins/tensor/pad.h), one
// thread per output element forward and per input element backward.
#include "launch.cuh"
#include "tensor/pad.h"

namespace mxplug_cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
  mxplug_tensor::ForEachPadOp(mxplug_tensor::LayoutKernels<CudaLoop>{kGpuDevice});
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
