// Definitions of the output layers whose backward is the loss gradient, ignoring the incoming
// gradient (MXNet): LinearRegressionOutput, LogisticRegressionOutput, MAERegressionOutput, and
// MakeLoss, with MXNet's names and parameters. Their kernels are written once here over a
// device's element loop; loss.cc registers the definitions and the CPU kernels,
// devices/cuda/kernels/loss.cu the CUDA kernels.
#ifndef MXPLUG_PLUGINS_NN_LOSS_H_
#define MXPLUG_PLUGINS_NN_LOSS_H_

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "elements.h"
#include "mxplug/plugin.hpp"

namespace mxplug_nn {

using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;

// ---- The regression outputs ----

enum Regression { kLinear, kLogistic, kMAE };

struct RegressionParam : mxplug::Parameter<RegressionParam> {
  float grad_scale;
  MXPLUG_DECLARE_PARAMETER(RegressionParam) {
    MXPLUG_DECLARE_FIELD(grad_scale)
        .set_default(1.0f)
        .describe("Scale the gradient by a float factor.");
  }
};

template <Regression K>
class RegressionProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {"data", "label"}; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& d = (*in)[0];
    if (d.ndim() < 0) return false;
    TShape& l = (*in)[1];
    if (l.ndim() < 0) l = d;
    if (l.Size() != d.Size())
      throw std::invalid_argument("label has shape " + l.ToString() + ", expected " + d.ToString() +
                                  " (or another shape of the same size)");
    (*out)[0] = d;
    return d.IsKnown();
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    return mxplug::InferTypeFromFirst(in, out);
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>&, const std::vector<int>& in,
                                             const std::vector<int>& out) const override {
    return {in[1], out[0]};
  }
  std::vector<std::pair<int, int>> ForwardInplaceOption(
      const std::vector<int>& in, const std::vector<int>& out) const override {
    return {{in[0], out[0]}};
  }

 private:
  RegressionParam param_;
};

// The forward of the outputs: the sigmoid for LogisticRegressionOutput, else the identity (the
// other regressions, and MakeLoss of any dtype).
template <Regression K, class T>
struct RegressionForward {
  const T* x;
  T* y;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    const C v = static_cast<C>(x[i]);
    if constexpr (K == kLogistic)
      mxplug::StoreAs<C>(y[i], req, C(1) / (C(1) + std::exp(-v)));
    else
      mxplug::StoreAs<C>(y[i], req, v);
  }
};

// grad = scale / num_output * (y - label) (its sign for MAE), num_output per instance.
template <Regression K, class T, class L>
struct RegressionBackward {
  const T* y;
  const L* label;
  T* dx;
  double scale;  // grad_scale / num_output
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    const double diff = AsDouble(y[i]) - AsDouble(label[i]);
    const double d = K == kMAE ? (diff > 0 ? 1.0 : diff < 0 ? -1.0 : 0.0) : diff;
    mxplug::StoreAs<C>(dx[i], req, static_cast<C>(scale * d));
  }
};

/*! \brief A regression output on a device whose element loop is Loop. */
template <Regression K, class Loop>
class RegressionKernel : public mxplug::Operator {
 public:
  RegressionKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    mxplug::RealTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(ctx, out[0].Size(),
                RegressionForward<K, T>{in[0].dptr<T>(), out[0].dptr<T>(), req[0]});
    });
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>&,
                const std::vector<TBlob>& in, const std::vector<TBlob>& out,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    Loop::Zero(ctx, ig[1], req[1]);  // labels get no gradient
    if (req[0] == mxplug::kNullOp) return;
    const TShape& ls = in[1].shape_;
    const double num_output = ls.ndim() > 0 && ls[0] > 0 ? double(ls.Size()) / double(ls[0]) : 1.0;
    mxplug::RealTypeSwitch(out[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      mxplug::TypeSwitch(in[1].type_flag_, [&](auto label_zero) {
        using L = decltype(label_zero);
        Loop::Run(ctx, out[0].Size(),
                  RegressionBackward<K, T, L>{out[0].dptr<T>(), in[1].dptr<L>(), ig[0].dptr<T>(),
                                              p_.grad_scale / num_output, req[0]});
      });
    });
  }

 private:
  RegressionParam p_;
};

// ---- MakeLoss: forward identity; backward grad_scale (normalised), whatever the incoming
// gradient ----

enum LossNorm { kNullNorm, kBatchNorm, kValidNorm };

struct MakeLossParam : mxplug::Parameter<MakeLossParam> {
  float grad_scale, valid_thresh;
  int normalization;
  MXPLUG_DECLARE_PARAMETER(MakeLossParam) {
    MXPLUG_DECLARE_FIELD(grad_scale)
        .set_default(1.0f)
        .describe("Gradient scale as a supplement to unary ops.");
    MXPLUG_DECLARE_FIELD(valid_thresh)
        .set_default(0.0f)
        .describe("Elements above this count as valid (normalization='valid').");
    MXPLUG_DECLARE_FIELD(normalization)
        .set_default(kNullNorm)
        .add_enum("null", kNullNorm)
        .add_enum("batch", kBatchNorm)
        .add_enum("valid", kValidNorm)
        .describe(
            "Divide the gradient by nothing, the batch size, or the number of valid elements.");
  }
};

class MakeLossProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    return mxplug::InferSameShape(in, out);
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>&, const std::vector<int>&,
                                             const std::vector<int>& out) const override {
    if (param_.normalization == kValidNorm) return {out[0]};
    return {};
  }
  // normalization 'valid' counts the valid elements on the device, into temp space.
  std::vector<mxplug::ResourceRequest> BackwardResource(const std::vector<TShape>&) const override {
    if (param_.normalization == kValidNorm) return {mxplug::ResourceRequest::kTempSpace};
    return {};
  }

 private:
  MakeLossParam param_;
};

struct AboveThreshold {
  float thresh;
  MXPLUG_XINLINE bool operator()(double v) const { return v > static_cast<double>(thresh); }
};

// The constant gradient, divided by *valid when given.
template <class T>
struct MakeLossGrad {
  T* dx;
  double scale;
  const double* valid;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    mxplug::StoreAs<C>(dx[i], req, static_cast<C>(valid ? scale / *valid : scale));
  }
};

/*! \brief MakeLoss on a device whose element loop is Loop. */
template <class Loop>
class MakeLossKernel : public mxplug::Operator {
 public:
  MakeLossKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    // In place (the same memory) the output is already there.
    if (req[0] == mxplug::kNullOp || (in[0].dptr_ == out[0].dptr_ && req[0] != mxplug::kAddTo))
      return;
    mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(ctx, out[0].Size(),
                RegressionForward<kLinear, T>{in[0].dptr<T>(), out[0].dptr<T>(), req[0]});
    });
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>&, const std::vector<TBlob>&,
                const std::vector<TBlob>& out, const std::vector<OpReqType>& req,
                const std::vector<TBlob>& ig, const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    double scale = p_.grad_scale;
    const TShape& s = ig[0].shape_;
    if (p_.normalization == kBatchNorm && s.ndim() > 0) scale /= double(s[0]);
    mxplug::RealTypeSwitch(ig[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      double* valid = nullptr;
      if (p_.normalization == kValidNorm) {
        valid = ctx.requested[0].get_space_typed<double>(1);
        Loop::Run(ctx, 1,
                  CountAtLeastOne<T, AboveThreshold>{
                      out[0].dptr<T>(), out[0].Size(), {p_.valid_thresh}, valid});
      }
      Loop::Run(ctx, ig[0].Size(), MakeLossGrad<T>{ig[0].dptr<T>(), scale, valid, req[0]});
    });
  }

 private:
  MakeLossParam p_;
};

/*! \brief Calls visit.template Regression<K>(name, doc) and visit.MakeLoss(name, doc) for every
 * loss output: the one list the definitions and each device's kernels register from. */
template <class Visitor>
void ForEachLossOp(Visitor&& visit) {
  visit.template Regression<kLinear>(
      "LinearRegressionOutput",
      "Identity in forward; the squared-loss gradient (y - label) in backward.");
  visit.template Regression<kLogistic>(
      "LogisticRegressionOutput",
      "Sigmoid in forward; the logistic-loss gradient (y - label) in backward.");
  visit.template Regression<kMAE>(
      "MAERegressionOutput",
      "Identity in forward; the absolute-loss gradient sign(y - label) in backward.");
  for (const char* name : {"MakeLoss", "make_loss"})
    visit.MakeLoss(name,
                   "Marks data as a loss: identity in forward, grad_scale as its gradient in "
                   "backward.");
}

/*! \brief Registers the kernels of every loss output on a device whose element loop is Loop. */
template <class Loop>
struct LossKernels {
  DLDeviceType device;
  template <Regression K>
  void Regression(const char* name, const char*) const {
    mxplug::sdk::RegisterKernel<RegressionKernel<K, Loop>>(name, device);
  }
  void MakeLoss(const char* name, const char*) const {
    mxplug::sdk::RegisterKernel<MakeLossKernel<Loop>>(name, device);
  }
};

}  // namespace mxplug_nn

#endif  // MXPLUG_PLUGINS_NN_LOSS_H_
