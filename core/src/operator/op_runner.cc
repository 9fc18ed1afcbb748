#include "mxplug/op_runner.h"

#include "mxplug/runtime.h"
#include "registry/host_api.h"

namespace mxplug {

// Scratch memory for kMXPResourceTempSpace: one block, grown on demand and reused across calls.
struct OpRunner::TempSpace : detail::TempSpaceProvider {
  explicit TempSpace(Context c) : ctx(c) {
    resource.struct_size = sizeof(resource);
    resource.kind = kMXPResourceTempSpace;
    resource.handle = static_cast<detail::TempSpaceProvider*>(this);
  }
  void* Get(size_t bytes) override {
    if (!block || block->bytes() < bytes) block = Storage::Alloc(bytes, ctx);
    return block->data();
  }
  Context ctx;
  std::shared_ptr<Storage> block;
  MXPResource resource{};
};

namespace {

std::string Names(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "none" : s;
}

std::string Shapes(const std::vector<TShape>& shapes) {
  std::string s;
  for (const TShape& t : shapes) s += (s.empty() ? "" : ", ") + t.ToString();
  return "[" + s + "]";
}

std::vector<DLTensor> Views(const std::vector<Tensor>& tensors) {
  std::vector<DLTensor> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(t.ToDLTensor());
  return out;
}

// The tensor lists of one kernel call; they must outlive the MXPKernelArgs that point into them.
struct KernelViews {
  std::vector<DLTensor> in, out, aux, out_grad, in_grad;
  std::vector<int32_t> req;

  MXPKernelArgs Args(bool is_train, Context ctx, const std::vector<const MXPResource*>& requested) const {
    MXPKernelArgs a{};
    a.struct_size = sizeof(a);
    a.is_train = is_train ? 1 : 0;
    a.device = ctx.ToDLDevice();
    a.requested = requested.data();
    a.num_requested = requested.size();
    a.in_data = in.data();
    a.num_in_data = in.size();
    a.out_data = out.data();
    a.num_out_data = out.size();
    a.aux = aux.data();
    a.num_aux = aux.size();
    a.out_grad = out_grad.data();
    a.num_out_grad = out_grad.size();
    a.in_grad = in_grad.data();
    a.num_in_grad = in_grad.size();
    a.req = req.data();
    a.num_req = req.size();
    return a;
  }
};

}  // namespace

OpRunner::OpRunner(const std::string& op, const KwArgs& kwargs, Context ctx, Runtime* runtime)
    : ctx_(ctx), temp_(std::make_unique<TempSpace>(ctx)) {
  Runtime& rt = runtime ? *runtime : Runtime::Get();
  std::shared_ptr<const OpEntry> entry = rt.GetOp(op);
  property_ = std::make_unique<OpProperty>(entry, kwargs);
  std::shared_ptr<const KernelEntry> kernel = rt.FindKernel(op, ctx.dev_type);
  if (!kernel) {
    std::string have;
    for (const auto& k : rt.KernelsOf(op)) have += (have.empty() ? "" : ", ") + DeviceTypeName(k->device_type);
    throw Error(op + " has no kernel for " + DeviceTypeName(ctx.dev_type) + "; kernels exist for: " +
                (have.empty() ? "no device" : have), kMXPNotFound);
  }
  kernel_ = std::make_unique<Kernel>(kernel, kwargs, ctx);
}

OpRunner::~OpRunner() = default;

void OpRunner::CheckCount(const char* what, size_t got, const std::vector<std::string>& names) const {
  if (got != names.size())
    throw Error(property_->op().name + ": expected " + std::to_string(names.size()) + " " + what +
                " (" + Names(names) + "), got " + std::to_string(got), kMXPInvalidArgument);
}

std::vector<const MXPResource*> OpRunner::Requested(MXPPhase phase) const {
  uint32_t mask = property_->Resources(phase);
  if (mask & kMXPResourceRandom)
    throw Error(property_->op().name + " requests a random-number resource; OpRunner provides "
                "only temp space (random state is the engine's, per device)", kMXPUnimplemented);
  std::vector<const MXPResource*> requested;
  if (mask & kMXPResourceTempSpace) requested.push_back(&temp_->resource);
  return requested;
}

void OpRunner::CheckDevice(const char* what, const std::vector<Tensor>& tensors) const {
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].is_none())
      throw Error(property_->op().name + ": " + what + " " + std::to_string(i) + " is empty",
                  kMXPInvalidArgument);
    if (tensors[i].ctx() != ctx_)
      throw Error(property_->op().name + ": " + what + " " + std::to_string(i) + " is on " +
                  tensors[i].ctx().ToString() + ", expected " + ctx_.ToString(), kMXPInvalidArgument);
  }
}

std::vector<Tensor> OpRunner::Forward(const std::vector<Tensor>& inputs,
                                      const std::vector<Tensor>& aux, bool is_train) {
  const std::string& op = property_->op().name;
  CheckCount("inputs", inputs.size(), property_->ListArguments());
  CheckCount("auxiliary states", aux.size(), property_->ListAuxiliaryStates());
  std::vector<TShape> in_s, out_s, aux_s;
  std::vector<int> in_t, out_t, aux_t;
  for (const Tensor& t : inputs) in_s.push_back(t.shape()), in_t.push_back(t.dtype());
  for (const Tensor& t : aux) aux_s.push_back(t.shape()), aux_t.push_back(t.dtype());
  std::vector<TShape> given = in_s;
  bool complete = property_->InferShape(&in_s, &out_s, &aux_s);
  for (const TShape& s : out_s) complete = complete && s.IsKnown();
  if (!complete)
    throw Error(op + ": cannot infer output shapes from input shapes " + Shapes(given),
                kMXPInvalidArgument);
  if (!property_->InferType(&in_t, &out_t, &aux_t))
    throw Error(op + ": cannot infer output dtypes", kMXPInvalidArgument);
  std::vector<Tensor> outputs;
  for (size_t i = 0; i < out_s.size(); ++i) outputs.push_back(Tensor::Empty(out_s[i], out_t[i], ctx_));
  ForwardInto(inputs, outputs, std::vector<OpReqType>(outputs.size(), kWriteTo), aux, is_train);
  return outputs;
}

void OpRunner::ForwardInto(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                       const std::vector<OpReqType>& req, const std::vector<Tensor>& aux,
                       bool is_train) {
  CheckCount("inputs", inputs.size(), property_->ListArguments());
  CheckCount("outputs", outputs.size(), property_->ListOutputs());
  CheckCount("requests (one per output)", req.size(), property_->ListOutputs());
  CheckCount("auxiliary states", aux.size(), property_->ListAuxiliaryStates());
  CheckDevice("input", inputs);
  CheckDevice("output", outputs);
  CheckDevice("auxiliary state", aux);
  KernelViews v{Views(inputs), Views(outputs), Views(aux), {}, {},
                 std::vector<int32_t>(req.begin(), req.end())};
  std::vector<const MXPResource*> requested = Requested(kMXPPhaseForward);
  kernel_->Forward(v.Args(is_train, ctx_, requested));
}

std::vector<Tensor> OpRunner::Backward(const std::vector<Tensor>& out_grads,
                                       const std::vector<Tensor>& inputs,
                                       const std::vector<Tensor>& outputs,
                                       const std::vector<Tensor>& aux) {
  std::vector<Tensor> in_grads;
  for (const Tensor& t : inputs) in_grads.push_back(Tensor::Empty(t.shape(), t.dtype(), ctx_));
  BackwardInto(out_grads, inputs, outputs, in_grads,
               std::vector<OpReqType>(in_grads.size(), kWriteTo), aux);
  return in_grads;
}

void OpRunner::BackwardInto(const std::vector<Tensor>& out_grads, const std::vector<Tensor>& inputs,
                            const std::vector<Tensor>& outputs, const std::vector<Tensor>& in_grads,
                        const std::vector<OpReqType>& req, const std::vector<Tensor>& aux) {
  CheckCount("output gradients", out_grads.size(), property_->ListOutputs());
  CheckCount("inputs", inputs.size(), property_->ListArguments());
  CheckCount("outputs", outputs.size(), property_->ListOutputs());
  CheckCount("input gradients", in_grads.size(), property_->ListArguments());
  CheckCount("requests (one per input gradient)", req.size(), property_->ListArguments());
  CheckCount("auxiliary states", aux.size(), property_->ListAuxiliaryStates());
  for (const auto* list : {&out_grads, &inputs, &outputs, &in_grads, &aux}) CheckDevice("tensor", *list);
  KernelViews v{Views(inputs), Views(outputs), Views(aux), Views(out_grads), Views(in_grads),
                 std::vector<int32_t>(req.begin(), req.end())};
  std::vector<const MXPResource*> requested = Requested(kMXPPhaseBackward);
  kernel_->Backward(v.Args(true, ctx_, requested));
}

}  // namespace mxplug
