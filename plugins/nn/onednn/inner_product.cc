// FullyConnected forward and backward (data, weight and bias gradients) on oneDNN's inner
// product. Every tensor keeps mxplug's row-major layout (data (m, k), weight (n, k), output
// (m, n)): oneDNN then runs its GEMM on the op's own buffers with no reorder, and the weights,
// which change every training step, are never copied into a blocked layout.
#include "layer.h"

namespace mxplug_nn::onednn {
namespace {

using dnnl::inner_product_backward_data;
using dnnl::inner_product_backward_weights;
using dnnl::inner_product_forward;
using dnnl::prop_kind;

struct InnerDims : LayerDims {
  explicit InnerDims(const InnerProductShape& s)
      : LayerDims{{s.rows, s.inputs}, {s.outputs, s.inputs}, {s.outputs}, {s.rows, s.outputs},
                  s.bias} {}

  std::string CacheKey(const char* kernel) const {
    return Key(kernel, src, weights, memory::dims{with_bias});
  }

  memory::desc Bias() const { return with_bias ? Plain(bias) : memory::desc(); }
};

using ForwardPrimitive = Primitive<inner_product_forward>;

struct BackwardPrimitives {
  Primitive<inner_product_backward_data> data;
  Primitive<inner_product_backward_weights> weights;

  BackwardPrimitives(const InnerDims& d, const inner_product_forward::primitive_desc& hint)
      : data({inner_product_backward_data::desc(Plain(d.src), Plain(d.weights), Plain(d.dst)),
              Attr(), Engine(), hint}),
        weights({inner_product_backward_weights::desc(Plain(d.src), Plain(d.weights), d.Bias(),
                                                      Plain(d.dst)),
                 Attr(), Engine(), hint}) {}
};

std::shared_ptr<const ForwardPrimitive> GetForward(const InnerDims& d) {
  return Cached<ForwardPrimitive>(d.CacheKey("ip_fwd"), [&] {
    return ForwardPrimitive({inner_product_forward::desc(prop_kind::forward_training, Plain(d.src),
                                                         Plain(d.weights), d.Bias(), Plain(d.dst)),
                             Attr(), Engine()});
  });
}

}  // namespace

bool InnerProductForward(const mxplug::OpContext& ctx, const InnerProductShape& s,
                         const mxplug::TBlob& data, const mxplug::TBlob& weight,
                         const mxplug::TBlob* bias, const mxplug::TBlob& out,
                         mxplug::OpReqType req) {
  if (!Enabled(data.type_flag_)) return false;
  const InnerDims d(s);
  auto p = GetForward(d);
  if (!p) return false;
  RunLayerForward(ctx, *p, d, data, weight, bias, out, req);
  return true;
}

bool InnerProductBackward(const mxplug::OpContext& ctx, const InnerProductShape& s,
                          const mxplug::TBlob& out_grad, const mxplug::TBlob& data,
                          const mxplug::TBlob& weight, const LayerGrads& g) {
  if (!Enabled(data.type_flag_)) return false;
  const InnerDims d(s);
  auto f = GetForward(d);
  if (!f) return false;
  auto p = Cached<BackwardPrimitives>(d.CacheKey("ip_bwd"),
                                      [&] { return BackwardPrimitives(d, f->pd); });
  if (!p) return false;
  RunLayerBackward(ctx, p->data, p->weights, d, out_grad, data, weight, g);
  return true;
}

}  // namespace mxplug_nn::onednn
