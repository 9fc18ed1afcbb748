// Registers GridGenerator, BilinearSampler and SpatialTransformer (grid_sampling.h) with their
// CPU kernels.
#include "grid_sampling.h"

namespace {

using mxplug_nn::BilinearSamplerParam;
using mxplug_nn::GridGeneratorParam;
using mxplug_nn::SpatialTransformerParam;

MXPLUG_REGISTER_PARAMETER(GridGeneratorParam);
MXPLUG_REGISTER_PARAMETER(BilinearSamplerParam);
MXPLUG_REGISTER_PARAMETER(SpatialTransformerParam);

[[maybe_unused]] const bool registered = [] {
  mxplug::RegisterOpProperty<mxplug_nn::GridGeneratorProp>("GridGenerator")
      .describe(
          "A sampling grid of x and y in [-1, 1]: affine parameters (batch, 6) applied over "
          "target_shape, or a flow field (batch, 2, h, w) added to each pixel's position.")
      .add_argument("data", "NDArray-or-Symbol", "Input data to the function.")
      .add_arguments(GridGeneratorParam::Fields());
  mxplug::RegisterOpProperty<mxplug_nn::BilinearSamplerProp>("BilinearSampler")
      .describe(
          "Samples data (batch, channel, h, w) bilinearly at a grid (batch, 2, h', w') of x and "
          "y in [-1, 1]; 0 outside the image.")
      .add_argument("data", "NDArray-or-Symbol", "Input data to the BilinearsamplerOp.")
      .add_argument("grid", "NDArray-or-Symbol", "Input grid to the BilinearsamplerOp.")
      .add_arguments(BilinearSamplerParam::Fields());
  mxplug::RegisterOpProperty<mxplug_nn::SpatialTransformerProp>("SpatialTransformer")
      .describe(
          "Samples data bilinearly at the affine grid of loc (batch, 6) over target_shape: "
          "GridGenerator and BilinearSampler in one op.")
      .add_argument("data", "NDArray-or-Symbol", "Input data to the SpatialTransformerOp.")
      .add_argument("loc", "NDArray-or-Symbol",
                    "localisation net, the output dim should be 6 when transform_type is affine. "
                    "You shold initialize the weight and bias with identity tranform.")
      .add_arguments(SpatialTransformerParam::Fields());
  mxplug_nn::RegisterGridSamplingKernels<mxplug::CpuLoop>(kDLCPU);
  return true;
}();

}  // namespace
