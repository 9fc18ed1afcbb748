// GPU kernels of LayerNorm, InstanceNorm, GroupNorm and L2Normalization: the definition header's
// functors (plugins/nn/normalization.h), a thread per run, element or parameter.
#include "launch.cuh"
#include "nn/normalization.h"

namespace mxplug_cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
  mxplug_nn::ForEachNormalization(mxplug_nn::NormalizationKernels<CudaLoop>{kGpuDevice});
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
