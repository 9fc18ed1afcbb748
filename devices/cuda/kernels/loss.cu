// CUDA kernels of the loss outputs (LinearRegressionOutput... MakeLoss): the definition header's
// element functions (plugins/nn/loss.h), one thread per element.
#include "launch.cuh"
#include "nn/loss.h"

namespace mxplug_cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
  mxplug_nn::ForEachLossOp(mxplug_nn::LossKernels<CudaLoop>{kGpuDevice});
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
