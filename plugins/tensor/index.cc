// Registers the definitions of pick, one_hot and where (index.h) and their CPU kernels.
#include "index.h"

namespace {

using mxplug_tensor::OneHotParam;
using mxplug_tensor::PickParam;

MXPLUG_REGISTER_PARAMETER(PickParam);
MXPLUG_REGISTER_PARAMETER(OneHotParam);

[[maybe_unused]] const bool registered = [] {
  mxplug_tensor::ForEachIndexOp(mxplug_tensor::LayoutDefinitions{});
  mxplug_tensor::ForEachIndexOp(mxplug_tensor::LayoutKernels<mxplug::CpuLoop>{kDLCPU});
  return true;
}();

}  // namespace
