/*!
 * \file mxplug/sdk/operator_property.hpp
 * \brief The semantic side of an op, as in the seeds: OperatorProperty. Registered once; its
 * kernels are registered per device type, possibly by other plugins.
 */
#ifndef MXPLUG_SDK_OPERATOR_PROPERTY_HPP_
#define MXPLUG_SDK_OPERATOR_PROPERTY_HPP_

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "mxplug/sdk/dtype.hpp"
#include "mxplug/sdk/operator.hpp"
#include "mxplug/sdk/parameter.hpp"
#include "mxplug/sdk/tshape.hpp"

namespace mxplug {

/*!
 * \brief InferShape for ops whose one output has the shape of input 0 (MXNet's ElemwiseShape for
 * one input): fills whichever of the two is unknown from the other.
 */
inline bool InferSameShape(std::vector<TShape>* in, std::vector<TShape>* out) {
  TShape merged = (*in)[0];  // what the input and the output know, together (MergeShape)
  if (!MergeShape(&merged, (*out)[0]))
    throw std::invalid_argument("the input has shape " + (*in)[0].ToString() +
                                " but the output has shape " + (*out)[0].ToString() +
                                "; they must be equal");
  if (merged.ndim() < 0) return false;
  (*in)[0] = (*out)[0] = merged;
  return merged.IsKnown();
}

/*!
 * \brief InferType for ops whose output has input 0's dtype while other inputs (indices, labels)
 * may have any dtype: unknown ones take input 0's.
 */
inline bool InferTypeFromFirst(std::vector<int>* in, std::vector<int>* out) {
  if ((*in)[0] == kMXPUnknownDType) return false;
  for (int& t : *in)
    if (t == kMXPUnknownDType) t = (*in)[0];
  (*out)[0] = (*in)[0];
  return true;
}

/*!
 * \brief Shape inference for a parameter input (weight, bias, gamma) whose shape follows from
 * the data: fills it, or its unknown dimensions (a Gluon layer's weight declared as (8, 0)
 * before the input size is known), and throws naming `name`, both shapes and the data's when a
 * known dimension differs.
 */
inline void InferParameterShape(TShape* shape, const TShape& expected, const char* name,
                                const TShape& data) {
  TShape merged = *shape;
  if (!MergeShape(&merged, expected))
    throw std::invalid_argument(std::string(name) + " has shape " + shape->ToString() +
                                ", expected " + expected.ToString() + " for data of shape " +
                                data.ToString());
  *shape = merged;
}

class OperatorProperty {
 public:
  virtual ~OperatorProperty() = default;

  /*! \brief Parses kwargs (usually `param_.Init(kwargs, "OpName")`). Throw ParamError on bad input.
   */
  virtual void Init(const KwArgs& kwargs) = 0;

  virtual std::vector<std::string> ListArguments() const { return {"data"}; }
  virtual std::vector<std::string> ListOutputs() const { return {"output"}; }
  virtual std::vector<std::string> ListAuxiliaryStates() const { return {}; }
  /*! \brief How many outputs (the first ones) an imperative call returns; the rest are internal. */
  virtual int NumVisibleOutputs() const { return static_cast<int>(ListOutputs().size()); }

  /*!
   * \brief Fills unknown shapes (TShape() or dims of -1) and checks known ones; the vectors come
   * sized like the lists above. Returns false when too little is known yet.
   * \throws std::invalid_argument for inconsistent shapes (say which argument and why).
   */
  virtual bool InferShape(std::vector<TShape>* in_shape, std::vector<TShape>* out_shape,
                          std::vector<TShape>* aux_shape) const = 0;

  /*! \brief Fills unknown dtypes (-1). The default makes every type equal to the first known. */
  virtual bool InferType(std::vector<int>* in_type, std::vector<int>* out_type,
                         std::vector<int>* aux_type) const {
    const std::vector<std::string> args = ListArguments();
    int known = kMXPUnknownDType;
    for (int t : *in_type)
      if (t != kMXPUnknownDType) {
        known = t;
        break;
      }
    if (known == kMXPUnknownDType)
      for (int t : *out_type)
        if (t != kMXPUnknownDType) {
          known = t;
          break;
        }
    if (known == kMXPUnknownDType) return false;
    for (size_t i = 0; i < in_type->size(); ++i) {
      int& t = (*in_type)[i];
      if (t != kMXPUnknownDType && t != known)
        throw std::invalid_argument("argument '" + (i < args.size() ? args[i] : std::to_string(i)) +
                                    "' has dtype " + DTypeName(t) + ", expected " +
                                    DTypeName(known) + " like the other inputs");
      t = known;
    }
    for (int& t : *out_type) t = known;
    for (int& t : *aux_type) t = known;
    return true;
  }

  /*!
   * \brief The tensors Backward reads, chosen from the ids given (the seeds' backward
   * dependency). The default keeps all of them; ops should return only what they use so that
   * memory can be freed early.
   */
  virtual std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad,
                                                     const std::vector<int>& in_data,
                                                     const std::vector<int>& out_data) const {
    std::vector<int> deps(out_grad);
    deps.insert(deps.end(), in_data.begin(), in_data.end());
    deps.insert(deps.end(), out_data.begin(), out_data.end());
    return deps;
  }

  /*! \brief Pairs {input id, output id} whose memory may be shared in Forward. */
  virtual std::vector<std::pair<int, int>> ForwardInplaceOption(
      const std::vector<int>& in_data, const std::vector<int>& out_data) const {
    (void)in_data, (void)out_data;
    return {};
  }

  /*! \brief Pairs {out_grad, in_data or out_data id, in_grad id} whose memory may be shared. */
  virtual std::vector<std::pair<int, int>> BackwardInplaceOption(
      const std::vector<int>& out_grad, const std::vector<int>& in_data,
      const std::vector<int>& out_data, const std::vector<int>& in_grad) const {
    (void)out_grad, (void)in_data, (void)out_data, (void)in_grad;
    return {};
  }

  /*! \brief Resources Forward needs; in_shape holds the shapes of the last InferShape. */
  virtual std::vector<ResourceRequest> ForwardResource(const std::vector<TShape>& in_shape) const {
    (void)in_shape;
    return {};
  }
  virtual std::vector<ResourceRequest> BackwardResource(const std::vector<TShape>& in_shape) const {
    (void)in_shape;
    return {};
  }

  /*!
   * \brief The kernel for a device, for ops registered with `.add_kernel(device_type)`: return a
   * new Operator (the host owns and deletes it). Ops whose kernels come from
   * MXPLUG_REGISTER_KERNEL need not override this.
   */
  virtual Operator* CreateOperator(Context ctx) const {
    (void)ctx;
    return nullptr;
  }
};

/*!
 * \brief An op property whose first output may overwrite its first input in Forward, and whose
 * first input gradient may overwrite its first output gradient in Backward: ops that read each
 * element before writing the element at the same place (elementwise maps, dropout, reshapes).
 * Base is OperatorProperty or a class derived from it; an op may still override either option.
 */
template <class Base = OperatorProperty>
class FirstInPlace : public Base {
 public:
  std::vector<std::pair<int, int>> ForwardInplaceOption(
      const std::vector<int>& in_data, const std::vector<int>& out_data) const override {
    return {{in_data[0], out_data[0]}};
  }
  std::vector<std::pair<int, int>> BackwardInplaceOption(
      const std::vector<int>& out_grad, const std::vector<int>& in_data,
      const std::vector<int>& out_data, const std::vector<int>& in_grad) const override {
    (void)in_data, (void)out_data;
    return {{out_grad[0], in_grad[0]}};
  }
};

}  // namespace mxplug

#endif  // MXPLUG_SDK_OPERATOR_PROPERTY_HPP_
