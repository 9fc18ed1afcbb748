// Pooling (max and average) forward and backward on oneDNN. Max pooling's backward needs a
// training forward's workspace (where each maximum was), which is not kept between the calls:
// the backward runs that forward again into scratch first, so the op's own forward is always
// the cheaper inference one. That makes it slower than a direct loop, so 2-d max pooling's
// backward runs MaxPool2dBackward in ../pooling.cc instead; 1-d and 3-d come here. Where oneDNN
// has no generated forward (simple_nchw without AVX-512), 2-d forwards run Pool2dForward in
// ../pooling.cc.
#include "call.h"
#include "onednn.h"

namespace mxplug_nn::onednn {
namespace {

using dnnl::algorithm;
using dnnl::pooling_backward;
using dnnl::pooling_forward;
using dnnl::prop_kind;

struct PoolDims {
  memory::dims src, dst, strides, kernel, pad_l, pad_r;
  algorithm alg;
  bool supported = true;  // MXNet's semantics and oneDNN's agree for this window

  PoolDims(const Window& w, PoolKind kind, const mxplug::TShape& data) : src(Dims(data)) {
    alg = kind == PoolKind::kMax             ? algorithm::pooling_max
          : kind == PoolKind::kAvgIncludePad ? algorithm::pooling_avg_include_padding
                                             : algorithm::pooling_avg_exclude_padding;
    dst = {src[0], src[1]};
    for (int a = 0; a < w.axes(); ++a) {
      dst.push_back(w.positions[a]);
      kernel.push_back(w.kernel[a]);
      strides.push_back(w.stride[a]);
      pad_l.push_back(w.pad[a]);
      pad_r.push_back((w.positions[a] - 1) * w.stride[a] + w.kernel[a] - w.image[a] - w.pad[a]);
      // A window wholly in padding gives MXNet's lowest float for max; and MXNet divides an
      // average-with-padding window by its size clipped to the padded data, which oneDNN does
      // not: those windows stay with the plain loops.
      const int64_t last_start = (w.positions[a] - 1) * w.stride[a] - w.pad[a];
      if (w.pad[a] >= w.kernel[a] || last_start >= w.image[a]) supported = false;
      if (kind == PoolKind::kAvgIncludePad && pad_r.back() > w.pad[a]) supported = false;
    }
  }

  std::string CacheKey() const {
    return Key("pool", src, dst, strides, kernel, pad_l, pad_r,
               memory::dims{static_cast<int64_t>(alg)});
  }

  pooling_forward::primitive_desc Forward(bool training) const {
    pooling_forward::desc d(training ? prop_kind::forward_training : prop_kind::forward_inference,
                            alg, Plain(src), Any(dst), strides, kernel, pad_l, pad_r);
    return pooling_forward::primitive_desc(d, Attr(), Engine());
  }
};

using ForwardPrimitive = Primitive<pooling_forward>;
using BackwardPrimitive = Primitive<pooling_backward>;

std::shared_ptr<const ForwardPrimitive> GetForward(const PoolDims& d, bool training) {
  return Cached<ForwardPrimitive>(d.CacheKey() + (training ? "|train" : "|infer"),
                                  [&] { return ForwardPrimitive(d.Forward(training)); });
}

}  // namespace

bool PoolingForward(const mxplug::OpContext& ctx, const Window& w, PoolKind kind,
                    const mxplug::TBlob& data, const mxplug::TBlob& out, mxplug::OpReqType req,
                    bool jit_only) {
  if (!Enabled(data.type_flag_)) return false;
  const PoolDims d(w, kind, data.shape_);
  if (!d.supported) return false;
  auto f = GetForward(d, false);
  if (!f) return false;
  if (jit_only && !f->IsJit()) return false;
  RunSrcToDst(ctx, *f, d.src, data.dptr<float>(), d.dst, out.dptr<float>(), req);
  return true;
}

bool PoolingBackward(const mxplug::OpContext& ctx, const Window& w, PoolKind kind,
                     const mxplug::TBlob& out_grad, const mxplug::TBlob& data,
                     const mxplug::TBlob& data_grad, mxplug::OpReqType req) {
  if (!Enabled(data_grad.type_flag_)) return false;  // data is only read by max pooling
  const PoolDims d(w, kind, data_grad.shape_);
  if (!d.supported) return false;
  auto f = GetForward(d, true);
  if (!f) return false;
  auto b = Cached<BackwardPrimitive>(d.CacheKey() + "|bwd", [&] {
    return BackwardPrimitive({pooling_backward::desc(d.alg, Plain(d.src), Any(d.dst), d.strides,
                                                     d.kernel, d.pad_l, d.pad_r),
                              Attr(), Engine(), f->pd});
  });
  if (!b) return false;
  Call call(ctx);
  std::vector<std::pair<int, Call::Handle>> args = {
      {DNNL_ARG_DIFF_DST, call.Input(d.dst, out_grad.dptr<float>())},
      {DNNL_ARG_DIFF_SRC, call.Output(d.src, data_grad.dptr<float>(), req)}};
  if (kind == PoolKind::kMax) {
    const Call::Handle workspace = call.Temp();
    call.Step(*f, {{DNNL_ARG_SRC, call.Input(d.src, data.dptr<float>())},
                   {DNNL_ARG_DST, call.Temp()},
                   {DNNL_ARG_WORKSPACE, workspace}});
    args.push_back({DNNL_ARG_WORKSPACE, workspace});
  }
  call.Step(*b, std::move(args));
  call.Run();
  return true;
}

}  // namespace mxplug_nn::onednn
