// GPU kernels of GridGenerator, BilinearSampler and SpatialTransformer
// (plugins/nn/grid_sampling.h): a thread per grid or output element; the data's gradient is
// added atomically into the pixels each sample read.
#include "atomic.cuh"
#include "launch.cuh"
#include "nn/grid_sampling.h"

namespace mxplug_cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
  mxplug_nn::RegisterGridSamplingKernels<CudaAddLoop>(kGpuDevice);
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
