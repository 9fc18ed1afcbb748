// The random plugin: sampling ops on the device's random stream (MXNet's _random_uniform,
// _random_normal, _random_randint, _shuffle, _sample_multinomial). Each asks for the kRandom
// resource, so the engine orders it with every other user of the stream and with mx.random.seed:
// the same seed gives the same numbers on every engine.
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "mxplug/plugin.hpp"

namespace {

using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;

// The fields after the distribution's own that every sampler has (MXNet's shape, ctx, dtype),
// inside MXPLUG_DECLARE_PARAMETER of a struct with members of those names.
#define MXPLUG_DECLARE_SAMPLE_OUTPUT(default_dtype)                                                      \
  MXPLUG_DECLARE_FIELD(shape).set_default(TShape(std::vector<int64_t>{})).describe("Shape of the output."); \
  MXPLUG_DECLARE_FIELD(ctx).set_default("").describe("Context of output (the call's context is used).");    \
  MXPLUG_DECLARE_FIELD(dtype).set_default(default_dtype).add_dtype_enum().describe("Output data type.")

struct UniformParam : mxplug::Parameter<UniformParam> {
  double low, high;
  TShape shape;
  std::string ctx;
  int dtype;
  MXPLUG_DECLARE_PARAMETER(UniformParam) {
    MXPLUG_DECLARE_FIELD(low).set_default(0.0).describe("Lower bound of the distribution.");
    MXPLUG_DECLARE_FIELD(high).set_default(1.0).describe("Upper bound of the distribution (exclusive).");
    MXPLUG_DECLARE_SAMPLE_OUTPUT(kMXPFloat32);
  }
};
MXPLUG_REGISTER_PARAMETER(UniformParam);

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
MXPLUG_REGISTER_PARAMETER(NormalParam);

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
MXPLUG_REGISTER_PARAMETER(RandintParam);

int StorageType(int dtype) { return dtype == kMXPBool ? kMXPUint8 : dtype; }

// A sampler: no inputs, one output of the `shape` parameter, the random resource in forward.
template <class Param>
class SamplerProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override {
    param_.Init(kwargs);
    Check();
  }
  std::vector<std::string> ListArguments() const override { return {}; }
  bool InferShape(std::vector<TShape>*, std::vector<TShape>* out, std::vector<TShape>*) const override {
    if (!param_.shape.IsKnown())
      throw std::invalid_argument("shape " + param_.shape.ToString() + " must be fully known");
    (*out)[0] = param_.shape;
    return true;
  }
  bool InferType(std::vector<int>*, std::vector<int>* out, std::vector<int>*) const override {
    (*out)[0] = StorageType(param_.dtype);
    return true;
  }
  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override {
    return {mxplug::ResourceRequest::kRandom};
  }

 protected:
  virtual void Check() const {}
  Param param_;
};

// Writes out[i] = draw(stream) for every element, in the output's type; `draws` per element.
template <class Draw>
void Sample(const mxplug::OpContext& ctx, const TBlob& out, OpReqType req, uint64_t draws, Draw&& draw) {
  if (req == mxplug::kNullOp) return;
  mxplug::RandomStream r = ctx.requested[0].get_random(draws * static_cast<uint64_t>(out.Size()) + 4);
  mxplug::TypeSwitch(out.type_flag_, [&](auto zero) {
    using T = decltype(zero);
    T* o = out.dptr<T>();
    for (int64_t i = 0; i < out.Size(); ++i) mxplug::Assign(o[i], req, static_cast<T>(draw(r, T{})));
  });
}

class UniformProp : public SamplerProp<UniformParam> {
  void Check() const override {
    if (param_.low > param_.high)
      throw std::invalid_argument("low (" + std::to_string(param_.low) + ") must not exceed high (" +
                                  std::to_string(param_.high) + ")");
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    struct Kernel : mxplug::Operator {
      double low, high;
      void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
        Sample(ctx, out[0], req[0], 2, [&](mxplug::RandomStream& r, auto zero) {
          using T = decltype(zero);
          const double u = std::is_same_v<T, double> ? r.UniformDouble() : r.UniformFloat();
          return low + (high - low) * u;
        });
      }
    };
    auto* k = new Kernel();
    k->low = param_.low, k->high = param_.high;
    return k;
  }
};

class NormalProp : public SamplerProp<NormalParam> {
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    struct Kernel : mxplug::Operator {
      double loc, scale;
      void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
        Sample(ctx, out[0], req[0], 2, [&](mxplug::RandomStream& r, auto) { return loc + scale * r.Normal(); });
      }
    };
    auto* k = new Kernel();
    k->loc = param_.loc, k->scale = param_.scale;
    return k;
  }
};

class RandintProp : public SamplerProp<RandintParam> {
  void Check() const override {
    if (param_.low >= param_.high)
      throw std::invalid_argument("low (" + std::to_string(param_.low) + ") must be less than high (" +
                                  std::to_string(param_.high) + ")");
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    struct Kernel : mxplug::Operator {
      int64_t low, high;
      void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
        const uint64_t range = static_cast<uint64_t>(high - low);
        Sample(ctx, out[0], req[0], 2, [&](mxplug::RandomStream& r, auto) {
          return low + static_cast<int64_t>(r.Below(range));
        });
      }
    };
    auto* k = new Kernel();
    k->low = param_.low, k->high = param_.high;
    return k;
  }
};

// _shuffle: a random permutation of the first axis (Fisher-Yates).
class ShuffleProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out, std::vector<TShape>*) const override {
    return mxplug::InferSameShape(in, out);
  }
  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override {
    return {mxplug::ResourceRequest::kRandom};
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    struct Kernel : mxplug::Operator {
      void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
        if (req[0] == mxplug::kNullOp) return;
        const int64_t rows = in[0].ndim() > 0 ? in[0].shape_[0] : 1;
        const int64_t row = rows ? in[0].Size() / rows : 0;
        std::vector<int64_t> perm(rows);
        for (int64_t i = 0; i < rows; ++i) perm[i] = i;
        mxplug::RandomStream r = ctx.requested[0].get_random(2 * static_cast<uint64_t>(rows) + 4);
        for (int64_t i = rows - 1; i > 0; --i) std::swap(perm[i], perm[r.Below(static_cast<uint64_t>(i + 1))]);
        mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
          using T = decltype(zero);
          const T* x = in[0].dptr<T>();
          T* o = out[0].dptr<T>();
          if (x == o) throw std::invalid_argument("_shuffle cannot write over its input");
          for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < row; ++j) mxplug::Assign(o[i * row + j], req[0], x[perm[i] * row + j]);
        });
      }
    };
    return new Kernel();
  }

 private:
  struct NoParam : mxplug::Parameter<NoParam> {
    MXPLUG_DECLARE_PARAMETER(NoParam) {}
  } param_;
};

// _sample_multinomial(data): samples indices from the distributions on data's last axis.
struct MultinomialParam : mxplug::Parameter<MultinomialParam> {
  TShape shape;
  bool get_prob;
  int dtype;
  MXPLUG_DECLARE_PARAMETER(MultinomialParam) {
    MXPLUG_DECLARE_FIELD(shape).set_default(TShape(std::vector<int64_t>{})).describe(
        "Samples per distribution (empty: one).");
    MXPLUG_DECLARE_FIELD(get_prob).set_default(false).describe(
        "Also return the log probability of each sample.");
    MXPLUG_DECLARE_FIELD(dtype).set_default(kMXPInt32).add_dtype_enum().describe("Type of the samples.");
  }
};
MXPLUG_REGISTER_PARAMETER(MultinomialParam);

class MultinomialProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListOutputs() const override {
    if (param_.get_prob) return {"output", "prob"};
    return {"output"};
  }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out, std::vector<TShape>*) const override {
    const TShape& d = (*in)[0];
    if (d.ndim() < 0) return false;
    if (d.ndim() < 1 || d.ndim() > 2)
      throw std::invalid_argument("data must be 1-D or 2-D (distributions on the last axis), got " + d.ToString());
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
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    struct Kernel : mxplug::Operator {
      void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
        const int64_t k = in[0].shape_[in[0].ndim() - 1];
        const int64_t dists = in[0].Size() / k;
        const int64_t per = dists ? out[0].Size() / dists : 0;
        mxplug::RandomStream r = ctx.requested[0].get_random(2 * static_cast<uint64_t>(out[0].Size()) + 4);
        mxplug::RealTypeSwitch(in[0].type_flag_, "", [&](auto pz) {
          using P = decltype(pz);
          const P* p = in[0].dptr<P>();
          P* lp = out.size() > 1 ? out[1].dptr<P>() : nullptr;
          mxplug::TypeSwitch(out[0].type_flag_, [&](auto iz) {
            using I = decltype(iz);
            I* o = out[0].dptr<I>();
            for (int64_t d = 0; d < dists; ++d)
              for (int64_t s = 0; s < per; ++s) {
                const double u = r.UniformDouble();
                double acc = 0;
                int64_t j = 0;
                for (; j < k - 1; ++j) {
                  acc += static_cast<double>(p[d * k + j]);
                  if (u < acc) break;
                }
                mxplug::Assign(o[d * per + s], req[0], static_cast<I>(j));
                if (lp) mxplug::Assign(lp[d * per + s], req[1], static_cast<P>(std::log(p[d * k + j])));
              }
          });
        });
      }
    };
    return new Kernel();
  }

 private:
  MultinomialParam param_;
};

const char* kSamplerDoc = " The numbers come from the device's random stream, ordered by the engine.";

[[maybe_unused]] const bool registered = [] {
  auto reg = [](auto* prop_tag, const char* name, std::string doc, const std::vector<mxplug::FieldInfo>& fields,
                std::initializer_list<std::pair<const char*, const char*>> inputs) {
    using Prop = std::remove_pointer_t<decltype(prop_tag)>;
    auto& r = mxplug::RegisterOpProperty<Prop>(name).describe(doc + kSamplerDoc);
    for (auto [n, d] : inputs) r.add_argument(n, "NDArray-or-Symbol", d);
    r.add_arguments(fields).add_kernel(kDLCPU);
  };
  reg(static_cast<UniformProp*>(nullptr), "_random_uniform", "Samples a uniform distribution on [low, high).",
      UniformParam::Fields(), {});
  reg(static_cast<NormalProp*>(nullptr), "_random_normal", "Samples a normal distribution N(loc, scale^2).",
      NormalParam::Fields(), {});
  reg(static_cast<RandintProp*>(nullptr), "_random_randint", "Samples integers uniformly from [low, high).",
      RandintParam::Fields(), {});
  reg(static_cast<ShuffleProp*>(nullptr), "_shuffle", "Shuffles the array along its first axis.", {},
      {{"data", "The array to shuffle."}});
  reg(static_cast<MultinomialProp*>(nullptr), "_sample_multinomial",
      "Samples indices from the categorical distributions on the last axis of data.",
      MultinomialParam::Fields(), {{"data", "Distribution probabilities; they must sum to one."}});
  return true;
}();

}  // namespace

MXPLUG_PLUGIN("random", MXPLUG_PLUGIN_VERSION, "mxplug")
