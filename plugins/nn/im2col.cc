// Registers im2col and col2im (im2col.h) and their CPU kernels, the functors of im2col.h run in
// order.
#include "im2col.h"

#include "mxplug/plugin.hpp"

namespace {

using mxplug_nn::Col2imParam;
using mxplug_nn::Im2colParam;

MXPLUG_REGISTER_PARAMETER(Im2colParam);
MXPLUG_REGISTER_PARAMETER(Col2imParam);

[[maybe_unused]] const bool registered = [] {
  mxplug::RegisterOpProperty<mxplug_nn::Im2colProp>("im2col")
      .describe(
          "Unfolds the sliding blocks of images (N, C, spatial...) into columns (N, C * "
          "prod(kernel), blocks), as a convolution reads them.")
      .add_argument("data", "NDArray-or-Symbol", "Input array to extract sliding blocks.")
      .add_arguments(Im2colParam::Fields());
  mxplug::RegisterOpProperty<mxplug_nn::Col2imProp>("col2im")
      .describe(
          "Folds columns (N, C * prod(kernel), blocks) back into images (N, C, output_size...), "
          "summing where blocks overlap (im2col's adjoint).")
      .add_argument("data", "NDArray-or-Symbol", "Input array to combine sliding blocks.")
      .add_arguments(Col2imParam::Fields());
  mxplug_nn::RegisterIm2colKernels<mxplug::CpuLoop>(kDLCPU);
  return true;
}();

}  // namespace
