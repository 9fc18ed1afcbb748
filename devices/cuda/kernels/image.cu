// GPU kernels of the image operators (plugins/tensor/image.h): a thread per output element.
#include "launch.cuh"
#include "tensor/image.h"

namespace mxplug_cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
  mxplug_tensor::image::ForEachImageOp(mxplug_tensor::image::ImageKernels<CudaLoop>{kGpuDevice});
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
