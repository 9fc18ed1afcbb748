// An op of an MXNet lib_api library as an mxplug op: Note [lib_api ops as mxplug ops].
#include "lib_op.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace mxplug::mxnet_lib {
namespace {

// Version numbers handed to the library: new for every tensor of every call.
std::atomic<size_t> next_version{1};

const char* DeviceName(const Context& ctx) {
  return ctx.Compute().dev_type == kDLCPU ? "cpu" : "gpu";
}

// Memory a compute call hands out through OpResource::alloc_cpu / alloc_gpu.
struct Scratch {
  const Resource* temp = nullptr;
  std::vector<std::unique_ptr<char, void (*)(void*)>> blocks;

  void* Cpu(int bytes) {
    if (bytes < 0) return nullptr;
    // 64-byte aligned, as MXNet's CPU storage is; aligned_alloc wants a multiple of it.
    void* p = std::aligned_alloc(64, (static_cast<size_t>(bytes) + 63) / 64 * 64 + 64);
    if (p) blocks.emplace_back(static_cast<char*>(p), &std::free);
    return p;
  }
  static void* CpuMalloc(void* self, int bytes) { return static_cast<Scratch*>(self)->Cpu(bytes); }
  static void* GpuMalloc(void* self, int bytes) {
    auto* s = static_cast<Scratch*>(self);
    return bytes < 0 ? nullptr : s->temp->get_space(static_cast<size_t>(bytes));
  }
};

// One side (inputs or outputs) of a compute call, as the library's C arrays.
struct TensorList {
  std::vector<const int64_t*> shapes;
  std::vector<int> dims, types;
  std::vector<void*> data;
  std::vector<size_t> versions;
  std::vector<const char*> dev_type;
  std::vector<int> dev_id;
  // Dense only: storage types 0, no sparse indices.
  std::vector<int> stypes;
  std::vector<void*> no_pointers;
  std::vector<int64_t> no_sizes;

  void Add(const TBlob& blob, const Context& ctx) {
    shapes.push_back(blob.shape_.data());
    dims.push_back(blob.ndim());
    types.push_back(blob.type_flag_);
    data.push_back(blob.dptr_);
    versions.push_back(next_version.fetch_add(1));
    dev_type.push_back(DeviceName(ctx));
    dev_id.push_back(ctx.dev_id);
    stypes.push_back(0);
    no_pointers.push_back(nullptr);
    no_sizes.push_back(0);
  }
  int size() const { return static_cast<int>(data.size()); }
};

size_t ElementBytes(int dtype) { return (ToDLDataType(dtype).bits + 7) / 8; }

// Adds `n` elements of src to dst (an output with request add-to), on the CPU.
void AddTo(const TBlob& dst, const void* src) {
  const int64_t n = dst.Size();
  auto add = [&](auto* d) {
    using T = std::remove_pointer_t<decltype(d)>;
    const T* s = static_cast<const T*>(src);
    for (int64_t i = 0; i < n; ++i) d[i] = static_cast<T>(d[i] + s[i]);
  };
  switch (dst.type_flag_) {
    case kMXPFloat32:
      return add(static_cast<float*>(dst.dptr_));
    case kMXPFloat64:
      return add(static_cast<double*>(dst.dptr_));
    case kMXPInt32:
      return add(static_cast<int32_t*>(dst.dptr_));
    case kMXPInt64:
      return add(static_cast<int64_t*>(dst.dptr_));
    case kMXPInt8:
      return add(static_cast<int8_t*>(dst.dptr_));
    case kMXPUint8:
      return add(static_cast<uint8_t*>(dst.dptr_));
    default:
      throw std::invalid_argument("gradient accumulation (grad_req 'add') into " +
                                  DTypeName(dst.type_flag_) + " is not supported for this op");
  }
}

class LibOpKernel : public Operator {
 public:
  LibOpKernel(const LibOp* op, std::shared_ptr<LibOpProperty::Attrs> attrs,
              std::vector<bool> mutated, Context ctx)
      : op_(op), attrs_(std::move(attrs)), mutated_(std::move(mutated)), ctx_(ctx) {}
  ~LibOpKernel() override {
    if (state_) op_->lib->destroy_op_state(state_);
  }

  void Forward(const OpContext& ctx, const std::vector<TBlob>& in_data,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out_data,
               const std::vector<TBlob>& aux) override {
    std::vector<TBlob> inputs = MergeInputs(mutated_, in_data, aux);
    if (op_->stateful() && !state_) CreateState(inputs);
    Call(ctx, /*forward=*/true, inputs, out_data, req);
  }

  void Backward(const OpContext& ctx, const std::vector<TBlob>& out_grad,
                const std::vector<TBlob>& in_data, const std::vector<TBlob>& out_data,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& in_grad,
                const std::vector<TBlob>& aux) override {
    const std::vector<TBlob> lib_inputs = MergeInputs(mutated_, in_data, aux);
    std::vector<TBlob> inputs(out_grad);
    inputs.insert(inputs.end(), lib_inputs.begin(), lib_inputs.end());
    inputs.insert(inputs.end(), out_data.begin(), out_data.end());
    // One gradient per library input; an auxiliary state's is written and dropped.
    std::vector<TBlob> grads;
    std::vector<OpReqType> grad_req;
    size_t arg = 0;
    for (bool is_aux : mutated_) {
      if (is_aux) {
        grads.emplace_back();
        grad_req.push_back(kNullOp);
      } else {
        grads.push_back(in_grad.at(arg));
        grad_req.push_back(req.at(arg));
        ++arg;
      }
    }
    // The dropped gradients take the shape and type of their state.
    for (size_t i = 0; i < grads.size(); ++i)
      if (mutated_[i]) {
        grads[i].shape_ = lib_inputs[i].shape_;
        grads[i].type_flag_ = lib_inputs[i].type_flag_;
        grads[i].dev_ = lib_inputs[i].dev_;
      }
    if (op_->stateful() && !state_) CreateState(lib_inputs);
    if (!op_->stateful() && !op_->backward.count(DeviceName(ctx_)))
      throw std::logic_error("custom operator '" + op_->name + "' has no backward on " +
                             DeviceName(ctx_));
    Call(ctx, /*forward=*/false, inputs, grads, grad_req);
  }

 private:
  void CreateState(const std::vector<TBlob>& inputs) {
    const char* dev = DeviceName(ctx_);
    auto it = op_->create.find(dev);
    if (it == op_->create.end())
      throw std::logic_error(std::string(dev == std::string("cpu") ? "CPU" : "GPU") +
                             " CreateOpState not implemented for '" + op_->name + "'");
    std::vector<std::vector<unsigned int>> shapes;
    std::vector<unsigned int*> shape_ptrs;
    std::vector<int> dims, types;
    for (const TBlob& b : inputs) {
      shapes.emplace_back(b.shape_.begin(), b.shape_.end());
      dims.push_back(b.ndim());
      types.push_back(b.type_flag_);
    }
    for (auto& s : shapes) shape_ptrs.push_back(s.data());
    void* state = nullptr;
    if (!op_->lib->create_op_state(it->second, attrs_->key_ptrs.data(), attrs_->value_ptrs.data(),
                                   attrs_->size(), dev, ctx_.dev_id, shape_ptrs.data(), dims.data(),
                                   static_cast<int>(inputs.size()), types.data(), &state) ||
        !state)
      throw std::runtime_error(op_->lib->Failure("CreateOpState", op_->name));
    state_ = state;
  }

  void Call(const OpContext& ctx, bool forward, const std::vector<TBlob>& inputs,
            const std::vector<TBlob>& outputs, const std::vector<OpReqType>& req) {
    const bool on_cpu = ctx_.Compute().dev_type == kDLCPU;
    Scratch scratch;
    scratch.temp = &ctx.resource(ResourceRequest::kTempSpace);
    // Outputs the library must not write in place: null requests, accumulation, dropped grads.
    std::vector<TBlob> targets(outputs);
    std::vector<size_t> accumulate;
    for (size_t i = 0; i < targets.size(); ++i) {
      const OpReqType r = i < req.size() ? req[i] : kWriteTo;
      if (r != kNullOp && r != kAddTo && targets[i].dptr_) continue;
      if (!on_cpu)
        throw std::invalid_argument("custom operator '" + op_->name +
                                    "': only write requests are supported off the CPU");
      targets[i].dptr_ =
          scratch.Cpu(static_cast<int>(targets[i].Size() * ElementBytes(targets[i].type_flag_)));
      if (r == kAddTo) accumulate.push_back(i);
    }
    TensorList in, out;
    for (const TBlob& b : inputs) in.Add(b, ctx_);
    for (const TBlob& b : targets) out.Add(b, ctx_);

    // The library's CPU generators, seeded from the host's stream (its key follows the seed).
    const Resource& random = ctx.resource(ResourceRequest::kRandom);
    uint64_t key = 0, counter = 0;
    if (MXPStatus* status = random.host->random_philox(random.raw, 1, &key, &counter)) {
      std::string message = random.host->status_message(status);
      random.host->status_free(status);
      throw std::runtime_error(message);
    }
    std::mt19937* cpu_states = op_->lib->CpuRandomStates(key);

    Library* lib = op_->lib;
    void* stream = on_cpu ? nullptr : ctx.run_ctx.stream;
    int ok = 0;
    if (op_->stateful()) {
      ok = lib->stateful_compute(
          forward ? 1 : 0, state_, in.shapes.data(), in.dims.data(), in.data.data(),
          in.types.data(), in.versions.data(), in.dev_type.data(), in.dev_id.data(), in.size(),
          out.shapes.data(), out.dims.data(), out.data.data(), out.types.data(),
          out.versions.data(), out.dev_type.data(), out.dev_id.data(), out.size(),
          &Scratch::CpuMalloc, &scratch, &Scratch::GpuMalloc, &scratch, stream, nullptr, nullptr,
          in.stypes.data(), out.stypes.data(), in.no_pointers.data(), out.no_pointers.data(),
          in.no_pointers.data(), out.no_pointers.data(), in.no_sizes.data(), out.no_sizes.data(),
          in.no_sizes.data(), out.no_sizes.data(), cpu_states, nullptr);
    } else {
      const auto& table = forward ? op_->forward : op_->backward;
      auto fn = table.find(DeviceName(ctx_));
      if (fn == table.end())
        throw std::logic_error("custom operator '" + op_->name + "' has no " +
                               (forward ? "forward" : "backward") + " on " + DeviceName(ctx_));
      ok = lib->fcompute(
          fn->second, attrs_->key_ptrs.data(), attrs_->value_ptrs.data(), attrs_->size(),
          in.shapes.data(), in.dims.data(), in.data.data(), in.types.data(), in.versions.data(),
          in.dev_type.data(), in.dev_id.data(), in.size(), out.shapes.data(), out.dims.data(),
          out.data.data(), out.types.data(), out.versions.data(), out.dev_type.data(),
          out.dev_id.data(), out.size(), &Scratch::CpuMalloc, &scratch, &Scratch::GpuMalloc,
          &scratch, stream, nullptr, nullptr, in.stypes.data(), out.stypes.data(),
          in.no_pointers.data(), out.no_pointers.data(), in.no_pointers.data(),
          out.no_pointers.data(), in.no_sizes.data(), out.no_sizes.data(), in.no_sizes.data(),
          out.no_sizes.data(), cpu_states, nullptr);
    }
    if (!ok)
      throw std::runtime_error(
          lib->Failure(op_->stateful() ? "FStatefulCompute" : "FCompute", op_->name));
    for (size_t i : accumulate) AddTo(outputs[i], targets[i].dptr_);
  }

  const LibOp* op_;
  std::shared_ptr<LibOpProperty::Attrs> attrs_;
  std::vector<bool> mutated_;
  Context ctx_;
  void* state_ = nullptr;  // the library's stateful op, made at the first call
};

}  // namespace

void LibOpProperty::Init(const KwArgs& kwargs) {
  attrs_ = std::make_shared<Attrs>();
  for (const auto& kv : kwargs) {
    attrs_->keys.push_back(kv.first);
    attrs_->values.push_back(kv.second);
  }
  for (size_t i = 0; i < kwargs.size(); ++i) {
    attrs_->key_ptrs.push_back(attrs_->keys[i].c_str());
    attrs_->value_ptrs.push_back(attrs_->values[i].c_str());
  }
  Library* lib = op_->lib;
  num_in_ = num_out_ = -1;
  if (!lib->parse_attrs(op_->parse, attrs_->key_ptrs.data(), attrs_->value_ptrs.data(),
                        attrs_->size(), &num_in_, &num_out_))
    throw ParamError(lib->Failure("ParseAttrs", op_->name));
  if (num_in_ < 0 || num_out_ < 1)
    throw ParamError("custom operator '" + op_->name + "': ParseAttrs gave " +
                     std::to_string(num_in_) + " inputs and " + std::to_string(num_out_) +
                     " outputs");
  mutated_.assign(num_in_, false);
  if (op_->mutate) {
    int* indices = nullptr;
    int count = 0;
    if (!lib->mutate_inputs(op_->mutate, attrs_->key_ptrs.data(), attrs_->value_ptrs.data(),
                            attrs_->size(), &indices, &count))
      throw ParamError(lib->Failure("MutateInputs", op_->name));
    for (int i = 0; i < count; ++i) {
      if (indices[i] < 0 || indices[i] >= num_in_) {
        lib->call_free(indices);
        throw ParamError("custom operator '" + op_->name + "': MutateInputs named input " +
                         std::to_string(indices[i]) + " of " + std::to_string(num_in_));
      }
      mutated_[indices[i]] = true;
    }
    lib->call_free(indices);
  }
}

std::vector<std::string> LibOpProperty::ListArguments() const {
  std::vector<std::string> names;
  for (int i = 0; i < num_in_; ++i)
    if (!mutated_[i]) names.push_back("arg" + std::to_string(names.size()));
  return names;
}

std::vector<std::string> LibOpProperty::ListOutputs() const {
  if (num_out_ == 1) return {"output"};
  std::vector<std::string> names;
  for (int i = 0; i < num_out_; ++i) names.push_back("output" + std::to_string(i));
  return names;
}

std::vector<std::string> LibOpProperty::ListAuxiliaryStates() const {
  std::vector<std::string> names;
  for (int i = 0; i < num_in_; ++i)
    if (mutated_[i]) names.push_back("aux" + std::to_string(names.size()));
  return names;
}

bool LibOpProperty::InferShape(std::vector<TShape>* in_shape, std::vector<TShape>* out_shape,
                               std::vector<TShape>* aux_shape) const {
  std::vector<TShape> inputs = MergeInputs(mutated_, *in_shape, *aux_shape);
  // The library is asked once every input shape is known (MXNet would hand it unknown ones).
  for (const TShape& s : inputs)
    if (!s.IsKnown()) return false;
  std::vector<std::vector<unsigned int>> dims_in;
  std::vector<unsigned int*> ptrs;
  std::vector<int> ndims;
  for (const TShape& s : inputs) {
    dims_in.emplace_back(s.begin(), s.end());
    ndims.push_back(s.ndim());
  }
  for (auto& d : dims_in) ptrs.push_back(d.data());
  unsigned int** mod_in = nullptr;
  int* mod_in_dims = nullptr;
  unsigned int** outs = nullptr;
  int* out_dims = nullptr;
  Library* lib = op_->lib;
  if (!lib->infer_shape(op_->infer_shape, attrs_->key_ptrs.data(), attrs_->value_ptrs.data(),
                        attrs_->size(), ptrs.data(), ndims.data(), num_in_, &mod_in, &mod_in_dims,
                        &outs, &out_dims, num_out_))
    throw std::invalid_argument(lib->Failure("InferShape", op_->name));
  auto take = [&](unsigned int* dims, int n) {
    std::vector<int64_t> v(dims, dims + n);
    return TShape(std::move(v));
  };
  std::vector<TShape> new_in;
  for (int i = 0; i < num_in_; ++i) new_in.push_back(take(mod_in[i], mod_in_dims[i]));
  for (int i = 0; i < num_out_; ++i) (*out_shape)[i] = take(outs[i], out_dims[i]);
  for (int i = 0; i < num_in_; ++i) lib->call_free(mod_in[i]);
  for (int i = 0; i < num_out_; ++i) lib->call_free(outs[i]);
  lib->call_free(mod_in);
  lib->call_free(mod_in_dims);
  lib->call_free(outs);
  lib->call_free(out_dims);
  size_t a = 0, x = 0;
  for (int i = 0; i < num_in_; ++i) {
    TShape& slot = mutated_[i] ? (*aux_shape)[x++] : (*in_shape)[a++];
    if (new_in[i] != slot)
      throw std::invalid_argument("custom operator '" + op_->name + "': InferShape changed input " +
                                  std::to_string(i) + " from " + slot.ToString() + " to " +
                                  new_in[i].ToString());
  }
  return true;
}

bool LibOpProperty::InferType(std::vector<int>* in_type, std::vector<int>* out_type,
                              std::vector<int>* aux_type) const {
  std::vector<int> inputs = MergeInputs(mutated_, *in_type, *aux_type);
  bool any = false;
  for (int t : inputs) any = any || t != kMXPUnknownDType;
  if (!any) return false;
  std::vector<int> outputs(*out_type);
  Library* lib = op_->lib;
  if (!lib->infer_type(op_->infer_type, attrs_->key_ptrs.data(), attrs_->value_ptrs.data(),
                       attrs_->size(), inputs.data(), num_in_, outputs.data(), num_out_))
    throw std::invalid_argument(lib->Failure("InferType", op_->name));
  size_t a = 0, x = 0;
  for (int i = 0; i < num_in_; ++i) (mutated_[i] ? (*aux_type)[x++] : (*in_type)[a++]) = inputs[i];
  *out_type = outputs;
  bool complete = true;
  for (int t : *in_type) complete = complete && t != kMXPUnknownDType;
  for (int t : *aux_type) complete = complete && t != kMXPUnknownDType;
  for (int t : *out_type) complete = complete && t != kMXPUnknownDType;
  return complete;
}

Operator* LibOpProperty::CreateOperator(Context ctx) const {
  return new LibOpKernel(op_, attrs_, mutated_, ctx);
}

}  // namespace mxplug::mxnet_lib
