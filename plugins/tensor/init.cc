// Registers the definitions of the array creation ops and Cast (init.h), and their kernels on the
// CPU's element loop.
#include "init.h"

namespace {

using mxplug_tensor::ArangeParam;
using mxplug_tensor::CastParam;
using mxplug_tensor::EyeParam;
using mxplug_tensor::FullParam;
using mxplug_tensor::InputDoc;
using mxplug_tensor::LinspaceParam;
using mxplug_tensor::SetValueParam;

MXPLUG_REGISTER_PARAMETER(FullParam);
MXPLUG_REGISTER_PARAMETER(ArangeParam);
MXPLUG_REGISTER_PARAMETER(LinspaceParam);
MXPLUG_REGISTER_PARAMETER(EyeParam);
MXPLUG_REGISTER_PARAMETER(CastParam);
MXPLUG_REGISTER_PARAMETER(SetValueParam);

struct DefineInit {
  template <class Prop, class Gen>
  void Fill(const char* name, const char* doc, std::initializer_list<InputDoc> inputs,
            const std::vector<mxplug::FieldInfo>& params) const {
    mxplug_tensor::Define<Prop>(name, doc, inputs, params);
  }
  template <class Prop>
  void Cast(const char* name, const char* doc, std::initializer_list<InputDoc> inputs,
            const std::vector<mxplug::FieldInfo>& params) const {
    mxplug_tensor::Define<Prop>(name, doc, inputs, params);
  }
};

[[maybe_unused]] const bool registered = [] {
  mxplug_tensor::ForEachInitOp(DefineInit{});
  mxplug_tensor::InitKernels<mxplug::CpuLoop>{kDLCPU}.RegisterAll();
  return true;
}();

}  // namespace
