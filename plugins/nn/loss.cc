// Registers the definitions of the loss outputs (loss.h) and their CPU kernels.
#include "loss.h"

namespace {

using mxplug_nn::MakeLossParam;
using mxplug_nn::RegressionParam;
using mxplug_nn::SVMOutputParam;

MXPLUG_REGISTER_PARAMETER(RegressionParam);
MXPLUG_REGISTER_PARAMETER(MakeLossParam);
MXPLUG_REGISTER_PARAMETER(SVMOutputParam);

struct LossDefinitions {
  template <mxplug_nn::Regression K>
  void Regression(const char* name, const char* doc) const {
    mxplug::RegisterOpProperty<mxplug_nn::RegressionProp<K>>(name)
        .describe(doc)
        .add_argument("data", "NDArray-or-Symbol", "Input data to the function.")
        .add_argument("label", "NDArray-or-Symbol", "Input label to the function.")
        .add_arguments(RegressionParam::Fields());
  }
  void SVMOutput(const char* name, const char* doc) const {
    mxplug::RegisterOpProperty<mxplug_nn::SVMOutputProp>(name)
        .describe(doc)
        .add_argument("data", "NDArray-or-Symbol", "Input data for SVM transformation.")
        .add_argument("label", "NDArray-or-Symbol", "Class label for the input data.")
        .add_arguments(SVMOutputParam::Fields());
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
