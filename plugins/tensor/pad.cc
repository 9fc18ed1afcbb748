// Registers the definitions of Pad and pad (pad.h) and their CPU kernels.
#include "pad.h"

namespace {

using mxplug_tensor::PadParam;

MXPLUG_REGISTER_PARAMETER(PadParam);

[[maybe_unused]] const bool registered = [] {
  mxplug_tensor::ForEachPadOp(mxplug_tensor::LayoutDefinitions{});
  mxplug_tensor::ForEachPadOp(mxplug_tensor::LayoutKernels<mxplug::CpuLoop>{kDLCPU});
  return true;
}();

}  // namespace
