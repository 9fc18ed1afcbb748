// Registers the image operators (image.h) with their CPU kernels.
#include "image.h"

namespace {

using mxplug_tensor::image::CropParam;
using mxplug_tensor::image::ImageOp;
using mxplug_tensor::image::NoParam;
using mxplug_tensor::image::NormalizeParam;

MXPLUG_REGISTER_PARAMETER(NormalizeParam);
MXPLUG_REGISTER_PARAMETER(CropParam);
MXPLUG_REGISTER_PARAMETER(NoParam);

struct Definitions {
  template <ImageOp K>
  void Op(const char* name, const char* doc) const {
    mxplug::RegisterOpProperty<mxplug_tensor::image::ImageProp<K>>(name)
        .describe(doc)
        .add_argument("data", "NDArray-or-Symbol", "The input.")
        .add_arguments(mxplug_tensor::image::ParamOf<K>::Fields());
  }
};

[[maybe_unused]] const bool registered = [] {
  mxplug_tensor::image::ForEachImageOp(Definitions{});
  mxplug_tensor::image::ForEachImageOp(mxplug_tensor::image::ImageKernels<mxplug::CpuLoop>{kDLCPU});
  return true;
}();

}  // namespace
