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
  for (const char* name : mxplug_random::kShuffleNames)
    mxplug::RegisterOpProperty<mxplug_random::ShuffleProp>(name)
        .describe(std::string("Shuffles the array along its first axis.") + kSamplerDoc)
        .add_argument("data", "NDArray-or-Symbol", "The array to shuffle.");
  mxplug_random::RegisterShuffleKernel<mxplug::CpuLoop, mxplug_random::HostPermutation>(kDLCPU);
  return true;
}();

}  // namespace

MXPLUG_PLUGIN("random", MXPLUG_PLUGIN_VERSION, "mxplug")
