// Activation (relu, sigmoid, tanh) forward and backward on oneDNN's eltwise primitives. The
// backward takes the output (the *_use_dst_for_bwd algorithms), as the op keeps only its output.
#include "call.h"
#include "onednn.h"

namespace mxplug_nn::onednn {

namespace {

using dnnl::algorithm;

// The algorithm of an activation whose derivative oneDNN computes from the output; none for the
// others (softrelu's and softsign's run the op's loops).
bool Algorithm(EltwiseKind kind, algorithm* alg) {
  switch (kind) {
    case EltwiseKind::kRelu: *alg = algorithm::eltwise_relu_use_dst_for_bwd; return true;
    case EltwiseKind::kSigmoid: *alg = algorithm::eltwise_logistic_use_dst_for_bwd; return true;
    case EltwiseKind::kTanh: *alg = algorithm::eltwise_tanh_use_dst_for_bwd; return true;
    default: return false;
  }
}

using Forward = Primitive<dnnl::eltwise_forward>;
using Backward = Primitive<dnnl::eltwise_backward>;

std::shared_ptr<const Forward> GetForward(algorithm alg, const memory::dims& dims) {
  return Cached<Forward>(Key("eltwise", dims, memory::dims{static_cast<int64_t>(alg)}), [&] {
    return Forward({{dnnl::prop_kind::forward_training, alg, Plain(dims), 0.f, 0.f}, Attr(), Engine()});
  });
}

// oneDNN sees an activation as one flat vector: it is elementwise, whatever the shape.
memory::dims Flat(const mxplug::TBlob& t) { return {static_cast<memory::dim>(t.Size())}; }

}  // namespace

bool EltwiseForward(const mxplug::OpContext& ctx, EltwiseKind kind, const mxplug::TBlob& data,
                    const mxplug::TBlob& out, mxplug::OpReqType req) {
  algorithm alg;
  if (!Enabled(data.type_flag_) || req == mxplug::kNullOp || !Algorithm(kind, &alg) || data.Size() == 0)
    return false;
  const memory::dims dims = Flat(data);
  auto f = GetForward(alg, dims);
  if (!f) return false;
  Call call(ctx);
  call.Step(*f, {{DNNL_ARG_SRC, call.Input(dims, data.dptr<float>())},
                {DNNL_ARG_DST, call.Output(dims, out.dptr<float>(), req)}});
  call.Run();
  return true;
}

bool EltwiseBackward(const mxplug::OpContext& ctx, EltwiseKind kind, const mxplug::TBlob& out_grad,
                     const mxplug::TBlob& out, const mxplug::TBlob& data_grad, mxplug::OpReqType req) {
  algorithm alg;
  if (!Enabled(out_grad.type_flag_) || req == mxplug::kNullOp || !Algorithm(kind, &alg) || out.Size() == 0)
    return false;
  const memory::dims dims = Flat(out);
  auto f = GetForward(alg, dims);
  if (!f) return false;
  auto b = Cached<Backward>(Key("eltwise_bwd", dims, memory::dims{static_cast<int64_t>(alg)}), [&] {
    return Backward({{alg, Plain(dims), Plain(dims), 0.f, 0.f}, Attr(), Engine(), f->pd});
  });
  if (!b) return false;
  Call call(ctx);
  call.Step(*b, {{DNNL_ARG_DIFF_DST, call.Input(dims, out_grad.dptr<float>())},
                {DNNL_ARG_DST, call.Input(dims, out.dptr<float>())},
                {DNNL_ARG_DIFF_SRC, call.Output(dims, data_grad.dptr<float>(), req)}});
  call.Run();
  return true;
}

}  // namespace mxplug_nn::onednn
