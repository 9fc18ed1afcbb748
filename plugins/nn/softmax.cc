// Registers the definitions of softmax, log_softmax, SoftmaxOutput, SoftmaxActivation and
// softmax_cross_entropy (softmax.h) and their CPU
// kernels: the element loop, with oneDNN's softmax first for the forwards of softmax, log_softmax
// and SoftmaxOutput in float32.
#include "softmax.h"

#include "onednn/onednn.h"

namespace {

using mxplug_nn::SoftmaxActivationParam;
using mxplug_nn::SoftmaxOutputParam;
using mxplug_nn::SoftmaxParam;

MXPLUG_REGISTER_PARAMETER(SoftmaxParam);
MXPLUG_REGISTER_PARAMETER(SoftmaxOutputParam);
MXPLUG_REGISTER_PARAMETER(SoftmaxActivationParam);

struct OnednnSoftmax {
  static bool Forward(const mxplug::OpContext& ctx, const mxplug::TBlob& data, int axis, bool log,
                      const mxplug::TBlob& out, mxplug::OpReqType req) {
    return mxplug_nn::onednn::SoftmaxForward(ctx, data, axis, log, out, req);
  }
  static bool Backward(const mxplug::OpContext&, const mxplug::TBlob&, const mxplug::TBlob&, int,
                       bool, const mxplug::TBlob&, mxplug::OpReqType) {
    return false;  // the element loop's gradient is a single pass already
  }
};

[[maybe_unused]] const bool registered = [] {
  mxplug::RegisterOpProperty<mxplug_nn::SoftmaxProp<false, true>>("softmax")
      .describe(
          "Softmax along an axis: exp(x / t) / sum(exp(x / t)); with use_length, over the first "
          "length elements of each line, the others 0.")
      .add_argument("data", "NDArray-or-Symbol", "The input array.")
      .add_argument("length", "NDArray-or-Symbol",
                    "How many elements of each line count (use_length): integers, the data's "
                    "shape without axis.")
      .add_arguments(SoftmaxParam::Fields());
  mxplug::RegisterOpProperty<mxplug_nn::SoftmaxProp<false>>("softmin")
      .describe("Softmin along an axis: exp(-x / t) / sum(exp(-x / t)), softmax of -x.")
      .add_argument("data", "NDArray-or-Symbol", "The input array.")
      .add_arguments(SoftmaxParam::Fields());
  mxplug::RegisterOpProperty<mxplug_nn::SoftmaxProp<true>>("log_softmax")
      .describe("The log of softmax along an axis, computed stably.")
      .add_argument("data", "NDArray-or-Symbol", "The input array.")
      .add_arguments(SoftmaxParam::Fields());
  for (const char* name : {"SoftmaxOutput", "Softmax"})
    mxplug::RegisterOpProperty<mxplug_nn::SoftmaxOutputProp>(name)
        .describe(
            "Softmax in forward; in backward, the gradient of cross-entropy against the label "
            "(softmax - one_hot(label)) times grad_scale, ignoring the incoming gradient.")
        .add_argument("data", "NDArray-or-Symbol", "Input array.")
        .add_argument("label", "NDArray-or-Symbol", "Ground truth label.")
        .add_arguments(SoftmaxOutputParam::Fields());
  mxplug::RegisterOpProperty<mxplug_nn::SoftmaxActivationProp>("SoftmaxActivation")
      .describe(
          "MXNet's older softmax: over each instance (its last axis) or over the channels "
          "(axis 1) at each position.")
      .add_argument("data", "NDArray-or-Symbol", "The input array.")
      .add_arguments(SoftmaxActivationParam::Fields());
  mxplug::RegisterOpProperty<mxplug_nn::SoftmaxCrossEntropyProp>("softmax_cross_entropy")
      .describe(
          "The cross-entropy of softmax(data) against integer labels, summed over the batch: "
          "an array of one element.")
      .add_argument("data", "NDArray-or-Symbol", "Input data: (batch, classes).")
      .add_argument("label", "NDArray-or-Symbol", "Input label: (batch,).");
  mxplug_nn::RegisterSoftmaxKernels<mxplug::CpuLoop, OnednnSoftmax>(kDLCPU);
  return true;
}();

}  // namespace
