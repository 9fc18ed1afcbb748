// Registers the definitions of the layout ops (shape.h); their CPU primitives are in shape_cpu.cc.
#include "shape.h"

namespace {

using namespace mxplug_tensor;  // NOLINT: the parameter structs below

MXPLUG_REGISTER_PARAMETER(ReshapeParam);
MXPLUG_REGISTER_PARAMETER(ExpandDimsParam);
MXPLUG_REGISTER_PARAMETER(TransposeParam);
MXPLUG_REGISTER_PARAMETER(SliceParam);
MXPLUG_REGISTER_PARAMETER(TakeParam);
MXPLUG_REGISTER_PARAMETER(EmbeddingParam);
MXPLUG_REGISTER_PARAMETER(BroadcastToParam);
MXPLUG_REGISTER_PARAMETER(BroadcastAxisParam);
MXPLUG_REGISTER_PARAMETER(BroadcastLikeParam);
MXPLUG_REGISTER_PARAMETER(ReshapeLikeParam);
MXPLUG_REGISTER_PARAMETER(BlockParam);
MXPLUG_REGISTER_PARAMETER(SliceLikeParam);
MXPLUG_REGISTER_PARAMETER(DiagParam);

[[maybe_unused]] const bool registered = [] {
  ForEachLayoutOp(LayoutDefinitions{});
  return true;
}();

}  // namespace
