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
MXPLUG_REGISTER_PARAMETER(SignSGDParam);
MXPLUG_REGISTER_PARAMETER(SignumParam);
MXPLUG_REGISTER_PARAMETER(FTMLParam);
MXPLUG_REGISTER_PARAMETER(FtrlParam);
MXPLUG_REGISTER_PARAMETER(LambPhase1Param);
MXPLUG_REGISTER_PARAMETER(LambPhase2Param);
MXPLUG_REGISTER_PARAMETER(AdamWParam);
MXPLUG_REGISTER_PARAMETER(AllFiniteParam);
MXPLUG_REGISTER_PARAMETER(MultiAllFiniteParam);

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
  mxplug::RegisterOpProperty<LambPhase2Prop<true>>("mp_lamb_update_phase2")
      .describe(
          "LAMB, phase 2, multi-precision: weight32 - lr * r1 / r2 * g (g, r1, r2 and weight32 "
          "in float32) in the weight's dtype; weight32 is read, not changed, as in MXNet 1.9.1.")
      .add_argument("weight", "NDArray-or-Symbol", "Weight")
      .add_argument("g", "NDArray-or-Symbol", "Output of mp_lamb_update_phase1")
      .add_argument("r1", "NDArray-or-Symbol", "r1")
      .add_argument("r2", "NDArray-or-Symbol", "r2")
      .add_argument("weight32", "NDArray-or-Symbol", "Weight32")
      .add_arguments(LambPhase2Param::Fields());
  for (const char* name : {"_adamw_update", "_mp_adamw_update"}) {
    const bool mp = name[1] == 'm';
    mxplug::OpRegistration& reg = mp ? mxplug::RegisterOpProperty<AdamWProp<true>>(name)
                                     : mxplug::RegisterOpProperty<AdamWProp<false>>(name);
    reg.describe(
           "AdamW (Loshchilov and Hutter): g = clip(rescale_grad * grad); Adam's moments of g; "
           "weight -= eta * (lr * mean / (sqrt(var) + epsilon) + wd * weight). rescale_grad is a "
           "one-element array; where it is not finite the step is skipped (the loss scaler's "
           "overflow).")
        .add_argument("weight", "NDArray-or-Symbol", "Weight")
        .add_argument("grad", "NDArray-or-Symbol", "Gradient")
        .add_argument("mean", "NDArray-or-Symbol", "Moving mean")
        .add_argument("var", "NDArray-or-Symbol", "Moving variance");
    if (mp) reg.add_argument("weight32", "NDArray-or-Symbol", "Weight32");
    reg.add_argument("rescale_grad", "NDArray-or-Symbol",
                     "Rescale gradient to rescale_grad * grad. If NaN, Inf, or 0, the update is "
                     "skipped.")
        .add_arguments(AdamWParam::Fields());
  }
  mxplug::RegisterOpProperty<LambPhase2Prop<false>>("lamb_update_phase2")
      .describe(
          "LAMB, phase 2: weight - lr * r1 / r2 * g, with r1 (the weight's norm) clamped to "
          "[lower_bound, upper_bound] where those are >= 0, and lr unscaled when r1 or r2 is 0.")
      .add_argument("weight", "NDArray-or-Symbol", "Weight")
      .add_argument("g", "NDArray-or-Symbol", "Output of lamb_update_phase1")
      .add_argument("r1", "NDArray-or-Symbol", "r1")
      .add_argument("r2", "NDArray-or-Symbol", "r2")
      .add_arguments(LambPhase2Param::Fields());
  mxplug::RegisterOpProperty<AllFiniteProp<AllFiniteParam>>("all_finite")
      .describe("Check if all the float numbers in the array are finite (used for AMP)")
      .add_argument("data", "NDArray", "Array")
      .add_arguments(AllFiniteParam::Fields());
  mxplug::RegisterOpProperty<AllFiniteProp<MultiAllFiniteParam>>("multi_all_finite")
      .describe("Check if all the float numbers in all the arrays are finite (used for AMP)")
      .add_arguments(MultiAllFiniteParam::Fields());
  UpdateKernels<mxplug::CpuLoop>{kDLCPU}.RegisterAll();
  return true;
}();

}  // namespace

MXPLUG_PLUGIN("optimizer", MXPLUG_PLUGIN_VERSION, "mxplug")
