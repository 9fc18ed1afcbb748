// GPU kernels of Pooling: the per-element functors of its definition header (plugins/nn/pooling.h),
// one thread per output element forward and per input element backward (a gather, so no atomics).
// cuDNN's pooling would differ from MXNet's conventions in places (the full convention, windows
// past the padding, lp); these follow them exactly.
#include "launch.cuh"
#include "nn/pooling.h"
#include "nn/pooling_v1.h"

namespace mxplug_cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
  mxplug_nn::RegisterPoolingKernels<CudaLoop>(kGpuDevice);
  mxplug_nn::RegisterPoolingV1Kernels<CudaLoop>(kGpuDevice);
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
