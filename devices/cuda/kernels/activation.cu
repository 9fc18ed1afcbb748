// CUDA kernels of Activation and LeakyReLU: each activation's math is the definition header's
// (plugins/nn/activation.h), run one thread per element. cuDNN's activations come with its
// networks (a later issue); these are single passes over memory either way.
#include "launch.cuh"
#include "nn/activation.h"

namespace mxplug_cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
  mxplug_nn::RegisterActivationKernels<CudaLoop>(kGpuDevice);
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
