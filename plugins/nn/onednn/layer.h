// The calls of a layer with weights and an optional bias (convolution, inner product): forward
// from data, weights and bias to the output; backward from the output gradient to the data
// gradient (one primitive) and to the weight and bias gradients (another), each skipped when
// not requested.
#ifndef MXPLUG_PLUGINS_NN_ONEDNN_LAYER_H_
#define MXPLUG_PLUGINS_NN_ONEDNN_LAYER_H_

#include <utility>
#include <vector>

#include "call.h"
#include "onednn.h"

namespace mxplug_nn::onednn {

// oneDNN's dims of a layer's tensors.
struct LayerDims {
  memory::dims src, weights, bias, dst;
  bool with_bias;
};

// `weight_layout` and `bias_layout` describe the op's weight and bias buffers as the primitive
// takes them (the inner product's matmul takes the weight transposed and the bias as a row).
template <class P>
void RunLayerForward(const mxplug::OpContext& ctx, const Primitive<P>& p, const LayerDims& d,
                     const memory::desc& weight_layout, const memory::desc& bias_layout,
                     const mxplug::TBlob& data, const mxplug::TBlob& weight,
                     const mxplug::TBlob* bias, const mxplug::TBlob& out, mxplug::OpReqType req) {
  Call call(ctx);
  std::vector<std::pair<int, Call::Handle>> args = {
      {DNNL_ARG_SRC, call.Input(d.src, data.dptr<float>())},
      {DNNL_ARG_WEIGHTS, call.Input(weight_layout, weight.dptr<float>())},
      {DNNL_ARG_DST, call.Output(d.dst, out.dptr<float>(), req)}};
  if (bias != nullptr) args.push_back({DNNL_ARG_BIAS, call.Input(bias_layout, bias->dptr<float>())});
  call.Step(p, std::move(args));
  call.Run();
}

template <class DataP, class WeightsP>
void RunLayerBackward(const mxplug::OpContext& ctx, const Primitive<DataP>& data_p,
                      const Primitive<WeightsP>& weights_p, const LayerDims& d,
                      const mxplug::TBlob& out_grad, const mxplug::TBlob& data,
                      const mxplug::TBlob& weight, const LayerGrads& g) {
  Call call(ctx);
  const Call::Handle og = call.Input(d.dst, out_grad.dptr<float>());
  if (g.data_req != mxplug::kNullOp)
    call.Step(data_p,
              {{DNNL_ARG_DIFF_DST, og},
               {DNNL_ARG_WEIGHTS, call.Input(d.weights, weight.dptr<float>())},
               {DNNL_ARG_DIFF_SRC, call.Output(d.src, g.data->dptr<float>(), g.data_req)}});
  const bool bias_wanted = d.with_bias && g.bias_req != mxplug::kNullOp;
  if (g.weight_req != mxplug::kNullOp || bias_wanted) {
    std::vector<std::pair<int, Call::Handle>> args = {
        {DNNL_ARG_DIFF_DST, og},
        {DNNL_ARG_SRC, call.Input(d.src, data.dptr<float>())},
        {DNNL_ARG_DIFF_WEIGHTS,
         call.Output(d.weights, g.weight->dptr<float>(), g.weight_req)}};
    if (d.with_bias)
      args.push_back(
          {DNNL_ARG_DIFF_BIAS, call.Output(d.bias, g.bias->dptr<float>(), g.bias_req)});
    call.Step(weights_p, std::move(args));
  }
  call.Run();
}

}  // namespace mxplug_nn::onednn

#endif  // MXPLUG_PLUGINS_NN_ONEDNN_LAYER_H_
