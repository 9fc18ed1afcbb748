// An SDK plugin that registers a new op and one that the nn plugin already has: the host must
// refuse the whole plugin, so the new op must not appear either.
#include "mxplug/plugin.hpp"

namespace {
class IdentityProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs&) override {}
  bool InferShape(std::vector<mxplug::TShape>* in, std::vector<mxplug::TShape>* out,
                  std::vector<mxplug::TShape>*) const override {
    (*out)[0] = (*in)[0];
    return (*in)[0].IsKnown();
  }
};
}  // namespace

MXPLUG_REGISTER_OP_PROPERTY_AS(Unique, "dup.Unique", IdentityProp);
MXPLUG_REGISTER_OP_PROPERTY(FullyConnected, IdentityProp);

MXPLUG_PLUGIN("duplicate_op", "1.0.0", "tests")
