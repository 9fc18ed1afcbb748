// Definitions of the output layers whose backward is the loss gradient, ignoring the incoming
// gradient (MXNet): LinearRegressionOutput, LogisticRegressionOutput, MAERegressionOutput,
// SVMOutput and MakeLoss, with MXNet's names and parameters. Their kernels are written once here
// over a device's element loop; loss.cc registers the definitions and the CPU kernels,
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

/*! \brief What the output layers with a label share: data and label in, the data's shape and
 * dtype out (in place), a backward that reads the label and the output. */
template <class Param>
class LabelledOutputProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {"data", "label"}; }
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

 protected:
  Param param_;
};

template <Regression K>
class RegressionProp : public LabelledOutputProp<RegressionParam> {
 public:
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

/*! \brief out = in (nothing to do in place), any dtype: the forward of the layers that only
 * mark their input (MakeLoss, SVMOutput, IdentityAttachKLSparseReg). */
template <class Loop>
void IdentityForward(const mxplug::OpContext& ctx, const TBlob& in, OpReqType req,
                     const TBlob& out) {
  if (req == mxplug::kNullOp || (in.dptr_ == out.dptr_ && req != mxplug::kAddTo)) return;
  mxplug::TypeSwitch(in.type_flag_, [&](auto zero) {
    using T = decltype(zero);
    Loop::Run(ctx, out.Size(), RegressionForward<kLinear, T>{in.dptr<T>(), out.dptr<T>(), req});
  });
}

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
    IdentityForward<Loop>(ctx, in[0], req[0], out[0]);
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

// ---- SVMOutput: identity in forward; the hinge loss's gradient in backward, per row of the data
// (its last axis the classes, one label per row): L2-SVM (squared hinge) or, use_linear, L1. ----

struct SVMOutputParam : mxplug::Parameter<SVMOutputParam> {
  float margin = 1, regularization_coefficient = 1;
  bool use_linear = false;
  MXPLUG_DECLARE_PARAMETER(SVMOutputParam) {
    MXPLUG_DECLARE_FIELD(margin).set_default(1.0f).describe(
        "The margin: the label's class is pushed above it, the others below -margin.");
    MXPLUG_DECLARE_FIELD(regularization_coefficient)
        .set_default(1.0f)
        .describe("The scale of the loss's gradient (the SVM's C).");
    MXPLUG_DECLARE_FIELD(use_linear)
        .set_default(false)
        .describe("The L1-SVM's (linear hinge) gradient instead of the L2-SVM's (squared hinge).");
  }
};

class SVMOutputProp : public LabelledOutputProp<SVMOutputParam> {
 public:
  // label: the data's shape without its last axis.
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& d = (*in)[0];
    if (d.ndim() < 0) return false;
    if (d.ndim() < 1) throw std::invalid_argument("data must have at least one axis (the classes)");
    mxplug::InferParameterShape(&(*in)[1], TShape(std::vector<int64_t>(d.begin(), d.end() - 1)),
                                "label", d);
    (*out)[0] = d;
    return d.IsKnown();
  }
};

// Element i of a row of `classes` (x: the output, which is the data): the label's class is pushed
// above margin, the others below -margin (MXNet's L1_SVM and L2_SVM).
template <class T, class L>
struct SVMGradient {
  SVMOutputParam p;
  const T* x;
  const L* label;
  int64_t classes;
  T* dx;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    const C v = C(x[i]), margin = C(p.margin), reg = C(p.regularization_coefficient);
    const bool is_label = static_cast<int64_t>(AsDouble(label[i / classes])) == i % classes;
    C g;
    if (p.use_linear)
      g = is_label ? (margin > v ? -reg : C(0)) : (margin > -v ? reg : C(0));
    else
      g = is_label ? C(-2) * reg * (margin - v > C(0) ? margin - v : C(0))
                   : C(2) * reg * (margin + v > C(0) ? margin + v : C(0));
    mxplug::StoreAs<C>(dx[i], req, g);
  }
};

template <class Loop>
class SVMOutputKernel : public mxplug::Operator {
 public:
  SVMOutputKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    IdentityForward<Loop>(ctx, in[0], req[0], out[0]);
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>&,
                const std::vector<TBlob>& in, const std::vector<TBlob>& out,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    Loop::Zero(ctx, ig[1], req[1]);  // labels get no gradient
    if (req[0] == mxplug::kNullOp || out[0].Size() == 0) return;
    const int64_t classes = out[0].shape_[out[0].shape_.ndim() - 1];
    mxplug::FloatTypeSwitch(out[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      mxplug::TypeSwitch(in[1].type_flag_, [&](auto label_zero) {
        using L = decltype(label_zero);
        Loop::Run(ctx, out[0].Size(),
                  SVMGradient<T, L>{p_, out[0].dptr<T>(), in[1].dptr<L>(), classes, ig[0].dptr<T>(),
                                    req[0]});
      });
    });
  }

 private:
  SVMOutputParam p_;
};

/*! \brief Calls visit.template Regression<K>(name, doc), visit.SVMOutput(name, doc) and
 * visit.MakeLoss(name, doc) for every loss output: the one list the definitions and each device's
 * kernels register from. */
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
  visit.SVMOutput("SVMOutput",
                  "Identity in forward; in backward the gradient of the hinge loss of each row "
                  "(the last axis: the classes) against its label: squared (L2-SVM) or, "
                  "use_linear, linear (L1-SVM), scaled by regularization_coefficient.");
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
  void SVMOutput(const char* name, const char*) const {
    mxplug::sdk::RegisterKernel<SVMOutputKernel<Loop>>(name, device);
  }
};

}  // namespace mxplug_nn

#endif  // MXPLUG_PLUGINS_NN_LOSS_H_
