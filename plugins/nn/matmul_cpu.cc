// The matrix-product kernels (matmul.h) on the CPU's BLAS (blas.h).
#include "blas.h"
#include "matmul.h"

namespace {

[[maybe_unused]] const bool registered = [] {
  mxplug_nn::RegisterMatMulKernels<mxplug_nn::CpuBlas>(kDLCPU);
  return true;
}();

}  // namespace
