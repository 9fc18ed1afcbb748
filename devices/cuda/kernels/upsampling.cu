// GPU kernels of UpSampling (nearest): the per-element functors of its definition header
// (plugins/nn/upsampling.h), one thread per output element forward and per input element
// backward (a gather of its k x k block, so no atomics).
#include "launch.cuh"
#include "nn/upsampling.h"

namespace mxplug_cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
  mxplug_nn::RegisterUpSamplingKernels<CudaLoop>(kGpuDevice);
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
