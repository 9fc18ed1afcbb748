// Registers the definitions of the join, split and repeat ops (join.h); their kernels register
// with the layout ops' (shape_cpu.cc, devices/cuda/kernels/shape.cu).
#include "join.h"

namespace {

using namespace mxplug_tensor;  // NOLINT: the parameter structs below

MXPLUG_REGISTER_PARAMETER(ConcatParam);
MXPLUG_REGISTER_PARAMETER(StackParam);
MXPLUG_REGISTER_PARAMETER(SplitParam);
MXPLUG_REGISTER_PARAMETER(SplitV2Param);
MXPLUG_REGISTER_PARAMETER(SumParam);
MXPLUG_REGISTER_PARAMETER(SliceAxisParam);
MXPLUG_REGISTER_PARAMETER(TileParam);
MXPLUG_REGISTER_PARAMETER(RepeatParam);
MXPLUG_REGISTER_PARAMETER(FlipParam);
MXPLUG_REGISTER_PARAMETER(SqueezeParam);

[[maybe_unused]] const bool registered = [] {
  ForEachJoinOp(LayoutDefinitions{});
  return true;
}();

}  // namespace
