// Registers the definitions of topk, sort and argsort (sort.h) and their CPU kernels.
#include "sort.h"

namespace {

using mxplug_tensor::ArgsortParam;
using mxplug_tensor::SortParam;
using mxplug_tensor::TopkParam;

MXPLUG_REGISTER_PARAMETER(TopkParam);
MXPLUG_REGISTER_PARAMETER(SortParam);
MXPLUG_REGISTER_PARAMETER(ArgsortParam);

[[maybe_unused]] const bool registered = [] {
  mxplug_tensor::ForEachOrderOp(mxplug_tensor::LayoutDefinitions{});
  mxplug_tensor::ForEachOrderOp(mxplug_tensor::LayoutKernels<mxplug::CpuLoop>{kDLCPU});
  return true;
}();

}  // namespace
