// Definitions of the optimizer updates (MXNet's names and parameters): one fused operator per
// optimizer step, as MXNet's optimizer_op.cc has them. Each reads the weight and its gradient,
// updates its optimizer states (auxiliary states: MXNet's mutable inputs) in place, and writes the
// new weight, usually over the old one (`out=weight`): one pass over the elements instead of the
// five to ten separate ops an NDArray formula would push.
//
// Every op first rescales the gradient (rescale_grad) and, for clip_gradient > 0, clips it to
// [-clip_gradient, clip_gradient]; where weight decay enters differs per optimizer, as in MXNet.
//
// A rule's Step is the math of one element, the same on every device (MXPLUG_XINLINE);
// UpdateKernel runs it over the elements with a device's loop: update.cc registers the
// definitions and the CPU kernels, devices/cuda/kernels/update.cu the CUDA kernels.
#ifndef MXPLUG_PLUGINS_OPTIMIZER_UPDATE_H_
#define MXPLUG_PLUGINS_OPTIMIZER_UPDATE_H_

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "mxplug/plugin.hpp"

namespace mxplug_optimizer {

using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;

// The fields every update shares, declared by each op's parameter struct in MXNet's order:
// lr first, the optimizer's own fields, then wd, rescale_grad and clip_gradient.
struct GradFields {
  float lr = 0, wd = 0, rescale_grad = 1, clip_gradient = -1;

  void DeclareLr(mxplug::ParamDeclarer& mxplug_declarer_) {
    MXPLUG_DECLARE_FIELD(lr).describe("Learning rate");
  }
  void DeclareGradFields(mxplug::ParamDeclarer& mxplug_declarer_) {
    MXPLUG_DECLARE_FIELD(wd).set_default(0.0f).describe(
        "Weight decay augments the objective function with a regularization term that penalizes "
        "large weights. The penalty scales with the square of the magnitude of each weight.");
    MXPLUG_DECLARE_FIELD(rescale_grad)
        .set_default(1.0f)
        .describe("Rescale gradient to grad = rescale_grad*grad.");
    MXPLUG_DECLARE_FIELD(clip_gradient)
        .set_default(-1.0f)
        .describe(
            "Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, "
            "gradient clipping is turned off. grad = max(min(grad, clip_gradient), "
            "-clip_gradient).");
  }
  // rescale_grad * g, clipped when clip_gradient > 0.
  template <typename C>
  MXPLUG_XINLINE C Scaled(C g) const {
    g *= C(rescale_grad);
    if (clip_gradient > 0) g = std::max(std::min(g, C(clip_gradient)), C(-clip_gradient));
    return g;
  }
  // Adam and RMSProp add the decay before clipping: clip(rescale_grad * g + wd * w).
  template <typename C>
  MXPLUG_XINLINE C ScaledWithDecay(C g, C w) const {
    g = C(rescale_grad) * g + C(wd) * w;
    if (clip_gradient > 0) g = std::max(std::min(g, C(clip_gradient)), C(-clip_gradient));
    return g;
  }
};

// lazy_update: MXNet's switch for row-sparse gradients; arrays here are dense, so it is accepted
// and has no effect.
#define MXPLUG_LAZY_UPDATE_FIELD                                                                  \
  MXPLUG_DECLARE_FIELD(lazy_update)                                                               \
      .set_default(true)                                                                          \
      .describe(                                                                                  \
          "Accepted for compatibility: lazy updates apply to row_sparse gradients, which mxplug " \
          "does "                                                                                 \
          "not have.")

struct SGDParam : mxplug::Parameter<SGDParam>, GradFields {
  bool lazy_update = true;
  MXPLUG_DECLARE_PARAMETER(SGDParam) {
    DeclareLr(mxplug_declarer_);
    DeclareGradFields(mxplug_declarer_);
    MXPLUG_LAZY_UPDATE_FIELD;
  }
};

struct MomentumParam : mxplug::Parameter<MomentumParam>, GradFields {
  float momentum = 0;
  bool lazy_update = true;
  MXPLUG_DECLARE_PARAMETER(MomentumParam) {
    DeclareLr(mxplug_declarer_);
    MXPLUG_DECLARE_FIELD(momentum).set_default(0.0f).describe(
        "The decay rate of momentum estimates at each epoch.");
    DeclareGradFields(mxplug_declarer_);
    MXPLUG_LAZY_UPDATE_FIELD;
  }
};

struct AdamParam : mxplug::Parameter<AdamParam>, GradFields {
  float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f;
  bool lazy_update = true;
  MXPLUG_DECLARE_PARAMETER(AdamParam) {
    DeclareLr(mxplug_declarer_);
    MXPLUG_DECLARE_FIELD(beta1).set_default(0.9f).describe(
        "The decay rate for the 1st moment estimates.");
    MXPLUG_DECLARE_FIELD(beta2).set_default(0.999f).describe(
        "The decay rate for the 2nd moment estimates.");
    MXPLUG_DECLARE_FIELD(epsilon).set_default(1e-8f).describe(
        "A small constant for numerical stability.");
    DeclareGradFields(mxplug_declarer_);
    MXPLUG_LAZY_UPDATE_FIELD;
  }
};

// Centered: Graves' RMSProp (rmspropalex_update), which has gamma2.
template <bool Centered>
struct RMSPropParamOf : mxplug::Parameter<RMSPropParamOf<Centered>>, GradFields {
  float gamma1 = 0.95f, gamma2 = 0.9f, epsilon = 1e-8f, clip_weights = -1;
  MXPLUG_DECLARE_PARAMETER(RMSPropParamOf) {
    DeclareLr(mxplug_declarer_);
    MXPLUG_DECLARE_FIELD(gamma1).set_default(0.95f).describe(
        "The decay rate of momentum estimates.");
    if constexpr (Centered) MXPLUG_DECLARE_FIELD(gamma2).set_default(0.9f).describe("Decay rate.");
    MXPLUG_DECLARE_FIELD(epsilon).set_default(1e-8f).describe(
        "A small constant for numerical stability.");
    DeclareGradFields(mxplug_declarer_);
    MXPLUG_DECLARE_FIELD(clip_weights)
        .set_default(-1.0f)
        .describe(
            "Clip weights to the range of [-clip_weights, clip_weights] If clip_weights <= 0, "
            "weight "
            "clipping is turned off. weights = max(min(weights, clip_weights), -clip_weights).");
  }
  template <typename C>
  MXPLUG_XINLINE C ClipWeight(C w) const {
    return clip_weights > 0 ? std::max(std::min(w, C(clip_weights)), C(-clip_weights)) : w;
  }
};
using RMSPropParam = RMSPropParamOf<false>;
using RMSPropAlexParam = RMSPropParamOf<true>;

struct AdaGradParam : mxplug::Parameter<AdaGradParam>, GradFields {
  float epsilon = 1e-7f;
  MXPLUG_DECLARE_PARAMETER(AdaGradParam) {
    DeclareLr(mxplug_declarer_);
    MXPLUG_DECLARE_FIELD(epsilon).set_default(1e-7f).describe(
        "A small constant for numerical stability.");
    DeclareGradFields(mxplug_declarer_);
  }
};

// ---- The update rules: the new weight from the old one, the gradient and the states at one
// element; states are updated through the references. C is the compute type. ----

struct SGD {
  using Param = SGDParam;
  static constexpr std::array<const char*, 0> kStates{};
  template <typename C, typename S>
  MXPLUG_XINLINE static C Step(const Param& p, C w, C g, S&) {
    return (C(1) - C(p.lr) * C(p.wd)) * w - C(p.lr) * p.Scaled(g);
  }
};

struct SGDMomentum {
  using Param = MomentumParam;
  static constexpr std::array<const char*, 1> kStates{"mom"};
  template <typename C, typename S>
  MXPLUG_XINLINE static C Step(const Param& p, C w, C g, S& s) {
    C& mom = s[0];
    mom = C(p.momentum) * mom - C(p.lr) * C(p.wd) * w - C(p.lr) * p.Scaled(g);
    return w + mom;
  }
};

// The momentum holds lr-scaled steps, as in sgd_mom_update (MXNet's state convention). MXNet 1.x
// writes the new weight before it updates the momentum, whose decay term then reads the weight
// again: called in place (out=weight, as its optimizer calls it) and in mp_nag_mom_update, that
// is the new weight, and so it is here (with out elsewhere MXNet's reads the old one).
struct NAGMomentum {
  using Param = MomentumParam;
  static constexpr std::array<const char*, 1> kStates{"mom"};
  template <typename C, typename S>
  MXPLUG_XINLINE static C Step(const Param& p, C w, C g, S& s) {
    C& mom = s[0];
    const C decayed = C(p.momentum) * mom;
    const C next =
        w - decayed + (C(p.momentum) + C(1)) * (decayed - C(p.lr) * (p.Scaled(g) + C(p.wd) * w));
    mom = decayed - C(p.lr) * (p.Scaled(g) + C(p.wd) * next);
    return next;
  }
};

struct Adam {
  using Param = AdamParam;
  static constexpr std::array<const char*, 2> kStates{"mean", "var"};
  template <typename C, typename S>
  MXPLUG_XINLINE static C Step(const Param& p, C w, C g, S& s) {
    C &mean = s[0], &var = s[1];
    const C grad = p.ScaledWithDecay(g, w);
    mean = C(p.beta1) * mean + (C(1) - C(p.beta1)) * grad;
    var = C(p.beta2) * var + (C(1) - C(p.beta2)) * grad * grad;
    return w - C(p.lr) * mean / (std::sqrt(var) + C(p.epsilon));
  }
};

struct RMSProp {
  using Param = RMSPropParam;
  static constexpr std::array<const char*, 1> kStates{"n"};
  template <typename C, typename S>
  MXPLUG_XINLINE static C Step(const Param& p, C w, C g, S& s) {
    C& n = s[0];
    const C grad = p.ScaledWithDecay(g, w);
    n = (C(1) - C(p.gamma1)) * grad * grad + C(p.gamma1) * n;
    return p.ClipWeight(w - C(p.lr) * grad / std::sqrt(n + C(p.epsilon)));
  }
};

// Graves' centred RMSProp (MXNet's rmspropalex_update).
struct RMSPropAlex {
  using Param = RMSPropAlexParam;
  static constexpr std::array<const char*, 3> kStates{"n", "g", "delta"};
  template <typename C, typename S>
  MXPLUG_XINLINE static C Step(const Param& p, C w, C g, S& s) {
    C &n = s[0], &mean = s[1], &delta = s[2];
    const C grad = p.ScaledWithDecay(g, w);
    n = (C(1) - C(p.gamma1)) * grad * grad + C(p.gamma1) * n;
    mean = (C(1) - C(p.gamma1)) * grad + C(p.gamma1) * mean;
    delta = C(p.gamma2) * delta - C(p.lr) * grad / std::sqrt(n - mean * mean + C(p.epsilon));
    return p.ClipWeight(w + delta);
  }
};

// MXNet 1.x's AdaGrad step (its Python formula for dense gradients, fused).
struct AdaGrad {
  using Param = AdaGradParam;
  static constexpr std::array<const char*, 1> kStates{"history"};
  template <typename C, typename S>
  MXPLUG_XINLINE static C Step(const Param& p, C w, C g, S& s) {
    C& history = s[0];
    const C grad = p.Scaled(g);
    history += grad * grad;
    return w - C(p.lr) * (grad / std::sqrt(history + C(p.epsilon)) + C(p.wd) * w);
  }
};

// weight and grad in, the states as auxiliary states, the new weight out (in place over weight).
template <typename Rule>
class UpdateProp : public mxplug::OperatorProperty {
 public:
  using Param = typename Rule::Param;
  explicit UpdateProp(Param defaults = {}) : param_(defaults) {}
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {"weight", "grad"}; }
  std::vector<std::string> ListAuxiliaryStates() const override {
    return std::vector<std::string>(Rule::kStates.begin(), Rule::kStates.end());
  }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>* aux) const override {
    const TShape& w = (*in)[0];
    if (w.ndim() < 0) return false;
    auto like_weight = [&](TShape* s, const char* name) {
      if (s->ndim() < 0)
        *s = w;
      else if (*s != w)
        throw std::invalid_argument(std::string(name) + " has shape " + s->ToString() +
                                    ", expected the weight's shape " + w.ToString());
    };
    like_weight(&(*in)[1], "grad");
    const std::vector<std::string> names = ListAuxiliaryStates();
    for (size_t k = 0; k < aux->size(); ++k) like_weight(&(*aux)[k], names[k].c_str());
    (*out)[0] = w;
    return w.IsKnown();
  }
  std::vector<std::pair<int, int>> ForwardInplaceOption(
      const std::vector<int>& in, const std::vector<int>& out) const override {
    return {{in[0], out[0]}};
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>&, const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return {};
  }

 private:
  Param param_;
};

/*! \brief Rule's step at every element i: the states are read, stepped and written back, and the
 * new weight written as req says (weight was read first: in place is safe). */
template <typename Rule, typename T>
struct UpdateElements {
  static constexpr int kN = static_cast<int>(Rule::kStates.size());
  typename Rule::Param p;
  const T* w;
  const T* g;
  std::array<T*, kN> states;
  T* out;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    std::array<T, kN> s{};
    for (int k = 0; k < kN; ++k) s[k] = states[k][i];
    const T updated = Rule::template Step<T>(p, w[i], g[i], s);
    for (int k = 0; k < kN; ++k) states[k][i] = s[k];
    mxplug::StoreAs<T>(out[i], req, updated);
  }
};

/*! \brief What every update's kernel shares: its parameters, and no gradient. */
template <typename Rule>
class UpdateKernelBase : public mxplug::Operator {
 public:
  UpdateKernelBase(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }
  void Backward(const mxplug::OpContext&, const std::vector<TBlob>&, const std::vector<TBlob>&,
                const std::vector<TBlob>&, const std::vector<OpReqType>&, const std::vector<TBlob>&,
                const std::vector<TBlob>&) override {
    throw std::logic_error("an optimizer update has no gradient");
  }

 protected:
  typename Rule::Param p_;
};

/*! \brief Rule's update on a device whose element loop is Loop (mxplug::CpuLoop, the CUDA
 * plugin's CudaLoop). */
template <typename Rule, typename Loop>
class UpdateKernel : public UpdateKernelBase<Rule> {
 public:
  using UpdateKernelBase<Rule>::UpdateKernelBase;
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>& aux) override {
    mxplug::RealTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      UpdateElements<Rule, T> f{this->p_, in[0].dptr<T>(),  in[1].dptr<T>(),
                                {},       out[0].dptr<T>(), req[0]};
      for (int k = 0; k < f.kN; ++k) f.states[k] = aux[k].dptr<T>();
      Loop::Run(ctx, in[0].Size(), f);
    });
  }
};

// ---- Multi-precision updates (MXNet's mp_sgd_update, mp_sgd_mom_update, mp_nag_mom_update) ----
// A float16 weight (any float weight, as in MXNet) is stepped through weight32, its float32 master
// copy, a mutable input after the rule's states: the rule runs in float32 on weight32 and its
// float32 states, and the weight gets weight32 rounded to its dtype. The optimizers'
// multi_precision calls these (python/mxplug/optimizer.py), as MXNet's SGD and NAG do.

template <typename Rule>
class MPUpdateProp : public UpdateProp<Rule> {
 public:
  using UpdateProp<Rule>::UpdateProp;
  std::vector<std::string> ListAuxiliaryStates() const override {
    std::vector<std::string> names(Rule::kStates.size() + 1, "weight32");
    for (size_t k = 0; k < Rule::kStates.size(); ++k) names[k] = Rule::kStates[k];
    return names;
  }
  // weight and grad share a float dtype; the states and weight32 are float32.
  bool InferType(std::vector<int>* in, std::vector<int>* out,
                 std::vector<int>* aux) const override {
    const int t = (*in)[0];
    if (t == kMXPUnknownDType) return false;
    if (t != kMXPFloat16 && t != kMXPFloat32 && t != kMXPFloat64)
      throw std::invalid_argument("weight has dtype " + mxplug::DTypeName(t) +
                                  "; expected float16, float32 or float64");
    if ((*in)[1] != kMXPUnknownDType && (*in)[1] != t)
      throw std::invalid_argument("grad has dtype " + mxplug::DTypeName((*in)[1]) +
                                  ", expected the weight's " + mxplug::DTypeName(t));
    (*in)[1] = t;
    const std::vector<std::string> names = ListAuxiliaryStates();
    for (size_t k = 0; k < aux->size(); ++k) {
      if ((*aux)[k] != kMXPUnknownDType && (*aux)[k] != kMXPFloat32)
        throw std::invalid_argument(names[k] + " has dtype " + mxplug::DTypeName((*aux)[k]) +
                                    "; expected float32");
      (*aux)[k] = kMXPFloat32;
    }
    (*out)[0] = t;
    return true;
  }
};

/*! \brief Rule's step at element i on weight32 in float32; the weight gets it in its dtype. */
template <typename Rule, typename T>
struct MPUpdateElements {
  static constexpr int kN = static_cast<int>(Rule::kStates.size());
  typename Rule::Param p;
  const T* g;
  std::array<float*, kN + 1> states;  // the rule's, then weight32
  T* out;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    std::array<float, kN> s{};
    for (int k = 0; k < kN; ++k) s[k] = states[k][i];
    const float updated = Rule::template Step<float>(p, states[kN][i], static_cast<float>(g[i]), s);
    for (int k = 0; k < kN; ++k) states[k][i] = s[k];
    states[kN][i] = updated;
    mxplug::StoreAs<float>(out[i], req, updated);
  }
};

template <typename Rule, typename Loop>
class MPUpdateKernel : public UpdateKernelBase<Rule> {
 public:
  using UpdateKernelBase<Rule>::UpdateKernelBase;
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>& aux) override {
    mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      if constexpr (std::is_integral_v<T>) {
        throw std::invalid_argument("weight has dtype " + mxplug::DTypeName(in[0].type_flag_) +
                                    "; expected float16, float32 or float64");
      } else {
        MPUpdateElements<Rule, T> f{this->p_, in[1].dptr<T>(), {}, out[0].dptr<T>(), req[0]};
        for (int k = 0; k <= f.kN; ++k) f.states[k] = aux[k].dptr<float>();
        Loop::Run(ctx, in[0].Size(), f);
      }
    });
  }
};

/*! \brief Calls visit.template MPOp<Rule>(name, doc) for every multi-precision update. */
template <class Visitor>
void ForEachMPUpdateOp(Visitor&& visit) {
  visit.template MPOp<SGD>("mp_sgd_update",
                           "sgd_update on weight32, a float32 copy of the weight, which then gets "
                           "weight32 in its own dtype.");
  visit.template MPOp<SGDMomentum>(
      "mp_sgd_mom_update",
      "sgd_mom_update on weight32 (a float32 copy of the weight) with a float32 mom; the weight "
      "then gets weight32 in its own dtype.");
  visit.template MPOp<NAGMomentum>(
      "mp_nag_mom_update",
      "nag_mom_update on weight32 (a float32 copy of the weight) with a float32 mom; the weight "
      "then gets weight32 in its own dtype.");
}

/*! \brief Calls visit.template Op<Rule>(name, doc) for every update: the one list the definitions
 * and each device's kernels register from. */
template <class Visitor>
void ForEachUpdateOp(Visitor&& visit) {
  visit.template Op<SGD>("sgd_update",
                         "SGD: weight = weight - lr * (clip(rescale_grad * grad) + wd * weight).");
  visit.template Op<SGDMomentum>(
      "sgd_mom_update",
      "SGD with momentum: mom = momentum * mom - lr * (clip(rescale_grad * grad) + wd * weight); "
      "weight += mom.");
  visit.template Op<NAGMomentum>(
      "nag_mom_update",
      "Nesterov accelerated gradient: g = clip(rescale_grad * grad) + wd * weight; "
      "mom = momentum * mom - lr * g; weight += momentum * mom - lr * g; then, as MXNet's in-place "
      "update does, mom's decay term is taken again at the new weight.");
  visit.template Op<Adam>(
      "adam_update",
      "Adam: g = clip(rescale_grad * grad + wd * weight); mean = beta1 * mean + (1 - beta1) * g; "
      "var = beta2 * var + (1 - beta2) * g^2; weight -= lr * mean / (sqrt(var) + epsilon). The "
      "optimizer folds the bias correction into lr.");
  visit.template Op<RMSProp>(
      "rmsprop_update",
      "RMSProp (Tieleman and Hinton): g = clip(rescale_grad * grad + wd * weight); "
      "n = (1 - gamma1) * g^2 + gamma1 * n; weight -= lr * g / sqrt(n + epsilon); clip_weights.");
  visit.template Op<RMSPropAlex>(
      "rmspropalex_update",
      "Centred RMSProp (Graves 2013): n and g are the decaying means of grad^2 and grad; "
      "delta = gamma2 * delta - lr * grad / sqrt(n - g^2 + epsilon); weight += delta.");
  visit.template Op<AdaGrad>(
      "adagrad_update",
      "AdaGrad, as MXNet 1.x's optimizer computes it: g = clip(rescale_grad * grad); "
      "history += g^2; weight -= lr * (g / sqrt(history + epsilon) + wd * weight).");
}

/*! \brief Registers the kernels of every update on a device whose loop is Loop. */
template <class Loop>
struct UpdateKernels {
  DLDeviceType device;
  template <class Rule>
  void Op(const char* name, const char*) const {
    mxplug::sdk::RegisterKernel<UpdateKernel<Rule, Loop>>(name, device);
  }
  template <class Rule>
  void MPOp(const char* name, const char*) const {
    mxplug::sdk::RegisterKernel<MPUpdateKernel<Rule, Loop>>(name, device);
  }
  void RegisterAll() const {
    ForEachUpdateOp(*this);
    ForEachMPUpdateOp(*this);
  }
};

}  // namespace mxplug_optimizer

#endif  // MXPLUG_PLUGINS_OPTIMIZER_UPDATE_H_
