// GPU kernels of LRN: the per-element functors of its definition header (plugins/nn/lrn.h), one
// thread per element, each summing over its window of channels (a gather, so no atomics).
#include "launch.cuh"
#include "nn/lrn.h"

namespace mxplug_cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
  mxplug_nn::RegisterLrnKernels<CudaLoop>(kGpuDevice);
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
