// The random plugin: the samplers (sample.h) with their definitions and CPU kernels, and
// _shuffle, which has a CPU kernel only (Fisher-Yates is sequential).
#include "sample.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace {

using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;
using mxplug_random::MultinomialParam;
using mxplug_random::NormalParam;
using mxplug_random::RandintParam;
using mxplug_random::UniformParam;

MXPLUG_REGISTER_PARAMETER(UniformParam);
MXPLUG_REGISTER_PARAMETER(NormalParam);
MXPLUG_REGISTER_PARAMETER(RandintParam);
MXPLUG_REGISTER_PARAMETER(MultinomialParam);

// _shuffle: a random permutation of the first axis (Fisher-Yates).
class ShuffleProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    return mxplug::InferSameShape(in, out);
  }
  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override {
    return {mxplug::ResourceRequest::kRandom};
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    struct Kernel : mxplug::Operator {
      void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
                   const std::vector<TBlob>&) override {
        if (req[0] == mxplug::kNullOp) return;
        const int64_t rows = in[0].ndim() > 0 ? in[0].shape_[0] : 1;
        const int64_t row = rows ? in[0].Size() / rows : 0;
        std::vector<int64_t> perm(rows);
        for (int64_t i = 0; i < rows; ++i) perm[i] = i;
        mxplug::RandomStream r = ctx.requested[0].get_random(2 * static_cast<uint64_t>(rows) + 4);
        for (int64_t i = rows - 1; i > 0; --i)
          std::swap(perm[i], perm[r.Below(static_cast<uint64_t>(i + 1))]);
        mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
          using T = decltype(zero);
          const T* x = in[0].dptr<T>();
          T* o = out[0].dptr<T>();
          if (x == o) throw std::invalid_argument("_shuffle cannot write over its input");
          for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < row; ++j)
              mxplug::Assign(o[i * row + j], req[0], x[perm[i] * row + j]);
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

const char* kSamplerDoc =
    " The numbers come from the device's random stream, ordered by the engine.";

struct SamplerDefinitions {
  template <class Prop, class Dist>
  void Sampler(const char* name, const char* doc) const {
    mxplug::RegisterOpProperty<Prop>(name)
        .describe(std::string(doc) + kSamplerDoc)
        .add_arguments(Dist::Param::Fields());
  }
  void Multinomial(const char* name, const char* doc) const {
    mxplug::RegisterOpProperty<mxplug_random::MultinomialProp>(name)
        .describe(std::string(doc) + kSamplerDoc)
        .add_argument("data", "NDArray-or-Symbol",
                      "Distribution probabilities; they must sum to one.")
        .add_arguments(MultinomialParam::Fields());
  }
};

[[maybe_unused]] const bool registered = [] {
  mxplug_random::ForEachSampler(SamplerDefinitions{});
  mxplug_random::ForEachSampler(mxplug_random::SamplerKernels<mxplug::CpuLoop>{kDLCPU});
  mxplug::RegisterOpProperty<ShuffleProp>("_shuffle")
      .describe(std::string("Shuffles the array along its first axis.") + kSamplerDoc)
      .add_argument("data", "NDArray-or-Symbol", "The array to shuffle.")
      .add_kernel(kDLCPU);
  return true;
}();

}  // namespace

MXPLUG_PLUGIN("random", MXPLUG_PLUGIN_VERSION, "mxplug")
