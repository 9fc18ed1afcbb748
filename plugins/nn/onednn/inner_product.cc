// FullyConnected on oneDNN: the forward as a matmul (data (m, k) times the transposed weight
// (n, k), plus the bias), the backward (data, weight and bias gradients) on the inner product.
// Every tensor keeps mxplug's row-major layout: oneDNN runs on the op's own buffers with no
// reorder, and the weights, which change every training step, are never copied into a blocked
// layout. The forward is a matmul because oneDNN 2.6 gives a plain-layout matmul its brgemm
// kernels, where a plain-layout inner product gets the older GEMM: at batch 128 on one
// AVX-512 core, 784 -> 128 takes about 270 us against 280-520 us, and 64 -> 10 4 us against 8.
// The backward primitives are no faster as matmuls, and the bias gradient would need a
// reduction.
#include "layer.h"

namespace mxplug_nn::onednn {
namespace {

using dnnl::inner_product_backward_data;
using dnnl::inner_product_backward_weights;
using dnnl::inner_product_forward;
using dnnl::matmul;
using dnnl::prop_kind;

struct InnerDims : LayerDims {
  explicit InnerDims(const InnerProductShape& s)
      : LayerDims{{s.rows, s.inputs}, {s.outputs, s.inputs}, {s.outputs}, {s.rows, s.outputs},
                  s.bias} {}

  std::string CacheKey(const char* kernel, const SerialScope& scope) const {
    return Key(kernel, src, weights, memory::dims{with_bias}) + scope.KeySuffix();
  }

  bool Serial() const { return 2.0 * src[0] * src[1] * weights[0] < kSerialFlops; }

  memory::desc Bias() const { return with_bias ? Plain(bias) : memory::desc(); }
};

// The weight (n, k) as the (k, n) matrix the matmul multiplies by: a transposed view, no copy.
memory::desc TransposedWeight(const InnerDims& d) {
  return memory::desc({d.weights[1], d.weights[0]}, memory::data_type::f32, {1, d.weights[1]});
}

// The bias as a row broadcast over the output's rows.
memory::desc BiasRow(const InnerDims& d) { return Plain({1, d.bias[0]}); }

using MatmulPrimitive = Primitive<matmul>;
using ForwardPrimitive = Primitive<inner_product_forward>;  // the backward's hint

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

std::shared_ptr<const ForwardPrimitive> GetForward(const InnerDims& d, const SerialScope& scope) {
  return Cached<ForwardPrimitive>(d.CacheKey("ip_fwd", scope), [&] {
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
  const SerialScope scope(d.Serial());
  auto p = Cached<MatmulPrimitive>(d.CacheKey("fc_matmul", scope), [&] {
    return MatmulPrimitive({matmul::desc(Plain(d.src), TransposedWeight(d),
                                         d.with_bias ? BiasRow(d) : memory::desc(), Plain(d.dst)),
                            Attr(), Engine()});
  });
  if (!p) return false;
  RunLayerForward(ctx, *p, d, TransposedWeight(d), BiasRow(d), data, weight, bias, out, req);
  return true;
}

bool InnerProductBackward(const mxplug::OpContext& ctx, const InnerProductShape& s,
                          const mxplug::TBlob& out_grad, const mxplug::TBlob& data,
                          const mxplug::TBlob& weight, const LayerGrads& g) {
  if (!Enabled(data.type_flag_)) return false;
  const InnerDims d(s);
  const SerialScope scope(d.Serial());
  auto f = GetForward(d, scope);
  if (!f) return false;
  auto p = Cached<BackwardPrimitives>(d.CacheKey("ip_bwd", scope),
                                      [&] { return BackwardPrimitives(d, f->pd); });
  if (!p) return false;
  RunLayerBackward(ctx, p->data, p->weights, d, out_grad, data, weight, g);
  return true;
}

}  // namespace mxplug_nn::onednn
