// Registers the definitions of SequenceMask, SequenceLast and SequenceReverse (sequence.h) and
// their CPU kernels.
#include "sequence.h"

namespace {

using mxplug_tensor::SequenceNoValueParam;
using mxplug_tensor::SequenceParam;

MXPLUG_REGISTER_PARAMETER(SequenceParam);
MXPLUG_REGISTER_PARAMETER(SequenceNoValueParam);

[[maybe_unused]] const bool registered = [] {
  mxplug_tensor::ForEachSequenceOp(mxplug_tensor::LayoutDefinitions{});
  mxplug_tensor::ForEachSequenceOp(mxplug_tensor::LayoutKernels<mxplug::CpuLoop>{kDLCPU});
  return true;
}();

}  // namespace
