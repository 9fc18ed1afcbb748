// GPU kernels of the image operators (plugins/tensor/image_kernels.h): a thread per output
// element (per pixel for the color steps).
#include "launch.cuh"
#include "tensor/image_kernels.h"

namespace mxplug_cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
  mxplug_tensor::image::RegisterImageKernels<CudaLoop>(kGpuDevice);
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
