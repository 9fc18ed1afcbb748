// Shape and dtype inference over a graph (Note [Graph inference]).
#include <string>
#include <type_traits>
#include <vector>

#include "mxplug/error.h"
#include "mxplug/graph.h"
#include "mxplug/sdk/dtype.hpp"

namespace mxplug {
namespace {

// Note [Graph inference]
// Each op's InferShape sees the entries around it (its inputs, auxiliary states and outputs) and
// fills what it can, in either direction: weights from data, an elementwise input from the other
// or from the output. Passes go forward over the nodes, then backward, until a pass learns nothing
// more, as MXNet's InferShape pass does. An op that returns a value contradicting a known one is an
// error naming the node, the op, the slot, the variable or node the value came from, and both
// values.

struct ShapeTraits {
  using Value = TShape;
  static constexpr const char* kWhat = "shape";
  static size_t Knowledge(const TShape& s) {
    if (s.ndim() < 0) return 0;
    size_t n = 1;
    for (int64_t d : s) n += d >= 0;
    return n;
  }
  // The more informed of `have` and `got`; throws through `conflict` when they disagree.
  template <typename F>
  static bool Merge(TShape* have, const TShape& got, F conflict) {
    if (got.ndim() < 0) return false;
    if (have->ndim() < 0) {
      *have = got;
      return true;
    }
    if (have->ndim() != got.ndim()) conflict();
    bool changed = false;
    for (int i = 0; i < got.ndim(); ++i) {
      if (got[i] < 0) continue;
      if ((*have)[i] < 0) {
        (*have)[i] = got[i];
        changed = true;
      } else if ((*have)[i] != got[i]) {
        conflict();
      }
    }
    return changed;
  }
  static std::string Text(const TShape& s) { return s.ToString(); }
  static bool Run(const OpProperty& p, std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>* aux) {
    return p.InferShape(in, out, aux);
  }
};

struct TypeTraits {
  using Value = int;
  static constexpr const char* kWhat = "dtype";
  static size_t Knowledge(int t) { return t != kMXPUnknownDType; }
  template <typename F>
  static bool Merge(int* have, int got, F conflict) {
    if (got == kMXPUnknownDType) return false;
    if (*have == kMXPUnknownDType) {
      *have = got;
      return true;
    }
    if (*have != got) conflict();
    return false;
  }
  static std::string Text(int t) { return t == kMXPUnknownDType ? "unknown" : DTypeName(t); }
  static bool Run(const OpProperty& p, std::vector<int>* in, std::vector<int>* out,
                  std::vector<int>* aux) {
    return p.InferType(in, out, aux);
  }
};

template <typename Traits>
void InferNode(const IndexedGraph& g, uint32_t nid, std::vector<typename Traits::Value>* values) {
  using Value = typename Traits::Value;
  const IndexedGraph::NodeInfo& info = g[nid];
  const Node& node = *info.node;
  const OpSignature& sig = *node.signature;
  const size_t nargs = sig.arguments.size(), naux = sig.aux_states.size(),
               nout = sig.outputs.size();
  std::vector<Value> in(nargs), aux(naux), out(nout);
  for (size_t i = 0; i < nargs; ++i) in[i] = (*values)[info.inputs[i]];
  for (size_t i = 0; i < naux; ++i) aux[i] = (*values)[info.inputs[nargs + i]];
  for (size_t i = 0; i < nout; ++i) out[i] = (*values)[info.first_entry + i];
  const std::vector<Value> given_in = in, given_aux = aux;

  auto where = [&]() {
    std::string s = "input " + std::string(Traits::kWhat) + "s:";
    for (size_t i = 0; i < nargs + naux; ++i) {
      const std::string& slot = i < nargs ? sig.arguments[i] : sig.aux_states[i - nargs];
      s += (i ? ", " : " ") + slot + "=" +
           Traits::Text(i < nargs ? given_in[i] : given_aux[i - nargs]);
    }
    return s;
  };
  try {
    Traits::Run(*node.property, &in, &out, &aux);
  } catch (const Error& e) {
    std::string message = e.what();
    const std::string prefix = node.op->name + ": ";
    if (message.compare(0, prefix.size(), prefix) == 0) message.erase(0, prefix.size());
    throw Error("infer_" + std::string(Traits::kWhat) + ": " + node.Describe() + ": " + message +
                    " (" + where() + ")",
                e.code());
  }
  auto merge = [&](uint32_t entry, const Value& got, const std::string& slot) {
    Value& have = (*values)[entry];
    const Value before = have;
    Traits::Merge(&have, got, [&] {
      const Node& from = *g[g.node_of_entry(entry)].node;
      const std::string source = from.is_variable() ? "variable '" + from.name + "'"
                                                    : "output of node '" + from.name + "'";
      throw Error("infer_" + std::string(Traits::kWhat) + ": " + node.Describe() + ": " + slot +
                      " has " + Traits::kWhat + " " + Traits::Text(before) + " (" + source +
                      ") but the op infers " + Traits::Text(got) + " (" + where() + ")",
                  kMXPInvalidArgument);
    });
    if constexpr (std::is_same_v<Value, TShape>) {
      if (!have.SizeFits())
        throw Error("infer_shape: " + node.Describe() + ": " + slot + " has shape " +
                        have.ToString() + ", more elements than a 64-bit size can count (" +
                        where() + ")",
                    kMXPInvalidArgument);
    }
  };
  for (size_t i = 0; i < nargs; ++i)
    merge(info.inputs[i], in[i], "input '" + sig.arguments[i] + "'");
  for (size_t i = 0; i < naux; ++i)
    merge(info.inputs[nargs + i], aux[i], "auxiliary state '" + sig.aux_states[i] + "'");
  for (size_t i = 0; i < nout; ++i)
    merge(info.first_entry + static_cast<uint32_t>(i), out[i], "output '" + sig.outputs[i] + "'");
}

template <typename Traits>
bool InferGraph(const IndexedGraph& g, std::vector<typename Traits::Value>* values) {
  if (values->size() != g.num_entries())
    throw Error(
        "graph inference: expected one value per entry (" + std::to_string(g.num_entries()) + ")",
        kMXPInvalidArgument);
  auto knowledge = [&] {
    size_t k = 0;
    for (const auto& v : *values) k += Traits::Knowledge(v);
    return k;
  };
  size_t known = knowledge();
  const auto n = static_cast<uint32_t>(g.num_nodes());
  for (bool forward = true;; forward = !forward) {
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t nid = forward ? i : n - 1 - i;
      if (!g[nid].node->is_variable()) InferNode<Traits>(g, nid, values);
    }
    const size_t now = knowledge();
    if (now == known && !forward) break;  // a forward and a backward pass learned nothing
    if (now != known) known = now;
  }
  for (const auto& v : *values)
    if (Traits::Knowledge(v) == 0) return false;
  if constexpr (std::is_same_v<typename Traits::Value, TShape>) {
    for (const TShape& s : *values)
      if (!s.IsKnown()) return false;
  }
  return true;
}

}  // namespace

bool InferGraphShapes(const IndexedGraph& graph, std::vector<TShape>* shapes) {
  return InferGraph<ShapeTraits>(graph, shapes);
}

bool InferGraphTypes(const IndexedGraph& graph, std::vector<int>* dtypes) {
  return InferGraph<TypeTraits>(graph, dtypes);
}

}  // namespace mxplug
