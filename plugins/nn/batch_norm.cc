// Registers BatchNorm (batch_norm.h) and its CPU kernel: oneDNN for float32 training with the
// channels on axis 1 where the plugin has it, loops in double otherwise.
#include "batch_norm.h"

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
using namespace mxplug_nn::batch_norm;  // NOLINT: the op's names (kData, Split, ...)

class BatchNormCpu : public mxplug::Operator {
 public:
  BatchNormCpu(const mxplug::KwArgs& kwargs, mxplug::Context) { param_.Init(kwargs); }

  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>& aux) override {
    const Split s(in[kData].shape_, Axis(in[kData].shape_));
    const bool batch_stats = ctx.is_train && !param_.use_global_stats;
    if (batch_stats && Axis(in[kData].shape_) == 1 &&
        mxplug_nn::onednn::BatchNormTrainingForward(
            ctx, {&in[kData], &in[kGamma], &in[kBeta], &out[kOut], &out[kMean], &out[kInvStd],
                  static_cast<float>(param_.eps), param_.fix_gamma, req[kOut], req[kMean],
                  req[kInvStd]}))
      return;
    mxplug::FloatTypeSwitch(in[kData].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      using P = ParamType<T>;
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
          mean = double(aux[kMovingMean].dptr<P>()[c]);
          var = double(aux[kMovingVar].dptr<P>()[c]);
        }
        const double invstd = InvStd(var, param_.eps);
        const double scale = Gamma<P>(in, c) * invstd,
                     shift = double(in[kBeta].dptr<P>()[c]) - mean * scale;
        if (req[kOut] != mxplug::kNullOp)
          s.ForChannel(c, [&](int64_t i) {
            mxplug::Assign(y[i], req[kOut], static_cast<T>(double(x[i]) * scale + shift));
          });
        if (req[kMean] != mxplug::kNullOp)
          mxplug::Assign(out[kMean].dptr<P>()[c], req[kMean], static_cast<P>(mean));
        if (req[kInvStd] != mxplug::kNullOp)
          mxplug::Assign(out[kInvStd].dptr<P>()[c], req[kInvStd], static_cast<P>(invstd));
      }
    });
  }

  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& out_grad,
                const std::vector<TBlob>& in_data, const std::vector<TBlob>& out_data,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& in_grad,
                const std::vector<TBlob>& aux) override {
    const Split s(in_data[kData].shape_, Axis(in_data[kData].shape_));
    const bool batch_stats = ctx.is_train && !param_.use_global_stats;
    const double m = double(s.count());
    if (batch_stats) UpdateMovingStats(out_data, aux);
    if (batch_stats && Axis(in_data[kData].shape_) == 1 &&
        mxplug_nn::onednn::BatchNormTrainingBackward(
            ctx, {&in_data[kData], &in_data[kGamma], &in_data[kBeta], &out_data[kMean],
                  &out_data[kInvStd], &out_grad[kOut], &in_grad[kData], &in_grad[kGamma],
                  &in_grad[kBeta], static_cast<float>(param_.eps), param_.fix_gamma, req[kData],
                  req[kGamma], req[kBeta]})) {
      if (param_.fix_gamma && req[kGamma] != mxplug::kNullOp && req[kGamma] != mxplug::kAddTo)
        std::memset(in_grad[kGamma].dptr<float>(), 0, sizeof(float) * s.channels);
      return;
    }
    mxplug::FloatTypeSwitch(in_data[kData].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      using P = ParamType<T>;
      const T* x = in_data[kData].dptr<T>();
      const T* dy = out_grad[kOut].dptr<T>();
      for (int64_t c = 0; c < s.channels; ++c) {
        double mean, invstd;
        if (batch_stats) {
          mean = double(out_data[kMean].dptr<P>()[c]);
          invstd = double(out_data[kInvStd].dptr<P>()[c]);
        } else {
          mean = double(aux[kMovingMean].dptr<P>()[c]);
          invstd = InvStd(double(aux[kMovingVar].dptr<P>()[c]), param_.eps);
        }
        double sum_dy = 0, sum_dy_xhat = 0;
        s.ForChannel(c, [&](int64_t i) {
          sum_dy += double(dy[i]);
          sum_dy_xhat += double(dy[i]) * (double(x[i]) - mean) * invstd;
        });
        const double gamma = Gamma<P>(in_data, c);
        if (req[kData] != mxplug::kNullOp) {
          T* dx = in_grad[kData].dptr<T>();
          s.ForChannel(c, [&](int64_t i) {
            const double g = DataGradient(double(dy[i]), (double(x[i]) - mean) * invstd, sum_dy,
                                          sum_dy_xhat, m, batch_stats, gamma, invstd);
            mxplug::Assign(dx[i], req[kData], static_cast<T>(g));
          });
        }
        if (req[kGamma] != mxplug::kNullOp)
          mxplug::Assign(in_grad[kGamma].dptr<P>()[c], req[kGamma],
                         static_cast<P>(param_.fix_gamma ? 0.0 : sum_dy_xhat));
        if (req[kBeta] != mxplug::kNullOp)
          mxplug::Assign(in_grad[kBeta].dptr<P>()[c], req[kBeta], static_cast<P>(sum_dy));
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
      for (int64_t c = 0; c < out_data[kMean].shape_[0]; ++c) {
        const double mean = double(out_data[kMean].dptr<T>()[c]);
        const double invstd = double(out_data[kInvStd].dptr<T>()[c]);
        T& mm = aux[kMovingMean].dptr<T>()[c];
        T& mv = aux[kMovingVar].dptr<T>()[c];
        mm = static_cast<T>(MovingAverage(double(mm), mean, param_.momentum));
        mv = static_cast<T>(
            MovingAverage(double(mv), VarianceOf(invstd, param_.eps), param_.momentum));
      }
    });
  }

  template <typename T>
  double Gamma(const std::vector<TBlob>& in, int64_t c) const {
    return param_.fix_gamma ? 1.0 : double(in[kGamma].dptr<T>()[c]);
  }

  BatchNormParam param_;
};

}  // namespace

namespace {
MXPLUG_REGISTER_PARAMETER(BatchNormParam);

[[maybe_unused]] const bool registered = [] {
  mxplug::RegisterOpProperty<BatchNormProp>("BatchNorm")
      .describe(
          "Batch normalization: out = gamma * (data - mean) / sqrt(var + eps) + beta per channel, "
          "with the batch's statistics while training and the moving ones otherwise (or always "
          "with "
          "use_global_stats).")
      .add_argument("data", "NDArray-or-Symbol", "Input data.")
      .add_argument("gamma", "NDArray-or-Symbol", "Scale per channel.")
      .add_argument("beta", "NDArray-or-Symbol", "Shift per channel.")
      .add_argument("moving_mean", "NDArray-or-Symbol", "Running mean (auxiliary state).")
      .add_argument("moving_var", "NDArray-or-Symbol", "Running variance (auxiliary state).")
      .add_arguments(BatchNormParam::Fields());
  mxplug::sdk::RegisterKernel<BatchNormCpu>("BatchNorm", kDLCPU);
  mxplug::RegisterOpProperty<mxplug_nn::batch_norm::BatchNormV1Prop>("BatchNorm_v1")
      .describe(
          "MXNet 0.x's BatchNorm (deprecated): BatchNorm, whose third output with "
          "output_mean_var is the variance (Note [BatchNorm_v1] in batch_norm.h).")
      .add_argument("data", "NDArray-or-Symbol", "Input data to batch normalization")
      .add_argument("gamma", "NDArray-or-Symbol", "gamma array")
      .add_argument("beta", "NDArray-or-Symbol", "beta array")
      .add_arguments(BatchNormParam::Fields());
  mxplug::sdk::RegisterKernel<
      mxplug_nn::batch_norm::BatchNormV1Kernel<BatchNormCpu, mxplug::CpuLoop>>("BatchNorm_v1",
                                                                               kDLCPU);
  return true;
}();
}  // namespace
