// CUDA kernels of the array creation ops and Cast: the kernels of their definition header
// (plugins/tensor/init.h), the same code the CPU runs, on CudaLoop.
#include "launch.cuh"
#include "tensor/init.h"

namespace mxplug_cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
  mxplug_tensor::InitKernels<CudaLoop>{kGpuDevice}.RegisterAll();
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
