// Registers IdentityAttachKLSparseReg (kl_sparse_reg.h) and its CPU kernel.
#include "kl_sparse_reg.h"

namespace {

using mxplug_nn::KLSparseRegParam;

MXPLUG_REGISTER_PARAMETER(KLSparseRegParam);

[[maybe_unused]] const bool registered = [] {
  mxplug::RegisterOpProperty<mxplug_nn::KLSparseRegProp>("IdentityAttachKLSparseReg")
      .describe(
          "Identity in forward; in backward adds the gradient of a KL-divergence sparseness "
          "penalty on each channel's moving mean activation (moving_avg, updated in backward).")
      .add_argument("data", "NDArray-or-Symbol", "Input data.")
      .add_arguments(KLSparseRegParam::Fields());
  mxplug_nn::RegisterKLSparseRegKernel<mxplug::CpuLoop>(kDLCPU);
  return true;
}();

}  // namespace
