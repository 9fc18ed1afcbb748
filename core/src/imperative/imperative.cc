#include "mxplug/imperative.h"

#include <algorithm>
#include <chrono>
#include <unordered_map>
#include <utility>

#include "mxplug/error.h"
#include "mxplug/resource.h"
#include "mxplug/runtime.h"
#include "operator/kernel_call.h"

namespace mxplug {

namespace {

using detail::CallList;

template <typename Vars, typename Arrays>
void AddVars(Vars* vars, const Arrays& arrays) {
  for (const NDArray& a : arrays)
    if (!a.is_none()) vars->push_back(a.var());
}

}  // namespace

// Everything one pushed kernel call holds on to: the arrays (whose chunks keep the memory
// alive until the call has run), the kernel, the resources it was granted, the engine variables
// it reads and writes, and the kernel's views of the arrays (made once: the arrays are fixed;
// WithInputs makes a changed copy).
struct ImperativeOp::Call {
  // Written out so that make_shared's value-initialisation does not first zero the whole object
  // (several kilobytes of inline lists) only for the members to be initialised again.
  Call() {}  // NOLINT(modernize-use-equals-default)

  std::shared_ptr<const Kernel> kernel;
  Context ctx;
  bool is_train = false, backward = false;
  const char* name = "";
  CallList<NDArray> in, out, aux, out_grad, in_grad;
  CallList<int32_t> req;
  CallList<const MXPResource*> requested;
  CallList<VarHandle> resource_vars, reads, writes;
  detail::KernelViews views;
  // A CPU call on few elements: pushed FnProperty::kInline once its kernel RunsInline (Note
  // [Inline functions]).
  bool small = false;

  // What it reads (the inputs; backward also the outputs and their gradients), and the kernel's
  // views of its arrays. Absent tensors (what backward does not read, gradients not asked for)
  // cross as empty views.
  void SetReadsAndViews() {
    reads.clear();
    AddVars(&reads, in);
    if (backward) {
      AddVars(&reads, out);
      AddVars(&reads, out_grad);
    }
    detail::SetViews(&views.in, in);
    detail::SetViews(&views.out, out);
    detail::SetViews(&views.aux, aux);
    detail::SetViews(&views.out_grad, out_grad);
    detail::SetViews(&views.in_grad, in_grad);
    views.req = req;
  }

  // The resources a MXPResourceKind mask asks for, on this call's device.
  void Grant(uint32_t mask) {
    for (auto [kind, get] : {std::pair{kMXPResourceTempSpace, &Resources::TempSpace},
                             std::pair{kMXPResourceRandom, &Resources::Random}}) {
      if (!(mask & kind)) continue;
      ResourceHandle r;
      try {
        r = get(ctx);
      } catch (const Error& e) {  // a resource setting it cannot read (MXNET_CPU_TEMP_COPY=0)
        throw Error(std::string(name) + ": " + e.what(), e.code());
      }
      requested.push_back(r.resource);
      resource_vars.push_back(r.var);
    }
  }
};

// Note [Spare call]
// A call's block keeps its lists inline (a dozen arrays, their views, requests and variables:
// kilobytes), past what malloc serves from its per-thread cache, so every imperative call paid
// a trip into malloc's arena for it and another to free it. When Invoke returns, the call it ran
// at once (Note [Free variables]) has no other holder: it is emptied and kept as the thread's
// spare, and the thread's next call is made in it.
namespace {

thread_local std::shared_ptr<ImperativeOp::Call> tls_spare_call;

std::shared_ptr<ImperativeOp::Call> NewCall() {
  std::shared_ptr<ImperativeOp::Call>& spare = tls_spare_call;  // one thread-local lookup
  if (spare) return std::move(spare);
  return std::make_shared<ImperativeOp::Call>();
}

void KeepAsSpare(std::shared_ptr<const ImperativeOp::Call>&& done) {
  std::shared_ptr<ImperativeOp::Call>& spare = tls_spare_call;
  if (done.use_count() != 1 || spare) return;  // a function still holds it
  std::shared_ptr<ImperativeOp::Call> call =
      std::const_pointer_cast<ImperativeOp::Call>(std::move(done));  // made non-const by NewCall
  ImperativeOp::Call* c = call.get();
  c->~Call();  // its arrays, kernel and any lists that outgrew their inline room go
  new (c) ImperativeOp::Call();
  spare = std::move(call);
}

std::string CacheKey(const std::string& name, const KwArgs& kwargs) {
  std::string key = name;
  for (const auto& [k, v] : kwargs) key.append(1, '\0').append(k).append(1, '\0').append(v);
  return key;
}

}  // namespace

std::shared_ptr<const ImperativeOp> ImperativeOp::Get(const std::string& name,
                                                      const KwArgs& kwargs) {
  // Distinct kwargs are few in practice (a model's layers); bound the cache all the same.
  constexpr size_t kMaxCached = 4096;
  static std::mutex mu;
  static auto* cache = new std::unordered_map<std::string, std::shared_ptr<const ImperativeOp>>();
  std::string key = CacheKey(name, kwargs);
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache->find(key);
    if (it != cache->end()) return it->second;
  }
  auto op = std::make_shared<const ImperativeOp>(Runtime::Get().GetOp(name), kwargs);
  std::lock_guard<std::mutex> lock(mu);
  if (cache->size() >= kMaxCached) cache->clear();
  return cache->emplace(std::move(key), std::move(op)).first->second;
}

std::shared_ptr<const ImperativeOp> ImperativeOp::Copy(const std::string& who) {
  if (!Runtime::Get().ops().Contains("_copy"))
    throw Error(who +
                    " needs the op '_copy' (the tensor plugin) to sum arrays, which no loaded "
                    "plugin registers",
                kMXPNotFound);
  return Get("_copy", {});
}

ImperativeOp::ImperativeOp(std::shared_ptr<const OpEntry> entry, const KwArgs& kwargs)
    : property_(std::move(entry), kwargs), kwargs_(kwargs) {
  input_names_ = property_.ListArguments();
  num_arguments_ = input_names_.size();
  for (std::string& aux : property_.ListAuxiliaryStates()) input_names_.push_back(std::move(aux));
  output_names_ = property_.ListOutputs();
  num_visible_outputs_ = property_.NumVisibleOutputs();
  forward_inplace_ = property_.InplaceOption(kMXPPhaseForward);
}

std::shared_ptr<const Kernel> ImperativeOp::KernelFor(Context ctx) const {
  // The first device's kernel, set once, is read without the lock: an op runs on one device in
  // almost every script, and this is on every call's path.
  if (first_kernel_known_.load(std::memory_order_acquire) && first_kernel_ctx_ == ctx)
    return first_kernel_;
  std::lock_guard<std::mutex> lock(kernels_mu_);
  for (const auto& [c, k] : kernels_)
    if (c == ctx) return k;
  Runtime& rt = Runtime::Get();
  std::shared_ptr<const KernelEntry> entry = rt.FindKernel(name(), ctx.dev_type);
  if (!entry) {
    std::string have;
    for (const auto& k : rt.KernelsOf(name()))
      have += (have.empty() ? "" : ", ") + DeviceTypeName(k->device_type);
    throw Error(name() + " has no kernel for " + DeviceTypeName(ctx.dev_type) +
                    "; kernels exist for: " + (have.empty() ? "no device" : have),
                kMXPNotFound);
  }
  auto kernel = std::make_shared<const Kernel>(entry, kwargs_, ctx);
  kernels_.emplace_back(ctx, kernel);
  if (kernels_.size() == 1) {
    first_kernel_ctx_ = ctx;
    first_kernel_ = kernel;
    first_kernel_known_.store(true, std::memory_order_release);
  }
  return kernel;
}

// Arrays in pinned host memory count as on the CPU, and so does the result (MXNet: a non-default
// context does not propagate), so outputs of ops on pinned arrays are ordinary CPU arrays.
Context ImperativeOp::CommonContext(const std::vector<NDArray>& arrays, const char* what) const {
  Context first;
  bool found = false;
  for (size_t i = 0; i < arrays.size(); ++i) {
    if (arrays[i].is_none()) continue;
    if (!found) {
      first = arrays[i].ctx(), found = true;
    } else if (arrays[i].ctx().Compute() != first.Compute()) {
      const std::string n =
          i < input_names_.size() ? "'" + input_names_[i] + "'" : std::to_string(i);
      throw Error(name() + ": " + what + " " + n + " is on " + arrays[i].ctx().ToString() +
                      " but the first is on " + first.ToString() + "; all must be on one device",
                  kMXPInvalidArgument);
    }
  }
  return first.Compute();
}

void ImperativeOp::Invoke(const std::vector<NDArray>& inputs, std::vector<NDArray>* outputs,
                          bool is_train, const std::vector<OpReqType>& req,
                          const Context* no_input_ctx) const {
  InvokeTaking(inputs, nullptr, outputs, is_train, req, no_input_ctx);
}

void ImperativeOp::Invoke(std::vector<NDArray>&& inputs, std::vector<NDArray>* outputs,
                          bool is_train, const std::vector<OpReqType>& req,
                          const Context* no_input_ctx) const {
  InvokeTaking(inputs, &inputs, outputs, is_train, req, no_input_ctx);
}

void ImperativeOp::InvokeTaking(const std::vector<NDArray>& inputs, std::vector<NDArray>* taken,
                                std::vector<NDArray>* outputs, bool is_train,
                                const std::vector<OpReqType>& req,
                                const Context* no_input_ctx) const {
  std::vector<std::pair<size_t, NDArray>> copy_back;
  std::shared_ptr<const Call> call =
      Prepare(inputs, outputs, is_train, req, no_input_ctx, &copy_back, taken);
  Push(call);
  KeepAsSpare(std::move(call));
  for (auto& [j, target] : copy_back) {
    NDArray::Copy((*outputs)[j], target);
    (*outputs)[j] = target;
  }
}

std::shared_ptr<const ImperativeOp::Call> ImperativeOp::PrepareForward(
    const std::vector<NDArray>& inputs, const std::vector<NDArray>& outputs,
    const std::vector<OpReqType>& req, bool is_train, const Context* ctx) const {
  std::vector<NDArray> given = outputs;
  if (given.size() != output_names_.size())
    throw Error(name() + ": expected " + std::to_string(output_names_.size()) + " outputs (" +
                    detail::JoinNames(output_names_) + "), got " + std::to_string(given.size()),
                kMXPInvalidArgument);
  for (size_t j = 0; j < given.size(); ++j)
    if (given[j].is_none())
      throw Error(name() + ": output '" + output_names_[j] + "' is missing", kMXPInvalidArgument);
  return Prepare(inputs, &given, is_train, req, ctx, nullptr);
}

// Note [Inference cache]
// A call's output shapes, dtypes and resource requests follow from its inputs' shapes and dtypes
// and the shapes and dtypes of the outputs it was given, for an op of fixed kwargs. The last few
// signatures' results are kept, so that a loop calling one op on arrays of one shape asks the
// plugin (InferShape, InferType, the resource requests: calls across the ABI that list names
// and convert shapes) once. A signature that fails inference throws and is not kept.
bool ImperativeOp::Inferred::Matches(const std::vector<NDArray>& inputs,
                                     const std::vector<NDArray>& outputs) const {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].dtype() != in_types[i] || inputs[i].shape() != in_shapes[i]) return false;
  for (size_t j = 0; j < outputs.size(); ++j) {
    if (outputs[j].is_none() != !given_out[j]) return false;
    if (!outputs[j].is_none() &&
        (outputs[j].dtype() != out_types[j] || outputs[j].shape() != out_shapes[j]))
      return false;
  }
  return true;
}

std::shared_ptr<const ImperativeOp::Inferred> ImperativeOp::Infer(
    const std::vector<NDArray>& inputs, const std::vector<NDArray>& outputs) const {
  constexpr size_t kKept = 8;
  {
    std::lock_guard<std::mutex> lock(kernels_mu_);
    for (const auto& entry : inferred_)
      if (entry->Matches(inputs, outputs)) return entry;
  }
  const size_t nin = input_names_.size(), nout = output_names_.size();
  // Shapes and dtypes: inputs fixed, outputs from the given arrays where there are any.
  std::vector<TShape> in_s(num_arguments_), out_s(nout), aux_s(nin - num_arguments_);
  std::vector<int> in_t(num_arguments_), out_t(nout, kMXPUnknownDType), aux_t(nin - num_arguments_);
  for (size_t i = 0; i < nin; ++i) {
    (i < num_arguments_ ? in_s[i] : aux_s[i - num_arguments_]) = inputs[i].shape();
    (i < num_arguments_ ? in_t[i] : aux_t[i - num_arguments_]) = inputs[i].dtype();
  }
  for (size_t i = 0; i < nout; ++i)
    if (!outputs[i].is_none()) out_s[i] = outputs[i].shape(), out_t[i] = outputs[i].dtype();
  const std::vector<TShape> given_in = in_s;
  auto entry = std::make_shared<Inferred>();
  std::lock_guard<std::mutex> lock(kernels_mu_);
  // The plugin's property instance remembers the last shapes (for its resource requests).
  bool complete = property_.InferShape(&in_s, &out_s, &aux_s);
  for (const TShape& s : out_s) complete = complete && s.IsKnown();
  if (!complete)
    throw Error(
        name() + ": cannot infer output shapes from input shapes " + detail::ShapeList(given_in),
        kMXPInvalidArgument);
  if (!property_.InferType(&in_t, &out_t, &aux_t))
    throw Error(name() + ": cannot infer output dtypes", kMXPInvalidArgument);
  entry->resources = property_.Resources(kMXPPhaseForward);
  for (size_t j = 0; j < nout; ++j)
    CheckSizeFits(out_s[j], out_t[j], name() + ": output '" + output_names_[j] + "'");
  for (size_t i = 0; i < nin; ++i) {
    const TShape& inferred = i < num_arguments_ ? in_s[i] : aux_s[i - num_arguments_];
    const int dtype = i < num_arguments_ ? in_t[i] : aux_t[i - num_arguments_];
    if (inferred != inputs[i].shape())
      throw Error(name() + ": input '" + input_names_[i] + "' has shape " +
                      inputs[i].shape().ToString() + ", expected " + inferred.ToString(),
                  kMXPInvalidArgument);
    if (dtype != inputs[i].dtype())
      throw Error(name() + ": input '" + input_names_[i] + "' has dtype " +
                      DTypeName(inputs[i].dtype()) + ", expected " + DTypeName(dtype),
                  kMXPInvalidArgument);
    entry->in_shapes.push_back(inputs[i].shape());
    entry->in_types.push_back(dtype);
  }
  for (size_t j = 0; j < nout; ++j) entry->given_out.push_back(!outputs[j].is_none());
  entry->out_shapes = std::move(out_s);
  entry->out_types = std::move(out_t);
  if (inferred_.size() >= kKept) inferred_.erase(inferred_.begin());
  inferred_.push_back(entry);
  return entry;
}

std::shared_ptr<ImperativeOp::Call> ImperativeOp::Prepare(
    const std::vector<NDArray>& inputs, std::vector<NDArray>* outputs, bool is_train,
    const std::vector<OpReqType>& req, const Context* no_input_ctx,
    std::vector<std::pair<size_t, NDArray>>* copy_back, std::vector<NDArray>* taken) const {
  const size_t nin = input_names_.size(), nout = output_names_.size();
  if (inputs.size() != nin)
    throw Error(name() + ": expected " + std::to_string(nin) + " inputs (" +
                    detail::JoinNames(input_names_) + "), got " + std::to_string(inputs.size()),
                kMXPInvalidArgument);
  for (size_t i = 0; i < nin; ++i)
    if (inputs[i].is_none())
      throw Error(name() + ": input '" + input_names_[i] + "' is missing", kMXPInvalidArgument);
  CheckAuxWritable(inputs);
  if (outputs->empty()) outputs->resize(nout);
  if (outputs->size() != nout)
    throw Error(name() + ": expected " + std::to_string(nout) + " outputs (" +
                    detail::JoinNames(output_names_) + "), got " + std::to_string(outputs->size()),
                kMXPInvalidArgument);
  if (!req.empty() && req.size() != nout)
    throw Error(name() + ": expected one request per output", kMXPInvalidArgument);
  // Without inputs, as MXNet's Imperative::GetContext: the given context, else the first given
  // output's (`nd.zeros(..., out=gpu_array)`), else the CPU.
  Context ctx = Context::CPU();
  if (nin != 0)
    ctx = CommonContext(inputs, "input");
  else if (no_input_ctx)
    ctx = *no_input_ctx;
  else if (!(*outputs)[0].is_none())
    ctx = (*outputs)[0].ctx();
  if (nin == 0) Runtime::Get().CheckContext(ctx);

  const std::shared_ptr<const Inferred> inferred = Infer(inputs, *outputs);
  const std::vector<TShape>& out_s = inferred->out_shapes;
  const std::vector<int>& out_t = inferred->out_types;
  const uint32_t resources = inferred->resources;

  std::shared_ptr<Call> call = NewCall();
  call->ctx = ctx.Compute();  // outputs of an op without inputs may live in pinned host memory
  call->is_train = is_train;
  const auto first_aux = static_cast<std::ptrdiff_t>(num_arguments_);
  if (taken) {  // the caller's own list, given up: moved, not counted again and released
    call->in.assign(std::make_move_iterator(taken->begin()),
                    std::make_move_iterator(taken->begin() + first_aux));
    call->aux.assign(std::make_move_iterator(taken->begin() + first_aux),
                     std::make_move_iterator(taken->end()));
  } else {
    call->in.assign(inputs.begin(), inputs.begin() + first_aux);
    call->aux.assign(inputs.begin() + first_aux, inputs.end());
  }
  const auto& args = call->in;  // `inputs` may have been moved from
  call->req.resize(nout, kWriteTo);
  // Outputs the op may not write in place over an input go through a temporary.
  for (size_t j = 0; j < nout; ++j) {
    NDArray& o = (*outputs)[j];
    if (!req.empty()) call->req[j] = req[j];
    if (o.is_none()) {
      o = NDArray(out_s[j], ctx, out_t[j]);
    } else {
      o.CheckWritable(name() + ": output '" + output_names_[j] + "'");
      if (o.shape() != out_s[j])
        throw Error(name() + ": output '" + output_names_[j] + "' has shape " +
                        o.shape().ToString() + ", expected " + out_s[j].ToString(),
                    kMXPInvalidArgument);
      if (o.dtype() != out_t[j])
        throw Error(name() + ": output '" + output_names_[j] + "' has dtype " +
                        DTypeName(o.dtype()) + ", expected " + DTypeName(out_t[j]),
                    kMXPInvalidArgument);
      if (o.ctx().Compute() != ctx.Compute())
        throw Error(name() + ": output '" + output_names_[j] + "' is on " + o.ctx().ToString() +
                        ", the inputs on " + ctx.ToString(),
                    kMXPInvalidArgument);
    }
    for (size_t i = 0; i < num_arguments_; ++i) {
      if (!args[i].SharesStorageWith(o)) continue;
      // Exactly over the input (a reshape may change the shape, not the bytes).
      bool allowed = args[i].data() == o.data() && args[i].shape().Size() == o.shape().Size() &&
                     args[i].dtype() == o.dtype();
      bool declared = false;
      for (const MXPInplacePair& p : forward_inplace_)
        declared |=
            p.src_index == static_cast<int32_t>(i) && p.dst_index == static_cast<int32_t>(j);
      if (allowed && declared) continue;
      if (!copy_back)
        throw Error(name() + ": output '" + output_names_[j] + "' shares memory with input '" +
                        input_names_[i] + "', which the op does not allow in place",
                    kMXPInvalidArgument);
      NDArray temp(out_s[j], ctx, out_t[j]);
      if (call->req[j] == kAddTo) NDArray::Copy(o, temp);
      copy_back->emplace_back(j, o);
      o = temp;
      break;
    }
  }
  call->out.assign(outputs->begin(), outputs->end());
  Finish(call.get(), resources);
  return call;
}

void ImperativeOp::Backward(const std::vector<NDArray>& out_grads,
                            const std::vector<NDArray>& inputs, const std::vector<NDArray>& outputs,
                            std::vector<NDArray>* in_grads,
                            const std::vector<OpReqType>& req) const {
  std::shared_ptr<const Call> call =
      PrepareGradient(out_grads, inputs, outputs, in_grads, req, true);
  Push(call);
  KeepAsSpare(std::move(call));
}

std::shared_ptr<const ImperativeOp::Call> ImperativeOp::PrepareBackward(
    const std::vector<NDArray>& out_grads, const std::vector<NDArray>& inputs,
    const std::vector<NDArray>& outputs, const std::vector<NDArray>& in_grads,
    const std::vector<OpReqType>& req, bool is_train) const {
  std::vector<NDArray> given = in_grads;
  return PrepareGradient(out_grads, inputs, outputs, &given, req, is_train);
}

std::shared_ptr<ImperativeOp::Call> ImperativeOp::PrepareGradient(
    const std::vector<NDArray>& out_grads, const std::vector<NDArray>& inputs,
    const std::vector<NDArray>& outputs, std::vector<NDArray>* in_grads,
    const std::vector<OpReqType>& req, bool is_train) const {
  const size_t nin = input_names_.size(), nout = output_names_.size();
  if (out_grads.size() != nout || inputs.size() != nin || outputs.size() != nout)
    throw Error(name() + " backward: expected " + std::to_string(nout) + " output gradients, " +
                    std::to_string(nin) + " inputs and " + std::to_string(nout) + " outputs, got " +
                    std::to_string(out_grads.size()) + ", " + std::to_string(inputs.size()) +
                    " and " + std::to_string(outputs.size()),
                kMXPInvalidArgument);
  if (in_grads->empty()) in_grads->resize(num_arguments_);
  if (in_grads->size() != num_arguments_ || (!req.empty() && req.size() != num_arguments_))
    throw Error(name() + " backward: expected one gradient and request per argument (" +
                    std::to_string(num_arguments_) + ")",
                kMXPInvalidArgument);
  // Backward may read no input at all (elemwise_add's gradient): its device is that of any array.
  std::vector<NDArray> all = inputs;
  for (const auto* list :
       {&out_grads, &outputs, static_cast<const std::vector<NDArray>*>(in_grads)})
    all.insert(all.end(), list->begin(), list->end());
  const Context ctx = CommonContext(all, "array");
  CheckAuxWritable(inputs);
  std::shared_ptr<Call> call = NewCall();
  call->ctx = ctx;
  call->is_train = is_train;
  call->req.resize(num_arguments_, kWriteTo);
  for (size_t i = 0; i < num_arguments_; ++i) {
    if (!req.empty()) call->req[i] = req[i];
    NDArray& g = (*in_grads)[i];
    if (g.is_none() && call->req[i] != kNullOp) {
      if (inputs[i].is_none())
        throw Error(name() + " backward: gradient of '" + input_names_[i] +
                        "' is asked for but neither it nor "
                        "its input is given",
                    kMXPInvalidArgument);
      g = NDArray(inputs[i].shape(), ctx, inputs[i].dtype());
    }
    if (!g.is_none() && call->req[i] != kNullOp)
      g.CheckWritable(name() + " backward: gradient of '" + input_names_[i] + "'");
    if (!g.is_none() && !inputs[i].is_none() && g.shape() != inputs[i].shape())
      throw Error(name() + " backward: gradient of '" + input_names_[i] + "' has shape " +
                      g.shape().ToString() + ", expected " + inputs[i].shape().ToString(),
                  kMXPInvalidArgument);
  }
  call->in.assign(inputs.begin(), inputs.begin() + static_cast<std::ptrdiff_t>(num_arguments_));
  call->aux.assign(inputs.begin() + static_cast<std::ptrdiff_t>(num_arguments_), inputs.end());
  call->out.assign(outputs.begin(), outputs.end());
  call->out_grad.assign(out_grads.begin(), out_grads.end());
  call->in_grad.assign(in_grads->begin(), in_grads->end());
  uint32_t resources;
  {
    std::lock_guard<std::mutex> lock(kernels_mu_);
    resources = property_.Resources(kMXPPhaseBackward);
  }
  call->backward = true;
  Finish(call.get(), resources);
  return call;
}

void ImperativeOp::CheckAuxWritable(const std::vector<NDArray>& inputs) const {
  // Auxiliary states are updated in place (BatchNorm's moving statistics).
  for (size_t i = num_arguments_; i < inputs.size(); ++i)
    if (!inputs[i].is_none())
      inputs[i].CheckWritable(name() + ": auxiliary state '" + input_names_[i] + "'");
}

void ImperativeOp::Finish(Call* call, uint32_t resources) const {
  call->name = name().c_str();
  call->Grant(resources);
  call->kernel = KernelFor(call->ctx);
  // Auxiliary states are updated in place (BatchNorm's moving statistics).
  AddVars(&call->writes, call->aux);
  AddVars(&call->writes, call->backward ? call->in_grad : call->out);
  call->writes.insert(call->writes.end(), call->resource_vars.begin(), call->resource_vars.end());
  call->SetReadsAndViews();
  // Note [Inline functions] in the threaded engine: a CPU call on this few elements costs less
  // than its hop to a worker (a 1-element add: its kernel well under 1 us, the hop several), once
  // its kernel has shown that it is quick (Kernel::RunsInline).
  constexpr int64_t kInlineElements = 4096;
  int64_t elements = 0;
  for (const auto* list : {&call->in, &call->out, &call->aux, &call->out_grad, &call->in_grad})
    for (const NDArray& a : *list) elements += std::max<int64_t>(a.shape().Size(), 0);
  call->small =
      call->ctx.IsHost() && elements <= kInlineElements && !call->kernel->entry().asynchronous();
}

std::shared_ptr<const ImperativeOp::Call> ImperativeOp::WithInputs(
    const std::shared_ptr<const Call>& call,
    const std::vector<std::pair<size_t, NDArray>>& inputs) {
  auto changed = std::make_shared<Call>(*call);
  for (const auto& [i, array] : inputs) changed->in.at(i) = array;
  // Every view again, not only the changed ones: a view points into its array's shape, and the
  // copied arrays are this call's own.
  changed->SetReadsAndViews();
  return changed;
}

namespace {
void Run(const ImperativeOp::Call& call, const RunContext& rctx) {
  MXPKernelArgs args = call.views.Args(call.is_train, call.ctx, call.requested, rctx.stream);
  // A small call of a kernel not yet known to be quick is timed (Note [Inline functions]).
  const bool timed = call.small && !call.kernel->RunsInline();
  const auto start =
      timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
  if (call.backward)
    call.kernel->Backward(args);
  else
    call.kernel->Forward(args);
  if (timed)
    call.kernel->NoteSmallRun(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}
}  // namespace

// Note [Asynchronous kernels]
// A kernel whose work waits for other engine work cannot hold an engine worker while it waits:
// the CPU has one worker by default (as MXNet), so the work it waits for would never run. The
// Python binding's Custom op is such a kernel: its Python code pushes ops and waits for them.
// A kernel registered asynchronous (MXPKernelDef::asynchronous) starts its work and returns;
// the host pushes it as an asynchronous engine function, whose variables stay taken until the
// kernel's on_complete, and which holds the call (its arrays, resources and views) until then.
// It runs alone: a segment that joined it with other kernels would end before it does.
namespace {
struct AsyncCompletion {
  std::shared_ptr<const ImperativeOp::Call> call;  // what the kernel's args point into
  CallbackOnComplete done;

  static void OnComplete(void* token, MXPStatus* error) {
    std::unique_ptr<AsyncCompletion> self(static_cast<AsyncCompletion*>(token));
    self->done(error ? self->call->kernel->Failure(error, self->call->backward) : nullptr);
  }
};

void RunAsync(const std::shared_ptr<const ImperativeOp::Call>& call, const RunContext& rctx,
              CallbackOnComplete done) {
  MXPKernelArgs args = call->views.Args(call->is_train, call->ctx, call->requested, rctx.stream);
  auto* completion = new AsyncCompletion{call, done};
  args.on_complete = &AsyncCompletion::OnComplete;
  args.on_complete_token = completion;
  try {
    if (call->backward)
      call->kernel->Backward(args);
    else
      call->kernel->Forward(args);
  } catch (...) {  // it started nothing: the completion is not going to be called
    delete completion;
    done(std::current_exception());
  }
}
}  // namespace

void ImperativeOp::Push(const std::shared_ptr<const Call>& call) {
  if (call->kernel->entry().asynchronous()) {
    Engine::Get()->PushAsync(
        [call](RunContext rctx, CallbackOnComplete done) { RunAsync(call, rctx, done); }, call->ctx,
        VarList(call->reads.data(), call->reads.size()),
        VarList(call->writes.data(), call->writes.size()), FnProperty::kNormal, 0, call->name);
    return;
  }
  const VarList reads(call->reads.data(), call->reads.size());
  const VarList writes(call->writes.data(), call->writes.size());
  const bool inline_call = call->small && call->kernel->RunsInline();
  Engine* engine = Engine::Get();
  // Note [Free variables] in the engine: run at once, without a function, if nothing waits.
  if (inline_call && engine->RunInlineIfFree(
                         [](void* c, RunContext rctx) { Run(*static_cast<const Call*>(c), rctx); },
                         const_cast<Call*>(call.get()), call->ctx, reads, writes, call->name))
    return;
  engine->PushSync([call](RunContext rctx) { Run(*call, rctx); }, call->ctx, reads, writes,
                   inline_call ? FnProperty::kInline : FnProperty::kNormal, 0, call->name);
}

// Note [Segments]
// Each engine function on an accelerator costs a dispatch, an event recorded on its stream and
// the bookkeeping of its variables' events (Note [Event completion]; the naive engine even
// synchronises the stream after each), so an executor that pushed every kernel alone would pay
// that per kernel. It pushes runs of consecutive steps on one device as one function instead
// (MXNet's bulk execution, MXNET_EXEC_BULK_EXEC_*): the function runs their kernels in order on
// its stream and leaves one event. The function writes every variable a call in it writes and reads
// the others its calls read; a value made and used inside the run orders nothing outside it, and
// the run's order is the graph's. A kernel that throws ends the function, and the error lands on
// everything it writes, as for any failed function. On the CPU there is no stream to wait for,
// and steps pushed alone may run in parallel where the graph allows, so CPU calls are not joined.
void ImperativeOp::Segments::Add(std::shared_ptr<const Call> call) {
  if (!open_.empty() && open_.front()->ctx != call->ctx) Flush();
  if (call->ctx.IsHost() || max_calls_ <= 1 || call->kernel->entry().asynchronous()) {
    Flush();
    Push(call);
    return;
  }
  open_.push_back(std::move(call));
  if (open_.size() >= max_calls_) Flush();
}

void ImperativeOp::Segments::Flush() {
  if (open_.empty()) return;
  std::vector<std::shared_ptr<const Call>> calls;
  calls.swap(open_);
  if (calls.size() == 1) return Push(calls.front());
  std::vector<VarHandle> reads, writes;
  for (const auto& c : calls) writes.insert(writes.end(), c->writes.begin(), c->writes.end());
  std::sort(writes.begin(), writes.end());
  writes.erase(std::unique(writes.begin(), writes.end()), writes.end());
  for (const auto& c : calls)
    for (VarHandle v : c->reads)
      if (!std::binary_search(writes.begin(), writes.end(), v)) reads.push_back(v);
  std::sort(reads.begin(), reads.end());
  reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
  const Context ctx = calls.front()->ctx;
  Engine::Get()->PushSync(
      [calls = std::move(calls)](RunContext rctx) {
        for (const auto& c : calls) Run(*c, rctx);
      },
      ctx, reads, writes, FnProperty::kNormal, 0, "ExecutorSegment");
}

}  // namespace mxplug
