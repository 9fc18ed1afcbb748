// Good plugin with ops whose behaviour tests need to observe from outside:
// test.FailForward (its kernel always throws: errors must surface at the next sync point) and
// test.Reverse (reverses a 1-D float array; not safe in place, and it does not declare in-place,
// so a call whose output aliases its input must go through a temporary).
#include <stdexcept>

#include "mxplug/plugin.hpp"

namespace {

using mxplug::TBlob;

struct NoParam : mxplug::Parameter<NoParam> {
  MXPLUG_DECLARE_PARAMETER(NoParam) {}
};

class SameShapeProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  bool InferShape(std::vector<mxplug::TShape>* in, std::vector<mxplug::TShape>* out,
                  std::vector<mxplug::TShape>*) const override {
    return mxplug::InferSameShape(in, out);
  }

 private:
  NoParam param_;
};

class FailForward : public mxplug::Operator {
 public:
  FailForward(const mxplug::KwArgs&, mxplug::Context) {}
  void Forward(const mxplug::OpContext&, const std::vector<TBlob>&, const std::vector<mxplug::OpReqType>&,
               const std::vector<TBlob>&, const std::vector<TBlob>&) override {
    throw std::runtime_error("deliberate failure in the kernel");
  }
};

class Reverse : public mxplug::Operator {
 public:
  Reverse(const mxplug::KwArgs&, mxplug::Context) {}
  void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in,
               const std::vector<mxplug::OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    const float* x = in[0].dptr<float>();
    float* y = out[0].dptr<float>();
    const int64_t n = in[0].Size();
    for (int64_t i = 0; i < n; ++i) mxplug::Assign(y[i], req[0], x[n - 1 - i]);
  }
};

}  // namespace

MXPLUG_REGISTER_OP_PROPERTY_AS(FailForwardOp, "test.FailForward", SameShapeProp)
    .describe("Always fails in its kernel.");
MXPLUG_REGISTER_KERNEL_AS(FailForwardKernel, "test.FailForward", kDLCPU, FailForward);
MXPLUG_REGISTER_OP_PROPERTY_AS(ReverseOp, "test.Reverse", SameShapeProp)
    .describe("Reverses a 1-D array; not in-place safe.");
MXPLUG_REGISTER_KERNEL_AS(ReverseKernel, "test.Reverse", kDLCPU, Reverse);

MXPLUG_PLUGIN("faulty_ops", "1.0.0", "tests")
