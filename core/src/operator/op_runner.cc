#include "mxplug/op_runner.h"

#include <algorithm>

#include "mxplug/runtime.h"
#include "operator/kernel_call.h"
#include "registry/host_api.h"

namespace mxplug {

using detail::KernelViews;
using detail::Views;

// Scratch memory for kMXPResourceTempSpace: one block, grown on demand and reused across calls.
struct OpRunner::TempSpace : detail::TempSpaceProvider {
  explicit TempSpace(Context c) : ctx(c) {
    resource.struct_size = sizeof(resource);
    resource.kind = kMXPResourceTempSpace;
    resource.handle = static_cast<detail::TempSpaceProvider*>(this);
  }
  void* Get(size_t bytes) override {
    if (!block || block->bytes() < bytes) block = Storage::Alloc(bytes, ctx);
    most = std::max(most, bytes);
    return block->data();
  }
  Context ctx;
  std::shared_ptr<Storage> block;
  size_t most = 0;
  MXPResource resource{};
};

OpRunner::OpRunner(const std::string& op, const KwArgs& kwargs, Context ctx, Runtime* runtime)
    : ctx_(ctx), temp_(std::make_unique<TempSpace>(ctx)) {
  Runtime& rt = runtime ? *runtime : Runtime::Get();
  std::shared_ptr<const OpEntry> entry = rt.GetOp(op);
  property_ = std::make_unique<OpProperty>(entry, kwargs);
  std::shared_ptr<const KernelEntry> kernel = rt.FindKernel(op, ctx.dev_type);
  if (!kernel) {
    std::string have;
    for (const auto& k : rt.KernelsOf(op))
      have += (have.empty() ? "" : ", ") + DeviceTypeName(k->device_type);
    throw Error(op + " has no kernel for " + DeviceTypeName(ctx.dev_type) +
                    "; kernels exist for: " + (have.empty() ? "no device" : have),
                kMXPNotFound);
  }
  kernel_ = std::make_unique<Kernel>(kernel, kwargs, ctx);
}

OpRunner::~OpRunner() = default;

size_t OpRunner::temp_space_bytes() const { return temp_->most; }

void OpRunner::CheckCount(const char* what, size_t got,
                          const std::vector<std::string>& names) const {
  if (got != names.size())
    throw Error(property_->op().name + ": expected " + std::to_string(names.size()) + " " + what +
                    " (" + detail::JoinNames(names) + "), got " + std::to_string(got),
                kMXPInvalidArgument);
}

std::vector<const MXPResource*> OpRunner::Requested(MXPPhase phase) const {
  uint32_t mask = property_->Resources(phase);
  if (mask & kMXPResourceRandom)
    throw Error(property_->op().name +
                    " requests a random-number resource; OpRunner provides "
                    "only temp space (random state is the engine's, per device)",
                kMXPUnimplemented);
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
                      tensors[i].ctx().ToString() + ", expected " + ctx_.ToString(),
                  kMXPInvalidArgument);
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
    throw Error(op + ": cannot infer output shapes from input shapes " + detail::ShapeList(given),
                kMXPInvalidArgument);
  if (!property_->InferType(&in_t, &out_t, &aux_t))
    throw Error(op + ": cannot infer output dtypes", kMXPInvalidArgument);
  std::vector<Tensor> outputs;
  for (size_t i = 0; i < out_s.size(); ++i)
    outputs.push_back(Tensor::Empty(out_s[i], out_t[i], ctx_));
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
  KernelViews v{Views(inputs),
                Views(outputs),
                Views(aux),
                {},
                {},
                detail::CallList<int32_t>(req.begin(), req.end())};
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
  for (const auto* list : {&out_grads, &inputs, &outputs, &in_grads, &aux})
    CheckDevice("tensor", *list);
  KernelViews v{Views(inputs),   Views(outputs),
                Views(aux),      Views(out_grads),
                Views(in_grads), detail::CallList<int32_t>(req.begin(), req.end())};
  std::vector<const MXPResource*> requested = Requested(kMXPPhaseBackward);
  kernel_->Backward(v.Args(true, ctx_, requested));
}

}  // namespace mxplug
