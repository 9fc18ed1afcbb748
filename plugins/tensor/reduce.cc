// Registers the definitions of the reductions and argmax/argmin (reduce.h); their CPU kernels are
// in reduce_cpu.cc.
#include "reduce.h"

namespace {

using mxplug_tensor::ArgParam;
using mxplug_tensor::CumsumParam;
using mxplug_tensor::MomentsParam;
using mxplug_tensor::NormParam;
using mxplug_tensor::ReduceKind;
using mxplug_tensor::ReduceParam;

MXPLUG_REGISTER_PARAMETER(ReduceParam);
MXPLUG_REGISTER_PARAMETER(NormParam);
MXPLUG_REGISTER_PARAMETER(ArgParam);
MXPLUG_REGISTER_PARAMETER(MomentsParam);
MXPLUG_REGISTER_PARAMETER(CumsumParam);

struct DefineReduce {
  template <ReduceKind K>
  void Reduce(const char* name, const char* doc) const {
    mxplug_tensor::Define<mxplug_tensor::ReduceProp<K>>(
        name, doc, mxplug_tensor::kDataInput,
        K == ReduceKind::kNorm ? NormParam::Fields() : ReduceParam::Fields());
  }
  template <bool kMax, bool kChannel = false>
  void Arg(const char* name, const char* doc) const {
    static const std::vector<mxplug::FieldInfo> none;
    mxplug_tensor::Define<mxplug_tensor::ArgProp<kMax, kChannel>>(
        name, doc, mxplug_tensor::kDataInput, kChannel ? none : ArgParam::Fields());
  }
  void Moments(const char* name, const char* doc) const {
    mxplug_tensor::Define<mxplug_tensor::MomentsProp>(name, doc, mxplug_tensor::kDataInput,
                                                      MomentsParam::Fields());
  }
  void Cumsum(const char* name, const char* doc) const {
    mxplug_tensor::Define<mxplug_tensor::CumsumProp>(name, doc, {{"a", "Input ndarray"}},
                                                     CumsumParam::Fields());
  }
};

[[maybe_unused]] const bool registered = [] {
  mxplug_tensor::ForEachReduceOp(DefineReduce{});
  return true;
}();

}  // namespace
