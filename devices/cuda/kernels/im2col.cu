// GPU kernels of im2col and col2im: the per-element gathers of their definition header
// (plugins/nn/im2col.h), one thread per column element to unfold and per image element to fold
// (it sums the column entries that read it, so no atomics).
#include "launch.cuh"
#include "nn/im2col.h"

namespace mxplug_cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
  mxplug_nn::RegisterIm2colKernels<CudaLoop>(kGpuDevice);
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
