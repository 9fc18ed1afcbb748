// Definitions of the optimizer updates (MXNet's names and parameters): one fused operator per
// optimizer step, as MXNet's optimizer_op.cc has them. Each reads the weight and its gradient,
// updates its optimizer states (auxiliary states: MXNet's mutable inputs) in place, and writes the
// new weight, usually over the old one (`out=weight`): one pass over the elements instead of the
// five to ten separate ops an NDArray formula would push.
//
// Every op first rescales the gradient (rescale_grad) and, for clip_gradient >= 0, clips it to
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

// MXNet's updates clip where the bound is >= 0 (0 clips everything to 0), though their
// documentation says clipping is off for bounds <= 0.
template <typename C>
MXPLUG_XINLINE C ClipIfSet(C g, float clip) {
  return clip >= 0 ? std::max(std::min(g, C(clip)), C(-clip)) : g;
}

// The fields every update shares, declared by each op's parameter struct in MXNet's order:
// lr first, the optimizer's own fields, then wd, rescale_grad and clip_gradient.
struct GradFields {
  float lr = 0, wd = 0, rescale_grad = 1, clip_gradient = -1;

  void DeclareLr(mxplug::ParamDeclarer& mxplug_declarer_) {
    MXPLUG_DECLARE_FIELD(lr).describe("Learning rate");
  }
  void DeclareGradFields(mxplug::ParamDeclarer& mxplug_declarer_) {
    DeclareWd(mxplug_declarer_, wd);
    DeclareRescaleAndClip(mxplug_declarer_, rescale_grad, clip_gradient, "clip_gradient");
  }
  // The same fields, with MXNet's words, for parameter structs that hold them under other names
  // or without a default (FTML's clip_grad, LAMB's required wd).
  static void DeclareWd(mxplug::ParamDeclarer& d, float& wd, bool required = false) {
    auto field = d.Field("wd", wd);
    if (!required) field.set_default(0.0f);
    field.describe(
        "Weight decay augments the objective function with a regularization term that penalizes "
        "large weights. The penalty scales with the square of the magnitude of each weight.");
  }
  static void DeclareRescaleAndClip(mxplug::ParamDeclarer& d, float& rescale_grad, float& clip,
                                    const char* clip_name) {
    d.Field("rescale_grad", rescale_grad)
        .set_default(1.0f)
        .describe("Rescale gradient to grad = rescale_grad*grad.");
    d.Field(clip_name, clip)
        .set_default(-1.0f)
        .describe(
            "Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, "
            "gradient clipping is turned off. grad = max(min(grad, clip_gradient), "
            "-clip_gradient).");
  }
  // Adam's decay rates of the moments, and its epsilon.
  static void DeclareMoments(mxplug::ParamDeclarer& d, float& beta1, float& beta2, float& epsilon,
                             float epsilon_default = 1e-8f) {
    d.Field("beta1", beta1)
        .set_default(0.9f)
        .describe("The decay rate for the 1st moment estimates.");
    d.Field("beta2", beta2)
        .set_default(0.999f)
        .describe("The decay rate for the 2nd moment estimates.");
    d.Field("epsilon", epsilon)
        .set_default(epsilon_default)
        .describe("A small constant for numerical stability.");
  }
  // rescale_grad * g, clipped when clip_gradient >= 0.
  template <typename C>
  MXPLUG_XINLINE C Scaled(C g) const {
    return ClipIfSet(C(rescale_grad) * g, clip_gradient);
  }
  // Adam and RMSProp add the decay before clipping: clip(rescale_grad * g + wd * w).
  template <typename C>
  MXPLUG_XINLINE C ScaledWithDecay(C g, C w) const {
    return ClipIfSet(C(rescale_grad) * g + C(wd) * w, clip_gradient);
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
    GradFields::DeclareMoments(mxplug_declarer_, beta1, beta2, epsilon);
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
    return ClipIfSet(w, clip_weights);
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

template <typename C>
MXPLUG_XINLINE C Sign(C x) {
  return C((x > C(0)) - (x < C(0)));
}

struct SignSGDParam : mxplug::Parameter<SignSGDParam>, GradFields {
  MXPLUG_DECLARE_PARAMETER(SignSGDParam) {
    DeclareLr(mxplug_declarer_);
    DeclareGradFields(mxplug_declarer_);
  }
};

struct SignumParam : mxplug::Parameter<SignumParam>, GradFields {
  float momentum = 0, wd_lh = 0;
  MXPLUG_DECLARE_PARAMETER(SignumParam) {
    DeclareLr(mxplug_declarer_);
    MXPLUG_DECLARE_FIELD(momentum).set_default(0.0f).describe(
        "The decay rate of momentum estimates at each epoch.");
    DeclareGradFields(mxplug_declarer_);
    MXPLUG_DECLARE_FIELD(wd_lh).set_default(0.0f).describe(
        "The amount of weight decay that does not go into gradient/momentum calculations "
        "otherwise do weight decay algorithmically only.");
  }
};

// FTML names its clipping bound clip_grad, and its epsilon is a double, as in MXNet.
struct FTMLParam : mxplug::Parameter<FTMLParam> {
  float lr = 0, beta1 = 0.6f, beta2 = 0.999f, wd = 0, rescale_grad = 1, clip_grad = -1;
  double epsilon = 1e-8;
  int t = 0;
  MXPLUG_DECLARE_PARAMETER(FTMLParam) {
    MXPLUG_DECLARE_FIELD(lr).describe("Learning rate.");
    MXPLUG_DECLARE_FIELD(beta1)
        .set_default(0.6f)
        .set_range(0.0f, 1.0f)
        .describe("Generally close to 0.5.");
    MXPLUG_DECLARE_FIELD(beta2)
        .set_default(0.999f)
        .set_range(0.0f, 1.0f)
        .describe("Generally close to 1.");
    MXPLUG_DECLARE_FIELD(epsilon).set_default(1e-8).describe("Epsilon to prevent div 0.");
    MXPLUG_DECLARE_FIELD(t).describe("Number of update.");
    GradFields::DeclareWd(mxplug_declarer_, wd);
    GradFields::DeclareRescaleAndClip(mxplug_declarer_, rescale_grad, clip_grad, "clip_grad");
  }
};

struct FtrlParam : mxplug::Parameter<FtrlParam>, GradFields {
  float lamda1 = 0.01f, beta = 1;
  MXPLUG_DECLARE_PARAMETER(FtrlParam) {
    DeclareLr(mxplug_declarer_);
    MXPLUG_DECLARE_FIELD(lamda1).set_default(0.01f).describe("The L1 regularization coefficient.");
    MXPLUG_DECLARE_FIELD(beta).set_default(1.0f).describe("Per-Coordinate Learning Rate beta.");
    DeclareGradFields(mxplug_declarer_);
  }
};

// LAMB's phase 1 has no lr, and its wd is required.
struct LambPhase1Param : mxplug::Parameter<LambPhase1Param> {
  float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-6f, wd = 0, rescale_grad = 1, clip_gradient = -1;
  int t = 0;
  bool bias_correction = true;
  MXPLUG_DECLARE_PARAMETER(LambPhase1Param) {
    GradFields::DeclareMoments(mxplug_declarer_, beta1, beta2, epsilon, 1e-6f);
    MXPLUG_DECLARE_FIELD(t).describe("Index update count.");
    MXPLUG_DECLARE_FIELD(bias_correction)
        .set_default(true)
        .describe("Whether to use bias correction.");
    GradFields::DeclareWd(mxplug_declarer_, wd, /*required=*/true);
    GradFields::DeclareRescaleAndClip(mxplug_declarer_, rescale_grad, clip_gradient,
                                      "clip_gradient");
  }
};

struct LambPhase2Param : mxplug::Parameter<LambPhase2Param> {
  float lr = 0, lower_bound = -1, upper_bound = -1;
  MXPLUG_DECLARE_PARAMETER(LambPhase2Param) {
    MXPLUG_DECLARE_FIELD(lr).describe("Learning rate");
    DeclareBounds(mxplug_declarer_, lower_bound, upper_bound);
  }
  // The clamp of the weight's norm in the trust ratio (off where < 0).
  static void DeclareBounds(mxplug::ParamDeclarer& d, float& lower_bound, float& upper_bound) {
    d.Field("lower_bound", lower_bound)
        .set_default(-1.0f)
        .describe("Lower limit of norm of weight. If lower_bound <= 0, Lower limit is not set");
    d.Field("upper_bound", upper_bound)
        .set_default(-1.0f)
        .describe("Upper limit of norm of weight. If upper_bound <= 0, Upper limit is not set");
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

// signSGD (Bernstein et al. 2018): the sign of the raw gradient (MXNet applies neither
// rescale_grad nor clip_gradient to it).
struct SignSGD {
  using Param = SignSGDParam;
  static constexpr std::array<const char*, 0> kStates{};
  template <typename C, typename S>
  MXPLUG_XINLINE static C Step(const Param& p, C w, C g, S&) {
    return (C(1) - C(p.lr) * C(p.wd)) * w - C(p.lr) * Sign(g);
  }
};

// Signum: the sign of a momentum of the decayed, rescaled and clipped gradients.
struct Signum {
  using Param = SignumParam;
  static constexpr std::array<const char*, 1> kStates{"mom"};
  template <typename C, typename S>
  MXPLUG_XINLINE static C Step(const Param& p, C w, C g, S& s) {
    C& mom = s[0];
    const C keep = C(1) - C(p.momentum);
    mom = C(p.momentum) * mom - keep * C(p.wd) * w -
          keep * ClipIfSet(C(p.rescale_grad) * g, p.clip_gradient);
    return (C(1) - C(p.lr) * C(p.wd_lh)) * w + C(p.lr) * Sign(mom);
  }
};

// FTML (Zheng and Kwok 2017), with the bias corrections of update t.
struct FTML {
  using Param = FTMLParam;
  static constexpr std::array<const char*, 3> kStates{"d", "v", "z"};
  template <typename C, typename S>
  MXPLUG_XINLINE static C Step(const Param& p, C w, C g, S& s) {
    C &d = s[0], &v = s[1], &z = s[2];
    const C grad = ClipIfSet(C(p.rescale_grad) * g + C(p.wd) * w, p.clip_grad);
    const C beta1 = C(p.beta1), beta2 = C(p.beta2), t = C(p.t);
    v = beta2 * v + (C(1) - beta2) * grad * grad;
    const C d_t = (C(1) - std::pow(beta1, t)) / C(p.lr) *
                  (std::sqrt(v / (C(1) - std::pow(beta2, t))) + C(p.epsilon));
    z = beta1 * z + (C(1) - beta1) * grad - (d_t - beta1 * d) * w;
    d = d_t;
    return -z / d_t;
  }
};

// FTRL-proximal (McMahan et al. 2013, "Ad Click Prediction").
struct Ftrl {
  using Param = FtrlParam;
  static constexpr std::array<const char*, 2> kStates{"z", "n"};
  template <typename C, typename S>
  MXPLUG_XINLINE static C Step(const Param& p, C w, C g, S& s) {
    C &z = s[0], &n = s[1];
    const C grad = ClipIfSet(C(p.rescale_grad) * g, p.clip_gradient);
    z += grad - (std::sqrt(n + grad * grad) - std::sqrt(n)) * w / C(p.lr);
    n += grad * grad;
    const C lamda1 = C(p.lamda1);
    return (Sign(z) * lamda1 - z) / ((C(p.beta) + std::sqrt(n)) / C(p.lr) + C(p.wd)) *
           C(std::abs(z) > lamda1);
  }
};

// LAMB's first phase (You et al. 2019): Adam's moments, and the step direction g (the output,
// not a new weight); lamb_update_phase2 scales it by the trust ratio.
struct LambPhase1 {
  using Param = LambPhase1Param;
  static constexpr std::array<const char*, 2> kStates{"mean", "var"};
  // Its output is g, not a new weight: in mp_lamb_update_phase1, float32, and weight32 stays.
  static constexpr bool kStepsWeight = false;
  template <typename C, typename S>
  MXPLUG_XINLINE static C Step(const Param& p, C w, C g, S& s) {
    C &mean = s[0], &var = s[1];
    const C grad = ClipIfSet(C(p.rescale_grad) * g, p.clip_gradient);
    mean = C(p.beta1) * mean + (C(1) - C(p.beta1)) * grad;
    var = C(p.beta2) * var + (C(1) - C(p.beta2)) * grad * grad;
    if (!p.bias_correction) return mean / (std::sqrt(var) + C(p.epsilon)) + C(p.wd) * w;
    const C mean_hat = mean / (C(1) - std::pow(C(p.beta1), C(p.t)));
    const C var_hat = var / (C(1) - std::pow(C(p.beta2), C(p.t)));
    return mean_hat / (std::sqrt(var_hat) + C(p.epsilon)) + C(p.wd) * w;
  }
};

/*! \brief An op no gradient flows through (the updates and the checks beside them). */
class NoGradientProp : public mxplug::OperatorProperty {
 public:
  std::vector<int> DeclareBackwardDependency(const std::vector<int>&, const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return {};
  }
};

/*! \brief What every update's property shares: the new weight may go over the old one. */
class InPlaceUpdateProp : public NoGradientProp {
 public:
  std::vector<std::pair<int, int>> ForwardInplaceOption(
      const std::vector<int>& in, const std::vector<int>& out) const override {
    return {{in[0], out[0]}};
  }
};

// weight and grad in, the states as auxiliary states, the new weight out (in place over weight).
template <typename Rule>
class UpdateProp : public InPlaceUpdateProp {
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

 private:
  Param param_;
};

/*! \brief Rule's step at every element i: the states are read, stepped and written back, and the
 * new weight written as req says (weight was read first: in place is safe). float16 computes in
 * float. */
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
    using C = mxplug::ComputeType<T>;  // float for float16
    std::array<C, kN> s{};
    for (int k = 0; k < kN; ++k) s[k] = C(states[k][i]);
    const C updated = Rule::template Step<C>(p, C(w[i]), C(g[i]), s);
    for (int k = 0; k < kN; ++k) states[k][i] = static_cast<T>(s[k]);
    mxplug::StoreAs<C>(out[i], req, updated);
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
    mxplug::FloatTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
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

/*! \brief Whether Rule's step is a new weight (the rules' default) or another output (kStepsWeight
 * false: LAMB's phase 1 gives the step direction). */
template <typename Rule, typename = void>
struct StepsWeightOf : std::true_type {};
template <typename Rule>
struct StepsWeightOf<Rule, std::void_t<decltype(Rule::kStepsWeight)>>
    : std::bool_constant<Rule::kStepsWeight> {};
template <typename Rule>
constexpr bool StepsWeight() {
  return StepsWeightOf<Rule>::value;
}

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
    (*out)[0] = StepsWeight<Rule>() ? t : kMXPFloat32;
    return true;
  }
};

/*! \brief Rule's step at element i on weight32 in float32; the weight gets it in its dtype (O is
 * the weight's type T, or float where the step is not a new weight and weight32 stays). */
template <typename Rule, typename T, typename O = T>
struct MPUpdateElements {
  static constexpr int kN = static_cast<int>(Rule::kStates.size());
  typename Rule::Param p;
  const T* g;
  std::array<float*, kN + 1> states;  // the rule's, then weight32
  O* out;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    std::array<float, kN> s{};
    for (int k = 0; k < kN; ++k) s[k] = states[k][i];
    const float updated = Rule::template Step<float>(p, states[kN][i], static_cast<float>(g[i]), s);
    for (int k = 0; k < kN; ++k) states[k][i] = s[k];
    if constexpr (StepsWeight<Rule>()) states[kN][i] = updated;
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
        using O = std::conditional_t<StepsWeight<Rule>(), T, float>;
        MPUpdateElements<Rule, T, O> f{this->p_, in[1].dptr<T>(), {}, out[0].dptr<O>(), req[0]};
        for (int k = 0; k <= f.kN; ++k) f.states[k] = aux[k].dptr<float>();
        Loop::Run(ctx, in[0].Size(), f);
      }
    });
  }
};

// ---- lamb_update_phase2: weight - lr * trust * g, trust = r1 / r2 (r1 the weight's norm,
// clamped to [lower_bound, upper_bound] where those are >= 0; r2 g's norm), or 1 when either is
// 0. r1 and r2 are one-element arrays, read by every element on the device. ----

// mp_lamb_update_phase2 (kMP): the same step from weight32 (float32, read, not changed: MXNet
// 1.9.1 writes only the output) with a float32 g, r1 and r2, into the weight's dtype.
template <bool kMP>
class LambPhase2Prop : public NoGradientProp {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override {
    if (kMP) return {"weight", "g", "r1", "r2", "weight32"};
    return {"weight", "g", "r1", "r2"};
  }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& w = (*in)[0];
    if (w.ndim() < 0) return false;
    for (size_t k : {size_t{1}, size_t{4}}) {  // g, weight32
      if (k >= in->size()) continue;
      if ((*in)[k].ndim() < 0)
        (*in)[k] = w;
      else if ((*in)[k] != w)
        throw std::invalid_argument(std::string(k == 1 ? "g" : "weight32") + " has shape " +
                                    (*in)[k].ToString() + ", expected the weight's shape " +
                                    w.ToString());
    }
    for (size_t k : {2, 3}) {
      if ((*in)[k].ndim() < 0) (*in)[k] = TShape{1};
      if ((*in)[k] != TShape{1})
        throw std::invalid_argument(std::string(k == 2 ? "r1" : "r2") + " has shape " +
                                    (*in)[k].ToString() + ", expected (1,)");
    }
    (*out)[0] = w;
    return w.IsKnown();
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    const int t = (*in)[0];
    if (t == kMXPUnknownDType) return false;
    for (size_t k = 1; k < in->size(); ++k) {
      const int want = kMP ? kMXPFloat32 : t;
      if ((*in)[k] != kMXPUnknownDType && (*in)[k] != want)
        throw std::invalid_argument(ListArguments()[k] + " has dtype " +
                                    mxplug::DTypeName((*in)[k]) + ", expected " +
                                    mxplug::DTypeName(want));
      (*in)[k] = want;
    }
    (*out)[0] = t;
    return true;
  }

 private:
  LambPhase2Param param_;
};

// B: the type of what is stepped and of g (the weight's, or float from weight32); R: r1's and
// r2's (B, or _multi_lamb_update's norms in ComputeType<B>).
template <typename T, typename B, typename R = B>
struct LambPhase2Elements {
  LambPhase2Param p;
  const B *w, *g;
  const R *r1, *r2;
  T* out;
  int req;
  B* stepped = nullptr;  // also gets the new weight (_multi_mp_lamb_update's weight32), or null
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<B>;
    C norm = C(r1[0]);
    if (p.lower_bound >= 0) norm = std::max(norm, C(p.lower_bound));
    if (p.upper_bound >= 0) norm = std::min(norm, C(p.upper_bound));
    const C lr = norm == C(0) || C(r2[0]) == C(0) ? C(p.lr) : C(p.lr) * norm / C(r2[0]);
    const C next = C(w[i]) - lr * C(g[i]);
    if (stepped) stepped[i] = B(next);
    mxplug::StoreAs<C>(out[i], req, next);
  }
};

template <bool kMP, typename Loop>
class LambPhase2Kernel : public mxplug::Operator {
 public:
  LambPhase2Kernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    mxplug::FloatTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      using B = std::conditional_t<kMP, float, T>;
      if constexpr (!kMP && std::is_same_v<T, mxplug::half_t>) {
        throw std::invalid_argument("dtype float16 is not supported; expected float32 or float64");
      } else {
        LambPhase2Elements<T, B> f{p_,
                                   in[kMP ? 4 : 0].dptr<B>(),
                                   in[1].dptr<B>(),
                                   in[2].dptr<B>(),
                                   in[3].dptr<B>(),
                                   out[0].dptr<T>(),
                                   req[0]};
        Loop::Run(ctx, in[0].Size(), f);
      }
    });
  }

 private:
  LambPhase2Param p_;
};

// ---- _adamw_update / _mp_adamw_update: AdamW, whose rescale_grad is a one-element array (the
// loss scaler's, on the device): where it is 0 or not finite the step is skipped, the weight and
// the moments kept, as MXNet 1.9.1 does. MXNet's _adamw_update also writes the rescaled, clipped
// gradient back into grad (its _mp_adamw_update does not), and so does this one: grad, the moments
// (and, kMP, weight32) are auxiliary states, then rescale_grad, so the inputs keep MXNet's order.
// ----

struct AdamWParam : mxplug::Parameter<AdamWParam> {
  float lr = 0, beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f, wd = 0, eta = 0, clip_gradient = -1;
  MXPLUG_DECLARE_PARAMETER(AdamWParam) {
    MXPLUG_DECLARE_FIELD(lr).describe("Learning rate");
    GradFields::DeclareMoments(mxplug_declarer_, beta1, beta2, epsilon);
    GradFields::DeclareWd(mxplug_declarer_, wd);
    MXPLUG_DECLARE_FIELD(eta).describe("Learning rate schedule multiplier");
    MXPLUG_DECLARE_FIELD(clip_gradient)
        .set_default(-1.0f)
        .describe(
            "Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, "
            "gradient clipping is turned off. grad = max(min(grad, clip_gradient), "
            "-clip_gradient).");
  }
};

template <bool kMP>
class AdamWProp : public InPlaceUpdateProp {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {"weight"}; }
  std::vector<std::string> ListAuxiliaryStates() const override {
    if (kMP) return {"grad", "mean", "var", "weight32", "rescale_grad"};
    return {"grad", "mean", "var", "rescale_grad"};
  }
  // grad like the weight; the rest the weight's shape (rescale_grad (1,)) and, kMP, float32.
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>* aux) const override {
    const TShape& w = (*in)[0];
    if (w.ndim() < 0) return false;
    const std::vector<std::string> names = ListAuxiliaryStates();
    for (size_t k = 0; k < aux->size(); ++k) {
      const TShape want = k + 1 == aux->size() ? TShape{1} : w;
      TShape& s = (*aux)[k];
      if (s.ndim() < 0)
        s = want;
      else if (s != want)
        throw std::invalid_argument(names[k] + " has shape " + s.ToString() + ", expected " +
                                    want.ToString());
    }
    (*out)[0] = w;
    return w.IsKnown();
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out,
                 std::vector<int>* aux) const override {
    const int t = (*in)[0];
    if (t == kMXPUnknownDType) return false;
    const std::vector<std::string> names = ListAuxiliaryStates();
    for (size_t k = 0; k < aux->size(); ++k) {
      const int want = kMP && k > 0 ? kMXPFloat32 : t;
      int& s = (*aux)[k];
      if (s != kMXPUnknownDType && s != want)
        throw std::invalid_argument(names[k] + " has dtype " + mxplug::DTypeName(s) +
                                    ", expected " + mxplug::DTypeName(want));
      s = want;
    }
    (*out)[0] = t;
    return true;
  }

 private:
  AdamWParam param_;
};

// S: the states' type (T, or float with weight32 as the stepped weight).
template <typename T, typename S>
struct AdamWElements {
  AdamWParam p;
  const T* w;
  const T* g;
  S *mean, *var, *w32;  // w32 null unless multi-precision
  const S* rescale;
  T* out;
  int req;
  // Where the rescaled, clipped gradient goes (g, in MXNet's _adamw_update), or null (its
  // multi-precision and aggregated kernels leave grad).
  T* grad_out;
  // A skipped step writes the weight to out (_adamw_update) or nothing (_multi_adamw_update).
  bool skip_keeps_out = false;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<S>;
    const C scale = C(rescale[0]);
    const C weight = w32 ? C(w32[i]) : C(w[i]);
    if (!(scale != C(0) && std::isfinite(static_cast<float>(scale)))) {  // skipped
      if (!skip_keeps_out) mxplug::StoreAs<C>(out[i], req, weight);
      return;
    }
    const C grad = ClipIfSet(scale * C(g[i]), p.clip_gradient);
    if (grad_out) grad_out[i] = T(grad);
    const C m = C(p.beta1) * C(mean[i]) + (C(1) - C(p.beta1)) * grad;
    const C v = C(p.beta2) * C(var[i]) + (C(1) - C(p.beta2)) * grad * grad;
    mean[i] = S(m), var[i] = S(v);
    const C next =
        weight - C(p.eta) * (C(p.lr) * m / (std::sqrt(v) + C(p.epsilon)) + C(p.wd) * weight);
    if (w32) w32[i] = S(next);
    mxplug::StoreAs<C>(out[i], req, next);
  }
};

// AdamW's kernel has a loop of its own; this names its parameters for UpdateKernelBase.
struct AdamW {
  using Param = AdamWParam;
};

template <bool kMP, typename Loop>
class AdamWKernel : public UpdateKernelBase<AdamW> {
 public:
  using UpdateKernelBase<AdamW>::UpdateKernelBase;
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>& aux) override {
    mxplug::FloatTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      using S = std::conditional_t<kMP, float, T>;
      AdamWElements<T, S> f{this->p_,
                            in[0].dptr<T>(),
                            aux[0].dptr<T>(),
                            aux[1].dptr<S>(),
                            aux[2].dptr<S>(),
                            kMP ? aux[3].dptr<S>() : nullptr,
                            aux.back().dptr<S>(),
                            out[0].dptr<T>(),
                            req[0],
                            kMP ? nullptr : aux[0].dptr<T>()};
      Loop::Run(ctx, in[0].Size(), f);
    });
  }
};

// ---- all_finite / multi_all_finite: a float32 (1,) flag, 1 when every element of the inputs is
// finite, else 0. With init_output false the flag is only ever set to 0, so one output can
// gather the verdicts of several calls (MXNet's AMP loss scaler does). ----

struct AllFiniteParam : mxplug::Parameter<AllFiniteParam> {
  static constexpr bool kVariadic = false;
  bool init_output = true;
  int num_arrays = 1;  // one input
  MXPLUG_DECLARE_PARAMETER(AllFiniteParam) {
    MXPLUG_DECLARE_FIELD(init_output).set_default(true).describe("Initialize output to 1.");
  }
};

struct MultiAllFiniteParam : mxplug::Parameter<MultiAllFiniteParam> {
  static constexpr bool kVariadic = true;
  int num_arrays = 1;
  bool init_output = true;
  MXPLUG_DECLARE_PARAMETER(MultiAllFiniteParam) {
    MXPLUG_DECLARE_FIELD(num_arrays)
        .set_default(1)
        .set_lower_bound(1)
        .describe("Number of arrays.");
    MXPLUG_DECLARE_FIELD(init_output).set_default(true).describe("Initialize output to 1.");
  }
};

template <typename Param>
class AllFiniteProp : public NoGradientProp {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override {
    if (!Param::kVariadic) return {"data"};
    std::vector<std::string> names;
    for (int i = 0; i < param_.num_arrays; ++i) names.push_back("arg" + std::to_string(i));
    return names;
  }
  bool InferShape(std::vector<TShape>*, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    (*out)[0] = TShape{1};
    return true;
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    (*out)[0] = kMXPFloat32;
    for (int t : *in)
      if (t == kMXPUnknownDType) return false;
    return true;
  }

 private:
  Param param_;
};

struct SetFlag {
  float* flag;
  MXPLUG_XINLINE void operator()(int64_t) const { *flag = 1.0f; }
};

// Every non-finite element clears the flag (the same value from any thread).
template <typename T>
struct ClearFlagIfNotFinite {
  const T* x;
  float* flag;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    const C v = C(x[i]);
    if (!(v - v == C(0))) *flag = 0.0f;  // NaN and +-inf give NaN
  }
};

template <typename Param, typename Loop>
class AllFiniteKernel : public mxplug::Operator {
 public:
  AllFiniteKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { param_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    for (const TBlob& x : in)
      if (x.type_flag_ != kMXPFloat16 && x.type_flag_ != kMXPFloat32 && x.type_flag_ != kMXPFloat64)
        throw std::invalid_argument("This operation only support floating point types, not " +
                                    mxplug::DTypeName(x.type_flag_));
    if (req[0] == mxplug::kNullOp) return;
    float* flag = out[0].dptr<float>();
    if (param_.init_output) Loop::Run(ctx, 1, SetFlag{flag});
    for (const TBlob& x : in)
      mxplug::FloatTypeSwitch(x.type_flag_, "", [&](auto zero) {
        using T = decltype(zero);
        Loop::Run(ctx, x.Size(), ClearFlagIfNotFinite<T>{x.dptr<T>(), flag});
      });
  }

 private:
  Param param_;
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
  visit.template MPOp<LambPhase1>(
      "mp_lamb_update_phase1",
      "lamb_update_phase1 with float32 mean and var, its weight decay on weight32 (the weight's "
      "float32 copy, not changed): g in float32.");
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
  visit.template Op<SignSGD>(
      "signsgd_update",
      "signSGD: weight = (1 - lr * wd) * weight - lr * sign(grad) (rescale_grad and "
      "clip_gradient do not change a sign, and MXNet applies neither).");
  visit.template Op<Signum>(
      "signum_update",
      "Signum: mom = momentum * mom - (1 - momentum) * (wd * weight + clip(rescale_grad * "
      "grad)); weight = (1 - lr * wd_lh) * weight + lr * sign(mom).");
  visit.template Op<FTML>(
      "ftml_update",
      "FTML (Follow the Moving Leader): g = clip(rescale_grad * grad + wd * weight, clip_grad); "
      "v = beta2 * v + (1 - beta2) * g^2; d_t = (1 - beta1^t) / lr * (sqrt(v / (1 - beta2^t)) "
      "+ epsilon); z = beta1 * z + (1 - beta1) * g - (d_t - beta1 * d) * weight; d = d_t; "
      "weight = -z / d_t.");
  visit.template Op<Ftrl>(
      "ftrl_update",
      "FTRL-proximal: g = clip(rescale_grad * grad); z += g - (sqrt(n + g^2) - sqrt(n)) * "
      "weight / lr; n += g^2; weight = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd) "
      "* (|z| > lamda1).");
  visit.template Op<LambPhase1>(
      "lamb_update_phase1",
      "LAMB, phase 1: Adam's moments of clip(rescale_grad * grad), and the output g = mean_hat "
      "/ (sqrt(var_hat) + epsilon) + wd * weight (with bias correction, mean_hat = mean / (1 - "
      "beta1^t) and var_hat = var / (1 - beta2^t)).");
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
    mxplug::sdk::RegisterKernel<LambPhase2Kernel<false, Loop>>("lamb_update_phase2", device);
    mxplug::sdk::RegisterKernel<LambPhase2Kernel<true, Loop>>("mp_lamb_update_phase2", device);
    mxplug::sdk::RegisterKernel<AdamWKernel<false, Loop>>("_adamw_update", device);
    mxplug::sdk::RegisterKernel<AdamWKernel<true, Loop>>("_mp_adamw_update", device);
    mxplug::sdk::RegisterKernel<AllFiniteKernel<AllFiniteParam, Loop>>("all_finite", device);
    mxplug::sdk::RegisterKernel<AllFiniteKernel<MultiAllFiniteParam, Loop>>("multi_all_finite",
                                                                            device);
  }
};

}  // namespace mxplug_optimizer

#endif  // MXPLUG_PLUGINS_OPTIMIZER_UPDATE_H_
