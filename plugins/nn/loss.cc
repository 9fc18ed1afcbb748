// Registers the definitions of the loss outputs (loss.h) and their CPU kernels.
#include "loss.h"

namespace {

using mxplug_nn::MakeLossParam;
using mxplug_nn::RegressionParam;

MXPLUG_REGISTER_PARAMETER(RegressionParam);
MXPLUG_REGISTER_PARAMETER(MakeLossParam);

struct LossDefinitions {
  template <mxplug_nn::Regression K>
  void Regression(const char* name, const char* doc) const {
    mxplug::RegisterOpProperty<mxplug_nn::RegressionProp<K>>(name)
        .describe(doc)
        .add_argument("data", "NDArray-or-Symbol", "Input data to the function.")
        .add_argument("label", "NDArray-or-Symbol", "Input label to the function.")
        .add_arguments(RegressionParam::Fields());
  }
  void MakeLoss(const char* name, const char* doc) const {
    mxplug::RegisterOpProperty<mxplug_nn::MakeLossProp>(name)
        .describe(doc)
        .add_argument("data", "NDArray-or-Symbol", "Input array.")
        .add_arguments(MakeLossParam::Fields());
  }
};

[[maybe_unused]] const bool registered = [] {
  mxplug_nn::ForEachLossOp(LossDefinitions{});
  mxplug_nn::ForEachLossOp(mxplug_nn::LossKernels<mxplug::CpuLoop>{kDLCPU});
  return true;
}();

}  // namespace
