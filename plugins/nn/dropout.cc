// Registers the definition of Dropout (dropout.h) and its CPU kernel.
#include "dropout.h"

namespace {

using mxplug_nn::DropoutParam;

MXPLUG_REGISTER_PARAMETER(DropoutParam);

[[maybe_unused]] const bool registered = [] {
  mxplug::RegisterOpProperty<mxplug_nn::DropoutProp>("Dropout")
      .describe(
          "Sets elements to zero with probability p during training, scaling the rest by "
          "1/(1-p); identity at prediction time unless mode='always'.")
      .add_argument("data", "NDArray-or-Symbol", "Input array to which dropout will be applied.")
      .add_arguments(DropoutParam::Fields());
  mxplug::sdk::RegisterKernel<mxplug_nn::DropoutKernel<mxplug::CpuLoop>>("Dropout", kDLCPU);
  return true;
}();

}  // namespace
