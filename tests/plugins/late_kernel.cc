// The CPU kernel of test.Late, registered by a plugin that does not define the op.
#include "mxplug/plugin.hpp"

namespace {
class LateKernel : public mxplug::Operator {
 public:
  LateKernel(const mxplug::KwArgs&, mxplug::Context) {}
  void Forward(const mxplug::OpContext&, const std::vector<mxplug::TBlob>& in,
               const std::vector<mxplug::OpReqType>& req, const std::vector<mxplug::TBlob>& out,
               const std::vector<mxplug::TBlob>&) override {
    const float* x = in[0].dptr<float>();
    float* y = out[0].dptr<float>();
    for (int64_t i = 0; i < out[0].Size(); ++i) mxplug::Assign(y[i], req[0], 3.0f * x[i]);
  }
};
}  // namespace

MXPLUG_REGISTER_KERNEL_AS(Late, "test.Late", kDLCPU, LateKernel);

MXPLUG_PLUGIN("late_kernel", "1.0.0", "tests")
