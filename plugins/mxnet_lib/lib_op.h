/*!
 * \file plugins/mxnet_lib/lib_op.h
 * \brief One op of an MXNet lib_api library as an mxplug op: its semantics (LibOpProperty) from
 * the library's parse, infer-shape, infer-type and mutate-inputs functions, and its kernel
 * (LibOpKernel) from its forward and backward functions or its stateful op.
 */
#ifndef MXPLUG_PLUGINS_MXNET_LIB_LIB_OP_H_
#define MXPLUG_PLUGINS_MXNET_LIB_LIB_OP_H_

#include <string>
#include <utility>
#include <vector>

#include "lib_api.h"
#include "mxplug/plugin.hpp"

namespace mxplug::mxnet_lib {

/*!
 * Note [lib_api ops as mxplug ops]
 * - Inputs: the library's parse function says how many. An input that its mutate-inputs function
 *   names is an auxiliary state, as MXNet lists it; the others are the arguments, named arg0,
 *   arg1... (MXNet's names for ops of any number of inputs); the library sees them all again in
 *   its own order.
 * - Backward, as MXNet wires it: the library's backward gets the output gradients, then every
 *   input, then every output, and writes one gradient per input (those of auxiliary states go to
 *   scratch memory and are dropped).
 * - Outputs whose request is null or add-to are written to scratch memory (then added), since a
 *   library writes every output it has; MXNet passes such requests to the library unheeded.
 * - Scratch memory that a library asks for on the CPU (OpResource::alloc_cpu) is its own block
 *   per request, freed after the call; on a GPU it is the call's temporary space, which a second
 *   request reuses, as in MXNet.
 * - Tensor version numbers (MXTensor::verID) are new for every call, so a library that caches on
 *   them recomputes rather than reading stale data.
 */
/*! \brief The library's inputs in its own order, from mxplug's arguments and auxiliary states
 * (`mutated`: per library input, whether it is an auxiliary state). */
template <typename T>
std::vector<T> MergeInputs(const std::vector<bool>& mutated, const std::vector<T>& args,
                           const std::vector<T>& aux) {
  std::vector<T> out;
  size_t a = 0, x = 0;
  for (bool is_aux : mutated) out.push_back(is_aux ? aux.at(x++) : args.at(a++));
  return out;
}

class LibOpProperty : public OperatorProperty {
 public:
  explicit LibOpProperty(const LibOp* op) : op_(op) {}

  void Init(const KwArgs& kwargs) override;
  std::vector<std::string> ListArguments() const override;
  std::vector<std::string> ListOutputs() const override;
  std::vector<std::string> ListAuxiliaryStates() const override;
  bool InferShape(std::vector<TShape>* in_shape, std::vector<TShape>* out_shape,
                  std::vector<TShape>* aux_shape) const override;
  bool InferType(std::vector<int>* in_type, std::vector<int>* out_type,
                 std::vector<int>* aux_type) const override;
  std::vector<ResourceRequest> ForwardResource(const std::vector<TShape>&) const override {
    return {ResourceRequest::kTempSpace, ResourceRequest::kRandom};
  }
  std::vector<ResourceRequest> BackwardResource(const std::vector<TShape>&) const override {
    return {ResourceRequest::kTempSpace, ResourceRequest::kRandom};
  }
  Operator* CreateOperator(Context ctx) const override;

  /*! \brief The kwargs as the library's functions take them. */
  struct Attrs {
    std::vector<std::string> keys, values;
    std::vector<const char*> key_ptrs, value_ptrs;
    int size() const { return static_cast<int>(key_ptrs.size()); }
  };

 private:
  const LibOp* op_;
  std::shared_ptr<Attrs> attrs_;
  int num_in_ = 0, num_out_ = 0;
  std::vector<bool> mutated_;  // per library input: an auxiliary state
};

}  // namespace mxplug::mxnet_lib

#endif  // MXPLUG_PLUGINS_MXNET_LIB_LIB_OP_H_
