/*!
 * \file mxplug/graph.h
 * \brief The computation graph under Symbol and Executor: Node (a variable, or an op configured by
 * its attributes, with input entries), NodeEntry (one output of a node), and IndexedGraph, the
 * numbered, topologically sorted form that passes (inference, gradients, planning) work on.
 */
#ifndef MXPLUG_GRAPH_H_
#define MXPLUG_GRAPH_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "mxplug/op.h"
#include "mxplug/sdk/parameter.hpp"
#include "mxplug/sdk/tshape.hpp"

namespace mxplug {

struct Node;

/*! \brief One output of a node. */
struct NodeEntry {
  std::shared_ptr<Node> node;
  uint32_t index = 0;
};

/*! \brief What an op node's property lists, read once when the node is made. */
struct OpSignature {
  std::vector<std::string> arguments, aux_states, outputs;
  size_t num_visible_outputs = 0;
};

/*!
 * \brief A graph node. Attributes hold the op's parameters and the hidden ones ("__shape__",
 * "__lr_mult__", ...: keys wrapped in double underscores), as in MXNet's symbol JSON.
 */
struct Node {
  std::string name;
  std::shared_ptr<const OpEntry> op;         // nullptr: a variable
  std::shared_ptr<const OpProperty> property;  // the op configured by its parameters
  std::shared_ptr<const OpSignature> signature;
  std::map<std::string, std::string> attrs;
  std::vector<NodeEntry> inputs;  // the op's arguments, then its auxiliary states

  /*! \brief A variable. */
  static std::shared_ptr<Node> MakeVariable(const std::string& name,
                                            std::map<std::string, std::string> attrs = {});
  /*!
   * \brief An op node without inputs, configured by the parameters among `attrs`.
   * \throws Error for an unknown op or bad parameters (naming the node and the op).
   */
  static std::shared_ptr<Node> MakeOp(const std::string& op, const std::string& name,
                                      std::map<std::string, std::string> attrs);

  bool is_variable() const { return op == nullptr; }
  /*! \brief Every output, hidden ones included (BatchNorm's saved mean and variance). */
  size_t num_outputs() const { return op ? signature->outputs.size() : 1; }
  /*! \brief The outputs a symbol of this node shows (the first ones). */
  size_t num_visible_outputs() const { return op ? signature->num_visible_outputs : 1; }
  size_t num_arguments() const { return op ? signature->arguments.size() : 0; }
  /*! \brief Arguments and auxiliary states: how many inputs a composed op node has. */
  size_t num_inputs() const { return op ? signature->arguments.size() + signature->aux_states.size() : 0; }
  /*! \brief "fc1_output", "sl_output1"; a variable's output is its name. */
  std::string OutputName(uint32_t index) const;
  /*! \brief The attributes that are the op's parameters (not "__hidden__" ones). */
  KwArgs Params() const;
  /*! \brief "node 'fc1' (FullyConnected)" or "variable 'data'", for messages. */
  std::string Describe() const;
};

/*! \brief True for attribute keys wrapped in double underscores, which ops do not parse. */
bool IsHiddenKey(const std::string& key);

/*!
 * \brief The graph reachable from some outputs, numbered: nodes in topological order (inputs
 * before the nodes that read them, in MXNet's depth-first order), and entries (node outputs,
 * hidden ones included) numbered node by node.
 */
class IndexedGraph {
 public:
  struct NodeInfo {
    std::shared_ptr<Node> node;
    std::vector<uint32_t> inputs;  // entry ids
    uint32_t first_entry;
  };

  explicit IndexedGraph(const std::vector<NodeEntry>& outputs);

  size_t num_nodes() const { return nodes_.size(); }
  size_t num_entries() const { return num_entries_; }
  const NodeInfo& operator[](uint32_t node_id) const { return nodes_[node_id]; }
  const std::vector<NodeInfo>& nodes() const { return nodes_; }
  uint32_t entry_id(uint32_t node_id, uint32_t index) const { return nodes_[node_id].first_entry + index; }
  uint32_t entry_id(const NodeEntry& e) const { return entry_id(node_id(e.node.get()), e.index); }
  uint32_t node_id(const Node* node) const { return ids_.at(node); }
  /*! \brief The node that produces an entry. */
  uint32_t node_of_entry(uint32_t entry) const { return entry_node_[entry]; }
  /*! \brief The outputs the graph was made from, as entry ids. */
  const std::vector<uint32_t>& outputs() const { return outputs_; }
  /*! \brief Variable nodes in topological order. */
  const std::vector<uint32_t>& variables() const { return variables_; }
  /*! \brief Whether a variable is an auxiliary state of some op (updated in place, no gradient). */
  bool is_aux(uint32_t node_id) const { return aux_[node_id]; }

 private:
  std::vector<NodeInfo> nodes_;
  std::unordered_map<const Node*, uint32_t> ids_;
  std::vector<uint32_t> entry_node_, outputs_, variables_;
  std::vector<bool> aux_;
  size_t num_entries_ = 0;
};

/*!
 * \brief Every node reachable from `outputs`, inputs before readers (post-order depth-first,
 * inputs visited in order: MXNet's order for list_arguments). Iterative, so deep chains are fine.
 */
std::vector<std::shared_ptr<Node>> TopologicalOrder(const std::vector<NodeEntry>& outputs);

/*!
 * \brief Shape inference over a whole graph: `shapes` has one entry per graph entry, known ones
 * filled; the ops' InferShape runs forward and backward over the nodes until nothing changes.
 * \return true when every entry's shape is known.
 * \throws Error naming the node, the op, the input or output and both shapes on a conflict.
 */
bool InferGraphShapes(const IndexedGraph& graph, std::vector<TShape>* shapes);
/*! \brief The same for dtypes (MXPDType; -1 unknown). */
bool InferGraphTypes(const IndexedGraph& graph, std::vector<int>* dtypes);

}  // namespace mxplug

#endif  // MXPLUG_GRAPH_H_
