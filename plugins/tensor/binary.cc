// Registers the definitions of binary arithmetic (binary.h); the CPU kernels are in
// elementwise_cpu.cc.
#include "binary.h"

namespace {

using mxplug_tensor::Define;

struct DefineBinary {
  template <class Op, bool kBroadcast>
  void Binary(const std::string& name, const std::string& doc) const {
    // The registration copies names and docs, so temporaries do.
    Define<mxplug_tensor::BinaryProp<Op, kBroadcast>>(name.c_str(), doc.c_str(),
                                                      mxplug_tensor::kBinaryInputs);
  }
  template <class Op, bool kReversed>
  void Scalar(const std::string& name, const std::string& doc) const {
    Define<mxplug_tensor::ScalarProp<Op, kReversed>>(name.c_str(), doc.c_str(),
                                                     mxplug_tensor::kScalarInputs,
                                                     mxplug_tensor::ScalarParam::Fields());
  }
};

[[maybe_unused]] const bool registered = [] {
  mxplug_tensor::ForEachBinaryOp(DefineBinary{});
  return true;
}();

}  // namespace
