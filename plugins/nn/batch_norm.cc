// BatchNorm with MXNet 1.x's parameters and its observable behaviour (checked against MXNet
// 1.9.1): the mean and var outputs hold the batch mean and the inverse standard deviation
// 1 / sqrt(var + eps); fix_gamma uses gamma = 1 and gives gamma a zero gradient; the moving
// statistics are updated in backward of a training pass, from the saved batch statistics.
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "mxplug/plugin.hpp"
#include "onednn/onednn.h"

namespace {

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
    MXPLUG_DECLARE_FIELD(use_global_stats).set_default(false).describe(
        "Normalize with the moving statistics instead of the batch's, also while training.");
    MXPLUG_DECLARE_FIELD(output_mean_var).set_default(false).describe(
        "Also output the mean and the inverse standard deviation.");
    MXPLUG_DECLARE_FIELD(axis).set_default(1).describe("The channel axis.");
    MXPLUG_DECLARE_FIELD(cudnn_off).set_default(false).describe("Do not select cuDNN (accepted on CPU).");
    MXPLUG_DECLARE_FIELD(min_calib_range).set_default(std::nullopt).describe(
        "Quantization calibration minimum (accepted for compatibility).");
    MXPLUG_DECLARE_FIELD(max_calib_range).set_default(std::nullopt).describe(
        "Quantization calibration maximum (accepted for compatibility).");
  }
};
MXPLUG_REGISTER_PARAMETER(BatchNormParam);

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

class BatchNormOp : public mxplug::Operator {
 public:
  explicit BatchNormOp(const BatchNormParam& p) : param_(p) {}

  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
               const std::vector<TBlob>& out, const std::vector<TBlob>& aux) override {
    const Split s(in[kData].shape_, Axis(in[kData].shape_));
    const bool batch_stats = ctx.is_train && !param_.use_global_stats;
    if (batch_stats && Axis(in[kData].shape_) == 1 &&
        mxplug_nn::onednn::BatchNormTrainingForward(
            ctx, {&in[kData], &in[kGamma], &in[kBeta], &out[kOut], &out[kMean], &out[kInvStd],
                  static_cast<float>(param_.eps), param_.fix_gamma, req[kOut], req[kMean], req[kInvStd]}))
      return;
    mxplug::RealTypeSwitch(in[kData].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      const T* x = in[kData].dptr<T>();
      T* y = out[kOut].dptr<T>();
      for (int64_t c = 0; c < s.channels; ++c) {
        double mean, var;
        if (batch_stats) {
          double sum = 0, sq = 0;
          s.ForChannel(c, [&](int64_t i) { sum += double(x[i]); });
          mean = sum / double(s.count());
          s.ForChannel(c, [&](int64_t i) { sq += (double(x[i]) - mean) * (double(x[i]) - mean); });
          var = sq / double(s.count());
        } else {
          mean = double(aux[kMovingMean].dptr<T>()[c]);
          var = double(aux[kMovingVar].dptr<T>()[c]);
        }
        const double invstd = 1.0 / std::sqrt(var + param_.eps);
        const double scale = Gamma<T>(in, c) * invstd, shift = double(in[kBeta].dptr<T>()[c]) - mean * scale;
        if (req[kOut] != mxplug::kNullOp)
          s.ForChannel(c, [&](int64_t i) { mxplug::Assign(y[i], req[kOut], static_cast<T>(double(x[i]) * scale + shift)); });
        if (req[kMean] != mxplug::kNullOp) mxplug::Assign(out[kMean].dptr<T>()[c], req[kMean], static_cast<T>(mean));
        if (req[kInvStd] != mxplug::kNullOp)
          mxplug::Assign(out[kInvStd].dptr<T>()[c], req[kInvStd], static_cast<T>(invstd));
      }
    });
  }

  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& out_grad, const std::vector<TBlob>& in_data,
                const std::vector<TBlob>& out_data, const std::vector<OpReqType>& req,
                const std::vector<TBlob>& in_grad, const std::vector<TBlob>& aux) override {
    const Split s(in_data[kData].shape_, Axis(in_data[kData].shape_));
    const bool batch_stats = ctx.is_train && !param_.use_global_stats;
    const double m = double(s.count());
    if (batch_stats) UpdateMovingStats(out_data, aux);
    if (batch_stats && Axis(in_data[kData].shape_) == 1 &&
        mxplug_nn::onednn::BatchNormTrainingBackward(
            ctx, {&in_data[kData], &in_data[kGamma], &in_data[kBeta], &out_data[kMean], &out_data[kInvStd], &out_grad[kOut],
                  &in_grad[kData], &in_grad[kGamma], &in_grad[kBeta], static_cast<float>(param_.eps),
                  param_.fix_gamma, req[kData], req[kGamma], req[kBeta]})) {
      if (param_.fix_gamma && req[kGamma] != mxplug::kNullOp && req[kGamma] != mxplug::kAddTo)
        std::memset(in_grad[kGamma].dptr<float>(), 0, sizeof(float) * s.channels);
      return;
    }
    mxplug::RealTypeSwitch(in_data[kData].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      const T* x = in_data[kData].dptr<T>();
      const T* dy = out_grad[kOut].dptr<T>();
      for (int64_t c = 0; c < s.channels; ++c) {
        double mean, invstd;
        if (batch_stats) {
          mean = double(out_data[kMean].dptr<T>()[c]);
          invstd = double(out_data[kInvStd].dptr<T>()[c]);
        } else {
          mean = double(aux[kMovingMean].dptr<T>()[c]);
          invstd = 1.0 / std::sqrt(double(aux[kMovingVar].dptr<T>()[c]) + param_.eps);
        }
        double sum_dy = 0, sum_dy_xhat = 0;
        s.ForChannel(c, [&](int64_t i) {
          sum_dy += double(dy[i]);
          sum_dy_xhat += double(dy[i]) * (double(x[i]) - mean) * invstd;
        });
        const double gamma = Gamma<T>(in_data, c);
        if (req[kData] != mxplug::kNullOp) {
          T* dx = in_grad[kData].dptr<T>();
          s.ForChannel(c, [&](int64_t i) {
            double g = double(dy[i]);
            if (batch_stats) g -= (sum_dy + (double(x[i]) - mean) * invstd * sum_dy_xhat) / m;
            mxplug::Assign(dx[i], req[kData], static_cast<T>(g * gamma * invstd));
          });
        }
        if (req[kGamma] != mxplug::kNullOp)
          mxplug::Assign(in_grad[kGamma].dptr<T>()[c], req[kGamma], static_cast<T>(param_.fix_gamma ? 0.0 : sum_dy_xhat));
        if (req[kBeta] != mxplug::kNullOp)
          mxplug::Assign(in_grad[kBeta].dptr<T>()[c], req[kBeta], static_cast<T>(sum_dy));
      }
    });
  }

 private:
  int Axis(const TShape& s) const { return param_.axis < 0 ? param_.axis + s.ndim() : param_.axis; }

  // moving = moving * momentum + batch * (1 - momentum), the batch variance recovered from the
  // saved inverse standard deviation.
  void UpdateMovingStats(const std::vector<TBlob>& out_data, const std::vector<TBlob>& aux) const {
    mxplug::RealTypeSwitch(out_data[kMean].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      const double mom = param_.momentum;
      for (int64_t c = 0; c < out_data[kMean].shape_[0]; ++c) {
        const double mean = double(out_data[kMean].dptr<T>()[c]);
        const double invstd = double(out_data[kInvStd].dptr<T>()[c]);
        const double var = 1.0 / (invstd * invstd) - param_.eps;
        T& mm = aux[kMovingMean].dptr<T>()[c];
        T& mv = aux[kMovingVar].dptr<T>()[c];
        mm = static_cast<T>(double(mm) * mom + mean * (1 - mom));
        mv = static_cast<T>(double(mv) * mom + var * (1 - mom));
      }
    });
  }

  template <typename T>
  double Gamma(const std::vector<TBlob>& in, int64_t c) const {
    return param_.fix_gamma ? 1.0 : double(in[kGamma].dptr<T>()[c]);
  }

  BatchNormParam param_;
};

class BatchNormProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {"data", "gamma", "beta"}; }
  std::vector<std::string> ListOutputs() const override { return {"output", "mean", "var"}; }
  std::vector<std::string> ListAuxiliaryStates() const override { return {"moving_mean", "moving_var"}; }
  int NumVisibleOutputs() const override { return param_.output_mean_var ? 3 : 1; }

  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out, std::vector<TShape>* aux) const override {
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

  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>* aux) const override {
    if ((*in)[kData] == kMXPUnknownDType) return false;
    for (int t : *aux)
      if (t != kMXPUnknownDType && t != (*in)[kData])
        throw std::invalid_argument("moving_mean and moving_var must have the data's dtype " +
                                    mxplug::DTypeName((*in)[kData]) + "; got " + mxplug::DTypeName(t));
    return OperatorProperty::InferType(in, out, aux);
  }

  std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad, const std::vector<int>& in_data,
                                             const std::vector<int>& out_data) const override {
    return {out_grad[kOut], in_data[kData], in_data[kGamma], in_data[kBeta], out_data[kMean],
            out_data[kInvStd]};
  }
  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override {
    return mxplug_nn::onednn::Resources();
  }
  std::vector<mxplug::ResourceRequest> BackwardResource(const std::vector<TShape>&) const override {
    return mxplug_nn::onednn::Resources();
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override { return new BatchNormOp(param_); }

 private:
  BatchNormParam param_;
};

}  // namespace

MXPLUG_REGISTER_OP_PROPERTY(BatchNorm, BatchNormProp)
    .describe("Batch normalization: out = gamma * (data - mean) / sqrt(var + eps) + beta per channel, "
              "with the batch's statistics while training and the moving ones otherwise (or always with "
              "use_global_stats).")
    .add_argument("data", "NDArray-or-Symbol", "Input data.")
    .add_argument("gamma", "NDArray-or-Symbol", "Scale per channel.")
    .add_argument("beta", "NDArray-or-Symbol", "Shift per channel.")
    .add_argument("moving_mean", "NDArray-or-Symbol", "Running mean (auxiliary state).")
    .add_argument("moving_var", "NDArray-or-Symbol", "Running variance (auxiliary state).")
    .add_arguments(BatchNormParam::Fields())
    .add_kernel(kDLCPU);
