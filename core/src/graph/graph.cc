#include "mxplug/graph.h"

#include <unordered_set>

#include "mxplug/error.h"
#include "mxplug/runtime.h"

namespace mxplug {

bool IsHiddenKey(const std::string& key) {
  return key.size() > 4 && key.compare(0, 2, "__") == 0 && key.compare(key.size() - 2, 2, "__") == 0;
}

std::shared_ptr<Node> Node::MakeVariable(const std::string& name, std::map<std::string, std::string> attrs) {
  auto node = std::make_shared<Node>();
  node->name = name;
  node->attrs = std::move(attrs);
  return node;
}

std::shared_ptr<Node> Node::MakeOp(const std::string& op, const std::string& name,
                                   std::map<std::string, std::string> attrs) {
  auto node = std::make_shared<Node>();
  node->name = name;
  node->attrs = std::move(attrs);
  try {
    node->op = Runtime::Get().GetOp(op);
    node->property = std::make_shared<const OpProperty>(node->op, node->Params());
    auto sig = std::make_shared<OpSignature>();
    sig->arguments = node->property->ListArguments();
    sig->aux_states = node->property->ListAuxiliaryStates();
    sig->outputs = node->property->ListOutputs();
    sig->num_visible_outputs = node->property->NumVisibleOutputs();
    node->signature = std::move(sig);
  } catch (const Error& e) {
    throw Error("node '" + name + "': " + e.what(), e.code());
  }
  return node;
}

std::string Node::OutputName(uint32_t index) const {
  return op ? name + "_" + signature->outputs.at(index) : name;
}

KwArgs Node::Params() const {
  KwArgs params;
  for (const auto& [k, v] : attrs)
    if (!IsHiddenKey(k)) params.emplace_back(k, v);
  return params;
}

std::string Node::Describe() const {
  return op ? "node '" + name + "' (" + op->name + ")" : "variable '" + name + "'";
}

std::vector<std::shared_ptr<Node>> TopologicalOrder(const std::vector<NodeEntry>& outputs) {
  std::vector<std::shared_ptr<Node>> order;
  std::unordered_set<const Node*> visited;
  // Each frame: a node and how many of its inputs have been pushed.
  std::vector<std::pair<std::shared_ptr<Node>, size_t>> stack;
  for (const NodeEntry& head : outputs) {
    if (!head.node || !visited.insert(head.node.get()).second) continue;
    stack.emplace_back(head.node, 0);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->inputs.size()) {
        const std::shared_ptr<Node>& in = node->inputs[next++].node;
        if (in && visited.insert(in.get()).second) stack.emplace_back(in, 0);
      } else {
        order.push_back(node);
        stack.pop_back();
      }
    }
  }
  return order;
}

IndexedGraph::IndexedGraph(const std::vector<NodeEntry>& outputs) {
  std::vector<std::shared_ptr<Node>> order = TopologicalOrder(outputs);
  nodes_.reserve(order.size());
  aux_.assign(order.size(), false);
  for (auto& node : order) {
    const uint32_t id = static_cast<uint32_t>(nodes_.size());
    ids_.emplace(node.get(), id);
    NodeInfo info{node, {}, static_cast<uint32_t>(num_entries_)};
    for (size_t i = 0; i < node->inputs.size(); ++i) {
      const NodeEntry& e = node->inputs[i];
      const uint32_t producer = ids_.at(e.node.get());
      info.inputs.push_back(entry_id(producer, e.index));
      if (i >= node->num_arguments() && nodes_[producer].node->is_variable()) aux_[producer] = true;
    }
    const size_t n = node->num_outputs();
    entry_node_.insert(entry_node_.end(), n, id);
    num_entries_ += n;
    if (node->is_variable()) variables_.push_back(id);
    nodes_.push_back(std::move(info));
  }
  for (const NodeEntry& head : outputs) outputs_.push_back(entry_id(head));
}

}  // namespace mxplug
