// Registers the definitions of the unary elementwise ops and clip (unary.h); their CPU kernels
// are in elementwise_cpu.cc.
#include "unary.h"

namespace {

using mxplug_tensor::ClipParam;
using mxplug_tensor::HardSigmoidParam;

MXPLUG_REGISTER_PARAMETER(ClipParam);
MXPLUG_REGISTER_PARAMETER(HardSigmoidParam);

struct DefineUnary {
  template <class F, bool kNoGrad>
  void Unary(const char* name, const char* doc) const {
    mxplug_tensor::Define<mxplug_tensor::UnaryProp<F, kNoGrad>>(name, doc,
                                                                mxplug_tensor::kDataInput);
  }
};

[[maybe_unused]] const bool registered = [] {
  mxplug_tensor::ForEachUnaryOp(DefineUnary{});
  mxplug_tensor::Define<mxplug_tensor::ClipProp>("clip",
                                                 "Clips values to [a_min, a_max], element-wise.",
                                                 mxplug_tensor::kDataInput, ClipParam::Fields());
  mxplug_tensor::Define<mxplug_tensor::ParamMapProp<HardSigmoidParam>>(
      "hard_sigmoid", "Hard sigmoid: max(0, min(1, alpha * x + beta)), element-wise.",
      mxplug_tensor::kDataInput, HardSigmoidParam::Fields());
  return true;
}();

}  // namespace
