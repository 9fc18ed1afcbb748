// Registers the definitions of Activation and LeakyReLU (activation.h) and their CPU kernels:
// the element loop, with oneDNN's eltwise first for relu, sigmoid and tanh in float32.
#include "activation.h"

#include "onednn/onednn.h"

namespace {

using mxplug_nn::ActivationParam;
using mxplug_nn::LeakyReLUParam;

MXPLUG_REGISTER_PARAMETER(ActivationParam);
MXPLUG_REGISTER_PARAMETER(LeakyReLUParam);

struct OnednnActivation {
  using Kind = mxplug_nn::onednn::EltwiseKind;
  static Kind KindOf(int act_type) {
    return act_type == mxplug_nn::kRelu      ? Kind::kRelu
           : act_type == mxplug_nn::kSigmoid ? Kind::kSigmoid
           : act_type == mxplug_nn::kTanh    ? Kind::kTanh
                                             : Kind::kOther;
  }
  static bool Forward(const mxplug::OpContext& ctx, int act_type, const mxplug::TBlob& data,
                      const mxplug::TBlob& out, mxplug::OpReqType req) {
    return mxplug_nn::onednn::EltwiseForward(ctx, KindOf(act_type), data, out, req);
  }
  static bool Backward(const mxplug::OpContext& ctx, int act_type, const mxplug::TBlob& og,
                       const mxplug::TBlob& out, const mxplug::TBlob& grad, mxplug::OpReqType req) {
    return mxplug_nn::onednn::EltwiseBackward(ctx, KindOf(act_type), og, out, grad, req);
  }
};

[[maybe_unused]] const bool registered = [] {
  mxplug::RegisterOpProperty<mxplug_nn::ActivationProp>("Activation")
      .describe(
          "Applies an activation function element-wise: relu, sigmoid, tanh, softrelu (log(1 + "
          "exp(x))) or softsign (x / (1 + |x|)).")
      .add_argument("data", "NDArray-or-Symbol", "The input array.")
      .add_arguments(ActivationParam::Fields());
  mxplug::RegisterOpProperty<mxplug_nn::LeakyReLUProp>("LeakyReLU")
      .describe(
          "Leaky rectified linear units and friends: leaky (x or slope * x), elu, selu, gelu, "
          "and prelu (a learned slope per channel, input gamma).")
      .add_argument("data", "NDArray-or-Symbol", "The input array.")
      .add_argument("gamma", "NDArray-or-Symbol", "Slope per channel (prelu only).")
      .add_arguments(LeakyReLUParam::Fields());
  mxplug_nn::RegisterActivationKernels<mxplug::CpuLoop, OnednnActivation>(kDLCPU);
  return true;
}();

}  // namespace
