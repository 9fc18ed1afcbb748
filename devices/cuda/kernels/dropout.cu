// The CUDA kernel of Dropout: the definition header's element function (plugins/nn/dropout.h),
// one thread per element, each computing its mask element's Philox draw, so a GPU drops the
// elements the CPU drops for the same seed.
#include "launch.cuh"
#include "nn/dropout.h"

namespace mxplug_cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
  mxplug::sdk::RegisterKernel<mxplug_nn::DropoutKernel<CudaLoop>>("Dropout", kGpuDevice);
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
