// The matrix-product kernels (dot, batch_dot, FullyConnected) are written once in their definition
// header (plugins/nn/matmul.h); this file registers them for the GPU on its BLAS (gpu_blas.cuh).
#include "gpu_blas.cuh"
#include "nn/matmul.h"

namespace mxplug_cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
  WithBlas([](auto blas) { mxplug_nn::RegisterMatMulKernels<decltype(blas)>(kGpuDevice); });
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
