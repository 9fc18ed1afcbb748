// Registers ROIPooling (roi_pooling.h) and its CPU kernel.
#include "roi_pooling.h"

namespace {

using mxplug_nn::ROIPoolingParam;

MXPLUG_REGISTER_PARAMETER(ROIPoolingParam);

[[maybe_unused]] const bool registered = [] {
  mxplug::RegisterOpProperty<mxplug_nn::ROIPoolingProp>("ROIPooling")
      .describe(
          "Max pooling of each region of interest (batch index, x1, y1, x2, y2, scaled by "
          "spatial_scale) into pooled_size bins per channel.")
      .add_argument("data", "NDArray-or-Symbol",
                    "The input array to the pooling operator,  a 4D Feature maps ")
      .add_argument("rois", "NDArray-or-Symbol",
                    "Bounding box coordinates, a 2D array of [[batch_index, x1, y1, x2, y2]]")
      .add_arguments(ROIPoolingParam::Fields());
  mxplug_nn::RegisterROIPoolingKernel<mxplug::CpuLoop>(kDLCPU);
  return true;
}();

}  // namespace
