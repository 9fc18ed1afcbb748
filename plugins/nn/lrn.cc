// LRN: local response normalization across channels (MXNet's alpha, beta, knorm, nsize):
// out = x * (knorm + alpha / nsize * sum of x^2 over the nsize channels around)^-beta.
#include <cmath>
#include <string>
#include <vector>

#include "mxplug/plugin.hpp"
#include "onednn/onednn.h"

namespace {

using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;

struct LRNParam : mxplug::Parameter<LRNParam> {
  float alpha, beta, knorm;
  int nsize;
  MXPLUG_DECLARE_PARAMETER(LRNParam) {
    MXPLUG_DECLARE_FIELD(alpha).set_default(1e-4f).describe("The variance scaling parameter alpha.");
    MXPLUG_DECLARE_FIELD(beta).set_default(0.75f).describe("The power parameter beta.");
    MXPLUG_DECLARE_FIELD(knorm).set_default(2.0f).describe("The constant k added to the sum.");
    MXPLUG_DECLARE_FIELD(nsize).set_lower_bound(1).describe("The number of channels summed over (odd).");
  }
};
MXPLUG_REGISTER_PARAMETER(LRNParam);

// Calls f(element, neighbour) for every element and every channel neighbour in its window
// (the window is symmetric, so this is also every neighbour whose window holds the element).
template <class F>
void ForEachNeighbour(const TShape& s, int nsize, F&& f) {
  const int64_t batch = s[0], channels = s[1], inner = s.Size() / (batch * channels), half = nsize / 2;
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t d = std::max<int64_t>(0, c - half); d <= std::min(channels - 1, c + half); ++d)
        for (int64_t i = 0; i < inner; ++i) f((n * channels + c) * inner + i, (n * channels + d) * inner + i);
}

class LRNOp : public mxplug::Operator {
 public:
  explicit LRNOp(const LRNParam& p) : param_(p) {}

  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
               const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
    if (mxplug_nn::onednn::LrnForward(ctx, OneDnnParams(), in[0], out[0], req[0])) return;
    mxplug::RealTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      const T* x = in[0].dptr<T>();
      const int64_t size = in[0].Size();
      std::vector<double> norm(static_cast<size_t>(size), 0.0);
      ForEachNeighbour(in[0].shape_, param_.nsize, [&](int64_t i, int64_t j) { norm[i] += double(x[j]) * x[j]; });
      const double scale = double(param_.alpha) / param_.nsize;
      T* y = out[0].dptr<T>();
      T* tmp = out[1].dptr<T>();
      for (int64_t i = 0; i < size; ++i) {
        norm[i] = param_.knorm + scale * norm[i];
        mxplug::Assign(y[i], req[0], static_cast<T>(double(x[i]) * std::pow(norm[i], -double(param_.beta))));
        mxplug::Assign(tmp[i], req[1], static_cast<T>(norm[i]));
      }
    });
  }

  // dx_j = dy_j * norm_j^-beta - 2 * beta * alpha / nsize * x_j * sum over c around j of
  // dy_c * x_c * norm_c^(-beta - 1).
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& out_grad, const std::vector<TBlob>& in_data,
                const std::vector<TBlob>& out_data, const std::vector<OpReqType>& req,
                const std::vector<TBlob>& in_grad, const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    if (mxplug_nn::onednn::LrnBackward(ctx, OneDnnParams(), out_grad[0], in_data[0], in_grad[0], req[0])) return;
    mxplug::RealTypeSwitch(in_data[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      const T* x = in_data[0].dptr<T>();
      const T* dy = out_grad[0].dptr<T>();
      const T* norm = out_data[1].dptr<T>();
      const int64_t size = in_data[0].Size();
      const double beta = param_.beta;
      std::vector<double> weighted(static_cast<size_t>(size)), acc(static_cast<size_t>(size), 0.0);
      for (int64_t i = 0; i < size; ++i) weighted[i] = double(dy[i]) * x[i] * std::pow(double(norm[i]), -beta - 1);
      ForEachNeighbour(in_data[0].shape_, param_.nsize, [&](int64_t i, int64_t j) { acc[i] += weighted[j]; });
      const double k = 2.0 * beta * double(param_.alpha) / param_.nsize;
      T* dx = in_grad[0].dptr<T>();
      for (int64_t i = 0; i < size; ++i)
        mxplug::Assign(dx[i], req[0],
                       static_cast<T>(double(dy[i]) * std::pow(double(norm[i]), -beta) - k * x[i] * acc[i]));
    });
  }

 private:
  mxplug_nn::onednn::LrnParams OneDnnParams() const {
    return {param_.nsize, param_.alpha, param_.beta, param_.knorm};
  }

  LRNParam param_;
};

class LRNProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override {
    param_.Init(kwargs);
    if (param_.nsize % 2 == 0)
      throw std::invalid_argument("nsize " + std::to_string(param_.nsize) + " must be odd");
  }
  std::vector<std::string> ListOutputs() const override { return {"output", "tmp_norm"}; }
  int NumVisibleOutputs() const override { return 1; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out, std::vector<TShape>*) const override {
    const TShape& data = (*in)[0];
    if (data.ndim() < 0) return false;
    if (data.ndim() < 2)
      throw std::invalid_argument("data has shape " + data.ToString() + "; expected at least (batch, channel)");
    (*out)[0] = (*out)[1] = data;
    return data.IsKnown();
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad, const std::vector<int>& in_data,
                                             const std::vector<int>& out_data) const override {
    return {out_grad[0], in_data[0], out_data[1]};
  }
  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override {
    return mxplug_nn::onednn::Resources();
  }
  std::vector<mxplug::ResourceRequest> BackwardResource(const std::vector<TShape>&) const override {
    return mxplug_nn::onednn::Resources();
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override { return new LRNOp(param_); }

 private:
  LRNParam param_;
};

}  // namespace

MXPLUG_REGISTER_OP_PROPERTY(LRN, LRNProp)
    .describe("Local response normalization across channels: out = data * (knorm + alpha / nsize * "
              "sum of data^2 over the nsize channels centred on each)^-beta.")
    .add_argument("data", "NDArray-or-Symbol", "Input data: (batch, channel, ...).")
    .add_arguments(LRNParam::Fields())
    .add_kernel(kDLCPU);
