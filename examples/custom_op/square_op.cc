// myorg.Square: y = alpha * x^2, with forward, backward and shape inference. A complete plugin
// in one file: the parameter struct, the Operator (the computation), the OperatorProperty (the
// semantics), the registrations, and the entry point.
// [CustomOp.begin]
#include <string>
#include <vector>

#include "mxplug/plugin.hpp"

namespace {

struct SquareParam : mxplug::Parameter<SquareParam> {
  float alpha;
  MXPLUG_DECLARE_PARAMETER(SquareParam) {
    MXPLUG_DECLARE_FIELD(alpha).set_default(1.0f).describe("Scale applied to the square.");
  }
};
MXPLUG_REGISTER_PARAMETER(SquareParam);

class SquareOp : public mxplug::Operator {
 public:
  explicit SquareOp(const SquareParam& p) : param_(p) {}

  void Forward(const mxplug::OpContext&, const std::vector<mxplug::TBlob>& in_data,
               const std::vector<mxplug::OpReqType>& req, const std::vector<mxplug::TBlob>& out_data,
               const std::vector<mxplug::TBlob>&) override {
    const float* x = in_data[0].dptr<float>();
    float* y = out_data[0].dptr<float>();
    for (int64_t i = 0; i < out_data[0].Size(); ++i)
      mxplug::Assign(y[i], req[0], param_.alpha * x[i] * x[i]);
  }

  void Backward(const mxplug::OpContext&, const std::vector<mxplug::TBlob>& out_grad,
                const std::vector<mxplug::TBlob>& in_data, const std::vector<mxplug::TBlob>&,
                const std::vector<mxplug::OpReqType>& req, const std::vector<mxplug::TBlob>& in_grad,
                const std::vector<mxplug::TBlob>&) override {
    const float* dy = out_grad[0].dptr<float>();
    const float* x = in_data[0].dptr<float>();
    float* dx = in_grad[0].dptr<float>();
    for (int64_t i = 0; i < in_grad[0].Size(); ++i)
      mxplug::Assign(dx[i], req[0], 2.0f * param_.alpha * x[i] * dy[i]);
  }

 private:
  SquareParam param_;
};

class SquareProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }

  // The output has the input's shape; either one determines the other.
  bool InferShape(std::vector<mxplug::TShape>* in_shape, std::vector<mxplug::TShape>* out_shape,
                  std::vector<mxplug::TShape>*) const override {
    if ((*in_shape)[0].ndim() < 0) (*in_shape)[0] = (*out_shape)[0];
    (*out_shape)[0] = (*in_shape)[0];
    return (*in_shape)[0].IsKnown();
  }

  bool InferType(std::vector<int>* in_type, std::vector<int>* out_type,
                 std::vector<int>*) const override {
    if ((*in_type)[0] != -1 && (*in_type)[0] != kMXPFloat32)
      throw std::invalid_argument("data must be float32, got " + mxplug::DTypeName((*in_type)[0]));
    (*in_type)[0] = (*out_type)[0] = kMXPFloat32;
    return true;
  }

  // Backward needs dy and x, not y: y can be freed right after forward.
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad,
                                             const std::vector<int>& in_data,
                                             const std::vector<int>&) const override {
    return {out_grad[0], in_data[0]};
  }

  mxplug::Operator* CreateOperator(mxplug::Context) const override { return new SquareOp(param_); }

 private:
  SquareParam param_;
};

}  // namespace

MXPLUG_REGISTER_OP_PROPERTY_AS(Square, "myorg.Square", SquareProp)
    .describe("Computes alpha * data^2 element-wise.")
    .add_argument("data", "NDArray-or-Symbol", "Input data (float32).")
    .add_arguments(SquareParam::Fields())
    .add_kernel(kDLCPU);

MXPLUG_PLUGIN("myorg_square", MXPLUG_PLUGIN_VERSION, "My Organisation")
// [CustomOp.end]
