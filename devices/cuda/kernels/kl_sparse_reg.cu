// GPU kernel of IdentityAttachKLSparseReg (plugins/nn/kl_sparse_reg.h): a thread per channel folds
// its mean into moving_avg, then a thread per element adds the penalty's gradient.
#include "launch.cuh"
#include "nn/kl_sparse_reg.h"

namespace mxplug_cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
  mxplug_nn::RegisterKLSparseRegKernel<CudaLoop>(kGpuDevice);
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
