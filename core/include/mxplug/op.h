/*!
 * \file mxplug/op.h
 * \brief A registered op (OpEntry, from a plugin's MXPOpDef) and OpProperty, one instance of it
 * made from kwargs: argument lists, shape and type inference, gradient wiring, in-place options.
 */
#ifndef MXPLUG_OP_H_
#define MXPLUG_OP_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mxplug/abi/op.h"
#include "mxplug/sdk/parameter.hpp"
#include "mxplug/sdk/tshape.hpp"

namespace mxplug {

/*! \brief One parameter field of an op, copied out of the plugin's MXPParamDef. */
struct ParamInfo {
  std::string name;
  int32_t type = kMXPParamString;  // MXPParamType
  std::string type_text;
  std::optional<std::string> default_value;  // absent: required
  std::optional<double> lower_bound, upper_bound;
  std::vector<std::string> choices;
  std::string doc;

  /*! \brief "int >= 1, required", "boolean, default false", "{'max', 'avg'}, default 'max'". */
  std::string Summary() const;
};

/*! \brief One documented input of an op. */
struct ArgumentInfo {
  std::string name, type_text, doc;
};

/*! \brief An op as registered by a plugin. */
struct OpEntry {
  std::string name;
  std::string doc;
  std::string plugin;       // the registering plugin's name
  std::string plugin_path;  // and its file
  std::vector<ParamInfo> params;
  std::vector<ArgumentInfo> arguments;
  MXPOpDef def{};  // the plugin's functions; members past its struct_size are zero
};

/*! \brief The tensors backward reads: one flag per output gradient, input and output. */
struct BackwardDependency {
  std::vector<bool> out_grad, in_data, out_data;
};

/*!
 * \brief An op configured by kwargs (MXNet's OperatorProperty after Init). Errors are Error
 * exceptions whose text starts with the op's name.
 */
class OpProperty {
 public:
  OpProperty(std::shared_ptr<const OpEntry> op, const KwArgs& kwargs);
  ~OpProperty();
  OpProperty(const OpProperty&) = delete;
  OpProperty& operator=(const OpProperty&) = delete;

  const OpEntry& op() const { return *op_; }
  const KwArgs& kwargs() const { return kwargs_; }

  std::vector<std::string> ListArguments() const { return List(kMXPListArguments); }
  std::vector<std::string> ListOutputs() const { return List(kMXPListOutputs); }
  std::vector<std::string> ListAuxiliaryStates() const { return List(kMXPListAuxiliaryStates); }
  /*! \brief How many outputs (the first ones) an imperative call returns. */
  size_t NumVisibleOutputs() const;

  /*! \brief Fills unknown shapes; false when not enough is known. Resizes vectors to the lists. */
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>* aux) const;
  /*! \brief Same for dtypes (MXPDType, -1 unknown). */
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>* aux) const;
  BackwardDependency DeclareBackwardDependency() const;
  std::vector<MXPInplacePair> InplaceOption(MXPPhase phase) const;
  /*! \brief MXPResourceKind bits. */
  uint32_t Resources(MXPPhase phase) const;

 private:
  std::vector<std::string> List(int32_t kind) const;
  size_t Count(int32_t kind) const;  // of List(kind), without copying the names
  const std::string& Where() const { return op_->name; }

  std::shared_ptr<const OpEntry> op_;
  KwArgs kwargs_;
  void* prop_ = nullptr;
};

}  // namespace mxplug

#endif  // MXPLUG_OP_H_
