// The semantics of the test plugins' one-input ops: no parameter, the output shaped as the input.
#ifndef MXPLUG_TESTS_PLUGINS_SAME_SHAPE_PROP_H_
#define MXPLUG_TESTS_PLUGINS_SAME_SHAPE_PROP_H_

#include "mxplug/plugin.hpp"

namespace test_plugins {

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

}  // namespace test_plugins

#endif  // MXPLUG_TESTS_PLUGINS_SAME_SHAPE_PROP_H_
