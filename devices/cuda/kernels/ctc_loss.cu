// GPU kernel of CTCLoss (plugins/nn/ctc_loss.h): a thread per sequence runs its forward-backward
// recursions, then a thread per element scales the gradient.
#include "launch.cuh"
#include "nn/ctc_loss.h"

namespace mxplug_cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
  mxplug_nn::RegisterCTCLossKernels<CudaLoop>(kGpuDevice);
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
