// What the elementwise ops of this plugin share: their in-place options, and how they are
// registered (documented inputs, a CPU kernel from CreateOperator).
#ifndef MXPLUG_PLUGINS_TENSOR_ELEMENTWISE_H_
#define MXPLUG_PLUGINS_TENSOR_ELEMENTWISE_H_

#include <initializer_list>
#include <utility>
#include <vector>

#include "mxplug/plugin.hpp"

namespace mxplug_tensor {

// Elementwise outputs may overwrite the first input in forward, and the first input's gradient
// may overwrite the output gradient in backward: each element is read before it is written.
class ElementwiseProp : public mxplug::OperatorProperty {
 public:
  std::vector<std::pair<int, int>> ForwardInplaceOption(const std::vector<int>& in_data,
                                                        const std::vector<int>& out_data) const override {
    return {{in_data[0], out_data[0]}};
  }
  std::vector<std::pair<int, int>> BackwardInplaceOption(
      const std::vector<int>& out_grad, const std::vector<int>&, const std::vector<int>&,
      const std::vector<int>& in_grad) const override {
    return {{out_grad[0], in_grad[0]}};
  }
};

struct InputDoc {
  const char* name;
  const char* doc;
};

// Registers Prop as op `name` with its documented inputs and a CPU kernel.
template <typename Prop>
mxplug::OpRegistration& RegisterElementwise(const char* name, const char* doc,
                                            std::initializer_list<InputDoc> inputs,
                                            const std::vector<mxplug::FieldInfo>& params = {}) {
  mxplug::OpRegistration& reg = mxplug::RegisterOpProperty<Prop>(name).describe(doc);
  for (const InputDoc& in : inputs) reg.add_argument(in.name, "NDArray-or-Symbol", in.doc);
  return reg.add_arguments(params).add_kernel(kDLCPU);
}

}  // namespace mxplug_tensor

#endif  // MXPLUG_PLUGINS_TENSOR_ELEMENTWISE_H_
