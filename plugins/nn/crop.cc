// Registers Crop (crop.h) and its CPU kernel.
#include "crop.h"

namespace {

using mxplug_nn::CropParam;

MXPLUG_REGISTER_PARAMETER(CropParam);

[[maybe_unused]] const bool registered = [] {
  mxplug::RegisterOpProperty<mxplug_nn::CropProp>("Crop")
      .describe(
          "Crops NCHW data to h_w rows and columns at offset (y, x), centred with center_crop, "
          "or to the height and width of crop_like (num_args=2).")
      .add_argument("data", "Symbol or Symbol[]",
                    "The data to crop, and crop_like, whose height and width the crop takes "
                    "(num_args=2).")
      .add_arguments(CropParam::Fields());
  mxplug_nn::RegisterCropKernel<mxplug::CpuLoop>(kDLCPU);
  return true;
}();

}  // namespace
