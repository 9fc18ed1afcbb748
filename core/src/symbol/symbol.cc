#include "mxplug/symbol.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "mxplug/error.h"
#include "operator/kernel_call.h"

namespace mxplug {
namespace {

// The one output an argument of Compose must have.
const NodeEntry& SingleOutput(const Symbol& s, const std::string& what) {
  if (s.num_outputs() != 1)
    throw Error("compose: " + what + " must be a symbol of one output, got " +
                    std::to_string(s.num_outputs()) + " outputs",
                kMXPInvalidArgument);
  return s.outputs()[0];
}

// A "__shape__" attribute as MXNet writes it: "(2, 3)", "[2, 3]", "(5,)"; 0 is an unknown dim.
TShape ParseShapeAttr(const std::string& text, const Node& node) {
  std::vector<int64_t> dims;
  std::string digits;
  auto flush = [&] {
    if (digits.empty()) return;
    const int64_t d = std::stoll(digits);
    dims.push_back(d == 0 ? -1 : d);
    digits.clear();
  };
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      if (digits.size() > 17)
        throw Error(
            node.Describe() + ": attribute __shape__ '" + text + "' has a dimension too large",
            kMXPInvalidArgument);
      digits += c;
    } else if (c == ',' || c == ')' || c == ']') {
      flush();
    } else if (c != ' ' && c != '(' && c != '[' && c != 'L') {
      throw Error(
          node.Describe() + ": attribute __shape__ '" + text + "' is not a shape like (2, 3)",
          kMXPInvalidArgument);
    }
  }
  flush();
  return TShape(std::move(dims));
}

template <typename T, typename Seed, typename Run>
Symbol::Inferred<T> InferFromInputs(const std::vector<NodeEntry>& outputs,
                                    const std::map<std::string, T>& known, T unknown,
                                    const char* what, Seed seed, Run run) {
  IndexedGraph g(outputs);
  std::vector<T> values(g.num_entries(), unknown);
  std::vector<std::string> names;
  for (uint32_t v : g.variables()) names.push_back(g[v].node->name);
  for (const auto& [name, value] : known)
    if (std::find(names.begin(), names.end(), name) == names.end())
      throw Error(std::string("infer_") + what + ": '" + name +
                      "' is not an input of the symbol; its inputs are " + detail::JoinNames(names),
                  kMXPInvalidArgument);
  for (uint32_t v : g.variables()) {
    const Node& node = *g[v].node;
    auto it = known.find(node.name);
    values[g.entry_id(v, 0)] = it != known.end() ? it->second : seed(node);
  }
  Symbol::Inferred<T> result;
  result.complete = run(g, &values);
  for (uint32_t v : g.variables())
    (g.is_aux(v) ? result.aux_states : result.arguments).push_back(values[g.entry_id(v, 0)]);
  for (uint32_t e : g.outputs()) result.outputs.push_back(values[e]);
  return result;
}

}  // namespace

Symbol::Inferred<TShape> Symbol::InferShape(const std::map<std::string, TShape>& known) const {
  return InferFromInputs<TShape>(
      outputs_, known, TShape(), "shape",
      [](const Node& n) {
        auto it = n.attrs.find("__shape__");
        return it == n.attrs.end() ? TShape() : ParseShapeAttr(it->second, n);
      },
      [](const IndexedGraph& g, std::vector<TShape>* v) { return InferGraphShapes(g, v); });
}

Symbol::Inferred<int> Symbol::InferType(const std::map<std::string, int>& known) const {
  return InferFromInputs<int>(
      outputs_, known, kMXPUnknownDType, "type",
      [](const Node& n) {
        auto it = n.attrs.find("__dtype__");
        if (it == n.attrs.end()) return static_cast<int>(kMXPUnknownDType);
        try {
          return std::stoi(it->second);
        } catch (const std::exception&) {
          throw Error(
              n.Describe() + ": attribute __dtype__ '" + it->second + "' is not a dtype flag",
              kMXPInvalidArgument);
        }
      },
      [](const IndexedGraph& g, std::vector<int>* v) { return InferGraphTypes(g, v); });
}

Symbol Symbol::Variable(const std::string& name, Attrs attrs) {
  return Symbol({NodeEntry{Node::MakeVariable(name, std::move(attrs)), 0}});
}

Symbol Symbol::CreateOp(const std::string& op, const std::string& name, Attrs attrs) {
  std::shared_ptr<Node> node = Node::MakeOp(op, name, std::move(attrs));
  std::vector<NodeEntry> outputs;
  for (uint32_t i = 0; i < node->num_visible_outputs(); ++i) outputs.push_back(NodeEntry{node, i});
  return Symbol(std::move(outputs));
}

Symbol Symbol::Group(const std::vector<Symbol>& symbols) {
  std::vector<NodeEntry> outputs;
  for (const Symbol& s : symbols)
    outputs.insert(outputs.end(), s.outputs_.begin(), s.outputs_.end());
  return Symbol(std::move(outputs));
}

Symbol Symbol::Copy() const {
  std::unordered_map<const Node*, std::shared_ptr<Node>> copies;
  for (const std::shared_ptr<Node>& node : TopologicalOrder(outputs_)) {
    auto copy = std::make_shared<Node>(*node);
    for (NodeEntry& e : copy->inputs) e.node = copies.at(e.node.get());
    copies.emplace(node.get(), std::move(copy));
  }
  std::vector<NodeEntry> outputs;
  for (const NodeEntry& e : outputs_)
    outputs.push_back(NodeEntry{copies.at(e.node.get()), e.index});
  return Symbol(std::move(outputs));
}

void Symbol::Compose(const std::vector<Symbol>& args,
                     const std::vector<std::pair<std::string, Symbol>>& kwargs,
                     const std::string& name) {
  // An op node made by CreateOp and not composed yet: fill its inputs.
  bool atomic =
      !outputs_.empty() && !outputs_[0].node->is_variable() && outputs_[0].node->inputs.empty();
  for (const NodeEntry& e : outputs_) atomic = atomic && e.node == outputs_[0].node;
  if (atomic) {
    Node& node = *outputs_[0].node;
    if (!name.empty()) node.name = name;
    std::vector<std::string> slots = node.signature->arguments;
    slots.insert(slots.end(), node.signature->aux_states.begin(), node.signature->aux_states.end());
    if (args.size() > slots.size())
      throw Error("compose: " + node.Describe() + " takes " + std::to_string(slots.size()) +
                      " inputs (" + detail::JoinNames(slots) + "), got " +
                      std::to_string(args.size()) + " positional",
                  kMXPInvalidArgument);
    std::vector<NodeEntry> inputs(slots.size());
    for (size_t i = 0; i < args.size(); ++i)
      inputs[i] = SingleOutput(args[i], "input '" + slots[i] + "'");
    for (const auto& [key, sym] : kwargs) {
      size_t i = 0;
      while (i < slots.size() && slots[i] != key) ++i;
      if (i == slots.size())
        throw Error("compose: " + node.Describe() + " has no input '" + key + "'; its inputs are " +
                        detail::JoinNames(slots),
                    kMXPInvalidArgument);
      if (inputs[i].node)
        throw Error("compose: " + node.Describe() + ": input '" + key + "' is given twice",
                    kMXPInvalidArgument);
      inputs[i] = SingleOutput(sym, "input '" + key + "'");
    }
    // Missing inputs become variables; they inherit the node's attributes, as in MXNet (whose
    // JSON and attr_dict show a layer's parameters on its weights too): an AttrScope's ctx_group,
    // or an lr_mult given to the op, applies to the layer's weights.
    for (size_t i = 0; i < slots.size(); ++i)
      if (!inputs[i].node)
        inputs[i] = NodeEntry{Node::MakeVariable(node.name + "_" + slots[i], node.attrs), 0};
    node.inputs = std::move(inputs);
    return;
  }

  // A graph: replace free variables.
  std::vector<std::shared_ptr<Node>> order = TopologicalOrder(outputs_);
  std::vector<std::string> inputs;
  for (const auto& node : order)
    if (node->is_variable()) inputs.push_back(node->name);
  std::unordered_map<std::string, NodeEntry> replace;
  if (args.size() > inputs.size())
    throw Error("compose: the symbol has " + std::to_string(inputs.size()) + " free variables (" +
                    detail::JoinNames(inputs) + "), got " + std::to_string(args.size()) +
                    " positional",
                kMXPInvalidArgument);
  for (size_t i = 0; i < args.size(); ++i)
    replace[inputs[i]] = SingleOutput(args[i], "argument '" + inputs[i] + "'");
  for (const auto& [key, sym] : kwargs) {
    bool found = false;
    for (const std::string& n : inputs) found |= n == key;
    if (!found)
      throw Error("compose: the symbol has no variable '" + key + "'; its variables are " +
                      detail::JoinNames(inputs),
                  kMXPInvalidArgument);
    if (!replace.emplace(key, SingleOutput(sym, "argument '" + key + "'")).second)
      throw Error("compose: variable '" + key + "' is given twice", kMXPInvalidArgument);
  }
  // Work on a copy of this symbol's own nodes; the arguments' graphs are shared, not renamed.
  std::unordered_map<const Node*, std::shared_ptr<Node>> copies;
  auto mapped = [&](const NodeEntry& e) -> NodeEntry {
    if (e.node->is_variable()) {
      auto it = replace.find(e.node->name);
      if (it != replace.end()) return it->second;
    }
    return NodeEntry{copies.at(e.node.get()), e.index};
  };
  for (const auto& node : order) {
    if (node->is_variable() && replace.count(node->name)) continue;
    auto copy = std::make_shared<Node>(*node);
    if (!name.empty()) copy->name = name + "_" + node->name;
    for (NodeEntry& e : copy->inputs) e = mapped(e);
    copies.emplace(node.get(), std::move(copy));
  }
  for (NodeEntry& e : outputs_) e = mapped(e);
}

Symbol Symbol::operator[](size_t i) const {
  if (i >= outputs_.size())
    throw Error("symbol index " + std::to_string(i) + " is out of range: the symbol has " +
                    std::to_string(outputs_.size()) + " outputs",
                kMXPInvalidArgument);
  return Symbol({outputs_[i]});
}

Symbol Symbol::GetInternals() const {
  std::vector<NodeEntry> outputs;
  for (const auto& node : TopologicalOrder(outputs_))
    for (uint32_t i = 0; i < node->num_visible_outputs(); ++i)
      outputs.push_back(NodeEntry{node, i});
  return Symbol(std::move(outputs));
}

Symbol Symbol::GetChildren() const {
  std::vector<NodeEntry> outputs;
  for (const NodeEntry& head : outputs_)
    outputs.insert(outputs.end(), head.node->inputs.begin(), head.node->inputs.end());
  return Symbol(std::move(outputs));
}

std::vector<std::string> Symbol::ListArguments() const {
  IndexedGraph g(outputs_);
  std::vector<std::string> names;
  for (uint32_t v : g.variables())
    if (!g.is_aux(v)) names.push_back(g[v].node->name);
  return names;
}

std::vector<std::string> Symbol::ListAuxiliaryStates() const {
  IndexedGraph g(outputs_);
  std::vector<std::string> names;
  for (uint32_t v : g.variables())
    if (g.is_aux(v)) names.push_back(g[v].node->name);
  return names;
}

std::vector<std::string> Symbol::ListInputs() const {
  std::vector<std::string> names;
  for (const auto& node : TopologicalOrder(outputs_))
    if (node->is_variable()) names.push_back(node->name);
  return names;
}

std::vector<std::string> Symbol::ListOutputs() const {
  std::vector<std::string> names;
  for (const NodeEntry& e : outputs_) names.push_back(e.node->OutputName(e.index));
  return names;
}

std::optional<std::string> Symbol::name() const {
  if (outputs_.size() != 1) return std::nullopt;
  return outputs_[0].node->name;
}

std::optional<std::string> Symbol::GetAttr(const std::string& key) const {
  if (outputs_.size() != 1) return std::nullopt;
  const auto& attrs = outputs_[0].node->attrs;
  auto it = attrs.find(key);
  if (it == attrs.end()) return std::nullopt;
  return it->second;
}

Symbol::Attrs Symbol::ListAttr() const {
  return outputs_.size() == 1 ? outputs_[0].node->attrs : Attrs{};
}

std::vector<std::pair<std::string, Symbol::Attrs>> Symbol::AttrDict() const {
  std::vector<std::pair<std::string, Attrs>> out;
  for (const auto& node : TopologicalOrder(outputs_))
    if (!node->attrs.empty()) out.emplace_back(node->name, node->attrs);
  return out;
}

void Symbol::SetAttr(const std::string& key, const std::string& value) {
  std::unordered_set<Node*> heads;
  for (const NodeEntry& e : outputs_) heads.insert(e.node.get());
  // Reconfigure ops first, so that a bad parameter value changes nothing.
  std::vector<std::pair<Node*, std::shared_ptr<Node>>> reconfigured;
  for (Node* node : heads) {
    if (node->is_variable() || IsHiddenKey(key)) continue;
    Attrs attrs = node->attrs;
    attrs[key] = value;
    std::shared_ptr<Node> fresh = Node::MakeOp(node->op->name, node->name, std::move(attrs));
    if (!node->inputs.empty() &&
        (fresh->signature->arguments != node->signature->arguments ||
         fresh->signature->aux_states != node->signature->aux_states ||
         fresh->signature->outputs.size() != node->signature->outputs.size()))
      throw Error("set_attr: " + node->Describe() + ": parameter '" + key +
                      "' cannot change the op's inputs "
                      "or outputs once it is composed",
                  kMXPInvalidArgument);
    reconfigured.emplace_back(node, std::move(fresh));
  }
  for (auto& [node, fresh] : reconfigured) {
    node->property = fresh->property;
    node->signature = fresh->signature;
  }
  for (Node* node : heads) node->attrs[key] = value;
}

}  // namespace mxplug
