// Registers the definitions of the aggregated optimizer updates (multi_update.h) and their CPU
// kernels.
#include "multi_update.h"

namespace {

using namespace mxplug_optimizer;  // NOLINT: the parameter structs below

MXPLUG_REGISTER_PARAMETER(MultiSGDParam);
MXPLUG_REGISTER_PARAMETER(MultiSGDMomParam);
MXPLUG_REGISTER_PARAMETER(PreloadedMultiSGDParam);
MXPLUG_REGISTER_PARAMETER(PreloadedMultiSGDMomParam);
MXPLUG_REGISTER_PARAMETER(MultiAdamWParam);
MXPLUG_REGISTER_PARAMETER(MultiLambParam);
MXPLUG_REGISTER_PARAMETER(MultiSumSqParam);
MXPLUG_REGISTER_PARAMETER(MultiLarsParam);

struct DefineMultiUpdate {
  template <class Kind>
  void Op(const char* name, const char* doc) const {
    std::string inputs = "weight, grad";
    for (const std::string& s : Kind::Group()) inputs += ", " + s;
    std::string shared;
    for (const std::string& s : Kind::Shared()) shared += (shared.empty() ? "" : ", ") + s;
    mxplug::RegisterOpProperty<MultiUpdateProp<Kind>>(name)
        .describe(doc)
        .add_argument("data", "NDArray-or-Symbol[]",
                      "Each weight's " + inputs + " in turn" +
                          (shared.empty() ? std::string() : ", then " + shared) +
                          "; the states are updated in place.")
        .add_arguments(Kind::Param::Fields());
  }
};

[[maybe_unused]] const bool registered = [] {
  ForEachMultiUpdateOp(DefineMultiUpdate{});
  mxplug::RegisterOpProperty<MultiSumSqProp>("multi_sum_sq")
      .describe(
          "The sum of the squares of each array's elements, as a float32 array of "
          "num_arrays elements.")
      .add_argument("data", "NDArray-or-Symbol[]", "Arrays")
      .add_arguments(MultiSumSqParam::Fields());
  mxplug::RegisterOpProperty<MultiLarsProp>("multi_lars")
      .describe(
          "LARS's learning rates: lrs * eta * |w| / (rescale_grad * |g| + wds * |w| + eps) where "
          "the norms |w| = sqrt(weights_sum_sq) and |g| = sqrt(grads_sum_sq) are both > 0, else "
          "lrs.")
      .add_argument("lrs", "NDArray-or-Symbol", "Learning rates to scale by LARS coefficient")
      .add_argument("weights_sum_sq", "NDArray-or-Symbol", "sum of square of weights arrays")
      .add_argument("grads_sum_sq", "NDArray-or-Symbol", "sum of square of gradients arrays")
      .add_argument("wds", "NDArray-or-Symbol", "weight decays")
      .add_arguments(MultiLarsParam::Fields());
  mxplug::RegisterOpProperty<ResetArraysProp>("reset_arrays")
      .describe("Sets each of the arrays to zero, in place.")
      .add_argument("data", "NDArray-or-Symbol[]", "Arrays")
      .add_arguments(MultiSumSqParam::Fields());
  MultiUpdateKernels<mxplug::CpuLoop>{kDLCPU}.RegisterAll();
  return true;
}();

}  // namespace
