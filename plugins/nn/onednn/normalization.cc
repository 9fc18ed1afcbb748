// BatchNorm's training forward and backward, and LRN forward and backward, on oneDNN.
#include <cmath>
#include <string>
#include <vector>

#include "call.h"
#include "onednn.h"

namespace mxplug_nn::onednn {
namespace {

using dnnl::algorithm;
using dnnl::batch_normalization_backward;
using dnnl::batch_normalization_forward;
using dnnl::lrn_forward;
using dnnl::normalization_flags;
using dnnl::prop_kind;

bool Written(mxplug::OpReqType req) {
  return req == mxplug::kWriteTo || req == mxplug::kWriteInplace;
}

}  // namespace

namespace {

// fix_gamma normalizes with a scale of 1: oneDNN then only shifts.
normalization_flags BatchNormFlags(bool fix_gamma) {
  return fix_gamma ? normalization_flags::use_shift
                   : normalization_flags::use_scale | normalization_flags::use_shift;
}

using BatchNormForward = Primitive<batch_normalization_forward>;

std::string BatchNormKey(const char* kernel, const memory::dims& dims, bool fix_gamma, float eps) {
  return Key(kernel, dims, memory::dims{fix_gamma}) + "|" + std::to_string(eps);
}

std::shared_ptr<const BatchNormForward> GetBatchNormForward(const memory::dims& dims,
                                                            bool fix_gamma, float eps) {
  return Cached<BatchNormForward>(BatchNormKey("bn_train", dims, fix_gamma, eps), [&] {
    return BatchNormForward(
        {{prop_kind::forward_training, Plain(dims), eps, BatchNormFlags(fix_gamma)},
         Attr(),
         Engine()});
  });
}

}  // namespace

bool BatchNormTrainingForward(const mxplug::OpContext& ctx, const BatchNormArgs& a) {
  if (!Enabled(a.data->type_flag_) || a.out_req == mxplug::kNullOp) return false;
  // The statistics are written, then turned into MXNet's inverse standard deviation in place.
  if (!Written(a.mean_req) || !Written(a.invstd_req)) return false;
  const memory::dims dims = Dims(a.data->shape_);
  const memory::dims channels{dims[1]};
  auto p = GetBatchNormForward(dims, a.fix_gamma, a.eps);
  if (!p || !p->IsJit()) return false;
  Call call(ctx);
  std::vector<std::pair<int, Call::Handle>> args = {
      {DNNL_ARG_SRC, call.Input(dims, a.data->dptr<float>())},
      {DNNL_ARG_DST, call.Output(dims, a.out->dptr<float>(), a.out_req)},
      {DNNL_ARG_SHIFT, call.Input(channels, a.beta->dptr<float>())},
      {DNNL_ARG_MEAN, call.Output(channels, a.mean->dptr<float>(), a.mean_req)},
      {DNNL_ARG_VARIANCE, call.Output(channels, a.invstd->dptr<float>(), a.invstd_req)}};
  if (!a.fix_gamma) args.push_back({DNNL_ARG_SCALE, call.Input(channels, a.gamma->dptr<float>())});
  call.Step(*p, std::move(args));
  call.Run();
  float* v = a.invstd->dptr<float>();
  for (int64_t c = 0; c < dims[1]; ++c) v[c] = 1.0f / std::sqrt(v[c] + a.eps);
  return true;
}

bool BatchNormTrainingBackward(const mxplug::OpContext& ctx, const BatchNormGradArgs& a) {
  if (!Enabled(a.data->type_flag_)) return false;
  const memory::dims dims = Dims(a.data->shape_);
  const memory::dims channels{dims[1]};
  auto f = GetBatchNormForward(dims, a.fix_gamma, a.eps);
  if (!f) return false;
  using Backward = Primitive<batch_normalization_backward>;
  auto b = Cached<Backward>(BatchNormKey("bn_bwd", dims, a.fix_gamma, a.eps), [&] {
    return Backward(
        {{prop_kind::backward, Plain(dims), Plain(dims), a.eps, BatchNormFlags(a.fix_gamma)},
         Attr(),
         Engine(),
         f->pd});
  });
  if (!b || !b->IsJit()) return false;
  // oneDNN reads the variance; the forward kept MXNet's 1 / sqrt(var + eps).
  std::vector<float> var(static_cast<size_t>(dims[1]));
  const float* invstd = a.invstd->dptr<float>();
  for (size_t c = 0; c < var.size(); ++c) var[c] = 1.0f / (invstd[c] * invstd[c]) - a.eps;
  Call call(ctx);
  std::vector<std::pair<int, Call::Handle>> args = {
      {DNNL_ARG_SRC, call.Input(dims, a.data->dptr<float>())},
      {DNNL_ARG_DIFF_DST, call.Input(dims, a.out_grad->dptr<float>())},
      {DNNL_ARG_MEAN, call.Input(channels, a.mean->dptr<float>())},
      {DNNL_ARG_VARIANCE, call.Input(channels, var.data())},
      // Unused by the backward, but oneDNN 2.6 refuses to execute without it.
      {DNNL_ARG_SHIFT, call.Input(channels, a.beta->dptr<float>())},
      {DNNL_ARG_DIFF_SRC, call.Output(dims, a.data_grad->dptr<float>(), a.data_req)},
      {DNNL_ARG_DIFF_SHIFT, call.Output(channels, a.beta_grad->dptr<float>(), a.beta_req)}};
  if (!a.fix_gamma)
    args.insert(args.end(), {{DNNL_ARG_SCALE, call.Input(channels, a.gamma->dptr<float>())},
                             {DNNL_ARG_DIFF_SCALE,
                              call.Output(channels, a.gamma_grad->dptr<float>(), a.gamma_req)}});
  call.Step(*b, std::move(args));
  call.Run();
  return true;
}

namespace {

// LRN's primitives for one shape and parameter set. The forward keeps a workspace that the
// backward reads; as the workspace is not kept between the calls, the backward runs the forward
// again first (MXNet's oneDNN LRN does the same). Forward and backward share one cache entry,
// so both run on oneDNN or neither does (the plain backward needs the plain forward's tmp_norm).
struct LrnPrimitives {
  Primitive<lrn_forward> fwd;
  Primitive<dnnl::lrn_backward> bwd;

  LrnPrimitives(const memory::dims& dims, const LrnParams& p)
      : fwd({{prop_kind::forward_training, algorithm::lrn_across_channels, Plain(dims), p.nsize,
              p.alpha, p.beta, p.knorm},
             Attr(),
             Engine()}),
        bwd({dnnl::lrn_backward::desc(algorithm::lrn_across_channels, Plain(dims), Plain(dims),
                                      p.nsize, p.alpha, p.beta, p.knorm),
             Attr(), Engine(), fwd.pd}) {}
};

std::shared_ptr<const LrnPrimitives> GetLrn(const memory::dims& dims, const LrnParams& p) {
  const std::string key = Key("lrn", dims, memory::dims{p.nsize}) + "|" + std::to_string(p.alpha) +
                          "," + std::to_string(p.beta) + "," + std::to_string(p.knorm);
  return Cached<LrnPrimitives>(key, [&] { return LrnPrimitives(dims, p); });
}

}  // namespace

bool LrnForward(const mxplug::OpContext& ctx, const LrnParams& params, const mxplug::TBlob& data,
                const mxplug::TBlob& out, mxplug::OpReqType req) {
  if (!Enabled(data.type_flag_) || req == mxplug::kNullOp) return false;
  const memory::dims dims = Dims(data.shape_);
  auto p = GetLrn(dims, params);
  if (!p) return false;
  Call call(ctx);
  call.Step(p->fwd, {{DNNL_ARG_SRC, call.Input(dims, data.dptr<float>())},
                     {DNNL_ARG_DST, call.Output(dims, out.dptr<float>(), req)},
                     {DNNL_ARG_WORKSPACE, call.Temp()}});
  call.Run();
  return true;
}

bool LrnBackward(const mxplug::OpContext& ctx, const LrnParams& params,
                 const mxplug::TBlob& out_grad, const mxplug::TBlob& data,
                 const mxplug::TBlob& data_grad, mxplug::OpReqType req) {
  if (!Enabled(data.type_flag_) || req == mxplug::kNullOp) return false;
  const memory::dims dims = Dims(data.shape_);
  auto p = GetLrn(dims, params);
  if (!p) return false;
  Call call(ctx);
  const Call::Handle x = call.Input(dims, data.dptr<float>()), workspace = call.Temp();
  call.Step(p->fwd,
            {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, call.Temp()}, {DNNL_ARG_WORKSPACE, workspace}});
  call.Step(p->bwd, {{DNNL_ARG_SRC, x},
                     {DNNL_ARG_DIFF_DST, call.Input(dims, out_grad.dptr<float>())},
                     {DNNL_ARG_WORKSPACE, workspace},
                     {DNNL_ARG_DIFF_SRC, call.Output(dims, data_grad.dptr<float>(), req)}});
  call.Run();
  return true;
}

}  // namespace mxplug_nn::onednn
