// Registers UpSampling (upsampling.h) and its CPU kernel, the functors of upsampling.h run in
// order.
#include "upsampling.h"

#include "mxplug/plugin.hpp"

namespace {

using mxplug_nn::UpSamplingParam;

MXPLUG_REGISTER_PARAMETER(UpSamplingParam);

[[maybe_unused]] const bool registered = [] {
  mxplug::RegisterOpProperty<mxplug_nn::UpSamplingProp>("UpSampling")
      .describe(
          "Up samples 4-d inputs (batch, channel, y, x) by repeating each pixel scale times along "
          "y and x "
          "(nearest); several inputs are each brought to the first one's size times scale, then "
          "concatenated along the channels or summed.")
      .add_arguments(UpSamplingParam::Fields());
  mxplug_nn::RegisterUpSamplingKernels<mxplug::CpuLoop>(kDLCPU);
  return true;
}();

}  // namespace
