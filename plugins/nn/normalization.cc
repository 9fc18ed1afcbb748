// Registers LayerNorm, InstanceNorm, GroupNorm and L2Normalization (normalization.h) and their CPU
// kernels.
#include "normalization.h"

namespace {

using mxplug_nn::GroupNormParam;
using mxplug_nn::InstanceNormParam;
using mxplug_nn::L2NormalizationParam;
using mxplug_nn::LayerNormParam;

MXPLUG_REGISTER_PARAMETER(LayerNormParam);
MXPLUG_REGISTER_PARAMETER(InstanceNormParam);
MXPLUG_REGISTER_PARAMETER(GroupNormParam);
MXPLUG_REGISTER_PARAMETER(L2NormalizationParam);

struct Definitions {
  template <int kKind, class Param>
  void Norm(const char* name, const char* doc) const {
    auto& op =
        mxplug::RegisterOpProperty<mxplug_nn::NormProp<kKind>>(name).describe(doc).add_argument(
            "data", "NDArray-or-Symbol", "Input data.");
    if (kKind != mxplug_nn::kL2Norm)
      op.add_argument("gamma", "NDArray-or-Symbol", "The scale.")
          .add_argument("beta", "NDArray-or-Symbol", "The shift.");
    op.add_arguments(Param::Fields());
  }
};

[[maybe_unused]] const bool registered = [] {
  mxplug_nn::ForEachNormalization(Definitions{});
  mxplug_nn::ForEachNormalization(mxplug_nn::NormalizationKernels<mxplug::CpuLoop>{kDLCPU});
  return true;
}();

}  // namespace
