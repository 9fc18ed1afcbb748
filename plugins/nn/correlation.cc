// Registers Correlation (correlation.h) with the CPU kernel.
#include "correlation.h"

namespace {

using mxplug_nn::CorrelationParam;

MXPLUG_REGISTER_PARAMETER(CorrelationParam);

[[maybe_unused]] const bool registered = [] {
  mxplug::RegisterOpProperty<mxplug_nn::CorrelationProp>("Correlation")
      .describe(
          "The correlation of each patch of data1 with the patches of data2 displaced around it "
          "(FlowNet's correlation layer).")
      .add_argument("data1", "NDArray-or-Symbol", "Input data1 to the correlation.")
      .add_argument("data2", "NDArray-or-Symbol", "Input data2 to the correlation.")
      .add_arguments(CorrelationParam::Fields());
  mxplug_nn::RegisterCorrelationKernels<mxplug::CpuLoop>(kDLCPU);
  return true;
}();

}  // namespace
