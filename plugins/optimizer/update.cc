// Registers the definitions of the optimizer updates (update.h) and their CPU kernels.
#include "update.h"

namespace {

using namespace mxplug_optimizer;  // NOLINT: the parameter structs below

MXPLUG_REGISTER_PARAMETER(SGDParam);
MXPLUG_REGISTER_PARAMETER(MomentumParam);
MXPLUG_REGISTER_PARAMETER(AdamParam);
MXPLUG_REGISTER_PARAMETER(RMSPropParam);
MXPLUG_REGISTER_PARAMETER(RMSPropAlexParam);
MXPLUG_REGISTER_PARAMETER(AdaGradParam);

// The states are documented as inputs after weight and grad.
struct DefineUpdate {
  template <typename Rule>
  void Op(const char* name, const char* doc) const {
    mxplug::OpRegistration& reg = mxplug::RegisterOpProperty<UpdateProp<Rule>>(name).describe(doc);
    reg.add_argument("weight", "NDArray-or-Symbol", "Weight")
        .add_argument("grad", "NDArray-or-Symbol", "Gradient");
    for (const char* state : Rule::kStates)
      reg.add_argument(state, "NDArray-or-Symbol",
                       "Optimizer state, updated in place (auxiliary state).");
    reg.add_arguments(Rule::Param::Fields());
  }
  template <typename Rule>
  void MPOp(const char* name, const char* doc) const {
    mxplug::OpRegistration& reg =
        mxplug::RegisterOpProperty<MPUpdateProp<Rule>>(name).describe(doc);
    reg.add_argument("weight", "NDArray-or-Symbol", "Weight")
        .add_argument("grad", "NDArray-or-Symbol", "Gradient");
    for (const char* state : Rule::kStates)
      reg.add_argument(state, "NDArray-or-Symbol",
                       "Optimizer state in float32, updated in place (auxiliary state).");
    reg.add_argument("weight32", "NDArray-or-Symbol",
                     "The weight's float32 master copy, updated in place (auxiliary state).");
    reg.add_arguments(Rule::Param::Fields());
  }
};

[[maybe_unused]] const bool registered = [] {
  ForEachUpdateOp(DefineUpdate{});
  ForEachMPUpdateOp(DefineUpdate{});
  UpdateKernels<mxplug::CpuLoop>{kDLCPU}.RegisterAll();
  return true;
}();

}  // namespace

MXPLUG_PLUGIN("optimizer", MXPLUG_PLUGIN_VERSION, "mxplug")
