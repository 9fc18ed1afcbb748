// BatchNorm with MXNet 1.x's parameters and its observable behaviour (checked against MXNet
// 1.9.1): the mean and var outputs hold the batch mean and the inverse standard deviation
// 1 / sqrt(var + eps); fix_gamma uses gamma = 1 and gives gamma a zero gradient; the moving
// statistics are updated in backward of a training pass, from the saved batch statistics. The
// definitions and the math every device's kernel uses: the CPU's in batch_norm.cc (behind oneDNN),
// the GPUs' in devices/cuda/kernels/batch_norm.cu.
#ifndef MXPLUG_PLUGINS_NN_BATCH_NORM_H_
#define MXPLUG_PLUGINS_NN_BATCH_NORM_H_

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "mxplug/plugin.hpp"

namespace mxplug_nn {
namespace batch_norm {

using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;

struct BatchNormParam : mxplug::Parameter<BatchNormParam> {
  double eps;
  float momentum;
  bool fix_gamma;
  bool use_global_stats;
  bool output_mean_var;
  int axis;
  bool cudnn_off;
  std::optional<float> min_calib_range;
  std::optional<float> max_calib_range;
  MXPLUG_DECLARE_PARAMETER(BatchNormParam) {
    MXPLUG_DECLARE_FIELD(eps).set_default(1e-3).set_lower_bound(0).describe(
        "Epsilon added to the variance before the square root.");
    MXPLUG_DECLARE_FIELD(momentum).set_default(0.9f).set_range(0, 1).describe(
        "Momentum of the moving average: moving = moving * momentum + batch * (1 - momentum).");
    MXPLUG_DECLARE_FIELD(fix_gamma).set_default(true).describe("Fix gamma to 1 while training.");
    MXPLUG_DECLARE_FIELD(use_global_stats)
        .set_default(false)
        .describe(
            "Normalize with the moving statistics instead of the batch's, also while training.");
    MXPLUG_DECLARE_FIELD(output_mean_var)
        .set_default(false)
        .describe("Also output the mean and the inverse standard deviation.");
    MXPLUG_DECLARE_FIELD(axis).set_default(1).describe("The channel axis.");
    MXPLUG_DECLARE_FIELD(cudnn_off).set_default(false).describe(
        "Do not select cuDNN (accepted on CPU).");
    MXPLUG_DECLARE_FIELD(min_calib_range)
        .set_default(std::nullopt)
        .describe("Quantization calibration minimum (accepted for compatibility).");
    MXPLUG_DECLARE_FIELD(max_calib_range)
        .set_default(std::nullopt)
        .describe("Quantization calibration maximum (accepted for compatibility).");
  }
};
enum Inputs { kData, kGamma, kBeta };
enum Aux { kMovingMean, kMovingVar };
enum Outputs { kOut, kMean, kInvStd };

// The data seen as (outer, channels, inner) around the channel axis.
struct Split {
  int64_t outer = 1, channels = 1, inner = 1;
  Split(const TShape& s, int axis) {
    for (int i = 0; i < s.ndim(); ++i) (i < axis ? outer : i == axis ? channels : inner) *= s[i];
  }
  int64_t count() const { return outer * inner; }
  // Calls f(index) for every element of channel c.
  template <class F>
  void ForChannel(int64_t c, F&& f) const {
    for (int64_t o = 0; o < outer; ++o) {
      const int64_t base = (o * channels + c) * inner;
      for (int64_t i = 0; i < inner; ++i) f(base + i);
    }
  }
};

class BatchNormProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {"data", "gamma", "beta"}; }
  std::vector<std::string> ListOutputs() const override { return {"output", "mean", "var"}; }
  std::vector<std::string> ListAuxiliaryStates() const override {
    return {"moving_mean", "moving_var"};
  }
  int NumVisibleOutputs() const override { return param_.output_mean_var ? 3 : 1; }

  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>* aux) const override {
    const TShape& data = (*in)[kData];
    if (data.ndim() < 0) return false;
    const int axis = mxplug::NormalizeAxis(param_.axis, data.ndim(), "axis");
    if (!data.IsKnown()) return false;
    const TShape channels{data[axis]};
    mxplug::InferParameterShape(&(*in)[kGamma], channels, "gamma", data);
    mxplug::InferParameterShape(&(*in)[kBeta], channels, "beta", data);
    mxplug::InferParameterShape(&(*aux)[kMovingMean], channels, "moving_mean", data);
    mxplug::InferParameterShape(&(*aux)[kMovingVar], channels, "moving_var", data);
    (*out)[kOut] = data;
    (*out)[kMean] = (*out)[kInvStd] = channels;
    return true;
  }

  // MXNet's rule: gamma, beta, the moving statistics and the mean and var outputs have the
  // data's dtype, except that float16 data keeps them in float32 (ParamType).
  bool InferType(std::vector<int>* in, std::vector<int>* out,
                 std::vector<int>* aux) const override {
    const int dtype = (*in)[kData];
    if (dtype == kMXPUnknownDType) return false;
    const int param = dtype == kMXPFloat16 ? kMXPFloat32 : dtype;
    auto set = [&](int* t, const char* name) {
      if (*t != kMXPUnknownDType && *t != param)
        throw std::invalid_argument(std::string(name) + " has dtype " + mxplug::DTypeName(*t) +
                                    "; expected " + mxplug::DTypeName(param) + " for " +
                                    mxplug::DTypeName(dtype) + " data" +
                                    (param != dtype ? " (parameters and statistics of float16 "
                                                      "data are float32, as in MXNet)"
                                                    : ""));
      *t = param;
    };
    set(&(*in)[kGamma], "gamma");
    set(&(*in)[kBeta], "beta");
    set(&(*aux)[kMovingMean], "moving_mean");
    set(&(*aux)[kMovingVar], "moving_var");
    (*out)[kOut] = dtype;
    (*out)[kMean] = (*out)[kInvStd] = param;
    return true;
  }

  std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad,
                                             const std::vector<int>& in_data,
                                             const std::vector<int>& out_data) const override {
    return {out_grad[kOut], in_data[kData],  in_data[kGamma],
            in_data[kBeta], out_data[kMean], out_data[kInvStd]};
  }
  // Scratch for oneDNN on the CPU and for the per-channel statistics on a GPU.
  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override {
    return {mxplug::ResourceRequest::kTempSpace};
  }
  std::vector<mxplug::ResourceRequest> BackwardResource(const std::vector<TShape>&) const override {
    return {mxplug::ResourceRequest::kTempSpace};
  }

 private:
  BatchNormParam param_;
};

// ---- The math, written once for every device (C: the type computed in) ----

/*! \brief The dtype of gamma, beta, the statistics and their gradients for data of type T:
 * float for float16 (InferType), T otherwise. */
template <class T>
using ParamType = mxplug::ComputeType<T>;

template <class C>
MXPLUG_XINLINE C InvStd(C var, double eps) {
  return C(1) / std::sqrt(var + static_cast<C>(eps));
}
// The batch variance recovered from the saved inverse standard deviation.
template <class C>
MXPLUG_XINLINE C VarianceOf(C invstd, double eps) {
  return C(1) / (invstd * invstd) - static_cast<C>(eps);
}
// moving = moving * momentum + batch * (1 - momentum)
template <class C>
MXPLUG_XINLINE C MovingAverage(C moving, C batch, float momentum) {
  return moving * static_cast<C>(momentum) + batch * (C(1) - static_cast<C>(momentum));
}
// The data gradient of one element: with the batch's statistics the mean and variance depend on
// every element of the channel (m of them), whose sums of dy and dy * xhat bring that in.
template <class C>
MXPLUG_XINLINE C DataGradient(C dy, C xhat, C sum_dy, C sum_dy_xhat, C m, bool batch_stats, C gamma,
                              C invstd) {
  const C g = batch_stats ? dy - (sum_dy + xhat * sum_dy_xhat) / m : dy;
  return g * gamma * invstd;
}

// Note [BatchNorm_v1]: MXNet 0.x's BatchNorm, kept by MXNet 1.9.1 as BatchNorm_v1, computes what
// BatchNorm does (output, gradients and moving statistics alike), but its third output with
// output_mean_var is the variance (the batch's, or the moving one), not BatchNorm's inverse
// standard deviation. BatchNorm_v1 runs a device's BatchNorm kernel with the inverse standard
// deviation in a fourth, hidden output that its backward reads, and writes the variance from it.
class BatchNormV1Prop : public BatchNormProp {
 public:
  std::vector<std::string> ListOutputs() const override {
    return {"output", "mean", "var", "inv_std"};
  }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>* aux) const override {
    return AsBatchNorm(out, [&](auto* three) { return BatchNormProp::InferShape(in, three, aux); });
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out,
                 std::vector<int>* aux) const override {
    return AsBatchNorm(out, [&](auto* three) { return BatchNormProp::InferType(in, three, aux); });
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad,
                                             const std::vector<int>& in_data,
                                             const std::vector<int>& out_data) const override {
    return {out_grad[kOut], in_data[kData],  in_data[kGamma],
            in_data[kBeta], out_data[kMean], out_data[3]};
  }

 private:
  // BatchNorm's inference over the first three outputs; the hidden fourth is like the third.
  template <class V, class F>
  static bool AsBatchNorm(std::vector<V>* out, F&& infer) {
    std::vector<V> three(out->begin(), out->begin() + 3);
    const bool done = infer(&three);
    std::copy(three.begin(), three.end(), out->begin());
    (*out)[3] = three[kInvStd];
    return done;
  }
};

template <class T>
struct InvStdToVariance {
  const T* invstd;
  T* var;
  double eps;
  int req;
  MXPLUG_XINLINE void operator()(int64_t c) const {
    using C = mxplug::ComputeType<T>;
    mxplug::StoreAs<C>(var[c], req, VarianceOf(C(invstd[c]), eps));
  }
};

/*! \brief BatchNorm_v1 on a device whose BatchNorm kernel is Base (Note [BatchNorm_v1]). */
template <class Base, class Loop>
class BatchNormV1Kernel : public mxplug::Operator {
 public:
  BatchNormV1Kernel(const mxplug::KwArgs& kwargs, mxplug::Context ctx) : base_(kwargs, ctx) {
    p_.Init(kwargs);
  }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>& aux) override {
    base_.Forward(ctx, in, {req[kOut], req[kMean], mxplug::kWriteTo},
                  {out[kOut], out[kMean], out[3]}, aux);
    if (req[kInvStd] == mxplug::kNullOp) return;
    mxplug::FloatTypeSwitch(out[3].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(
          ctx, out[3].Size(),
          InvStdToVariance<T>{out[3].dptr<T>(), out[kInvStd].dptr<T>(), p_.eps, req[kInvStd]});
    });
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                const std::vector<TBlob>& in, const std::vector<TBlob>& out,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>& aux) override {
    base_.Backward(ctx, {og[kOut], og[kMean], og[kInvStd]}, in, {out[kOut], out[kMean], out[3]},
                   req, ig, aux);
  }

 private:
  Base base_;
  BatchNormParam p_;
};

}  // namespace batch_norm
}  // namespace mxplug_nn

#endif  // MXPLUG_PLUGINS_NN_BATCH_NORM_H_
