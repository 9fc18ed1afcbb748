// Registers the definitions of pick, one_hot, where, gather_nd and scatter_nd (index.h) and
// their CPU kernels.
#include "index.h"

namespace {

using mxplug_tensor::HistogramParam;
using mxplug_tensor::OneHotParam;
using mxplug_tensor::PickParam;
using mxplug_tensor::RavelParam;
using mxplug_tensor::ScatterNDParam;

// The indices are in host memory.
struct CpuIndexLoop : mxplug::CpuLoop {
  static constexpr bool kHostMemory = true;
};

MXPLUG_REGISTER_PARAMETER(PickParam);
MXPLUG_REGISTER_PARAMETER(OneHotParam);
MXPLUG_REGISTER_PARAMETER(ScatterNDParam);
MXPLUG_REGISTER_PARAMETER(RavelParam);
MXPLUG_REGISTER_PARAMETER(HistogramParam);

[[maybe_unused]] const bool registered = [] {
  mxplug_tensor::ForEachIndexOp(mxplug_tensor::LayoutDefinitions{});
  mxplug_tensor::ForEachIndexOp(mxplug_tensor::LayoutKernels<CpuIndexLoop>{kDLCPU});
  return true;
}();

}  // namespace
