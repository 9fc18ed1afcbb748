// Definitions of the samplers (MXNet's _random_uniform, _random_normal, _random_randint and
// _sample_multinomial) and their kernels, written once over a device's element loop. Each asks for
// the kRandom resource, so the engine orders it with every other user of the stream and with
// mx.random.seed. Element i uses draws at fixed places in the call's range (PhiloxDraw), the
// places RandomStream's sequential draws would take: the same seed gives the same numbers on every
// engine and every device. And _shuffle's, below. sample.cc registers the definitions and the CPU
// kernels, devices/cuda/kernels/sample.cu the GPU kernels.
#ifndef MXPLUG_PLUGINS_RANDOM_SAMPLE_H_
#define MXPLUG_PLUGINS_RANDOM_SAMPLE_H_

#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>
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

struct UniformParam : mxplug::Parameter<UniformParam> {
  double low, high;
  TShape shape;
  std::string ctx;
  int dtype;
  MXPLUG_DECLARE_PARAMETER(UniformParam) {
    MXPLUG_DECLARE_FIELD(low).set_default(0.0).describe("Lower bound of the distribution.");
    MXPLUG_DECLARE_FIELD(high).set_default(1.0).describe(
        "Upper bound of the distribution (exclusive).");
    MXPLUG_DECLARE_SAMPLE_OUTPUT(kMXPFloat32);
  }
};

struct NormalParam : mxplug::Parameter<NormalParam> {
  double loc, scale;
  TShape shape;
  std::string ctx;
  int dtype;
  MXPLUG_DECLARE_PARAMETER(NormalParam) {
    MXPLUG_DECLARE_FIELD(loc).set_default(0.0).describe("Mean of the distribution.");
    MXPLUG_DECLARE_FIELD(scale).set_default(1.0).set_lower_bound(0).describe(
        "Standard deviation of the distribution.");
    MXPLUG_DECLARE_SAMPLE_OUTPUT(kMXPFloat32);
  }
};

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

using mxplug_tensor::StorageType;

// A sampler: no inputs, one output of the `shape` parameter (the init ops' property, from the
// tensor plugin's definition header), the random resource in forward; Check() rejects parameters
// that describe no distribution.
template <class Param>
class SamplerProp : public mxplug_tensor::ShapeParamProp<Param> {
 public:
  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override {
    return {mxplug::ResourceRequest::kRandom};
  }
};

class UniformProp : public SamplerProp<UniformParam> {
  void Check() const override {
    if (param_.low > param_.high)
      throw std::invalid_argument("low (" + std::to_string(param_.low) +
                                  ") must not exceed high (" + std::to_string(param_.high) + ")");
  }
};

class NormalProp : public SamplerProp<NormalParam> {};

class RandintProp : public SamplerProp<RandintParam> {
  void Check() const override {
    if (param_.low >= param_.high)
      throw std::invalid_argument("low (" + std::to_string(param_.low) +
                                  ") must be less than high (" + std::to_string(param_.high) + ")");
  }
};

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
  explicit Uniform(const Param& p) : low(p.low), high(p.high) {}
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
  explicit Normal(const Param& p) : loc(p.loc), scale(p.scale) {}
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
  template <class T>
  MXPLUG_XINLINE int64_t At(const Draws& r, int64_t i) const {
    const uint64_t d = 2 * static_cast<uint64_t>(i);
    return low + static_cast<int64_t>(mxplug::BelowOf(r[d], r[d + 1], range));
  }
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

/*! \brief A sampler of distribution Dist on a device whose element loop is Loop. */
template <class Dist, class Loop>
class SampleKernel : public mxplug::Operator {
 public:
  SampleKernel(const mxplug::KwArgs& kwargs, mxplug::Context) : dist_(Parsed(kwargs)) {}
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>&,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const Draws draws = ReserveDraws(ctx, Dist::kDrawsPerElement, out[0].Size());
    mxplug::TypeSwitch(out[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(ctx, out[0].Size(),
                SampleElements<Dist, T>{dist_, draws, out[0].dptr<T>(), req[0]});
    });
  }

 private:
  static typename Dist::Param Parsed(const mxplug::KwArgs& kwargs) {
    typename Dist::Param p;
    p.Init(kwargs);
    return p;
  }
  Dist dist_;
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

/*! \brief Calls visit.template Sampler<Prop, Dist>(name, doc) for every sampler of a parametric
 * distribution and visit.Multinomial(name, doc): the one list the definitions and each
 * device's kernels register from. */
template <class Visitor>
void ForEachSampler(Visitor&& visit) {
  visit.template Sampler<UniformProp, Uniform>("_random_uniform",
                                               "Samples a uniform distribution on [low, high).");
  visit.template Sampler<NormalProp, Normal>("_random_normal",
                                             "Samples a normal distribution N(loc, scale^2).");
  visit.template Sampler<RandintProp, Randint>("_random_randint",
                                               "Samples integers uniformly from [low, high).");
  visit.Multinomial("_sample_multinomial",
                    "Samples indices from the categorical distributions on the last axis of data.");
  // MXNet's other names of the same operators.
  visit.template Sampler<UniformProp, Uniform>("random_uniform", "Same as _random_uniform.");
  visit.template Sampler<UniformProp, Uniform>("uniform", "Same as _random_uniform.");
  visit.template Sampler<NormalProp, Normal>("random_normal", "Same as _random_normal.");
  visit.template Sampler<NormalProp, Normal>("normal", "Same as _random_normal.");
  visit.template Sampler<RandintProp, Randint>("random_randint", "Same as _random_randint.");
  visit.Multinomial("sample_multinomial", "Same as _sample_multinomial.");
}

// _shuffle and MXNet's other name of it.
constexpr const char* kShuffleNames[] = {"_shuffle", "shuffle"};

/*! \brief Registers the kernels of every sampler on a device whose element loop is Loop. */
template <class Loop>
struct SamplerKernels {
  DLDeviceType device;
  template <class Prop, class Dist>
  void Sampler(const char* name, const char*) const {
    mxplug::sdk::RegisterKernel<SampleKernel<Dist, Loop>>(name, device);
  }
  void Multinomial(const char* name, const char*) const {
    mxplug::sdk::RegisterKernel<MultinomialKernel<Loop>>(name, device);
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
