// Registers the definitions of the linear-algebra ops (linalg.h) under MXNet's names; their CPU
// kernels are in linalg_cpu.cc.
#include "linalg.h"

namespace {

using mxplug_linalg::DiagParam;
using mxplug_linalg::Gemm2Param;
using mxplug_linalg::GemmParam;
using mxplug_linalg::NoParam;
using mxplug_linalg::SyrkParam;
using mxplug_linalg::TriangularParam;
using mxplug_linalg::TrianParam;

MXPLUG_REGISTER_PARAMETER(NoParam);
MXPLUG_REGISTER_PARAMETER(GemmParam);
MXPLUG_REGISTER_PARAMETER(Gemm2Param);
MXPLUG_REGISTER_PARAMETER(TriangularParam);
MXPLUG_REGISTER_PARAMETER(SyrkParam);
MXPLUG_REGISTER_PARAMETER(DiagParam);
MXPLUG_REGISTER_PARAMETER(TrianParam);

[[maybe_unused]] const bool registered = [] {
  mxplug_linalg::ForEachOp([](const std::string& name, auto def, const char* doc) {
    using Def = decltype(def);
    auto& op = mxplug::RegisterOpProperty<mxplug_linalg::LinalgProp<Def>>(name.c_str())
                   .describe(std::string(doc) + " Float32 and float64 only.");
    for (const std::string& input : Def::Inputs())
      op.add_argument(input, "NDArray-or-Symbol", "Tensor of matrices (the last two axes)");
    op.add_arguments(Def::Param::Fields());
  });
  mxplug_linalg::RegisterCpuKernels();
  return true;
}();

}  // namespace
