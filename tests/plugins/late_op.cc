// test.Late's semantics (y = 3 x), with no kernel: its kernel comes from late_kernel.
#include "mxplug/plugin.hpp"

namespace {
class LateProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  bool InferShape(std::vector<mxplug::TShape>* in, std::vector<mxplug::TShape>* out,
                  std::vector<mxplug::TShape>*) const override {
    (*out)[0] = (*in)[0];
    return (*in)[0].IsKnown();
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad, const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return {out_grad[0]};
  }

 private:
  struct NoParam : mxplug::Parameter<NoParam> {
    MXPLUG_DECLARE_PARAMETER(NoParam) {}
  } param_;
};
}  // namespace

MXPLUG_REGISTER_OP_PROPERTY_AS(Late, "test.Late", LateProp)
    .describe("Triples its input; kernels come from another plugin.")
    .add_argument("data", "NDArray-or-Symbol", "input");

MXPLUG_PLUGIN("late_op", "1.0.0", "tests")
