// Symbol <-> MXNet's symbol JSON (Note [Symbol JSON]).
#include <nlohmann/json.hpp>

#include "mxplug/error.h"
#include "mxplug/symbol.h"
#include "operator/kernel_call.h"

namespace mxplug {
namespace {

// Note [Symbol JSON]
// The format MXNet 1.x writes with Symbol.tojson/save (nnvm's graph JSON):
//   {"nodes": [{"op": "null" | name, "name": str, "attrs": {str: str}, "inputs": [[node, output,
//   0]]}],
//    "arg_nodes": [...], "node_row_ptr": [...], "heads": [[node, output, 0]],
//    "attrs": {"mxnet_version": ["int", 10901]}}
// Nodes are in topological order, so an input always names an earlier node: a reference to the node
// itself or a later one is a cycle or a dangling input, refused. node_row_ptr counts every output
// of each node, the hidden ones too. Files from MXNet before 0.9 keep op parameters in "param" and
// user attributes in "attr" (hidden keys without their underscores), use [node, output] pairs, and
// may omit BatchNorm's auxiliary inputs; they load as MXNet's upgrade pass loads them. arg_nodes
// and node_row_ptr are derived data: written for MXNet, recomputed on reading.

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

constexpr int kMXNetVersion = 10901;

// MXNet's hidden keys that old files wrote bare in "attr".
bool IsLegacyHiddenKey(const std::string& key) {
  for (const char* k : {"ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage"})
    if (key == k) return true;
  return false;
}

[[noreturn]] void Fail(const std::string& what) {
  throw Error("symbol JSON: " + what, kMXPInvalidArgument);
}

// A value as an error message shows it: a flat one as its JSON (cut at 200 characters), a nested
// one by its kind and size. dump() recurses once per level, so a value nested 100,000 deep in a
// hostile file overflowed the stack while the error was being written.
std::string Shown(const json& v) {
  if (v.is_structured())
    for (const json& x : v)
      if (x.is_structured())
        return std::string(v.is_array() ? "a list of " : "an object of ") +
               std::to_string(v.size()) + (v.is_array() ? " items" : " keys") +
               " holding lists or objects";
  std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
  return text.size() > 200 ? text.substr(0, 200) + "..." : text;
}

std::string NodeWhere(size_t i, const json& node) {
  std::string s = "node " + std::to_string(i);
  if (node.is_object() && node.contains("name") && node["name"].is_string())
    s += " ('" + node["name"].get<std::string>() + "')";
  return s;
}

// [node, output] or [node, output, version] naming an output of one of the first `limit` nodes.
NodeEntry ReadEntry(const json& e, const std::vector<std::shared_ptr<Node>>& nodes, size_t limit,
                    const std::string& where) {
  if (!e.is_array() || e.size() < 2 || e.size() > 3)
    Fail(where + ": an entry must be [node, output] or [node, output, version], got " + Shown(e));
  for (const json& x : e)
    if (!x.is_number_unsigned() && !(x.is_number_integer() && x.get<int64_t>() >= 0))
      Fail(where + ": entry " + Shown(e) + " must hold non-negative integers");
  const uint64_t id = e[0].get<uint64_t>(), index = e[1].get<uint64_t>();
  if (id >= limit)
    Fail(where + ": input " + Shown(e) + " refers to node " + std::to_string(id) +
         ", which does not come "
         "before it (a cycle or a dangling input; " +
         std::to_string(limit) + " nodes precede)");
  const std::shared_ptr<Node>& node = nodes[id];
  if (index >= node->num_outputs())
    Fail(where + ": input " + Shown(e) + " asks for output " + std::to_string(index) + " of " +
         node->Describe() + ", which has " + std::to_string(node->num_outputs()));
  return NodeEntry{node, static_cast<uint32_t>(index)};
}

void ReadAttrs(const json& node, const char* field, bool legacy_user, Symbol::Attrs* attrs,
               const std::string& where) {
  if (!node.contains(field)) return;
  const json& a = node[field];
  if (!a.is_object()) Fail(where + ": \"" + field + "\" must be an object of strings");
  for (const auto& [key, value] : a.items()) {
    if (!value.is_string())
      Fail(where + ": attribute '" + key + "' must be a string, got " + Shown(value));
    const std::string k = legacy_user && IsLegacyHiddenKey(key) ? "__" + key + "__" : key;
    (*attrs)[k] = value.get<std::string>();
  }
}

}  // namespace

std::string Symbol::ToJSON() const {
  IndexedGraph g(outputs_);
  ordered_json nodes = ordered_json::array(), arg_nodes = ordered_json::array();
  ordered_json row_ptr = ordered_json::array({0});
  auto entry = [&](uint32_t eid) {
    const uint32_t nid = g.node_of_entry(eid);
    return ordered_json::array({nid, eid - g[nid].first_entry, 0});
  };
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
    const Node& node = *g[nid].node;
    ordered_json n;
    n["op"] = node.is_variable() ? "null" : node.op->name;
    n["name"] = node.name;
    if (!node.attrs.empty()) n["attrs"] = node.attrs;
    n["inputs"] = ordered_json::array();
    for (uint32_t eid : g[nid].inputs) n["inputs"].push_back(entry(eid));
    nodes.push_back(std::move(n));
    if (node.is_variable()) arg_nodes.push_back(nid);
    row_ptr.push_back(g[nid].first_entry + node.num_outputs());
  }
  ordered_json heads = ordered_json::array();
  for (uint32_t eid : g.outputs()) heads.push_back(entry(eid));
  ordered_json root;
  root["nodes"] = std::move(nodes);
  root["arg_nodes"] = std::move(arg_nodes);
  root["node_row_ptr"] = std::move(row_ptr);
  root["heads"] = std::move(heads);
  root["attrs"] = {{"mxnet_version", ordered_json::array({"int", kMXNetVersion})}};
  return root.dump(2);
}

Symbol Symbol::FromJSON(const std::string& text) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {
    Fail(std::string("not valid JSON: ") + e.what());
  }
  if (!root.is_object()) Fail("the top level must be an object with \"nodes\" and \"heads\"");
  if (!root.contains("nodes") || !root["nodes"].is_array())
    Fail("\"nodes\" is missing or not a list");
  if (!root.contains("heads") || !root["heads"].is_array())
    Fail("\"heads\" is missing or not a list");
  const json& jnodes = root["nodes"];
  std::vector<std::shared_ptr<Node>> nodes;
  nodes.reserve(jnodes.size());
  for (size_t i = 0; i < jnodes.size(); ++i) {
    const json& jn = jnodes[i];
    const std::string where = NodeWhere(i, jn);
    if (!jn.is_object()) Fail(where + ": a node must be an object");
    if (!jn.contains("op") || !jn["op"].is_string())
      Fail(where + ": \"op\" is missing or not a string");
    if (!jn.contains("name") || !jn["name"].is_string())
      Fail(where + ": \"name\" is missing or not a string");
    const std::string op = jn["op"].get<std::string>(), name = jn["name"].get<std::string>();
    Attrs attrs;
    ReadAttrs(jn, "param", false, &attrs, where);
    ReadAttrs(jn, "attr", true, &attrs, where);
    ReadAttrs(jn, "attrs", false, &attrs, where);
    std::vector<NodeEntry> inputs;
    if (jn.contains("inputs")) {
      if (!jn["inputs"].is_array()) Fail(where + ": \"inputs\" must be a list");
      for (const json& e : jn["inputs"]) inputs.push_back(ReadEntry(e, nodes, i, where));
    }
    std::shared_ptr<Node> node;
    if (op == "null") {
      if (!inputs.empty()) Fail(where + ": a variable (op \"null\") cannot have inputs");
      node = Node::MakeVariable(name, std::move(attrs));
    } else {
      try {
        node = Node::MakeOp(op, name, std::move(attrs));
      } catch (const Error& e) {
        Fail(where + ": " + e.what());
      }
      const OpSignature& sig = *node->signature;
      if (inputs.size() == sig.arguments.size() && !sig.aux_states.empty()) {
        for (const std::string& aux :
             sig.aux_states)  // a file from before auxiliary states were inputs
          inputs.push_back(NodeEntry{Node::MakeVariable(name + "_" + aux), 0});
      }
      if (inputs.size() != node->num_inputs()) {
        std::vector<std::string> expected = sig.arguments;
        expected.insert(expected.end(), sig.aux_states.begin(), sig.aux_states.end());
        Fail(where + ": " + op + " takes " + std::to_string(node->num_inputs()) + " inputs (" +
             detail::JoinNames(expected) + "), the file gives " + std::to_string(inputs.size()));
      }
    }
    node->inputs = std::move(inputs);
    nodes.push_back(std::move(node));
  }
  std::vector<NodeEntry> heads;
  for (const json& e : root["heads"]) heads.push_back(ReadEntry(e, nodes, nodes.size(), "heads"));
  if (heads.empty()) Fail("\"heads\" is empty: the symbol has no output");
  return Symbol(std::move(heads));
}

}  // namespace mxplug
