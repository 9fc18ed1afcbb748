#include "mxplug/executor.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <tuple>

#include "environment/environment.h"
#include "executor/memory_plan.h"
#include "mxplug/error.h"
#include "mxplug/imperative.h"
#include "mxplug/runtime.h"
#include "operator/kernel_call.h"

namespace mxplug {

// Note [Executor steps]
// Bind turns the graph into a list of steps, each one engine push of a prepared kernel call:
//   forward   one per op node, in topological order;
//   head      copies the gradient given for an output into that output's gradient buffer;
//   backward  one per op node whose arguments need a gradient, in reverse order; it reads only
//             what the op's DeclareBackwardDependency asks for;
//   sum       adds a gradient computed into a scratch buffer (an op that reads one entry through
//             two of its inputs) into the entry's gradient.
// Buffers are numbered: graph entries [0, E), their gradients [E, 2E), scratch after that. Several
// steps may produce parts of one gradient: the first writes, the others add (kAddTo); a gradient
// with grad_req 'add' is only ever added to. A gradient that backward reads but nothing produces is
// a zero buffer filled once at bind. Pruning falls out of this: the graph holds only what the bound
// outputs reach, inference pushes no backward step, and a node none of whose arguments leads to a
// gradient gets no backward step.

// Note [Model parallelism]
// With group2ctx (MXNet's model parallelism), nodes run on several contexts, placed as MXNet's
// PlaceDevice pass places them: a variable where its bound array is; an op node whose
// "__ctx_group__" names a group of group2ctx on that group's context; any other op node where its
// first input is (on the default context when it has none). Its backward step runs where it does.
// Every buffer has a context: an entry its node's, a gradient its entry's (an argument's, its
// bound gradient array's). Where a step reads a buffer of another context, a copy step before it
// fills a buffer on its own context, once per buffer and context, which backward reads again;
// a gradient computed for a buffer of another context is computed into scratch memory and copied
// (then added, under kAddTo) there. Auxiliary states are updated in place, so they must be where
// their op runs. Memory is planned per context. Without group2ctx and with every array on the
// executor's context, no copy step arises.

namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

enum class StepKind { kForward, kHead, kBackward, kSum, kCopy };

const char* KindName(StepKind k) {
  switch (k) {
    case StepKind::kForward:
      return "forward";
    case StepKind::kHead:
      return "head";
    case StepKind::kBackward:
      return "backward";
    case StepKind::kSum:
      return "sum";
    case StepKind::kCopy:
      return "copy";
  }
  return "";
}

// MXNet's bulk-execution variables: how many consecutive steps on an accelerator one engine
// function runs. In training MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD and _BWD, each defaulting to
// MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN (15); in inference the whole forward pass.
// MXNET_EXEC_BULK_EXEC_TRAIN=0 and MXNET_EXEC_BULK_EXEC_INFERENCE=0 push every step alone.
struct SegmentSizes {
  static constexpr size_t kAll = std::numeric_limits<size_t>::max();
  size_t train_forward = 15, train_backward = 15, inference = kAll;

  /*! \throws Error naming a variable whose value is not a count. */
  static SegmentSizes FromEnvironment() {
    constexpr int64_t kMost = std::numeric_limits<int32_t>::max();
    auto count = [&](const char* name, int64_t fallback) {
      return static_cast<size_t>(EnvInteger(name, fallback, 1, kMost));
    };
    SegmentSizes s;
    const int64_t train = count("MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN", 15);
    const bool bulk_train = EnvInteger("MXNET_EXEC_BULK_EXEC_TRAIN", 1, 0, 1) != 0;
    s.train_forward = bulk_train ? count("MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD", train) : 1;
    s.train_backward = bulk_train ? count("MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_BWD", train) : 1;
    s.inference = EnvInteger("MXNET_EXEC_BULK_EXEC_INFERENCE", 1, 0, 1) != 0 ? kAll : 1;
    return s;
  }
};

}  // namespace

struct Executor::Plan {
  explicit Plan(const Symbol& symbol) : graph(symbol.outputs()) {}

  struct Step {
    StepKind kind = StepKind::kForward;
    uint32_t node = kNone;  // the graph node (forward, backward)
    uint32_t head = kNone;  // the output whose given gradient it takes (head)
    std::shared_ptr<const ImperativeOp> op;
    // Buffer ids (kNone: absent), as the op's call takes them.
    std::vector<uint32_t> in, aux, out, out_grad, in_grad;
    std::vector<OpReqType> req;
    std::shared_ptr<const ImperativeOp::Call> call, call_infer;  // is_train true / false
    Context ctx;  // where it runs (a copy: where it copies to)
  };

  // Bind, after the variables' shapes and dtypes are in place (Note [Executor steps]).
  void AddForwardSteps();
  /*! \brief var_req: per entry, the grad_req of the variable that makes it (kNull for the rest). */
  void AddGradientSteps(const std::vector<GradReq>& var_req);
  /*! \brief Steps that put a gradient computed into `from` into buffer `to` under `req`, across
   * contexts if they differ. */
  void Deliver(uint32_t from, uint32_t to, OpReqType req, uint32_t node,
               const std::function<std::shared_ptr<const ImperativeOp>()>& copy_op);
  MemoryReport Allocate(bool share);
  void Prepare();

  uint32_t NewBuffer(const TShape& shape, int dtype, BufferRole role, Context ctx) {
    shapes.push_back(shape);
    dtypes.push_back(dtype);
    roles.push_back(role);
    buffer_ctx.push_back(ctx);
    return static_cast<uint32_t>(shapes.size() - 1);
  }
  /*! \brief Buffer b's contents on ctx: b itself, or its copy there, made by a copy step
   * appended the first time it is asked for (Note [Model parallelism]). */
  uint32_t On(uint32_t b, Context ctx) {
    if (buffer_ctx[b] == ctx) return b;
    const auto key = std::make_tuple(b, ctx.dev_type, ctx.dev_id);
    if (auto it = copies.find(key); it != copies.end()) return it->second;
    const uint32_t copy = NewBuffer(shapes[b], dtypes[b], BufferRole::kInternal, ctx);
    Step s;
    s.kind = StepKind::kCopy;
    s.in = {b};
    s.out = {copy};
    s.req = {kWriteTo};
    s.ctx = ctx;
    steps.push_back(std::move(s));
    return copies[key] = copy;
  }
  std::string BufferName(uint32_t b) const {
    const size_t e = graph.num_entries();
    auto entry_name = [&](uint32_t id) {
      const Node& n = *graph[graph.node_of_entry(id)].node;
      return n.OutputName(id - graph[graph.node_of_entry(id)].first_entry);
    };
    if (b < e) return entry_name(b);
    if (b < 2 * e) return entry_name(static_cast<uint32_t>(b - e)) + "_grad";
    return "scratch" + std::to_string(b - 2 * e);
  }

  IndexedGraph graph;
  std::vector<TShape> shapes;
  std::vector<int> dtypes;
  std::vector<BufferRole> roles;
  std::vector<NDArray> arrays;
  std::vector<Step> steps;
  size_t num_forward = 0;
  // Steps per engine function on an accelerator (Note [Segments] in imperative.cc), read at bind.
  SegmentSizes segment;
  std::vector<uint32_t> head_steps;  // the steps that take a given output gradient
  std::vector<int> storage;          // per buffer: block of the memory plan, -1 not planned
  std::vector<uint32_t> arg_entry;   // per argument: its entry (and buffer) id
  std::vector<Context> node_ctx;     // per node: where it runs (Note [Model parallelism])
  std::vector<Context> buffer_ctx;   // per buffer: where it lives
  std::map<std::tuple<uint32_t, int32_t, int32_t>, uint32_t> copies;  // (buffer, context) -> copy
};

Executor::~Executor() = default;

Executor::Executor(const Symbol& symbol, Context ctx, std::vector<NDArray> args,
                   std::vector<NDArray> arg_grads, std::vector<GradReq> grad_req,
                   std::vector<NDArray> aux, ExecutorOptions options)
    : symbol_(symbol),
      ctx_(ctx),
      args_(std::move(args)),
      arg_grads_(std::move(arg_grads)),
      aux_(std::move(aux)),
      grad_req_(std::move(grad_req)),
      plan_(std::make_unique<Plan>(symbol)) {
  Plan& p = *plan_;
  const IndexedGraph& g = p.graph;
  const uint32_t E = static_cast<uint32_t>(g.num_entries());

  // Variables and the arrays bound to them.
  std::vector<uint32_t> arg_nodes, aux_nodes;
  for (uint32_t v : g.variables()) (g.is_aux(v) ? aux_nodes : arg_nodes).push_back(v);
  auto names = [&](const std::vector<uint32_t>& nodes) {
    std::vector<std::string> n;
    for (uint32_t v : nodes) n.push_back(g[v].node->name);
    return n;
  };
  auto check_list = [&](const char* what, size_t got, const std::vector<uint32_t>& nodes) {
    if (got != nodes.size())
      throw Error("bind: expected " + std::to_string(nodes.size()) + " " + what + " (" +
                      detail::JoinNames(names(nodes)) + "), got " + std::to_string(got),
                  kMXPInvalidArgument);
  };
  check_list("arguments", args_.size(), arg_nodes);
  check_list("gradient arrays (one per argument)", arg_grads_.size(), arg_nodes);
  check_list("grad_req entries (one per argument)", grad_req_.size(), arg_nodes);
  check_list("auxiliary states", aux_.size(), aux_nodes);
  // With group2ctx an array may be on any context, copies bring it where it is read (Note [Model
  // parallelism]); without, every array is on the executor's context. The words are MXNet's for
  // arguments and gradients; MXNet 1.9.1 does not check auxiliary states, which would then be
  // updated on another context than their op's, so mxplug refuses them in the same form.
  struct Kind {
    const char *one, *all;
  };
  const Kind kInput{"Input", "arguments"}, kGradient{"Gradient", "gradients"},
      kAuxiliary{"Auxiliary", "auxiliary states"};
  auto check_array = [&](const NDArray& a, const std::string& what, const Kind& kind) {
    if (a.is_none()) throw Error("bind: " + what + " is missing", kMXPInvalidArgument);
    if (!options.group2ctx.empty() || a.ctx() == ctx_) return;
    throw Error("bind: " + what + ": " + kind.one + " array is in " + a.ctx().ToString() +
                    " while binding with ctx=" + ctx_.ToString() + ". All " + kind.all +
                    " must be in global context (" + ctx_.ToString() +
                    ") unless group2ctx is specified for cross-device graph.",
                kMXPInvalidArgument);
  };

  std::vector<TShape> shapes(E);
  std::vector<int> dtypes(E, kMXPUnknownDType);
  p.arrays.resize(2 * E);
  for (size_t i = 0; i < arg_nodes.size(); ++i) {
    const std::string name = g[arg_nodes[i]].node->name;
    check_array(args_[i], "argument '" + name + "'", kInput);
    const uint32_t e = g.entry_id(arg_nodes[i], 0);
    shapes[e] = args_[i].shape(), dtypes[e] = args_[i].dtype(), p.arrays[e] = args_[i];
    p.arg_entry.push_back(e);
    if (grad_req_[i] == GradReq::kNull) continue;
    check_array(arg_grads_[i], "gradient of '" + name + "'", kGradient);
    if (arg_grads_[i].shape() != args_[i].shape() || arg_grads_[i].dtype() != args_[i].dtype())
      throw Error("bind: gradient of '" + name + "' is " + arg_grads_[i].Describe() +
                      ", the argument " + args_[i].Describe(),
                  kMXPInvalidArgument);
    p.arrays[E + e] = arg_grads_[i];
  }
  for (size_t i = 0; i < aux_nodes.size(); ++i) {
    check_array(aux_[i], "auxiliary state '" + g[aux_nodes[i]].node->name + "'", kAuxiliary);
    const uint32_t e = g.entry_id(aux_nodes[i], 0);
    shapes[e] = aux_[i].shape(), dtypes[e] = aux_[i].dtype(), p.arrays[e] = aux_[i];
  }

  // Every shape and dtype, from the bound arrays.
  auto unknown = [&](auto known) {
    std::vector<std::string> n;
    for (uint32_t e = 0; e < E; ++e)
      if (!known(e)) n.push_back(p.BufferName(e));
    return detail::JoinNames(n);
  };
  if (!InferGraphShapes(g, &shapes))
    throw Error("bind: cannot infer the shapes of " +
                    unknown([&](uint32_t e) { return shapes[e].IsKnown(); }),
                kMXPInvalidArgument);
  if (!InferGraphTypes(g, &dtypes))
    throw Error("bind: cannot infer the dtypes of " +
                    unknown([&](uint32_t e) { return dtypes[e] != kMXPUnknownDType; }),
                kMXPInvalidArgument);
  // Where each node runs, as MXNet's PlaceDevice places it (Note [Model parallelism]).
  p.node_ctx.assign(g.num_nodes(), ctx_);
  for (size_t i = 0; i < arg_nodes.size(); ++i) p.node_ctx[arg_nodes[i]] = args_[i].ctx();
  for (size_t i = 0; i < aux_nodes.size(); ++i) p.node_ctx[aux_nodes[i]] = aux_[i].ctx();
  for (uint32_t n = 0; n < g.num_nodes(); ++n) {
    const Node& node = *g[n].node;
    if (node.is_variable()) continue;
    auto group = node.attrs.find("__ctx_group__");
    if (group != node.attrs.end() && !options.group2ctx.empty()) {
      auto placed = options.group2ctx.find(group->second);
      if (placed == options.group2ctx.end())
        throw Error("bind: The device assignment not found for group " + group->second + " (of " +
                        node.Describe() + "); group2ctx names " + detail::JoinNames([&] {
                          std::vector<std::string> groups;
                          for (const auto& kv : options.group2ctx) groups.push_back(kv.first);
                          return groups;
                        }()),
                    kMXPInvalidArgument);
      p.node_ctx[n] = placed->second;
    } else if (!g[n].inputs.empty()) {
      p.node_ctx[n] = p.node_ctx[g.node_of_entry(g[n].inputs[0])];
    }
  }
  for (uint32_t e = 0; e < E; ++e)
    p.NewBuffer(shapes[e], dtypes[e], BufferRole::kInternal, p.node_ctx[g.node_of_entry(e)]);
  for (uint32_t e = 0; e < E; ++e)
    p.NewBuffer(shapes[e], dtypes[e], BufferRole::kUnused, p.node_ctx[g.node_of_entry(e)]);
  for (size_t i = 0; i < arg_nodes.size(); ++i)
    if (grad_req_[i] != GradReq::kNull)
      p.buffer_ctx[E + g.entry_id(arg_nodes[i], 0)] = arg_grads_[i].ctx();
  for (uint32_t v : g.variables()) p.roles[g.entry_id(v, 0)] = BufferRole::kExternal;

  std::vector<GradReq> var_req(E, GradReq::kNull);
  for (size_t i = 0; i < arg_nodes.size(); ++i) var_req[g.entry_id(arg_nodes[i], 0)] = grad_req_[i];
  p.segment = SegmentSizes::FromEnvironment();
  p.AddForwardSteps();
  p.AddGradientSteps(var_req);
  memory_ = p.Allocate(options.plan_memory);
  p.Prepare();
  for (uint32_t e : g.outputs()) outputs_.push_back(p.arrays[e]);
}

void Executor::Plan::AddForwardSteps() {
  const IndexedGraph& g = graph;
  for (uint32_t n = 0; n < g.num_nodes(); ++n) {
    const Node& node = *g[n].node;
    if (node.is_variable()) continue;
    Step s;
    s.kind = StepKind::kForward;
    s.node = n;
    s.ctx = node_ctx[n];
    s.op = ImperativeOp::Get(node.op->name, node.Params());
    const size_t nargs = node.num_arguments();
    for (size_t i = 0; i < g[n].inputs.size(); ++i) {
      const uint32_t e = g[n].inputs[i];
      if (i >= nargs && buffer_ctx[e] != s.ctx)  // updated in place: no copy can stand in
        throw Error("bind: auxiliary state '" + BufferName(e) + "' is on " +
                        buffer_ctx[e].ToString() + ", but " + node.Describe() + " runs on " +
                        s.ctx.ToString() + "; bind it there",
                    kMXPInvalidArgument);
      (i < nargs ? s.in : s.aux).push_back(On(e, s.ctx));
    }
    for (uint32_t j = 0; j < node.num_outputs(); ++j) s.out.push_back(g[n].first_entry + j);
    s.req.assign(s.out.size(), kWriteTo);
    steps.push_back(std::move(s));
  }
  num_forward = steps.size();
}

void Executor::Plan::AddGradientSteps(const std::vector<GradReq>& var_req) {
  const IndexedGraph& g = graph;
  const uint32_t E = static_cast<uint32_t>(g.num_entries());
  // Which entries a gradient flows to: from arguments with a grad_req, through op arguments.
  std::vector<bool> needs(E, false);
  for (uint32_t v : g.variables())
    needs[g.entry_id(v, 0)] = var_req[g.entry_id(v, 0)] != GradReq::kNull;
  for (uint32_t n = 0; n < g.num_nodes(); ++n) {
    const Node& node = *g[n].node;
    if (node.is_variable()) continue;
    bool any = false;
    for (size_t i = 0; i < node.num_arguments(); ++i) any = any || needs[g[n].inputs[i]];
    for (uint32_t j = 0; j < node.num_outputs(); ++j) needs[g[n].first_entry + j] = any;
  }
  std::vector<bool> written(E, false);
  auto contribute = [&](uint32_t e) {
    const bool add = var_req[e] == GradReq::kAdd || written[e];
    written[e] = true;
    if (roles[E + e] == BufferRole::kUnused) roles[E + e] = BufferRole::kInternal;
    return add ? kAddTo : kWriteTo;
  };
  // Summing into a gradient is a forward of '_copy' with kAddTo (ImperativeOp::Copy).
  std::shared_ptr<const ImperativeOp> copy_op;
  auto copy = [&]() {
    if (!copy_op) copy_op = ImperativeOp::Copy("bind: summing gradients");
    return copy_op;
  };
  for (size_t h = 0; h < g.outputs().size(); ++h) {
    const uint32_t e = g.outputs()[h];
    if (!needs[e]) continue;
    const uint32_t n = g.node_of_entry(e);
    const Node& node = *g[n].node;
    const bool read = node.is_variable() || ImperativeOp::Get(node.op->name, node.Params())
                                                ->property()
                                                .DeclareBackwardDependency()
                                                .out_grad[e - g[n].first_entry];
    if (!read) continue;  // a loss output: its op's backward does not read the gradient
    // The given gradient is the first thing written to the buffer, so Backward copies it straight
    // in; only an argument gradient with grad_req 'add' (or an output listed twice) adds a copy.
    Step s;
    s.kind = StepKind::kHead;
    s.head = static_cast<uint32_t>(h);
    s.out = {E + e};
    s.req = {contribute(e)};
    if (s.req[0] == kAddTo) {
      s.op = copy();
      s.in = {NewBuffer(shapes[e], dtypes[e], BufferRole::kHeadInput, buffer_ctx[E + e])};
    }
    head_steps.push_back(static_cast<uint32_t>(steps.size()));
    steps.push_back(std::move(s));
  }
  std::vector<bool> read_grad(E, false);
  for (uint32_t n = static_cast<uint32_t>(g.num_nodes()); n-- > 0;) {
    const Node& node = *g[n].node;
    if (node.is_variable()) continue;
    const size_t nargs = node.num_arguments(), nout = node.num_outputs();
    bool any = false;
    for (size_t i = 0; i < nargs; ++i) any = any || needs[g[n].inputs[i]];
    if (!any) continue;
    Step s;
    s.kind = StepKind::kBackward;
    s.node = n;
    s.ctx = node_ctx[n];
    s.op = ImperativeOp::Get(node.op->name, node.Params());
    const BackwardDependency deps = s.op->property().DeclareBackwardDependency();
    for (uint32_t j = 0; j < nout; ++j) {
      const uint32_t e = g[n].first_entry + j;
      s.out_grad.push_back(deps.out_grad[j] ? E + e : kNone);
      s.out.push_back(deps.out_data[j] ? e : kNone);
      if (deps.out_grad[j]) read_grad[e] = true;
    }
    for (size_t i = 0; i < g[n].inputs.size(); ++i) {
      // What forward read, on this step's context (the copies forward made).
      const uint32_t e = On(g[n].inputs[i], s.ctx);
      if (i < nargs)
        s.in.push_back(deps.in_data[i] ? e : kNone);
      else
        s.aux.push_back(e);
    }
    // Gradients computed into scratch memory, then put where they belong after the step: one
    // read again through a later slot, or one that lives on another context.
    std::vector<std::pair<uint32_t, uint32_t>> deliveries;  // (scratch, entry)
    for (size_t i = 0; i < nargs; ++i) {
      const uint32_t e = g[n].inputs[i];
      const auto first = g[n].inputs.begin(), here = first + static_cast<std::ptrdiff_t>(i);
      if (!needs[e]) {
        s.in_grad.push_back(kNone);
        s.req.push_back(kNullOp);
      } else if (std::find(first, here, e) == here && buffer_ctx[E + e] == s.ctx) {
        s.in_grad.push_back(E + e);
        s.req.push_back(contribute(e));
      } else {
        const uint32_t scratch = NewBuffer(shapes[e], dtypes[e], BufferRole::kInternal, s.ctx);
        s.in_grad.push_back(scratch);
        s.req.push_back(kWriteTo);
        deliveries.emplace_back(scratch, e);
      }
    }
    steps.push_back(std::move(s));
    // Each request is set once this step's own writes are counted.
    for (const auto& [scratch, e] : deliveries) Deliver(scratch, E + e, contribute(e), n, copy);
  }
  for (uint32_t e = 0; e < E; ++e)
    if (read_grad[e] && !written[e]) roles[E + e] = BufferRole::kZero;
  for (uint32_t v : g.variables()) {
    const uint32_t e = g.entry_id(v, 0);
    if (needs[e]) roles[E + e] = BufferRole::kExternal;
  }
  for (uint32_t e : g.outputs())
    if (roles[e] == BufferRole::kInternal) roles[e] = BufferRole::kOutput;
}

void Executor::Plan::Deliver(uint32_t from, uint32_t to, OpReqType req, uint32_t node,
                             const std::function<std::shared_ptr<const ImperativeOp>()>& copy_op) {
  auto sum = [&](uint32_t in, OpReqType r) {
    Step s;
    s.kind = StepKind::kSum;
    s.node = node;
    s.op = copy_op();
    s.in = {in};
    s.out = {to};
    s.req = {r};
    s.ctx = buffer_ctx[to];
    steps.push_back(std::move(s));
  };
  if (buffer_ctx[from] == buffer_ctx[to]) return sum(from, req);
  if (req == kWriteTo) {  // a copy straight into the target
    Step s;
    s.kind = StepKind::kCopy;
    s.node = node;
    s.in = {from};
    s.out = {to};
    s.req = {kWriteTo};
    s.ctx = buffer_ctx[to];
    steps.push_back(std::move(s));
    return;
  }
  sum(On(from, buffer_ctx[to]), req);  // copied there, then added
}

MemoryReport Executor::Plan::Allocate(bool share) {
  std::vector<PlanStep> plan_steps;
  for (const Step& s : steps) {
    PlanStep ps;
    for (const auto* list : {&s.in, &s.aux, &s.out_grad})
      ps.reads.insert(ps.reads.end(), list->begin(), list->end());
    if (s.kind == StepKind::kBackward) ps.reads.insert(ps.reads.end(), s.out.begin(), s.out.end());
    const std::vector<uint32_t>& writes = s.kind == StepKind::kBackward ? s.in_grad : s.out;
    for (size_t i = 0; i < writes.size(); ++i) {
      if (writes[i] == kNone) continue;
      ps.writes.push_back(writes[i]);
      if (s.req[i] == kAddTo) ps.reads.push_back(writes[i]);  // adding reads what is there
    }
    if (s.kind == StepKind::kForward || s.kind == StepKind::kBackward) {
      const bool fwd = s.kind == StepKind::kForward;
      auto tensor = [&](int32_t role, int32_t index) -> uint32_t {
        const std::vector<uint32_t>* list = role == kMXPRoleInData    ? &s.in
                                            : role == kMXPRoleOutData ? &s.out
                                            : role == kMXPRoleOutGrad ? &s.out_grad
                                            : role == kMXPRoleInGrad  ? &s.in_grad
                                                                      : nullptr;
        return list && index >= 0 && static_cast<size_t>(index) < list->size() ? (*list)[index]
                                                                               : kNone;
      };
      for (const MXPInplacePair& pair :
           s.op->property().InplaceOption(fwd ? kMXPPhaseForward : kMXPPhaseBackward)) {
        const uint32_t src = tensor(pair.src_role, pair.src_index),
                       dst = tensor(pair.dst_role, pair.dst_index);
        // A tensor read through two slots cannot be overwritten through one of them.
        if (src != kNone && dst != kNone && std::count(ps.reads.begin(), ps.reads.end(), src) == 1)
          ps.inplace.emplace_back(src, dst);
      }
    }
    std::erase(ps.reads, kNone);
    plan_steps.push_back(std::move(ps));
  }
  std::vector<size_t> bytes(shapes.size());
  for (size_t b = 0; b < bytes.size(); ++b)
    bytes[b] = roles[b] == BufferRole::kUnused || roles[b] == BufferRole::kExternal
                   ? 0
                   : static_cast<size_t>(shapes[b].Size()) * DTypeSize(dtypes[b]);
  // One pool per context: buffers share blocks only on their own.
  std::vector<Context> pool_ctx;
  std::vector<int> pools;
  for (const Context& c : buffer_ctx) {
    auto it = std::find(pool_ctx.begin(), pool_ctx.end(), c);
    pools.push_back(static_cast<int>(it - pool_ctx.begin()));
    if (it == pool_ctx.end()) pool_ctx.push_back(c);
  }
  MemoryPlan mp = PlanMemory(plan_steps, bytes, roles, dtypes, share, pools);
  storage = mp.storage;
  std::vector<NDArray> blocks;
  for (size_t k = 0; k < mp.block_bytes.size(); ++k)
    blocks.emplace_back(TShape{static_cast<int64_t>(std::max<size_t>(mp.block_bytes[k], 1))},
                        pool_ctx[mp.block_pool[k]], kMXPUint8);
  arrays.resize(shapes.size());
  for (size_t b = 0; b < shapes.size(); ++b) {
    if (storage[b] >= 0) arrays[b] = blocks[storage[b]].View(shapes[b], dtypes[b]);
    if (roles[b] == BufferRole::kZero || roles[b] == BufferRole::kHeadInput) {
      arrays[b] = NDArray(shapes[b], buffer_ctx[b], dtypes[b]);
      if (roles[b] == BufferRole::kZero) {
        std::vector<char> zeros(arrays[b].bytes(), 0);
        arrays[b].SyncCopyFromCPU(zeros.data(), zeros.size());
      }
    }
  }
  return mp.report;
}

void Executor::Plan::Prepare() {
  for (Step& s : steps) {
    if (!s.op) continue;  // a head or copy step, which Forward and Backward do by copying
    // Only backward steps have absent slots (kNone): what the op's backward does not read and
    // the gradients not asked for. Each crosses as an absent array of its entry's shape and
    // dtype, so a kernel that sizes its loops by a gradient it does not write still sees the
    // true shape (an empty one made `a * p` read p as a broadcast scalar).
    auto get = [&](const std::vector<uint32_t>& ids, bool outputs) {
      std::vector<NDArray> out;
      for (size_t i = 0; i < ids.size(); ++i) {
        if (ids[i] != kNone) {
          out.push_back(arrays[ids[i]]);
          continue;
        }
        const uint32_t e = outputs ? graph[s.node].first_entry + static_cast<uint32_t>(i)
                                   : graph[s.node].inputs[i];
        out.push_back(NDArray::Absent(shapes[e], dtypes[e]));
      }
      return out;
    };
    try {
      std::vector<NDArray> in = get(s.in, false), aux_in = get(s.aux, false);
      in.insert(in.end(), aux_in.begin(), aux_in.end());
      if (s.kind == StepKind::kBackward) {
        const std::vector<NDArray> out_grad = get(s.out_grad, true), out = get(s.out, true),
                                   in_grad = get(s.in_grad, false);
        s.call = s.op->PrepareBackward(out_grad, in, out, in_grad, s.req, true);
        s.call_infer = s.op->PrepareBackward(out_grad, in, out, in_grad, s.req, false);
      } else {
        const std::vector<NDArray> out = get(s.out, true);
        s.call = s.op->PrepareForward(in, out, s.req, true, &s.ctx);
        if (s.kind == StepKind::kForward)
          s.call_infer = s.op->PrepareForward(in, out, s.req, false, &s.ctx);
      }
    } catch (const Error& e) {
      const std::string where = s.node == kNone ? "" : " of " + graph[s.node].node->Describe();
      throw Error("bind: " + std::string(KindName(s.kind)) + " step" + where + ": " + e.what(),
                  e.code());
    }
  }
}

// Note [Reading in place]
// Module.predict and score feed batch after batch to an executor that is not training. Copying
// each batch into the bound data argument costs a pass over the batch that the first layer
// repeats at once (the MLP of examples/train predicts 4.5% faster without it), so Forward can be
// given the batch's arrays: the steps that read an argument are pushed as copies of their calls
// that read the given array (ImperativeOp::WithInputs), and the engine orders them by that
// array's variable. The bound argument keeps its contents; the module copies the last batch into
// it when its loop ends, which leaves what MXNet's copy-every-batch leaves. An array that shares
// storage with one of the executor's own (an output fed back as input) is copied in as before,
// so that no step reads memory that a step of the same pass writes.
void Executor::Forward(bool is_train, const std::vector<NDArray>& reading) {
  const Plan& p = *plan_;
  if (!reading.empty() && reading.size() != args_.size())
    throw Error("forward: expected one array or none per argument (" +
                    detail::JoinNames(symbol_.ListArguments()) + "), got " +
                    std::to_string(reading.size()),
                kMXPInvalidArgument);
  for (size_t i = 0; i < reading.size(); ++i) {
    const NDArray& a = reading[i];
    if (!a.is_none() && (a.shape() != args_[i].shape() || a.dtype() != args_[i].dtype() ||
                         a.ctx() != args_[i].ctx()))
      throw Error("forward: argument '" + symbol_.ListArguments()[i] + "' is bound to " +
                      args_[i].Describe() + " on " + args_[i].ctx().ToString() + ", given " +
                      a.Describe() + " on " + a.ctx().ToString(),
                  kMXPInvalidArgument);
  }
  std::vector<std::pair<uint32_t, NDArray>> instead;  // (buffer, the array read in its place)
  for (size_t i = 0; i < reading.size(); ++i) {
    const NDArray& a = reading[i];
    if (a.is_none()) continue;
    const bool owned = std::any_of(p.arrays.begin(), p.arrays.end(), [&](const NDArray& b) {
      return !b.is_none() && a.SharesStorageWith(b);
    });
    if (owned)
      NDArray::Copy(a, args_[i]);
    else
      instead.emplace_back(p.arg_entry[i], a);
  }
  ImperativeOp::Segments segments(is_train ? p.segment.train_forward : p.segment.inference);
  for (size_t i = 0; i < p.num_forward; ++i) {
    const Plan::Step& s = p.steps[i];
    if (s.kind == StepKind::kCopy) {  // between contexts: a function of its own
      segments.Flush();
      const NDArray* from = &p.arrays[s.in[0]];
      for (const auto& [b, a] : instead)
        if (b == s.in[0]) from = &a;
      NDArray::Copy(*from, p.arrays[s.out[0]]);
      continue;
    }
    std::shared_ptr<const ImperativeOp::Call> call = is_train ? s.call : s.call_infer;
    std::vector<std::pair<size_t, NDArray>> inputs;
    for (size_t k = 0; k < s.in.size(); ++k)
      for (const auto& [b, a] : instead)
        if (s.in[k] == b) inputs.emplace_back(k, a);
    segments.Add(inputs.empty() ? call : ImperativeOp::WithInputs(call, inputs));
    if (monitor_) {
      segments.Flush();
      Monitor(static_cast<uint32_t>(i), false);
    }
  }
  segments.Flush();
}

void Executor::SetMonitor(bool on, bool monitor_all) {
  monitor_ = on;
  monitor_all_ = on && monitor_all;
  monitored_.clear();
}

std::vector<std::pair<std::string, NDArray>> Executor::TakeMonitored() {
  std::vector<std::pair<std::string, NDArray>> taken;
  taken.swap(monitored_);
  return taken;
}

void Executor::Monitor(uint32_t step, bool backward) {
  const Plan& p = *plan_;
  const Plan::Step& s = p.steps[step];
  const Node& node = *p.graph[s.node].node;
  auto keep = [&](const std::string& name, uint32_t b) {
    if (b == kNone || p.arrays[b].is_none()) return;
    NDArray copy(p.arrays[b].shape(), p.arrays[b].ctx(), p.arrays[b].dtype());
    NDArray::Copy(p.arrays[b], copy);
    monitored_.emplace_back(name, std::move(copy));
  };
  // MXNet's names: a single output is "output", several are numbered (the backward node's).
  auto numbered = [&](const std::string& what, size_t i, size_t n) {
    return node.name + "_backward_" + what + (n == 1 ? "" : std::to_string(i));
  };
  if (!backward) {
    const std::vector<std::string>& inputs = s.op->input_names();
    if (monitor_all_)
      for (size_t k = 0; k < s.in.size() && k < inputs.size(); ++k)
        keep(node.name + "_" + inputs[k], s.in[k]);
    for (size_t k = 0; k < s.out.size(); ++k)
      keep(node.OutputName(static_cast<uint32_t>(k)), s.out[k]);
    return;
  }
  if (monitor_all_) {
    std::vector<uint32_t> read(s.out_grad);
    read.insert(read.end(), s.in.begin(), s.in.end());
    for (size_t k = 0; k < read.size(); ++k) keep(numbered("input", k, 2), read[k]);
  }
  for (size_t k = 0; k < s.in_grad.size(); ++k)
    keep(numbered("output", k, s.in_grad.size()), s.in_grad[k]);
}

void Executor::Backward(const std::vector<NDArray>& out_grads, bool is_train) {
  const Plan& p = *plan_;
  const IndexedGraph& g = p.graph;
  if (!out_grads.empty() && out_grads.size() != g.outputs().size())
    throw Error(
        "backward: expected " + std::to_string(g.outputs().size()) +
            " output gradients (one per output: " + detail::JoinNames(symbol_.ListOutputs()) +
            "), got " + std::to_string(out_grads.size()),
        kMXPInvalidArgument);
  for (uint32_t i : p.head_steps) {
    const Plan::Step& s = p.steps[i];
    const uint32_t h = s.head, b = s.out[0];
    const std::string name = p.BufferName(g.outputs()[h]);
    if (out_grads.empty() || out_grads[h].is_none())
      throw Error("backward: output '" + name +
                      "' does not come from a loss op, so its gradient must be given "
                      "(or make it a loss with make_loss)",
                  kMXPInvalidArgument);
    if (out_grads[h].shape() != p.shapes[b] || out_grads[h].dtype() != p.dtypes[b])
      throw Error("backward: the gradient of output '" + name + "' is " + out_grads[h].Describe() +
                      ", expected " + p.shapes[b].ToString() + " " + DTypeName(p.dtypes[b]),
                  kMXPInvalidArgument);
  }
  ImperativeOp::Segments segments(is_train ? p.segment.train_backward : p.segment.inference);
  for (size_t i = p.num_forward; i < p.steps.size(); ++i) {
    const Plan::Step& s = p.steps[i];
    if (s.kind == StepKind::kCopy) {
      segments.Flush();
      NDArray::Copy(p.arrays[s.in[0]], p.arrays[s.out[0]]);
      continue;
    }
    if (s.kind != StepKind::kHead) {
      segments.Add(is_train || !s.call_infer ? s.call : s.call_infer);
      if (monitor_ && s.kind == StepKind::kBackward) {
        segments.Flush();
        Monitor(static_cast<uint32_t>(i), true);
      }
      continue;
    }
    segments.Flush();  // the copy is a function of its own, after the steps before it
    if (s.call) {
      NDArray::Copy(out_grads[s.head], p.arrays[s.in[0]]);
      ImperativeOp::Push(s.call);
    } else {
      NDArray::Copy(out_grads[s.head], p.arrays[s.out[0]]);
    }
  }
  segments.Flush();
}

std::string Executor::DebugStr() const {
  const Plan& p = *plan_;
  std::ostringstream os;
  auto list = [&](const std::vector<uint32_t>& ids) {
    std::string s;
    for (uint32_t b : ids) {
      if (b == kNone) continue;
      s += (s.empty() ? "" : ", ") + p.BufferName(b);
      if (p.storage[b] >= 0) s += "@" + std::to_string(p.storage[b]);
    }
    return s;
  };
  os << "Symbol outputs: " << detail::JoinNames(symbol_.ListOutputs()) << "\n";
  for (const Plan::Step& s : p.steps) {
    os << KindName(s.kind) << " "
       << (s.op                        ? s.op->name()
           : s.kind == StepKind::kCopy ? "to " + s.ctx.ToString()
                                       : std::string("copy of the given gradient"));
    if (s.node != kNone) os << " '" << p.graph[s.node].node->name << "'";
    const bool backward = s.kind == StepKind::kBackward;
    os << "\n  reads: " << list(s.in) << (s.aux.empty() ? "" : "; aux: " + list(s.aux));
    if (backward) os << "; outputs: " << list(s.out) << "; output gradients: " << list(s.out_grad);
    os << "\n  writes: " << list(backward ? s.in_grad : s.out) << "\n";
  }
  auto mb = [](size_t b) { return std::to_string(b / 1048576.0).substr(0, 6); };
  os << "Memory: planned " << memory_.planned << " bytes (" << mb(memory_.planned) << " MB), naive "
     << memory_.naive << " bytes (" << mb(memory_.naive) << " MB); in place " << memory_.inplace
     << " bytes, shared " << memory_.shared << " bytes\n";
  return os.str();
}

}  // namespace mxplug
