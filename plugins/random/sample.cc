// The random plugin: the samplers and _shuffle (sample.h), with their definitions and CPU kernels.
#include "sample.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace {

using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;
using mxplug_random::EachParam;
using mxplug_random::GammaParam;
using mxplug_random::GeneralizedNegativeBinomialParam;
using mxplug_random::MultinomialParam;
using mxplug_random::NegativeBinomialParam;
using mxplug_random::NormalParam;
using mxplug_random::RandintParam;
using mxplug_random::RateParam;
using mxplug_random::UniformParam;

MXPLUG_REGISTER_PARAMETER(UniformParam);
MXPLUG_REGISTER_PARAMETER(NormalParam);
MXPLUG_REGISTER_PARAMETER(RandintParam);
MXPLUG_REGISTER_PARAMETER(MultinomialParam);
MXPLUG_REGISTER_PARAMETER(RateParam);
MXPLUG_REGISTER_PARAMETER(GammaParam);
MXPLUG_REGISTER_PARAMETER(NegativeBinomialParam);
MXPLUG_REGISTER_PARAMETER(GeneralizedNegativeBinomialParam);
MXPLUG_REGISTER_PARAMETER(EachParam);
using mxplug_random::UniqueZipfianParam;
MXPLUG_REGISTER_PARAMETER(UniqueZipfianParam);

const char* kSamplerDoc =
    " The numbers come from the device's random stream, ordered by the engine.";

struct SamplerDefinitions {
  template <class Dist>
  void Sampler(const std::string& name, const char* doc) const {
    mxplug::RegisterOpProperty<mxplug_random::SamplerProp<Dist>>(name.c_str())
        .describe(std::string(doc) + kSamplerDoc)
        .add_arguments(Dist::Param::Fields());
  }
  template <class Dist>
  void Like(const std::string& name, const char* doc) const {
    mxplug::RegisterOpProperty<mxplug_random::LikeSamplerProp<Dist>>(name.c_str())
        .describe(std::string(doc) + kSamplerDoc)
        .add_argument("data", "NDArray-or-Symbol", "The samples' shape and dtype.")
        .add_arguments(mxplug_random::LikeParam<typename Dist::Param>::Fields());
  }
  template <class Dist>
  void Each(const std::string& name, const char* doc) const {
    auto& op = mxplug::RegisterOpProperty<mxplug_random::EachSamplerProp<Dist>>(name.c_str())
                   .describe(std::string(doc) + kSamplerDoc);
    for (const std::string& input : Dist::Inputs())
      op.add_argument(input, "NDArray-or-Symbol", "The distributions' " + input + ".");
    op.add_arguments(mxplug_random::EachParam::Fields());
  }
  void Multinomial(const std::string& name, const char* doc) const {
    mxplug::RegisterOpProperty<mxplug_random::MultinomialProp>(name.c_str())
        .describe(std::string(doc) + kSamplerDoc)
        .add_argument("data", "NDArray-or-Symbol",
                      "Distribution probabilities; they must sum to one.")
        .add_arguments(MultinomialParam::Fields());
  }
};

[[maybe_unused]] const bool registered = [] {
  mxplug_random::ForEachSampler(SamplerDefinitions{});
  mxplug_random::ForEachSampler(mxplug_random::SamplerKernels<mxplug::CpuLoop>{kDLCPU});
  for (const char* name : mxplug_random::kShuffleNames)
    mxplug::RegisterOpProperty<mxplug_random::ShuffleProp>(name)
        .describe(std::string("Shuffles the array along its first axis.") + kSamplerDoc)
        .add_argument("data", "NDArray-or-Symbol", "The array to shuffle.");
  mxplug_random::RegisterShuffleKernel<mxplug::CpuLoop, mxplug_random::HostPermutation>(kDLCPU);
  {
    const char* name = "_sample_unique_zipfian";
    mxplug::RegisterOpProperty<mxplug_random::UniqueZipfianProp>(name)
        .describe(
            "Samples distinct classes of [0, range_max) from the log-uniform (Zipfian) "
            "distribution, shape[1] for each of shape[0] rows, and the draws each row "
            "took." +
            std::string(kSamplerDoc))
        .add_arguments(UniqueZipfianParam::Fields());
    mxplug_random::RegisterUniqueZipfianKernel<mxplug_random::HostStore>(kDLCPU);
  }
  return true;
}();

}  // namespace

MXPLUG_PLUGIN("random", MXPLUG_PLUGIN_VERSION, "mxplug")
