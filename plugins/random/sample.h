// Definitions of the samplers and their kernels, written once over a device's element loop:
// MXNet's _random_<dist> (scalar parameters; shape and dtype given), _random_<dist>_like (the
// shape and dtype of an input), _sample_<dist> (a distribution per element of parameter
// tensors), _random_randint and _sample_multinomial. Each asks for the kRandom resource, so the
// engine orders it with every other user of the stream and with mx.random.seed. Element i uses
// draws at fixed places in the call's range (PhiloxDraw), the places RandomStream's sequential
// draws would take: the same seed gives the same numbers on every engine and every device. And
// _shuffle's and _sample_unique_zipfian's, below. sample.cc registers the definitions and the CPU
// kernels, devices/cuda/kernels/sample.cu the GPU kernels; pdf.h has the densities.
#ifndef MXPLUG_PLUGINS_RANDOM_SAMPLE_H_
#define MXPLUG_PLUGINS_RANDOM_SAMPLE_H_

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include "mxplug/plugin.hpp"
#include "tensor/init.h"

namespace mxplug_random {

using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;

// The fields after the distribution's own that every sampler has (MXNet's shape, ctx, dtype),
// inside MXPLUG_DECLARE_PARAMETER of a struct with members of those names.
#define MXPLUG_DECLARE_SAMPLE_OUTPUT(default_dtype)       \
  MXPLUG_DECLARE_FIELD(shape)                             \
      .set_default(TShape(std::vector<int64_t>{}))        \
      .describe("Shape of the output.");                  \
  MXPLUG_DECLARE_FIELD(ctx).set_default("").describe(     \
      "Context of output (the call's context is used)."); \
  MXPLUG_DECLARE_FIELD(dtype)                             \
      .set_default(default_dtype)                         \
      .add_dtype_enum()                                   \
      .describe("Output data type.")

struct RandintParam : mxplug::Parameter<RandintParam> {
  int64_t low, high;
  TShape shape;
  std::string ctx;
  int dtype;
  MXPLUG_DECLARE_PARAMETER(RandintParam) {
    MXPLUG_DECLARE_FIELD(low).describe("Lower bound (inclusive).");
    MXPLUG_DECLARE_FIELD(high).describe("Upper bound (exclusive).");
    MXPLUG_DECLARE_SAMPLE_OUTPUT(kMXPInt32);
  }
};

// A distribution's parameters (declared by DeclareDistribution) and the output fields.
#define MXPLUG_SAMPLER_PARAM(Name, ...)                 \
  struct Name : mxplug::Parameter<Name> {               \
    __VA_ARGS__                                         \
    TShape shape;                                       \
    std::string ctx;                                    \
    int dtype;                                          \
    MXPLUG_DECLARE_PARAMETER(Name) {                    \
      DeclareDistribution(mxplug_declarer_);            \
      MXPLUG_DECLARE_SAMPLE_OUTPUT(kMXPFloat32);        \
    }                                                   \
    void DeclareDistribution(mxplug::ParamDeclarer& d); \
  }

MXPLUG_SAMPLER_PARAM(UniformParam, double low = 0; double high = 1;);
inline void UniformParam::DeclareDistribution(mxplug::ParamDeclarer& d) {
  d.Field("low", low).set_default(0.0).describe("Lower bound of the distribution.");
  d.Field("high", high).set_default(1.0).describe("Upper bound of the distribution (exclusive).");
}
MXPLUG_SAMPLER_PARAM(NormalParam, double loc = 0; double scale = 1;);
inline void NormalParam::DeclareDistribution(mxplug::ParamDeclarer& d) {
  d.Field("loc", loc).set_default(0.0).describe("Mean of the distribution.");
  d.Field("scale", scale).set_default(1.0).describe("Standard deviation of the distribution.");
}
// The exponential's and the Poisson's: a rate.
MXPLUG_SAMPLER_PARAM(RateParam, double lam = 1;);
inline void RateParam::DeclareDistribution(mxplug::ParamDeclarer& d) {
  d.Field("lam", lam)
      .set_default(1.0)
      .describe("Lambda parameter (rate) of the exponential or Poisson distribution.");
}
MXPLUG_SAMPLER_PARAM(GammaParam, double alpha = 1; double beta = 1;);
inline void GammaParam::DeclareDistribution(mxplug::ParamDeclarer& d) {
  d.Field("alpha", alpha)
      .set_default(1.0)
      .describe("Alpha parameter (shape) of the gamma distribution.");
  d.Field("beta", beta)
      .set_default(1.0)
      .describe("Beta parameter (scale) of the gamma distribution.");
}
MXPLUG_SAMPLER_PARAM(NegativeBinomialParam, int k = 1; double p = 1;);
inline void NegativeBinomialParam::DeclareDistribution(mxplug::ParamDeclarer& d) {
  d.Field("k", k).set_default(1).describe("Limit of unsuccessful experiments.");
  d.Field("p", p).set_default(1.0).describe("Failure probability in each experiment.");
}
MXPLUG_SAMPLER_PARAM(GeneralizedNegativeBinomialParam, double mu = 1; double alpha = 1;);
inline void GeneralizedNegativeBinomialParam::DeclareDistribution(mxplug::ParamDeclarer& d) {
  d.Field("mu", mu).set_default(1.0).describe("Mean of the negative binomial distribution.");
  d.Field("alpha", alpha)
      .set_default(1.0)
      .describe("Alpha (dispersion) parameter of the negative binomial distribution.");
}

using mxplug_tensor::StorageType;

// _sample_multinomial(data): samples indices from the distributions on data's last axis.
struct MultinomialParam : mxplug::Parameter<MultinomialParam> {
  TShape shape;
  bool get_prob;
  int dtype;
  MXPLUG_DECLARE_PARAMETER(MultinomialParam) {
    MXPLUG_DECLARE_FIELD(shape)
        .set_default(TShape(std::vector<int64_t>{}))
        .describe("Samples per distribution (empty: one).");
    MXPLUG_DECLARE_FIELD(get_prob).set_default(false).describe(
        "Also return the log probability of each sample.");
    MXPLUG_DECLARE_FIELD(dtype).set_default(kMXPInt32).add_dtype_enum().describe(
        "Type of the samples.");
  }
};

class MultinomialProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListOutputs() const override {
    if (param_.get_prob) return {"output", "prob"};
    return {"output"};
  }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& d = (*in)[0];
    if (d.ndim() < 0) return false;
    if (d.ndim() < 1 || d.ndim() > 2)
      throw std::invalid_argument("data must be 1-D or 2-D (distributions on the last axis), got " +
                                  d.ToString());
    std::vector<int64_t> s(d.begin(), d.end() - 1);
    s.insert(s.end(), param_.shape.begin(), param_.shape.end());
    for (auto& o : *out) o = TShape(s);
    return d.IsKnown();
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    if ((*in)[0] == kMXPUnknownDType) return false;
    (*out)[0] = StorageType(param_.dtype);
    if (param_.get_prob) (*out)[1] = (*in)[0];
    return true;
  }
  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override {
    return {mxplug::ResourceRequest::kRandom};
  }

 private:
  MultinomialParam param_;
};

// ---- The distributions: element i's value from the call's range of draws (key, counter) ----
// Each is made from its parameters' values (Dist(a, b); b unused by one-parameter ones) or from
// its Param; Check(param) throws MXNet's error for parameters that describe no distribution, in
// the kernel, as MXNet checks (the scalar-parameter samplers alone: MXNet's _sample_* take any
// values); Inputs() names _sample_<dist>'s parameter tensors.

/*! \brief A call's range of draws: draw d is PhiloxDraw(key, counter, d). */
struct Draws {
  uint64_t key, counter;
  MXPLUG_XINLINE uint32_t operator[](uint64_t d) const {
    return mxplug::PhiloxDraw(key, counter, d);
  }
};

// Uniform on [low, high): one draw per element for float32 and float16 (24 bits), two for
// float64 (53 bits).
struct Uniform {
  using Param = UniformParam;
  static constexpr uint64_t kDrawsPerElement = 2;
  double low, high;
  MXPLUG_XINLINE Uniform(double a, double b) : low(a), high(b) {}
  explicit Uniform(const Param& p) : Uniform(p.low, p.high) {}
  static void Check(const Param& p) {
    if (p.low > p.high)
      throw std::invalid_argument("low (" + std::to_string(p.low) + ") must not exceed high (" +
                                  std::to_string(p.high) + ")");
  }
  static std::vector<std::string> Inputs() { return {"low", "high"}; }
  template <class T>
  MXPLUG_XINLINE double At(const Draws& r, int64_t i) const {
    const uint64_t d = static_cast<uint64_t>(i);
    const double u = std::is_same_v<T, double> ? mxplug::UniformDoubleOf(r[2 * d], r[2 * d + 1])
                                               : mxplug::UniformFloatOf(r[d]);
    return low + (high - low) * u;
  }
};

// Normal by Box-Muller: elements 2k and 2k + 1 are the pair made from draws 4k to 4k + 3.
struct Normal {
  using Param = NormalParam;
  static constexpr uint64_t kDrawsPerElement = 2;
  double loc, scale;
  MXPLUG_XINLINE Normal(double a, double b) : loc(a), scale(b) {}
  explicit Normal(const Param& p) : Normal(p.loc, p.scale) {}
  static void Check(const Param& p) {
    if (!(p.scale > 0))
      throw std::invalid_argument("scale parameter in gaussian has to be positive: " +
                                  std::to_string(p.scale));
  }
  static std::vector<std::string> Inputs() { return {"mu", "sigma"}; }
  template <class T>
  MXPLUG_XINLINE double At(const Draws& r, int64_t i) const {
    const uint64_t d = 4 * (static_cast<uint64_t>(i) / 2);
    const double u1 = 1.0 - mxplug::UniformDoubleOf(r[d], r[d + 1]);  // (0, 1]: log is finite
    const double u2 = mxplug::UniformDoubleOf(r[d + 2], r[d + 3]);
    return loc + scale * mxplug::NormalOf(u1, u2, i % 2 == 1);
  }
};

// Integers on [low, high): two draws per element.
struct Randint {
  using Param = RandintParam;
  static constexpr uint64_t kDrawsPerElement = 2;
  int64_t low;
  uint64_t range;
  explicit Randint(const Param& p) : low(p.low), range(static_cast<uint64_t>(p.high - p.low)) {}
  static void Check(const Param& p) {
    if (p.low >= p.high)
      throw std::invalid_argument("low (" + std::to_string(p.low) + ") must be less than high (" +
                                  std::to_string(p.high) + ")");
  }
  template <class T>
  MXPLUG_XINLINE int64_t At(const Draws& r, int64_t i) const {
    const uint64_t d = 2 * static_cast<uint64_t>(i);
    return low + static_cast<int64_t>(mxplug::BelowOf(r[d], r[d + 1], range));
  }
};

// ---- Rejection and composition: element i reads its own window of draws, in order ----
// A rejection loop runs at most a fixed number of tries, so that every element has a window of
// known size (kDrawsPerElement); the tries run out with a probability below 1e-15.

/*! \brief Element i's window of draws, read in order. */
struct DrawCursor {
  const Draws& r;
  uint64_t next, end;
  MXPLUG_XINLINE DrawCursor(const Draws& draws, int64_t i, uint64_t per_element)
      : r(draws), next(static_cast<uint64_t>(i) * per_element), end(next + per_element) {}
  // On [0, 1), 53 bits (0.5 past the window's end, which no caller reaches).
  MXPLUG_XINLINE double Uniform() {
    const double u = next + 1 < end ? mxplug::UniformDoubleOf(r[next], r[next + 1]) : 0.5;
    next += 2;
    return u;
  }
  MXPLUG_XINLINE double StandardNormal() {
    const double u1 = 1.0 - Uniform();  // (0, 1]: log is finite
    return mxplug::NormalOf(u1, Uniform(), false);
  }
};

constexpr int kGammaTries = 16;                        // Marsaglia-Tsang accepts 95% or more
constexpr uint64_t kGammaDraws = kGammaTries * 6 + 2;  // a normal and a uniform a try; the boost
constexpr int kPoissonProducts = 60;                   // Knuth's method, lam < 12
constexpr uint64_t kPoissonDraws = 2 * (kPoissonProducts + 1);

// Gamma(alpha, 1) by Marsaglia and Tsang (2000); alpha < 1 through Gamma(alpha + 1) * U^(1/alpha).
MXPLUG_XINLINE double StandardGamma(DrawCursor& c, double alpha) {
  const bool boost = alpha < 1;
  const double d = (boost ? alpha + 1 : alpha) - 1.0 / 3, scale = 1 / std::sqrt(9 * d);
  double v = 1;
  for (int t = 0; t < kGammaTries; ++t) {
    const double x = c.StandardNormal();
    double cube = 1 + scale * x;
    const double u = c.Uniform();
    if (cube <= 0) continue;
    cube = cube * cube * cube;
    if (u < 1 - 0.0331 * x * x * x * x ||
        std::log(u) < 0.5 * x * x + d * (1 - cube + std::log(cube))) {
      v = cube;
      break;
    }
  }
  c.next = c.end - 2;  // the boost's uniform is the window's last, whatever the tries took
  const double g = d * v;
  return boost ? g * std::pow(1.0 - c.Uniform(), 1 / alpha) : g;
}

// Poisson(lam): Knuth's products of uniforms below 12, Hormann's PTRS (1993) above, as the
// common samplers do.
MXPLUG_XINLINE double PoissonOf(DrawCursor& c, double lam) {
  if (lam < 12) {
    const double limit = std::exp(-lam);
    double product = c.Uniform();
    int k = 0;
    while (product > limit && k < kPoissonProducts) product *= c.Uniform(), ++k;
    return k;
  }
  const double slam = std::sqrt(lam), loglam = std::log(lam), b = 0.931 + 2.53 * slam,
               a = -0.059 + 0.02483 * b, invalpha = 1.1239 + 1.1328 / (b - 3.4),
               vr = 0.9277 - 3.6224 / (b - 2);
  for (int t = 0; t < kPoissonProducts / 2; ++t) {
    const double u = c.Uniform() - 0.5, v = c.Uniform(), us = 0.5 - std::fabs(u);
    const double k = std::floor((2 * a / us + b) * u + lam + 0.43);
    if (us >= 0.07 && v <= vr) return k;
    if (k < 0 || (us < 0.013 && v > us)) continue;
    if (std::log(v) + std::log(invalpha) - std::log(a / (us * us) + b) <=
        -lam + k * loglam - std::lgamma(k + 1))
      return k;
  }
  return std::floor(lam);
}

struct Exponential {
  using Param = RateParam;
  static constexpr uint64_t kDrawsPerElement = 2;
  double lam;
  MXPLUG_XINLINE Exponential(double a, double) : lam(a) {}
  explicit Exponential(const Param& p) : lam(p.lam) {}
  static void Check(const Param& p) {  // MXNet's words, as in the checks below
    if (!(p.lam > 0))
      throw std::invalid_argument("Invalid lambda parameter for exponential distribution: " +
                                  std::to_string(p.lam));
  }
  static std::vector<std::string> Inputs() { return {"lam"}; }
  template <class T>
  MXPLUG_XINLINE double At(const Draws& r, int64_t i) const {
    DrawCursor c(r, i, kDrawsPerElement);
    return -std::log(1.0 - c.Uniform()) / lam;
  }
};

struct Gamma {
  using Param = GammaParam;
  static constexpr uint64_t kDrawsPerElement = kGammaDraws;
  double alpha, beta;
  MXPLUG_XINLINE Gamma(double a, double b) : alpha(a), beta(b) {}
  explicit Gamma(const Param& p) : Gamma(p.alpha, p.beta) {}
  static void Check(const Param& p) {
    if (!(p.alpha > 0) || !(p.beta > 0))
      throw std::invalid_argument("Invalid alpha or beta parameter for gamma distribution: " +
                                  std::to_string(p.alpha) + ", " + std::to_string(p.beta));
  }
  static std::vector<std::string> Inputs() { return {"alpha", "beta"}; }
  template <class T>
  MXPLUG_XINLINE double At(const Draws& r, int64_t i) const {
    DrawCursor c(r, i, kDrawsPerElement);
    return beta * StandardGamma(c, alpha);
  }
};

struct Poisson {
  using Param = RateParam;
  static constexpr uint64_t kDrawsPerElement = kPoissonDraws;
  double lam;
  MXPLUG_XINLINE Poisson(double a, double) : lam(a) {}
  explicit Poisson(const Param& p) : lam(p.lam) {}
  static void Check(const Param& p) {
    if (!(p.lam >= 0))
      throw std::invalid_argument("Invalid lambda parameter for poisson distribution: " +
                                  std::to_string(p.lam));
  }
  static std::vector<std::string> Inputs() { return {"lam"}; }
  template <class T>
  MXPLUG_XINLINE double At(const Draws& r, int64_t i) const {
    DrawCursor c(r, i, kDrawsPerElement);
    return PoissonOf(c, lam);
  }
};

// A Poisson whose rate is Gamma-distributed: the negative binomials, as MXNet composes them.
template <class P>
struct GammaPoisson {
  using Param = P;
  static constexpr uint64_t kDrawsPerElement = kGammaDraws + kPoissonDraws;
  static constexpr bool kGeneralized = std::is_same_v<P, GeneralizedNegativeBinomialParam>;
  double shape = 0, scale = 0;  // the rate's gamma; scale 0: a Poisson of rate `shape`
  // (k, p) or, generalized, (mu, alpha).
  MXPLUG_XINLINE GammaPoisson(double a, double b) {
    if constexpr (!kGeneralized) {
      shape = a, scale = (1 - b) / b;
    } else if (b == 0) {
      shape = a, scale = 0;
    } else {
      shape = 1 / b, scale = b * a;
    }
  }
  explicit GammaPoisson(const P& p) : GammaPoisson(FirstOf(p), SecondOf(p)) {}
  static void Check(const P& p) {
    if constexpr (!kGeneralized) {
      if (p.k <= 0 || !(p.p > 0) || p.p > 1)
        throw std::invalid_argument(
            "Invalid parameters for negative binomial distribution: k=" + std::to_string(p.k) +
            ", p=" + std::to_string(p.p) + " (k > 0 and 0 < p <= 1)");
    } else if (!(p.mu >= 0) || !(p.alpha >= 0)) {
      throw std::invalid_argument(
          "Invalid parameters for generalized negative binomial distribution: mu=" +
          std::to_string(p.mu) + ", alpha=" + std::to_string(p.alpha));
    }
  }
  static std::vector<std::string> Inputs() {
    if constexpr (kGeneralized) return {"mu", "alpha"};
    return {"k", "p"};
  }
  template <class T>
  MXPLUG_XINLINE double At(const Draws& r, int64_t i) const {
    DrawCursor rate(r, i, kDrawsPerElement);
    rate.end = rate.next + kGammaDraws;
    DrawCursor count(r, i, kDrawsPerElement);
    count.next += kGammaDraws;
    return PoissonOf(count, scale == 0 ? shape : scale * StandardGamma(rate, shape));
  }
  static double FirstOf(const P& p) {
    if constexpr (kGeneralized)
      return p.mu;
    else
      return p.k;
  }
  static double SecondOf(const P& p) {
    if constexpr (kGeneralized)
      return p.alpha;
    else
      return p.p;
  }
};
using NegativeBinomial = GammaPoisson<NegativeBinomialParam>;
using GeneralizedNegativeBinomial = GammaPoisson<GeneralizedNegativeBinomialParam>;

// ---- The properties of the three kinds of sampler ----

// _random_<dist>: no inputs, one output of the `shape` parameter (the init ops' property, from
// the tensor plugin's definition header), the random resource in forward.
template <class Dist>
class SamplerProp : public mxplug_tensor::ShapeParamProp<typename Dist::Param> {
 public:
  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override {
    return {mxplug::ResourceRequest::kRandom};
  }
};

// The samplers that draw no gradient from their inputs: no backward dependency, no in-place.
class InputSamplerProp : public mxplug::OperatorProperty {
 public:
  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override {
    return {mxplug::ResourceRequest::kRandom};
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>&, const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return {};
  }
};

/*! \brief _random_<dist>_like's parameters: the distribution's alone (the shape and dtype are
 * the data's). */
template <class P>
struct LikeParam : mxplug::Parameter<LikeParam<P>> {
  P dist;
  MXPLUG_DECLARE_PARAMETER(LikeParam) { dist.DeclareDistribution(mxplug_declarer_); }
};

// _random_<dist>_like(data): samples of data's shape and dtype.
template <class Dist>
class LikeSamplerProp : public InputSamplerProp {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    return mxplug::InferSameShape(in, out);
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    if ((*in)[0] == kMXPUnknownDType) return false;
    (*out)[0] = (*in)[0];
    return true;
  }

 private:
  LikeParam<typename Dist::Param> param_;
};

// _sample_<dist>(parameters...): one distribution per element of the parameter tensors, `shape`
// samples of each; the output's shape is theirs followed by `shape`.
struct EachParam : mxplug::Parameter<EachParam> {
  TShape shape;
  std::optional<int> dtype;
  MXPLUG_DECLARE_PARAMETER(EachParam) {
    MXPLUG_DECLARE_FIELD(shape)
        .set_default(TShape(std::vector<int64_t>{}))
        .describe("Shape to be sampled from each random distribution.");
    MXPLUG_DECLARE_FIELD(dtype)
        .set_default(std::nullopt)
        .add_dtype_enum()
        .describe("Output data type (None: float32).");
  }
};

template <class Dist>
class EachSamplerProp : public InputSamplerProp {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return Dist::Inputs(); }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    TShape params;  // what the parameter tensors know of their one shape, together
    for (const TShape& s : *in)
      if (!mxplug::MergeShape(&params, s))
        throw std::invalid_argument("the parameters must have one shape, got " +
                                    (*in)[0].ToString() + " and " + s.ToString());
    if (params.ndim() < 0) return false;
    for (TShape& s : *in) s = params;
    std::vector<int64_t> dims(params.begin(), params.end());
    dims.insert(dims.end(), param_.shape.begin(), param_.shape.end());
    (*out)[0] = TShape(dims);
    return (*out)[0].IsKnown();
  }
  // The parameter tensors share one dtype (the default InferType, given no output to follow);
  // the samples' is dtype's, float32 by default.
  bool InferType(std::vector<int>* in, std::vector<int>* out,
                 std::vector<int>* aux) const override {
    std::vector<int> unused(out->size(), kMXPUnknownDType);
    const bool known = OperatorProperty::InferType(in, &unused, aux);
    (*out)[0] = param_.dtype ? StorageType(*param_.dtype) : kMXPFloat32;
    return known;
  }

 private:
  EachParam param_;
};

template <class Dist, class T>
struct SampleElements {
  Dist dist;
  Draws draws;
  T* out;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    mxplug::StoreAs<C>(out[i], req, static_cast<C>(dist.template At<T>(draws, i)));
  }
};

/*! \brief The draws of a call that uses `per_element` of them per output element; 4 more, as
 * the CPU kernels always reserved (a Box-Muller pair past an odd count). */
inline Draws ReserveDraws(const mxplug::OpContext& ctx, uint64_t per_element, int64_t elements) {
  const mxplug::RandomStream r =
      ctx.requested[0].get_random(per_element * static_cast<uint64_t>(elements) + 4);
  return {r.key(), r.counter()};
}

/*! \brief _random_<dist> (or, kLike, _random_<dist>_like) on a device whose element loop is
 * Loop. */
template <class Dist, class Loop, bool kLike = false>
class SampleKernel : public mxplug::Operator {
 public:
  SampleKernel(const mxplug::KwArgs& kwargs, mxplug::Context) : param_(Parsed(kwargs)) {}
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>&,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    Dist::Check(param_);  // when the kernel runs, as MXNet checks: an error at the next wait
    const Dist dist(param_);
    if (req[0] == mxplug::kNullOp) return;
    const Draws draws = ReserveDraws(ctx, Dist::kDrawsPerElement, out[0].Size());
    mxplug::TypeSwitch(out[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(ctx, out[0].Size(), SampleElements<Dist, T>{dist, draws, out[0].dptr<T>(), req[0]});
    });
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>&, const std::vector<TBlob>&,
                const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                const std::vector<TBlob>& in_grad, const std::vector<TBlob>&) override {
    for (size_t i = 0; i < in_grad.size(); ++i) Loop::Zero(ctx, in_grad[i], req[i]);
  }

 private:
  static typename Dist::Param Parsed(const mxplug::KwArgs& kwargs) {
    if constexpr (kLike) {
      LikeParam<typename Dist::Param> p;
      p.Init(kwargs);
      return p.dist;
    } else {
      typename Dist::Param p;
      p.Init(kwargs);
      return p;
    }
  }
  typename Dist::Param param_;
};

/*! \brief Element i of _sample_<dist>: a draw of the distribution of parameters a[i / per] and
 * (for two-parameter ones) b[i / per]. */
template <class Dist, class P, class T>
struct SampleEachElements {
  const P* a;
  const P* b;  // null for one-parameter distributions
  int64_t per;
  Draws draws;
  T* out;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    using PC = mxplug::ComputeType<P>;
    const int64_t j = i / per;
    const Dist dist(static_cast<double>(static_cast<PC>(a[j])),
                    b ? static_cast<double>(static_cast<PC>(b[j])) : 0.0);
    mxplug::StoreAs<C>(out[i], req, static_cast<C>(dist.template At<T>(draws, i)));
  }
};

/*! \brief _sample_<dist> on a device whose element loop is Loop. */
template <class Dist, class Loop>
class SampleEachKernel : public mxplug::Operator {
 public:
  SampleEachKernel(const mxplug::KwArgs&, mxplug::Context) {}
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const Draws draws = ReserveDraws(ctx, Dist::kDrawsPerElement, out[0].Size());
    const int64_t per = in[0].Size() ? out[0].Size() / in[0].Size() : 0;
    if (per == 0) return;
    mxplug::FloatTypeSwitch(in[0].type_flag_, "the parameters", [&](auto pz) {
      using P = decltype(pz);
      const P* b = in.size() > 1 ? in[1].dptr<P>() : nullptr;
      mxplug::FloatTypeSwitch(out[0].type_flag_, "dtype", [&](auto tz) {
        using T = decltype(tz);
        Loop::Run(ctx, out[0].Size(),
                  SampleEachElements<Dist, P, T>{in[0].dptr<P>(), b, per, draws, out[0].dptr<T>(),
                                                 req[0]});
      });
    });
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>&, const std::vector<TBlob>&,
                const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                const std::vector<TBlob>& in_grad, const std::vector<TBlob>&) override {
    for (size_t i = 0; i < in_grad.size(); ++i) Loop::Zero(ctx, in_grad[i], req[i]);
  }
};

/*! \brief Sample o of _sample_multinomial (distribution o / per): the first class whose
 * cumulative probability exceeds a uniform double from draws 2o and 2o + 1 (the last class when
 * none does), and its log probability. */
template <class P, class I>
struct MultinomialElements {
  const P* p;
  I* out;
  P* log_prob;  // null unless get_prob
  Draws draws;
  int64_t k, per;
  int req, prob_req;
  MXPLUG_XINLINE void operator()(int64_t o) const {
    const uint64_t d = 2 * static_cast<uint64_t>(o);
    const double u = mxplug::UniformDoubleOf(draws[d], draws[d + 1]);
    const P* dist = p + (o / per) * k;
    double acc = 0;
    int64_t j = 0;
    for (; j < k - 1; ++j) {
      acc += static_cast<double>(dist[j]);
      if (u < acc) break;
    }
    mxplug::StoreAs<mxplug::ComputeType<I>>(out[o], req, static_cast<mxplug::ComputeType<I>>(j));
    if (log_prob) mxplug::StoreAs<P>(log_prob[o], prob_req, static_cast<P>(std::log(dist[j])));
  }
};

/*! \brief _sample_multinomial on a device whose element loop is Loop. */
template <class Loop>
class MultinomialKernel : public mxplug::Operator {
 public:
  MultinomialKernel(const mxplug::KwArgs&, mxplug::Context) {}
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    const int64_t k = in[0].shape_[in[0].ndim() - 1];
    const int64_t dists = k ? in[0].Size() / k : 0;
    const int64_t per = dists ? out[0].Size() / dists : 0;
    const Draws draws = ReserveDraws(ctx, 2, out[0].Size());
    if (per == 0) return;
    mxplug::RealTypeSwitch(in[0].type_flag_, "", [&](auto pz) {
      using P = decltype(pz);
      P* lp = out.size() > 1 ? out[1].dptr<P>() : nullptr;
      mxplug::TypeSwitch(out[0].type_flag_, [&](auto iz) {
        using I = decltype(iz);
        Loop::Run(ctx, out[0].Size(),
                  MultinomialElements<P, I>{in[0].dptr<P>(), out[0].dptr<I>(), lp, draws, k, per,
                                            req[0], out.size() > 1 ? req[1] : 0});
      });
    });
  }
};

/*! \brief Calls visit.template Sampler<Dist>(name, doc) for every _random_<dist> (scalar
 * parameters), visit.template Like<Dist> for every _random_<dist>_like, visit.template Each<Dist>
 * for every _sample_<dist> (tensor parameters), and visit.Multinomial(name, doc): the one list
 * the definitions and each device's kernels register from. */
template <class Visitor>
void ForEachSampler(Visitor&& visit) {
  visit.template Sampler<Uniform>("_random_uniform",
                                  "Samples a uniform distribution on [low, high).");
  visit.template Sampler<Normal>("_random_normal",
                                 "Samples a normal distribution N(loc, scale^2).");
  visit.template Sampler<Randint>("_random_randint",
                                  "Samples integers uniformly from [low, high).");
  visit.Multinomial("_sample_multinomial",
                    "Samples indices from the categorical distributions on the last axis of data.");
  visit.template Sampler<Exponential>("_random_exponential",
                                      "Samples an exponential distribution of rate lam.");
  visit.template Sampler<Gamma>("_random_gamma",
                                "Samples a gamma distribution of shape alpha and scale beta.");
  visit.template Sampler<Poisson>("_random_poisson", "Samples a Poisson distribution of rate lam.");
  visit.template Sampler<NegativeBinomial>(
      "_random_negative_binomial",
      "Samples a negative binomial distribution: the failures before k successes of probability "
      "p (a Poisson whose rate is gamma(k, (1 - p) / p)).");
  visit.template Sampler<GeneralizedNegativeBinomial>(
      "_random_generalized_negative_binomial",
      "Samples a generalized negative binomial distribution of mean mu and dispersion alpha (a "
      "Poisson whose rate is gamma(1 / alpha, alpha * mu); Poisson(mu) when alpha is 0).");
  // The same distributions, with the shape and dtype of an input array.
  visit.template Like<Uniform>("_random_uniform_like", "Same as _random_uniform, like data.");
  visit.template Like<Normal>("_random_normal_like", "Same as _random_normal, like data.");
  visit.template Like<Exponential>("_random_exponential_like",
                                   "Same as _random_exponential, like data.");
  visit.template Like<Gamma>("_random_gamma_like", "Same as _random_gamma, like data.");
  visit.template Like<Poisson>("_random_poisson_like", "Same as _random_poisson, like data.");
  visit.template Like<NegativeBinomial>("_random_negative_binomial_like",
                                        "Same as _random_negative_binomial, like data.");
  visit.template Like<GeneralizedNegativeBinomial>(
      "_random_generalized_negative_binomial_like",
      "Same as _random_generalized_negative_binomial, like data.");
  // And with one distribution per element of parameter tensors, under both of MXNet's names.
  for (const char* prefix : {"_sample_", "sample_"}) {
    const std::string p = prefix;
    visit.template Each<Uniform>(p + "uniform", "Samples uniform distributions on [low, high).");
    visit.template Each<Normal>(p + "normal", "Samples normal distributions N(mu, sigma^2).");
    visit.template Each<Exponential>(p + "exponential",
                                     "Samples exponential distributions of rates lam.");
    visit.template Each<Gamma>(p + "gamma",
                               "Samples gamma distributions of shapes alpha and scales beta.");
    visit.template Each<Poisson>(p + "poisson", "Samples Poisson distributions of rates lam.");
    visit.template Each<NegativeBinomial>(p + "negative_binomial",
                                          "Samples negative binomial distributions (k, p).");
    visit.template Each<GeneralizedNegativeBinomial>(
        p + "generalized_negative_binomial",
        "Samples generalized negative binomial distributions (mu, alpha).");
  }
  // MXNet's other names of the same operators.
  visit.template Sampler<Uniform>("random_uniform", "Same as _random_uniform.");
  visit.template Sampler<Uniform>("uniform", "Same as _random_uniform.");
  visit.template Sampler<Normal>("random_normal", "Same as _random_normal.");
  visit.template Sampler<Normal>("normal", "Same as _random_normal.");
  visit.template Sampler<Randint>("random_randint", "Same as _random_randint.");
  visit.Multinomial("sample_multinomial", "Same as _sample_multinomial.");
  visit.template Sampler<Exponential>("random_exponential", "Same as _random_exponential.");
  visit.template Sampler<Gamma>("random_gamma", "Same as _random_gamma.");
  visit.template Sampler<Poisson>("random_poisson", "Same as _random_poisson.");
  visit.template Sampler<NegativeBinomial>("random_negative_binomial",
                                           "Same as _random_negative_binomial.");
  visit.template Sampler<GeneralizedNegativeBinomial>(
      "random_generalized_negative_binomial", "Same as _random_generalized_negative_binomial.");
}

// ---- _sample_unique_zipfian: distinct classes from the log-uniform distribution ----
// Each row draws until it holds `shape[1]` distinct classes; a row's tries depend on its draws,
// so the rows are drawn on the host on every device (MXNet's operator is the CPU's alone), and
// Store puts them where the outputs are: HostStore on the CPU, a copy on a GPU.

struct UniqueZipfianParam : mxplug::Parameter<UniqueZipfianParam> {
  int64_t range_max;
  TShape shape;
  MXPLUG_DECLARE_PARAMETER(UniqueZipfianParam) {
    MXPLUG_DECLARE_FIELD(range_max).describe("The number of possible classes.");
    MXPLUG_DECLARE_FIELD(shape)
        .set_default(TShape(std::vector<int64_t>{}))
        .describe("2-D shape of the output: (batch size, number of samples).");
  }
};

class UniqueZipfianProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override {
    param_.Init(kwargs);
    if (param_.shape.ndim() != 2)
      throw std::invalid_argument("shape must have 2 dimensions (batch size, samples), got " +
                                  param_.shape.ToString());
    if (param_.shape[1] > param_.range_max)
      throw std::invalid_argument(
          "Number of samples cannot exceed the number of possible "
          "classes: " +
          std::to_string(param_.shape[1]) + " samples, " + std::to_string(param_.range_max) +
          " classes");
  }
  std::vector<std::string> ListArguments() const override { return {}; }
  std::vector<std::string> ListOutputs() const override { return {"output", "num_tries"}; }
  bool InferShape(std::vector<TShape>*, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    (*out)[0] = param_.shape;
    (*out)[1] = TShape{param_.shape[0]};
    return true;
  }
  bool InferType(std::vector<int>*, std::vector<int>* out, std::vector<int>*) const override {
    (*out)[0] = (*out)[1] = kMXPInt64;
    return true;
  }
  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override {
    return {mxplug::ResourceRequest::kRandom};
  }

 private:
  UniqueZipfianParam param_;
};

/*! \brief The CPU's _sample_unique_zipfian: class round(range_max^u) - 1 for u uniform on [0, 1)
 * (what MXNet 1.9.1 draws: class c with probability log((c + 1.5) / (c + 0.5)) / log(range_max),
 * the ends clipped), repeated until the row has its samples. */
template <class Store>
class UniqueZipfianKernel : public mxplug::Operator {
 public:
  UniqueZipfianKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { param_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>&,
               const std::vector<OpReqType>&, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    const int64_t rows = out[0].shape_[0], samples = out[0].shape_[1];
    const double log_range = std::log(static_cast<double>(param_.range_max));
    std::vector<int64_t> classes(static_cast<size_t>(rows * samples)), tries(rows);
    const uint64_t chunk = 2 * static_cast<uint64_t>(samples) + 64;  // draws reserved at a time
    mxplug::RandomStream r = ctx.requested[0].get_random(chunk);
    std::unordered_set<int64_t> seen;
    for (int64_t b = 0; b < rows; ++b) {
      seen.clear();
      int64_t n = 0;
      while (static_cast<int64_t>(seen.size()) < samples) {
        if (r.used() + 2 > chunk) r = ctx.requested[0].get_random(chunk);
        const int64_t c =
            static_cast<int64_t>(std::floor(std::exp(r.UniformDouble() * log_range) + 0.5)) - 1;
        ++n;
        if (seen.insert(c).second) classes[b * samples + seen.size() - 1] = c;
      }
      tries[b] = n;
    }
    Store::Store(ctx, classes, out[0].dptr<int64_t>());
    Store::Store(ctx, tries, out[1].dptr<int64_t>());
  }

 private:
  UniqueZipfianParam param_;
};

struct HostStore {
  static void Store(const mxplug::OpContext&, const std::vector<int64_t>& v, int64_t* out) {
    std::copy(v.begin(), v.end(), out);
  }
};

template <class Store>
void RegisterUniqueZipfianKernel(DLDeviceType device) {
  mxplug::sdk::RegisterKernel<UniqueZipfianKernel<Store>>("_sample_unique_zipfian", device);
}

// _shuffle and MXNet's other name of it.
constexpr const char* kShuffleNames[] = {"_shuffle", "shuffle"};

/*! \brief Registers the kernels of every sampler on a device whose element loop is Loop. */
template <class Loop>
struct SamplerKernels {
  DLDeviceType device;
  template <class Dist>
  void Sampler(const std::string& name, const char*) const {
    mxplug::sdk::RegisterKernel<SampleKernel<Dist, Loop>>(name.c_str(), device);
  }
  template <class Dist>
  void Like(const std::string& name, const char*) const {
    mxplug::sdk::RegisterKernel<SampleKernel<Dist, Loop, true>>(name.c_str(), device);
  }
  template <class Dist>
  void Each(const std::string& name, const char*) const {
    mxplug::sdk::RegisterKernel<SampleEachKernel<Dist, Loop>>(name.c_str(), device);
  }
  void Multinomial(const std::string& name, const char*) const {
    mxplug::sdk::RegisterKernel<MultinomialKernel<Loop>>(name.c_str(), device);
  }
};

// ---- _shuffle: a random permutation of the first axis ----
// Fisher-Yates is sequential, so the permutation is drawn on the host from the call's random
// stream on every device (the same seed gives the same permutation everywhere); the rows then
// move on the device, one element per thread. Upload puts the permutation where the device reads
// it: HostPermutation on the CPU, the op's temp space on a GPU.

class ShuffleProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    return mxplug::InferSameShape(in, out);
  }
  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override {
    return {mxplug::ResourceRequest::kRandom, mxplug::ResourceRequest::kTempSpace};
  }

 private:
  struct NoParam : mxplug::Parameter<NoParam> {
    MXPLUG_DECLARE_PARAMETER(NoParam) {}
  } param_;
};

inline std::vector<int64_t> ShufflePermutation(const mxplug::OpContext& ctx, int64_t rows) {
  std::vector<int64_t> perm(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) perm[i] = i;
  mxplug::RandomStream r = ctx.resource(mxplug::ResourceRequest::kRandom)
                               .get_random(2 * static_cast<uint64_t>(rows) + 4);
  for (int64_t i = rows - 1; i > 0; --i) {
    const int64_t j = static_cast<int64_t>(r.Below(static_cast<uint64_t>(i + 1)));
    const int64_t t = perm[i];
    perm[i] = perm[j], perm[j] = t;
  }
  return perm;
}

template <class T>
struct ShuffleRows {
  const int64_t* perm;
  int64_t row;
  const T* x;
  T* out;
  int req;
  MXPLUG_XINLINE void operator()(int64_t e) const {
    using C = mxplug::ComputeType<T>;
    mxplug::StoreAs<C>(out[e], req, static_cast<C>(x[perm[e / row] * row + e % row]));
  }
};

struct HostPermutation {
  static const int64_t* Upload(const mxplug::OpContext&, const std::vector<int64_t>& perm) {
    return perm.data();
  }
};

template <class Loop, class Upload>
class ShuffleKernel : public mxplug::Operator {
 public:
  ShuffleKernel(const mxplug::KwArgs&, mxplug::Context) {}
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    if (in[0].dptr_ == out[0].dptr_ && in[0].Size() > 0)
      throw std::invalid_argument("_shuffle cannot write over its input");
    const int64_t rows = in[0].ndim() > 0 ? in[0].shape_[0] : 1;
    const int64_t row = rows ? static_cast<int64_t>(in[0].Size()) / rows : 0;
    const std::vector<int64_t> perm = ShufflePermutation(ctx, rows);
    if (rows == 0 || row == 0) return;
    const int64_t* p = Upload::Upload(ctx, perm);
    mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(ctx, rows * row, ShuffleRows<T>{p, row, in[0].dptr<T>(), out[0].dptr<T>(), req[0]});
    });
  }
};

template <class Loop, class Upload>
void RegisterShuffleKernel(DLDeviceType device) {
  for (const char* name : kShuffleNames)
    mxplug::sdk::RegisterKernel<ShuffleKernel<Loop, Upload>>(name, device);
}

}  // namespace mxplug_random

#endif  // MXPLUG_PLUGINS_RANDOM_SAMPLE_H_
