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

struct EltwisePrimitives {
  Primitive<dnnl::eltwise_forward> fwd;
  Primitive<dnnl::eltwise_backward> bwd;

  EltwisePrimitives(algorithm alg, const memory::dims& dims)
      : fwd({{dnnl::prop_kind::forward_training, alg, Plain(dims), 0.f, 0.f}, Attr(), Engine()}),
        bwd({{alg, Plain(dims), Plain(dims), 0.f, 0.f}, Attr(), Engine(), fwd.pd}) {}
};

bool Serial(const mxplug::TBlob& t) { return static_cast<double>(t.Size()) < kSerialElements; }

// The primitives for a call on `t`, or nullptr where the op's loops take it. oneDNN sees the
// tensor as one flat vector (*dims): an activation is elementwise, whatever the shape.
std::shared_ptr<const EltwisePrimitives> Get(EltwiseKind kind, const mxplug::TBlob& t, mxplug::OpReqType req,
                                             const SerialScope& scope, memory::dims* dims) {
  algorithm alg;
  if (!Enabled(t.type_flag_) || req == mxplug::kNullOp || !Algorithm(kind, &alg) || t.Size() == 0) return nullptr;
  *dims = {static_cast<memory::dim>(t.Size())};
  return Cached<EltwisePrimitives>(
      Key("eltwise", *dims, memory::dims{static_cast<int64_t>(alg)}) + scope.KeySuffix(),
      [&] { return EltwisePrimitives(alg, *dims); });
}

}  // namespace

bool EltwiseForward(const mxplug::OpContext& ctx, EltwiseKind kind, const mxplug::TBlob& data,
                    const mxplug::TBlob& out, mxplug::OpReqType req) {
  memory::dims dims;
  const SerialScope scope(Serial(data));
  auto p = Get(kind, data, req, scope, &dims);
  if (!p) return false;
  RunSrcToDst(ctx, p->fwd, dims, data.dptr<float>(), dims, out.dptr<float>(), req);
  return true;
}

bool EltwiseBackward(const mxplug::OpContext& ctx, EltwiseKind kind, const mxplug::TBlob& out_grad,
                     const mxplug::TBlob& out, const mxplug::TBlob& data_grad, mxplug::OpReqType req) {
  memory::dims dims;
  const SerialScope scope(Serial(out_grad));
  auto p = Get(kind, out_grad, req, scope, &dims);
  if (!p) return false;
  Call call(ctx);
  call.Step(p->bwd, {{DNNL_ARG_DIFF_DST, call.Input(dims, out_grad.dptr<float>())},
                     {DNNL_ARG_DST, call.Input(dims, out.dptr<float>())},
                     {DNNL_ARG_DIFF_SRC, call.Output(dims, data_grad.dptr<float>(), req)}});
  call.Run();
  return true;
}

}  // namespace mxplug_nn::onednn
