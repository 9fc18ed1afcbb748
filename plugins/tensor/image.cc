// Registers the image operators (image.h, image_color.h, image_resize.h) with their CPU kernels.
#include "image_kernels.h"

namespace {

using mxplug_tensor::image::AdjustLightingParam;
using mxplug_tensor::image::ColorOp;
using mxplug_tensor::image::CropParam;
using mxplug_tensor::image::ImageOp;
using mxplug_tensor::image::NoParam;
using mxplug_tensor::image::NormalizeParam;
using mxplug_tensor::image::RandomColorJitterParam;
using mxplug_tensor::image::RandomEnhanceParam;
using mxplug_tensor::image::RandomLightingParam;
using mxplug_tensor::image::ResizeParam;

MXPLUG_REGISTER_PARAMETER(NormalizeParam);
MXPLUG_REGISTER_PARAMETER(CropParam);
MXPLUG_REGISTER_PARAMETER(NoParam);
MXPLUG_REGISTER_PARAMETER(AdjustLightingParam);
MXPLUG_REGISTER_PARAMETER(RandomLightingParam);
MXPLUG_REGISTER_PARAMETER(RandomEnhanceParam);
MXPLUG_REGISTER_PARAMETER(RandomColorJitterParam);
MXPLUG_REGISTER_PARAMETER(ResizeParam);

template <class Prop, class Param>
void Define(const char* name, const char* doc) {
  mxplug::RegisterOpProperty<Prop>(name)
      .describe(doc)
      .add_argument("data", "NDArray-or-Symbol", "The input.")
      .add_arguments(Param::Fields());
}

struct Definitions {
  template <ImageOp K>
  void Op(const char* name, const char* doc) const {
    Define<mxplug_tensor::image::ImageProp<K>, mxplug_tensor::image::ParamOf<K>>(name, doc);
  }
  template <ColorOp K>
  void Op(const char* name, const char* doc) const {
    Define<mxplug_tensor::image::ColorProp<K>, mxplug_tensor::image::ColorParamOf<K>>(name, doc);
  }
};

[[maybe_unused]] const bool registered = [] {
  namespace image = mxplug_tensor::image;
  image::ForEachImageOp(Definitions{});
  image::ForEachColorOp(Definitions{});
  Define<image::ResizeProp, ResizeParam>(
      "_image_resize",
      "Resizes (H, W, C) or (N, H, W, C) images to size (width, height), or one number for both "
      "(with keep_ratio: the shorter edge), with OpenCV's interpolation interp.");
  image::RegisterImageKernels<mxplug::CpuLoop>(kDLCPU);
  return true;
}();

}  // namespace
