// Registers the definitions of dot, batch_dot and FullyConnected (matmul.h); their CPU kernels
// are in matmul_cpu.cc.
#include "matmul.h"

namespace {

using mxplug_nn::DotParam;
using mxplug_nn::FullyConnectedParam;

MXPLUG_REGISTER_PARAMETER(DotParam);
MXPLUG_REGISTER_PARAMETER(FullyConnectedParam);

[[maybe_unused]] const bool registered = [] {
  mxplug::RegisterOpProperty<mxplug_nn::DotProp<false>>("dot")
      .describe("Dot product of two arrays (the matrix product for 2-D arrays).")
      .add_argument("lhs", "NDArray-or-Symbol", "The first input.")
      .add_argument("rhs", "NDArray-or-Symbol", "The second input.")
      .add_arguments(DotParam::Fields());
  mxplug::RegisterOpProperty<mxplug_nn::DotProp<true>>("batch_dot")
      .describe("Batched matrix product of (B, M, K) and (B, K, N) arrays.")
      .add_argument("lhs", "NDArray-or-Symbol", "The first input.")
      .add_argument("rhs", "NDArray-or-Symbol", "The second input.")
      .add_arguments(DotParam::Fields());
  mxplug::RegisterOpProperty<mxplug_nn::FullyConnectedProp>("FullyConnected")
      .describe(
          "Applies a linear transformation: Y = XW^T + b. With flatten, the input is reshaped to "
          "(batch, -1) first; without it, the last axis is transformed.")
      .add_argument("data", "NDArray-or-Symbol", "Input data.")
      .add_argument("weight", "NDArray-or-Symbol", "Weight matrix.")
      .add_argument("bias", "NDArray-or-Symbol", "Bias parameter.")
      .add_arguments(FullyConnectedParam::Fields());
  return true;
}();

}  // namespace
