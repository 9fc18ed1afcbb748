/*!
 * \file mxplug/symbol.h
 * \brief Symbol: MXNet's declarative graph handle, a list of output entries of a node graph.
 * Made from variables and ops, composed by call, listed, inferred, saved as MXNet's symbol JSON.
 * A Symbol shares its nodes with the symbols it was made from; operations that change a graph
 * (Compose, SetAttr) change only this symbol's own head node or work on a copy.
 */
#ifndef MXPLUG_SYMBOL_H_
#define MXPLUG_SYMBOL_H_

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mxplug/graph.h"

namespace mxplug {

class Symbol {
 public:
  using Attrs = std::map<std::string, std::string>;

  Symbol() = default;
  explicit Symbol(std::vector<NodeEntry> outputs) : outputs_(std::move(outputs)) {}

  static Symbol Variable(const std::string& name, Attrs attrs = {});
  /*!
   * \brief An op with no inputs yet (MXNet's atomic symbol); Compose gives it its inputs.
   * \throws Error for an unknown op or bad parameters.
   */
  static Symbol CreateOp(const std::string& op, const std::string& name, Attrs attrs);
  /*! \brief The outputs of several symbols as one. */
  static Symbol Group(const std::vector<Symbol>& symbols);

  const std::vector<NodeEntry>& outputs() const { return outputs_; }
  size_t num_outputs() const { return outputs_.size(); }
  /*! \brief A copy of every node, so that changing the copy leaves this symbol alone. */
  Symbol Copy() const;

  /*!
   * \brief Gives inputs to the symbol (MXNet's _compose). An op without inputs takes `args`
   * in input order and `kwargs` by input name; inputs not given become variables named
   * "<name>_<input>". A graph replaces its free variables: `kwargs` by variable name, `args` in
   * list_inputs order; with a name, every node not replaced is renamed "<name>_<old name>".
   * \throws Error for an unknown input name, too many inputs, or a multi-output argument.
   */
  void Compose(const std::vector<Symbol>& args, const std::vector<std::pair<std::string, Symbol>>& kwargs,
               const std::string& name);

  /*! \brief Output i as a symbol. \throws Error when out of range. */
  Symbol operator[](size_t i) const;
  /*! \brief Every visible output of every node, in topological order. */
  Symbol GetInternals() const;
  /*! \brief The inputs of the head node (one output), or an empty symbol for a variable. */
  Symbol GetChildren() const;

  std::vector<std::string> ListArguments() const;
  std::vector<std::string> ListOutputs() const;
  std::vector<std::string> ListAuxiliaryStates() const;
  /*! \brief Every variable, arguments and auxiliary states, in topological order. */
  std::vector<std::string> ListInputs() const;

  /*! \brief The head node's name; nullopt for a group of several outputs. */
  std::optional<std::string> name() const;
  /*! \brief An attribute of the head node. */
  std::optional<std::string> GetAttr(const std::string& key) const;
  /*! \brief The head node's attributes. */
  Attrs ListAttr() const;
  /*! \brief Every node's attributes by node name, in topological order (nodes without any left out). */
  std::vector<std::pair<std::string, Attrs>> AttrDict() const;
  /*!
   * \brief Sets an attribute on the head node (each head of a group). A key that is an op
   * parameter reconfigures the op. \throws Error for a bad parameter value; nothing changes then.
   */
  void SetAttr(const std::string& key, const std::string& value);

  /*! \brief Inferred values in list order: arguments, outputs, auxiliary states. */
  template <typename T>
  struct Inferred {
    std::vector<T> arguments, outputs, aux_states;
    bool complete = false;  // every value known
  };
  /*!
   * \brief Shapes of everything from the shapes of some inputs (by name; a variable's "__shape__"
   * attribute counts as given). Unknown values stay unknown (a shape of ndim -1, a dim of -1).
   * \throws Error for a name that is no input, or shapes that contradict each other (naming the
   * node, the op, the input and both shapes).
   */
  Inferred<TShape> InferShape(const std::map<std::string, TShape>& known) const;
  /*! \brief The same for dtypes (MXPDType flags; "__dtype__" counts as given). */
  Inferred<int> InferType(const std::map<std::string, int>& known) const;

  /*! \brief MXNet's symbol JSON (nodes, arg_nodes, node_row_ptr, heads, attrs). */
  std::string ToJSON() const;
  /*!
   * \brief Reads MXNet's symbol JSON, including older files ("param" and "attr" instead of
   * "attrs", two-element input entries, BatchNorm without its auxiliary inputs).
   * \throws Error saying what is wrong and where (node index and name); never crashes.
   */
  static Symbol FromJSON(const std::string& json);

 private:
  std::vector<NodeEntry> outputs_;
};

}  // namespace mxplug

#endif  // MXPLUG_SYMBOL_H_
