// Registers the definitions of the unary elementwise ops and clip (unary.h); their CPU kernels
// are in elementwise_cpu.cc.
#include "unary.h"

namespace {

using mxplug_tensor::ClipParam;

MXPLUG_REGISTER_PARAMETER(ClipParam);

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
  return true;
}();

}  // namespace
