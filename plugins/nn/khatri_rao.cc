// Registers khatri_rao (khatri_rao.h) and its CPU kernel.
#include "khatri_rao.h"

#include "mxplug/plugin.hpp"

namespace {

using mxplug_nn::KhatriRaoParam;

MXPLUG_REGISTER_PARAMETER(KhatriRaoParam);

[[maybe_unused]] const bool registered = [] {
  mxplug::RegisterOpProperty<mxplug_nn::KhatriRaoProp>("khatri_rao")
      .describe(
          "The column-wise Kronecker product of matrices (I_k, R): a matrix (prod I_k, R) whose "
          "column r is the Kronecker product of the inputs' columns r.")
      .add_arguments(KhatriRaoParam::Fields());
  mxplug_nn::RegisterKhatriRaoKernel<mxplug::CpuLoop>(kDLCPU);
  return true;
}();

}  // namespace
