// CUDA kernels of softmax, log_softmax and SoftmaxOutput: the definition header's line functions
// (plugins/nn/softmax.h), one thread per line along the softmax axis. That suits the class counts
// of classifiers; cuDNN's softmax, a block per long line, comes with its networks (a later issue).
#include "launch.cuh"
#include "nn/softmax.h"

namespace mxplug_cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
  mxplug_nn::RegisterSoftmaxKernels<CudaLoop>(kGpuDevice);
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
