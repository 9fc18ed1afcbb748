// GPU kernel of ROIPooling (plugins/nn/roi_pooling.h): a thread per output element finds its
// bin's maximum; in backward a thread per output element adds its gradient there atomically.
#include "atomic.cuh"
#include "launch.cuh"
#include "nn/roi_pooling.h"

namespace mxplug_cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
  mxplug_nn::RegisterROIPoolingKernel<CudaAddLoop>(kGpuDevice);
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
