// Convolution forward and backward (data, weight and bias gradients) on oneDNN.
#include "layer.h"

namespace mxplug_nn::onednn {
namespace {

using dnnl::algorithm;
using dnnl::convolution_backward_data;
using dnnl::convolution_backward_weights;
using dnnl::convolution_forward;
using dnnl::prop_kind;

// oneDNN's view of a convolution: the dims of each tensor and the window, with padding on both
// sides (the right side is what makes the output size come out: the floor convention's dropped
// rows make it smaller than the left).
struct ConvDims : LayerDims {
  memory::dims strides, dilates, pad_l, pad_r;

  explicit ConvDims(const ConvShape& s) : LayerDims{{}, {}, {}, {}, s.bias} {
    const Window& w = s.window;
    src = {s.batch, s.in_channels};
    dst = {s.batch, s.filters};
    weights = s.groups > 1 ? memory::dims{s.groups, s.filters / s.groups, s.in_channels / s.groups}
                           : memory::dims{s.filters, s.in_channels};
    bias = {s.filters};
    for (int a = 0; a < w.axes(); ++a) {
      src.push_back(w.image[a]);
      dst.push_back(w.positions[a]);
      weights.push_back(w.kernel[a]);
      strides.push_back(w.stride[a]);
      dilates.push_back(w.dilate[a] - 1);  // oneDNN counts the gaps
      pad_l.push_back(w.pad[a]);
      pad_r.push_back((w.positions[a] - 1) * w.stride[a] + w.Dilated(a) - w.image[a] - w.pad[a]);
    }
  }

  std::string CacheKey(const char* kernel) const {
    return Key(kernel, src, weights, dst, strides, dilates, pad_l, pad_r, memory::dims{with_bias});
  }

  convolution_forward::primitive_desc Forward() const {
    const memory::desc bias_desc = with_bias ? Any(bias) : memory::desc();
    convolution_forward::desc d(prop_kind::forward_training, algorithm::convolution_direct, Any(src),
                                Any(weights), bias_desc, Any(dst), strides, dilates, pad_l, pad_r);
    return convolution_forward::primitive_desc(d, Attr(), Engine());
  }
};

using ForwardPrimitive = Primitive<convolution_forward>;

struct BackwardPrimitives {
  Primitive<convolution_backward_data> data;
  Primitive<convolution_backward_weights> weights;

  BackwardPrimitives(const ConvDims& d, const convolution_forward::primitive_desc& hint)
      : data({convolution_backward_data::desc(algorithm::convolution_direct, Any(d.src), Any(d.weights), Any(d.dst),
                                              d.strides, d.dilates, d.pad_l, d.pad_r),
              Attr(), Engine(), hint}),
        weights({WeightsDesc(d), Attr(), Engine(), hint}) {}

  static convolution_backward_weights::desc WeightsDesc(const ConvDims& d) {
    if (d.with_bias)
      return {algorithm::convolution_direct, Any(d.src), Any(d.weights), Any(d.bias), Any(d.dst),
              d.strides, d.dilates, d.pad_l, d.pad_r};
    return {algorithm::convolution_direct, Any(d.src), Any(d.weights), Any(d.dst),
            d.strides, d.dilates, d.pad_l, d.pad_r};
  }
};

std::shared_ptr<const ForwardPrimitive> GetForward(const ConvDims& d) {
  return Cached<ForwardPrimitive>(d.CacheKey("conv_fwd"), [&] { return ForwardPrimitive(d.Forward()); });
}

}  // namespace

bool ConvolutionForward(const mxplug::OpContext& ctx, const ConvShape& s, const mxplug::TBlob& data,
                        const mxplug::TBlob& weight, const mxplug::TBlob* bias, const mxplug::TBlob& out,
                        mxplug::OpReqType req) {
  if (!Enabled(data.type_flag_)) return false;
  const ConvDims d(s);
  auto p = GetForward(d);
  if (!p) return false;
  RunLayerForward(ctx, *p, d, Plain(d.weights), Plain(d.bias), data, weight, bias, out, req);
  return true;
}

bool ConvolutionBackward(const mxplug::OpContext& ctx, const ConvShape& s, const mxplug::TBlob& out_grad,
                         const mxplug::TBlob& data, const mxplug::TBlob& weight, const LayerGrads& g) {
  if (!Enabled(data.type_flag_)) return false;
  const ConvDims d(s);
  auto f = GetForward(d);
  if (!f) return false;
  auto p = Cached<BackwardPrimitives>(d.CacheKey("conv_bwd"), [&] { return BackwardPrimitives(d, f->pd); });
  if (!p) return false;
  RunLayerBackward(ctx, p->data, p->weights, d, out_grad, data, weight, g);
  return true;
}

}  // namespace mxplug_nn::onednn
