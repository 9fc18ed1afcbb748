// Definitions of MXNet's aggregated optimizer updates: one op steps num_weights weights (MXNet's
// SGD steps its parameters in groups of MXNET_OPTIMIZER_AGGREGATION_SIZE this way), each with its
// own learning rate and weight decay, by the one-weight rules of update.h:
//   multi_sgd_update, multi_sgd_mom_update, multi_mp_sgd_update, multi_mp_sgd_mom_update: lrs and
//     wds are tuples of parameters; preloaded_multi_*: the last two inputs, float32 arrays of
//     num_weights elements, on the device (what a learning-rate schedule computed there gives);
//   _multi_adamw_update, _multi_mp_adamw_update: AdamW, rescale_grad the last input;
//   _multi_lamb_update, _multi_mp_lamb_update: LAMB's two phases and the two norms in one op;
//   multi_sum_sq: the sum of squares of each array; multi_lars: LARS's learning rates from those.
//
// The inputs are the weights' groups in turn (weight, grad, the states, then weight32 for the
// multi-precision ops) and the shared inputs after them. The states are mutable inputs, which
// mxplug keeps as auxiliary states after the arguments: the inputs before the first mutable one
// (weight_0, grad_0) are the arguments and all the rest auxiliary states, so that the inputs keep
// MXNet's order (a symbol lists weight_1 and grad_1 among the auxiliary states). Output k is
// weight k's new value (out=weights steps them in place). As in MXNet, gradients are clipped where
// clip_gradient >= 0.
#ifndef MXPLUG_PLUGINS_OPTIMIZER_MULTI_UPDATE_H_
#define MXPLUG_PLUGINS_OPTIMIZER_MULTI_UPDATE_H_

#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "update.h"

namespace mxplug_optimizer {

// ---- Parameters (MXNet's names, order and defaults) ----

inline void DeclareNumWeights(mxplug::ParamDeclarer& d, int& n, const char* name) {
  d.Field(name, n).set_default(1).set_lower_bound(1).describe("Number of updated weights.");
}

/*! \brief The per-weight values of a tuple parameter, checked against the weight count. */
inline void CheckPerWeight(const std::vector<float>& values, const char* name, const char* count,
                           int n) {
  if (static_cast<int>(values.size()) != n)
    throw std::invalid_argument(std::string(name) + " has " + std::to_string(values.size()) +
                                " value(s); expected one per weight, " + count + " = " +
                                std::to_string(n));
}

// kMomentum: multi_*sgd_mom_update's momentum; kPreloaded: lrs and wds are inputs, not tuples.
template <bool kMomentum, bool kPreloaded>
struct MultiSGDParamOf : mxplug::Parameter<MultiSGDParamOf<kMomentum, kPreloaded>> {
  std::vector<float> lrs, wds;
  float momentum = 0, rescale_grad = 1, clip_gradient = -1;
  int num_weights = 1;
  MXPLUG_DECLARE_PARAMETER(MultiSGDParamOf) {
    if constexpr (!kPreloaded) {
      MXPLUG_DECLARE_FIELD(lrs).describe("Learning rates.");
      MXPLUG_DECLARE_FIELD(wds).describe(
          "Weight decay augments the objective function with a regularization term that "
          "penalizes large weights. The penalty scales with the square of the magnitude of each "
          "weight.");
    }
    if constexpr (kMomentum)
      MXPLUG_DECLARE_FIELD(momentum).set_default(0.0f).describe(
          "The decay rate of momentum estimates at each epoch.");
    GradFields::DeclareRescaleAndClip(mxplug_declarer_, rescale_grad, clip_gradient,
                                      "clip_gradient");
    DeclareNumWeights(mxplug_declarer_, num_weights, "num_weights");
  }
  int Count() const {
    if constexpr (!kPreloaded) {
      CheckPerWeight(lrs, "lrs", "num_weights", num_weights);
      CheckPerWeight(wds, "wds", "num_weights", num_weights);
    }
    return num_weights;
  }
};

using MultiSGDParam = MultiSGDParamOf<false, false>;
using MultiSGDMomParam = MultiSGDParamOf<true, false>;
using PreloadedMultiSGDParam = MultiSGDParamOf<false, true>;
using PreloadedMultiSGDMomParam = MultiSGDParamOf<true, true>;

struct MultiAdamWParam : mxplug::Parameter<MultiAdamWParam> {
  std::vector<float> lrs, wds, etas;
  float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f, clip_gradient = -1;
  int num_weights = 1;
  MXPLUG_DECLARE_PARAMETER(MultiAdamWParam) {
    MXPLUG_DECLARE_FIELD(lrs).describe("Learning rates");
    GradFields::DeclareMoments(mxplug_declarer_, beta1, beta2, epsilon);
    MXPLUG_DECLARE_FIELD(wds).describe("Weight decay per weight.");
    MXPLUG_DECLARE_FIELD(etas).describe("Learning rate schedule multipliers");
    MXPLUG_DECLARE_FIELD(clip_gradient)
        .set_default(-1.0f)
        .describe("Clip gradient to the range of [-clip_gradient, clip_gradient].");
    DeclareNumWeights(mxplug_declarer_, num_weights, "num_weights");
  }
  int Count() const {
    CheckPerWeight(lrs, "lrs", "num_weights", num_weights);
    CheckPerWeight(wds, "wds", "num_weights", num_weights);
    CheckPerWeight(etas, "etas", "num_weights", num_weights);
    return num_weights;
  }
};

struct MultiLambParam : mxplug::Parameter<MultiLambParam> {
  std::vector<float> learning_rates, wds;
  float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-6f, rescale_grad = 1, lower_bound = -1,
        upper_bound = -1, clip_gradient = -1;
  bool bias_correction = true;
  TShape step_count;
  int num_tensors = 1;
  MXPLUG_DECLARE_PARAMETER(MultiLambParam) {
    MXPLUG_DECLARE_FIELD(learning_rates).describe("List of learning rates");
    GradFields::DeclareMoments(mxplug_declarer_, beta1, beta2, epsilon, 1e-6f);
    MXPLUG_DECLARE_FIELD(wds).describe("List of Weight decays.");
    MXPLUG_DECLARE_FIELD(rescale_grad).set_default(1.0f).describe("Gradient rescaling factor");
    LambPhase2Param::DeclareBounds(mxplug_declarer_, lower_bound, upper_bound);
    MXPLUG_DECLARE_FIELD(clip_gradient)
        .set_default(-1.0f)
        .describe("Clip gradient to the range of [-clip_gradient, clip_gradient].");
    MXPLUG_DECLARE_FIELD(bias_correction)
        .set_default(true)
        .describe("Whether to use bias correction.");
    MXPLUG_DECLARE_FIELD(step_count).describe("Step count for each tensor");
    DeclareNumWeights(mxplug_declarer_, num_tensors, "num_tensors");
  }
  int Count() const {
    CheckPerWeight(learning_rates, "learning_rates", "num_tensors", num_tensors);
    CheckPerWeight(wds, "wds", "num_tensors", num_tensors);
    if (step_count.ndim() != num_tensors)
      throw std::invalid_argument(
          "step_count has " + std::to_string(step_count.ndim()) +
          " value(s); expected one per tensor, num_tensors = " + std::to_string(num_tensors));
    return num_tensors;
  }
};

// ---- Element functions shared by the steps ----

/*! \brief f with its parameters' lr and wd read from device arrays at weight k (preloaded). */
template <class Elements>
struct PreloadedLrWd {
  Elements f;
  const float *lrs, *wds;
  int k;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    Elements g = f;
    g.p.lr = lrs[k], g.p.wd = wds[k];
    g(i);
  }
};

constexpr int64_t kSumChunk = 1024;

inline int64_t SumChunks(int64_t n) { return (n + kSumChunk - 1) / kSumChunk; }

/*! \brief Adds the squares of x's elements in chunk c (of kSumChunk) into *sum, with Loop's add
 * (atomic on a GPU); *sum starts at 0. R: the sum's type. */
template <typename X, typename R, class Loop>
struct ChunkSumSquares {
  const X* x;
  int64_t n;
  R* sum;
  MXPLUG_XINLINE void operator()(int64_t c) const {
    R s = 0;
    const int64_t end = (c + 1) * kSumChunk < n ? (c + 1) * kSumChunk : n;
    for (int64_t i = c * kSumChunk; i < end; ++i) {
      const R v = R(mxplug::ComputeType<X>(x[i]));
      s += v * v;
    }
    Loop::AddTo(sum, s);
  }
};

template <typename R>
struct SetZero {
  R* x;
  MXPLUG_XINLINE void operator()(int64_t i) const { x[i] = R(0); }
};

template <typename R>
struct SqrtInPlace {
  R* x;
  MXPLUG_XINLINE void operator()(int64_t i) const { x[i] = std::sqrt(x[i]); }
};

/*! \brief sum[0] = the sum of the squares of x's n elements. */
template <class Loop, typename X, typename R>
void SumSquares(const mxplug::OpContext& ctx, const X* x, int64_t n, R* sum) {
  Loop::Run(ctx, 1, SetZero<R>{sum});
  Loop::Run(ctx, SumChunks(n), ChunkSumSquares<X, R, Loop>{x, n, sum});
}

// ---- The aggregated updates. Each Kind names its parameters, the names of a weight's inputs
// after weight and grad (Group), the shared inputs after the groups (Shared), their dtypes, and
// steps weight k from its group's blobs. ----

/*! \brief The dtype each input must have, given weight k's dtype t. */
enum class InputType { kWeight, kFloat32 };

template <class Rule, bool kMP, bool kPreloaded>
struct MultiSGD {
  static constexpr bool kMomentum = std::is_same_v<Rule, SGDMomentum>;
  using Param = MultiSGDParamOf<kMomentum, kPreloaded>;
  static constexpr bool kTempSpace = false;
  static std::vector<std::string> Group() {
    std::vector<std::string> names;
    if (kMomentum) names.push_back("mom");
    if (kMP) names.push_back("weight32");
    return names;
  }
  static InputType GroupType(size_t) { return kMP ? InputType::kFloat32 : InputType::kWeight; }
  static std::vector<std::string> Shared() {
    if (kPreloaded) return {"lrs", "wds"};
    return {};
  }
  static InputType SharedType() { return InputType::kFloat32; }
  static mxplug::TShape SharedShape(int n) { return mxplug::TShape{n}; }

  template <class Loop>
  static void Step(const mxplug::OpContext& ctx, const Param& param, int k, const TBlob* in,
                   const TBlob* shared, const TBlob& out, OpReqType req) {
    typename Rule::Param p;
    p.rescale_grad = param.rescale_grad, p.clip_gradient = param.clip_gradient;
    if constexpr (kMomentum) p.momentum = param.momentum;
    if constexpr (!kPreloaded) p.lr = param.lrs[k], p.wd = param.wds[k];
    mxplug::FloatTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      auto run = [&](const auto& f) {
        if constexpr (kPreloaded)
          Loop::Run(ctx, in[0].Size(),
                    PreloadedLrWd<std::decay_t<decltype(f)>>{f, shared[0].dptr<float>(),
                                                             shared[1].dptr<float>(), k});
        else
          Loop::Run(ctx, in[0].Size(), f);
      };
      constexpr int kStates = static_cast<int>(Rule::kStates.size());
      if constexpr (kMP) {
        MPUpdateElements<Rule, T> f{p, in[1].dptr<T>(), {}, out.dptr<T>(), req};
        for (int s = 0; s <= kStates; ++s) f.states[s] = in[2 + s].dptr<float>();
        run(f);
      } else {
        UpdateElements<Rule, T> f{p, in[0].dptr<T>(), in[1].dptr<T>(), {}, out.dptr<T>(), req};
        for (int s = 0; s < kStates; ++s) f.states[s] = in[2 + s].dptr<T>();
        run(f);
      }
    });
  }
};

template <bool kMP>
struct MultiAdamW {
  using Param = MultiAdamWParam;
  static constexpr bool kTempSpace = false;
  static std::vector<std::string> Group() {
    if (kMP) return {"mean", "var", "weight32"};
    return {"mean", "var"};
  }
  static InputType GroupType(size_t) { return kMP ? InputType::kFloat32 : InputType::kWeight; }
  static std::vector<std::string> Shared() { return {"rescale_grad"}; }
  static InputType SharedType() { return kMP ? InputType::kFloat32 : InputType::kWeight; }
  static mxplug::TShape SharedShape(int) { return mxplug::TShape{1}; }

  template <class Loop>
  static void Step(const mxplug::OpContext& ctx, const Param& param, int k, const TBlob* in,
                   const TBlob* shared, const TBlob& out, OpReqType req) {
    AdamWParam p;
    p.lr = param.lrs[k], p.wd = param.wds[k], p.eta = param.etas[k];
    p.beta1 = param.beta1, p.beta2 = param.beta2, p.epsilon = param.epsilon;
    p.clip_gradient = param.clip_gradient;
    mxplug::FloatTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      using S = std::conditional_t<kMP, float, T>;
      AdamWElements<T, S> f{p,
                            in[0].dptr<T>(),
                            in[1].dptr<T>(),
                            in[2].dptr<S>(),
                            in[3].dptr<S>(),
                            kMP ? in[4].dptr<S>() : nullptr,
                            shared[0].dptr<S>(),
                            out.dptr<T>(),
                            req,
                            /*grad_out=*/nullptr,
                            /*skip_keeps_out=*/true};
      Loop::Run(ctx, in[0].Size(), f);
    });
  }
};

// LAMB in one op per weight: g = phase 1 (the moments stepped), r1 = |weight|, r2 = |g|, then
// phase 2; the multi-precision op steps weight32 and writes it to the weight (its phase-2 op
// leaves weight32), taking r1 from the weight in its own dtype, as MXNet 1.9.1 does. g and the two
// norms live in the temp space.
template <bool kMP>
struct MultiLamb {
  using Param = MultiLambParam;
  static constexpr bool kTempSpace = true;
  static std::vector<std::string> Group() {
    if (kMP) return {"mean", "var", "weight32"};
    return {"mean", "var"};
  }
  static InputType GroupType(size_t) { return kMP ? InputType::kFloat32 : InputType::kWeight; }
  static std::vector<std::string> Shared() { return {}; }
  static InputType SharedType() { return InputType::kWeight; }
  static mxplug::TShape SharedShape(int) { return mxplug::TShape{1}; }

  template <class Loop>
  static void Step(const mxplug::OpContext& ctx, const Param& param, int k, const TBlob* in,
                   const TBlob*, const TBlob& out, OpReqType req) {
    LambPhase1Param p1;
    p1.beta1 = param.beta1, p1.beta2 = param.beta2, p1.epsilon = param.epsilon;
    p1.wd = param.wds[k], p1.rescale_grad = param.rescale_grad;
    p1.clip_gradient = param.clip_gradient, p1.bias_correction = param.bias_correction;
    p1.t = static_cast<int>(param.step_count[k]);
    LambPhase2Param p2;
    p2.lr = param.learning_rates[k];
    p2.lower_bound = param.lower_bound, p2.upper_bound = param.upper_bound;
    const int64_t n = in[0].Size();
    mxplug::FloatTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      using B = std::conditional_t<kMP, float, T>;  // the stepped weight's and g's type
      using R = mxplug::ComputeType<B>;             // the norms'
      const size_t g_bytes = (static_cast<size_t>(n) * sizeof(B) + 15) / 16 * 16;
      char* space = static_cast<char*>(
          ctx.resource(mxplug::ResourceRequest::kTempSpace).get_space(g_bytes + 2 * sizeof(R)));
      B* g = reinterpret_cast<B*>(space);
      R* norms = reinterpret_cast<R*>(space + g_bytes);
      B* w = nullptr;
      if constexpr (kMP)
        w = in[4].dptr<float>();  // weight32
      else
        w = in[0].dptr<T>();
      if constexpr (kMP) {
        MPUpdateElements<LambPhase1, T, float> f{p1,
                                                 in[1].dptr<T>(),
                                                 {in[2].dptr<float>(), in[3].dptr<float>(), w},
                                                 g,
                                                 mxplug::kWriteTo};
        Loop::Run(ctx, n, f);
      } else {
        UpdateElements<LambPhase1, T> f{
            p1, w, in[1].dptr<T>(), {in[2].dptr<T>(), in[3].dptr<T>()}, g, mxplug::kWriteTo};
        Loop::Run(ctx, n, f);
      }
      SumSquares<Loop>(ctx, in[0].dptr<T>(), n, norms);  // the weight's, not weight32's (MXNet)
      SumSquares<Loop>(ctx, g, n, norms + 1);
      Loop::Run(ctx, 2, SqrtInPlace<R>{norms});
      Loop::Run(ctx, n,
                LambPhase2Elements<T, B, R>{p2, w, g, norms, norms + 1, out.dptr<T>(), req,
                                            kMP ? w : nullptr});
    });
  }
};

/*! \brief An aggregated update's inputs: the arguments are weight_0 and grad_0 where the group
 * has states (else every input), the auxiliary states the rest. */
template <class Kind>
class MultiUpdateProp : public InPlaceUpdateProp {
 public:
  using Param = typename Kind::Param;
  void Init(const mxplug::KwArgs& kwargs) override {
    param_.Init(kwargs);
    n_ = param_.Count();
  }
  std::vector<std::string> ListArguments() const override {
    std::vector<std::string> names = Inputs();
    if (!Kind::Group().empty()) names.resize(2);
    return names;
  }
  std::vector<std::string> ListAuxiliaryStates() const override {
    std::vector<std::string> names = Inputs();
    if (Kind::Group().empty()) return {};
    return std::vector<std::string>(names.begin() + 2, names.end());
  }
  std::vector<std::string> ListOutputs() const override {
    std::vector<std::string> names;
    for (int k = 0; k < n_; ++k) names.push_back("output" + std::to_string(k));
    return names;
  }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>* aux) const override {
    std::vector<TShape*> all = Join(in, aux);
    const std::vector<std::string> names = Inputs();
    auto expect = [&](size_t i, const TShape& want) {
      TShape& s = *all[i];
      if (s.ndim() < 0)
        s = want;
      else if (s != want)
        throw std::invalid_argument(names[i] + " has shape " + s.ToString() + ", expected " +
                                    want.ToString());
    };
    bool known = true;
    const size_t stride = Stride();
    for (int k = 0; k < n_; ++k) {
      const TShape w = *all[k * stride];
      if (w.ndim() < 0) {
        known = false;
        continue;
      }
      for (size_t j = 1; j < stride; ++j) expect(k * stride + j, w);
      (*out)[k] = w;
      known = known && w.IsKnown();
    }
    for (size_t j = n_ * stride; j < all.size(); ++j) expect(j, Kind::SharedShape(n_));
    return known;
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out,
                 std::vector<int>* aux) const override {
    std::vector<int*> all = Join(in, aux);
    const std::vector<std::string> names = Inputs();
    auto expect = [&](size_t i, int want) {
      int& have = *all[i];
      if (have != kMXPUnknownDType && have != want)
        throw std::invalid_argument(names[i] + " has dtype " + mxplug::DTypeName(have) +
                                    ", expected " + mxplug::DTypeName(want));
      have = want;
    };
    // One dtype for the weights and the gradients (MXNet's), float32 for the master copies.
    const size_t stride = Stride();
    const int t = *all[0];
    if (t == kMXPUnknownDType) return false;
    if (t != kMXPFloat16 && t != kMXPFloat32 && t != kMXPFloat64)
      throw std::invalid_argument(names[0] + " has dtype " + mxplug::DTypeName(t) +
                                  "; expected float16, float32 or float64");
    for (int k = 0; k < n_; ++k) {
      expect(k * stride, t);
      expect(k * stride + 1, t);
      for (size_t j = 2; j < stride; ++j)
        expect(k * stride + j, Kind::GroupType(j - 2) == InputType::kFloat32 ? kMXPFloat32 : t);
      (*out)[k] = t;
    }
    for (size_t j = n_ * stride; j < all.size(); ++j)
      expect(j, Kind::SharedType() == InputType::kFloat32 ? kMXPFloat32 : t);
    return true;
  }
  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override {
    if (Kind::kTempSpace) return {mxplug::ResourceRequest::kTempSpace};
    return {};
  }

 private:
  size_t Stride() const { return 2 + Kind::Group().size(); }
  std::vector<std::string> Inputs() const {
    std::vector<std::string> names;
    for (int k = 0; k < n_; ++k) {
      const std::string at = "_" + std::to_string(k);
      names.push_back("weight" + at);
      names.push_back("grad" + at);
      for (const std::string& s : Kind::Group()) names.push_back(s + at);
    }
    for (const std::string& s : Kind::Shared()) names.push_back(s);
    return names;
  }
  template <typename V>
  static std::vector<V*> Join(std::vector<V>* in, std::vector<V>* aux) {
    std::vector<V*> all;
    for (V& v : *in) all.push_back(&v);
    for (V& v : *aux) all.push_back(&v);
    return all;
  }

  Param param_;
  int n_ = 1;
};

template <class Kind, class Loop>
class MultiUpdateKernel : public mxplug::Operator {
 public:
  MultiUpdateKernel(const mxplug::KwArgs& kwargs, mxplug::Context) {
    param_.Init(kwargs);
    n_ = param_.Count();
  }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>& aux) override {
    std::vector<TBlob> all(in);
    all.insert(all.end(), aux.begin(), aux.end());
    const size_t stride = 2 + Kind::Group().size();
    for (int k = 0; k < n_; ++k) {
      if (req[k] == mxplug::kNullOp || all[k * stride].Size() == 0) continue;
      Kind::template Step<Loop>(ctx, param_, k, &all[k * stride], all.data() + n_ * stride, out[k],
                                req[k]);
    }
  }

 private:
  typename Kind::Param param_;
  int n_ = 1;
};

// ---- multi_sum_sq: float32 (num_arrays,), each array's sum of squares (float arrays of one
// dtype). multi_lars: LARS's learning rates, elementwise over four float32 arrays. ----

struct MultiSumSqParam : mxplug::Parameter<MultiSumSqParam> {
  int num_arrays = 1;
  MXPLUG_DECLARE_PARAMETER(MultiSumSqParam) {
    MXPLUG_DECLARE_FIELD(num_arrays).set_lower_bound(1).describe("number of input arrays.");
  }
};

class MultiSumSqProp : public NoGradientProp {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override {
    std::vector<std::string> names;
    for (int i = 0; i < param_.num_arrays; ++i) names.push_back("array_" + std::to_string(i));
    return names;
  }
  bool InferShape(std::vector<TShape>*, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    (*out)[0] = TShape{param_.num_arrays};
    return true;
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out,
                 std::vector<int>* aux) const override {
    if (!mxplug::OperatorProperty::InferType(in, out, aux)) return false;
    const int t = (*in)[0];
    if (t != kMXPFloat16 && t != kMXPFloat32 && t != kMXPFloat64)
      throw std::invalid_argument("This operation only support floating point types, not " +
                                  mxplug::DTypeName(t));
    (*out)[0] = kMXPFloat32;
    return true;
  }

 private:
  MultiSumSqParam param_;
};

template <class Loop>
class MultiSumSqKernel : public mxplug::Operator {
 public:
  MultiSumSqKernel(const mxplug::KwArgs&, mxplug::Context) {}
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    if (req[0] == mxplug::kAddTo)
      throw std::invalid_argument("multi_sum_sq: an output that adds (kAddTo) is not supported");
    float* sums = out[0].dptr<float>();
    for (size_t k = 0; k < in.size(); ++k)
      mxplug::FloatTypeSwitch(in[k].type_flag_, "", [&](auto zero) {
        using T = decltype(zero);
        SumSquares<Loop>(ctx, in[k].dptr<T>(), in[k].Size(), sums + k);
      });
  }
};

// ---- reset_arrays: sets each of its num_arrays arrays to zero in place (MXNet's Trainer zeroes
// many gradients in one op). The arrays are auxiliary states, the plugin API's arrays an op
// writes in place; there is no output. ----

class ResetArraysProp : public NoGradientProp {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {}; }
  std::vector<std::string> ListOutputs() const override { return {}; }
  std::vector<std::string> ListAuxiliaryStates() const override {
    std::vector<std::string> names;
    for (int i = 0; i < param_.num_arrays; ++i) names.push_back("array_" + std::to_string(i));
    return names;
  }
  bool InferShape(std::vector<TShape>*, std::vector<TShape>*,
                  std::vector<TShape>* aux) const override {
    for (const TShape& s : *aux)
      if (s.ndim() < 0) return false;
    return true;
  }
  bool InferType(std::vector<int>*, std::vector<int>*, std::vector<int>* aux) const override {
    for (int t : *aux) {
      if (t == kMXPUnknownDType) return false;
      if (t != kMXPFloat16 && t != kMXPFloat32 && t != kMXPFloat64)
        throw std::invalid_argument("This operation only support floating point types, not " +
                                    mxplug::DTypeName(t));
    }
    return true;
  }

 private:
  MultiSumSqParam param_;  // num_arrays, as multi_sum_sq's
};

template <class Loop>
class ResetArraysKernel : public mxplug::Operator {
 public:
  ResetArraysKernel(const mxplug::KwArgs&, mxplug::Context) {}
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>&,
               const std::vector<OpReqType>&, const std::vector<TBlob>&,
               const std::vector<TBlob>& aux) override {
    for (const TBlob& a : aux) Loop::Zero(ctx, a, mxplug::kWriteTo);
  }
};

struct MultiLarsParam : mxplug::Parameter<MultiLarsParam> {
  float eta = 0, eps = 0, rescale_grad = 1;
  MXPLUG_DECLARE_PARAMETER(MultiLarsParam) {
    MXPLUG_DECLARE_FIELD(eta).describe("LARS eta");
    MXPLUG_DECLARE_FIELD(eps).describe("LARS eps");
    MXPLUG_DECLARE_FIELD(rescale_grad).set_default(1.0f).describe("Gradient rescaling factor");
  }
};

class MultiLarsProp : public NoGradientProp {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override {
    return {"lrs", "weights_sum_sq", "grads_sum_sq", "wds"};
  }
  // One shape for all four, as MXNet's elementwise inference.
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const std::vector<std::string> names = ListArguments();
    TShape known;
    for (const TShape& s : *in)
      if (s.ndim() >= 0) known = s;
    if (known.ndim() < 0) return false;
    for (size_t i = 0; i < in->size(); ++i) {
      if ((*in)[i].ndim() < 0)
        (*in)[i] = known;
      else if ((*in)[i] != known)
        throw std::invalid_argument(names[i] + " has shape " + (*in)[i].ToString() + ", expected " +
                                    known.ToString() + " like the other inputs");
    }
    (*out)[0] = known;
    return known.IsKnown();
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out,
                 std::vector<int>* aux) const override {
    if (!mxplug::OperatorProperty::InferType(in, out, aux)) return false;
    if ((*in)[0] != kMXPFloat32)
      throw std::invalid_argument("multi_lars supports float32 only, not " +
                                  mxplug::DTypeName((*in)[0]));
    return true;
  }

 private:
  MultiLarsParam param_;
};

// lr * eta * |w| / (rescale_grad * |g| + wd * |w| + eps) where both norms are > 0, else lr.
struct LarsElements {
  MultiLarsParam p;
  const float *lrs, *weights_sum_sq, *grads_sum_sq, *wds;
  float* out;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    const float w = std::sqrt(weights_sum_sq[i]), g = std::sqrt(grads_sum_sq[i]);
    const float lr =
        w > 0 && g > 0 ? lrs[i] * p.eta * w / (g * p.rescale_grad + wds[i] * w + p.eps) : lrs[i];
    mxplug::StoreAs<float>(out[i], req, lr);
  }
};

template <class Loop>
class MultiLarsKernel : public mxplug::Operator {
 public:
  MultiLarsKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    Loop::Run(ctx, out[0].Size(),
              LarsElements{p_, in[0].dptr<float>(), in[1].dptr<float>(), in[2].dptr<float>(),
                           in[3].dptr<float>(), out[0].dptr<float>(), req[0]});
  }

 private:
  MultiLarsParam p_;
};

/*! \brief Calls visit.template Op<Kind>(name, doc) for every aggregated update. */
template <class Visitor>
void ForEachMultiUpdateOp(Visitor&& visit) {
  visit.template Op<MultiSGD<SGD, false, false>>(
      "multi_sgd_update", "sgd_update of num_weights weights, each with its lr and wd (lrs, wds).");
  visit.template Op<MultiSGD<SGDMomentum, false, false>>(
      "multi_sgd_mom_update",
      "sgd_mom_update of num_weights weights, each with its lr and wd (lrs, wds).");
  visit.template Op<MultiSGD<SGD, true, false>>(
      "multi_mp_sgd_update",
      "mp_sgd_update of num_weights weights (weight, grad, weight32 each), each with its lr and "
      "wd (lrs, wds).");
  visit.template Op<MultiSGD<SGDMomentum, true, false>>(
      "multi_mp_sgd_mom_update",
      "mp_sgd_mom_update of num_weights weights (weight, grad, mom, weight32 each), each with "
      "its lr and wd (lrs, wds).");
  visit.template Op<MultiSGD<SGD, false, true>>(
      "preloaded_multi_sgd_update",
      "multi_sgd_update whose lrs and wds are its last two inputs: float32 arrays of num_weights "
      "elements.");
  visit.template Op<MultiSGD<SGDMomentum, false, true>>(
      "preloaded_multi_sgd_mom_update",
      "multi_sgd_mom_update whose lrs and wds are its last two inputs: float32 arrays of "
      "num_weights elements.");
  visit.template Op<MultiSGD<SGD, true, true>>(
      "preloaded_multi_mp_sgd_update",
      "multi_mp_sgd_update whose lrs and wds are its last two inputs: float32 arrays of "
      "num_weights elements.");
  visit.template Op<MultiSGD<SGDMomentum, true, true>>(
      "preloaded_multi_mp_sgd_mom_update",
      "multi_mp_sgd_mom_update whose lrs and wds are its last two inputs: float32 arrays of "
      "num_weights elements.");
  visit.template Op<MultiAdamW<false>>(
      "_multi_adamw_update",
      "_adamw_update of num_weights weights (weight, grad, mean, var each), each with its lr, wd "
      "and eta; rescale_grad, the last input, skips every step where it is 0 or not finite.");
  visit.template Op<MultiAdamW<true>>(
      "_multi_mp_adamw_update",
      "_mp_adamw_update of num_weights weights (weight, grad, mean, var, weight32 each), each "
      "with its lr, wd and eta; rescale_grad, the last input, skips every step where it is 0 or "
      "not finite.");
  visit.template Op<MultiLamb<false>>(
      "_multi_lamb_update",
      "LAMB on num_tensors weights (weight, grad, mean, var each): lamb_update_phase1 with the "
      "weight's step_count, the norms of the weight and of the step, and lamb_update_phase2 "
      "with its learning rate.");
  visit.template Op<MultiLamb<true>>(
      "_multi_mp_lamb_update",
      "_multi_lamb_update on float32 master copies (weight, grad, mean, var, weight32 each): "
      "weight32 is stepped and the weight gets it in its dtype.");
}

/*! \brief Registers the aggregated updates' kernels on a device whose loop is Loop (Run, AddTo).
 */
template <class Loop>
struct MultiUpdateKernels {
  DLDeviceType device;
  template <class Kind>
  void Op(const char* name, const char*) const {
    mxplug::sdk::RegisterKernel<MultiUpdateKernel<Kind, Loop>>(name, device);
  }
  void RegisterAll() const {
    ForEachMultiUpdateOp(*this);
    mxplug::sdk::RegisterKernel<MultiSumSqKernel<Loop>>("multi_sum_sq", device);
    mxplug::sdk::RegisterKernel<MultiLarsKernel<Loop>>("multi_lars", device);
    mxplug::sdk::RegisterKernel<ResetArraysKernel<Loop>>("reset_arrays", device);
  }
};

}  // namespace mxplug_optimizer

#endif  // MXPLUG_PLUGINS_OPTIMIZER_MULTI_UPDATE_H_
