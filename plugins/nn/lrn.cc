// Registers LRN (lrn.h) and its CPU kernel: oneDNN for float32 where the plugin has it, the
// per-element functors of lrn.h otherwise.
#include "lrn.h"

#include <string>
#include <vector>

#include "mxplug/plugin.hpp"
#include "onednn/onednn.h"

std::vector<mxplug::ResourceRequest> mxplug_nn::LRNProp::ForwardResource(
    const std::vector<TShape>&) const {
  return mxplug_nn::onednn::Resources();
}
std::vector<mxplug::ResourceRequest> mxplug_nn::LRNProp::BackwardResource(
    const std::vector<TShape>&) const {
  return mxplug_nn::onednn::Resources();
}

namespace {

using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug_nn::LRNParam;

class LrnCpu : public mxplug_nn::LrnKernel<mxplug::CpuLoop> {
 public:
  using LrnKernel::LrnKernel;

  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>& aux) override {
    if (mxplug_nn::onednn::LrnForward(ctx, OneDnnParams(), in[0], out[0], req[0])) return;
    LrnKernel::Forward(ctx, in, req, out, aux);
  }

  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& out_grad,
                const std::vector<TBlob>& in_data, const std::vector<TBlob>& out_data,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& in_grad,
                const std::vector<TBlob>& aux) override {
    if (req[0] == mxplug::kNullOp) return;
    if (mxplug_nn::onednn::LrnBackward(ctx, OneDnnParams(), out_grad[0], in_data[0], in_grad[0],
                                       req[0]))
      return;
    LrnKernel::Backward(ctx, out_grad, in_data, out_data, req, in_grad, aux);
  }

 private:
  mxplug_nn::onednn::LrnParams OneDnnParams() const {
    return {param_.nsize, param_.alpha, param_.beta, param_.knorm};
  }
};

MXPLUG_REGISTER_PARAMETER(LRNParam);

[[maybe_unused]] const bool registered = [] {
  mxplug::RegisterOpProperty<mxplug_nn::LRNProp>("LRN")
      .describe(
          "Local response normalization across channels: out = data * (knorm + alpha / nsize * "
          "sum of data^2 over the nsize channels centred on each)^-beta.")
      .add_argument("data", "NDArray-or-Symbol", "Input data: (batch, channel, ...).")
      .add_arguments(LRNParam::Fields());
  mxplug::sdk::RegisterKernel<LrnCpu>("LRN", kDLCPU);
  return true;
}();

}  // namespace
