// GPU kernel of Crop: the per-element copies of its definition header (plugins/nn/crop.h), one
// thread per output element forward and per data element backward.
#include "launch.cuh"
#include "nn/crop.h"

namespace mxplug_cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
  mxplug_nn::RegisterCropKernel<CudaLoop>(kGpuDevice);
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
