// Note [oneDNN]
// Convolution, FullyConnected (matmul forward, inner product backward), Pooling (max and avg; 2-d
// max pooling's backward is a loop in ../pooling.cc), BatchNorm (training forward and backward),
// softmax/log_softmax (forward), LRN, Activation (relu, sigmoid, tanh) and LSTM (Note [RNN on
// oneDNN]) run on oneDNN when the plugin is built with it (Debian's libdnnl-dev; CMake's
// MXPLUG_WITH_ONEDNN) and the data is float32. Everything else, float64 included, runs the plain
// loops beside each op, which are the reference the oneDNN path is tested against (tests run both;
// MXPLUG_ONEDNN=0 switches oneDNN off for a process, as MXNET_MKLDNN_ENABLED=0 does in MXNet).
//
// Tensors stay in mxplug's row-major layout between ops: a primitive is made for the layout it
// runs fastest in (format "any"), and Call reorders inputs into it and outputs back, within the
// op. MXNet 1.x instead let oneDNN's blocked layouts flow between ops inside NDArray; that saves
// the reorders (about 6 ms of a 46 ms convolution here) at the cost of every other op and
// every plugin having to understand them, which plugin_api does not allow.
//
// Primitives are made once per distinct shape and parameters and kept for the process (oneDNN
// JIT-compiles them). They use a user-managed scratchpad, carved with the reorder buffers from
// the op's temp space resource, so the engine's workers can run them concurrently. Debian's
// oneDNN threads with OpenMP: OMP_NUM_THREADS sets its thread count.
#include "call.h"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <unordered_map>

namespace mxplug_nn::onednn {

bool Enabled(int dtype) {
  static const bool on = [] {
    const char* env = std::getenv("MXPLUG_ONEDNN");
    return env == nullptr || std::strcmp(env, "0") != 0;
  }();
  return on && dtype == kMXPFloat32;
}

const dnnl::engine& Engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

const dnnl::primitive_attr& Attr() {
  static const dnnl::primitive_attr attr = [] {
    dnnl::primitive_attr a;
    a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return a;
  }();
  return attr;
}

SerialScope::SerialScope(bool serial) {
  if (!serial) return;
  saved_ = omp_get_max_threads();
  if (saved_ > 1) {
    omp_set_num_threads(1);
  } else {
    saved_ = 0;  // already one thread: nothing to change, and the same primitive as before
  }
}

SerialScope::~SerialScope() {
  if (saved_ > 0) omp_set_num_threads(saved_);
}

memory::dims Dims(const mxplug::TShape& shape) { return memory::dims(shape.begin(), shape.end()); }

memory::desc Plain(const memory::dims& dims) {
  memory::dims strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return memory::desc(dims, memory::data_type::f32, strides);
}

memory::desc Any(const memory::dims& dims) {
  return memory::desc(dims, memory::data_type::f32, memory::format_tag::any);
}

std::shared_ptr<void> CachedErased(const std::string& key,
                                   const std::function<std::shared_ptr<void>()>& make) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::shared_ptr<void>> cache;
  // A model has far fewer distinct layers; this bounds a sweep.
  constexpr size_t kMaxEntries = 4096;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  std::shared_ptr<void> entry;  // made unlocked: JIT compilation takes milliseconds
  try {
    entry = make();
  } catch (const dnnl::error&) {
    entry = nullptr;  // oneDNN has no implementation for this configuration
  }
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() >= kMaxEntries) cache.clear();
  return cache.emplace(key, std::move(entry)).first->second;
}

Call::Handle Call::Input(const memory::dims& dims, const void* data) {
  return Input(Plain(dims), data);
}

Call::Handle Call::Input(const memory::desc& desc, const void* data) {
  tensors_.push_back({Role::kInput, desc, const_cast<void*>(data), mxplug::kWriteTo});
  return static_cast<Handle>(tensors_.size() - 1);
}

Call::Handle Call::Output(const memory::dims& dims, void* data, mxplug::OpReqType req) {
  tensors_.push_back({Role::kOutput, Plain(dims), data, req});
  return static_cast<Handle>(tensors_.size() - 1);
}

Call::Handle Call::Temp() {
  tensors_.push_back({Role::kTemp, memory::desc(), nullptr, mxplug::kNullOp});
  return static_cast<Handle>(tensors_.size() - 1);
}

namespace {

// Bytes of scratch needed from step `first` to step `last` of a call, and where they go.
struct Span {
  size_t bytes, first, last;
  size_t offset = 0;
};

// Note [Scratch lifetimes]
// A call's reorder copies and scratchpads are needed only from the first step that uses them to
// the last, and the copy of an output only until it is reordered back after its step, so spans
// whose steps do not overlap share bytes. A convolution's backward writes the data gradient in
// oneDNN's layout in its first step and reads the data in that layout only in its second: the
// two share one buffer, and the call needs two activation-sized buffers instead of three (a
// ResNet-18 training step at batch 64: 50 to 34 MB of temp space).
size_t PlaceSpans(std::vector<Span*> spans) {
  // Largest first, each at the lowest offset clear of every placed span that shares a step.
  std::stable_sort(spans.begin(), spans.end(),
                   [](const Span* a, const Span* b) { return a->bytes > b->bytes; });
  std::vector<const Span*> placed;
  size_t total = 0;
  for (Span* s : spans) {
    s->bytes = (s->bytes + 63) / 64 * 64;  // oneDNN wants 64-byte aligned buffers
    s->offset = 0;
    if (s->bytes == 0) continue;
    for (bool moved = true; moved;) {
      moved = false;
      for (const Span* p : placed)
        if (p->first <= s->last && s->first <= p->last && p->offset < s->offset + s->bytes &&
            s->offset < p->offset + p->bytes) {
          s->offset = p->offset + p->bytes;
          moved = true;
        }
    }
    placed.push_back(s);
    total = std::max(total, s->offset + s->bytes);
  }
  return total;
}

}  // namespace

void Call::Run() {
  // Plan: where each (tensor, layout) a step needs lives. A tensor in the layout the primitive
  // wants, and an output that is plainly overwritten, are used in place; the rest get scratch,
  // placed by the steps that use it (Note [Scratch lifetimes]).
  struct Copy {
    Handle tensor;
    memory::desc desc;
    Span span;
    bool filled;
  };
  std::vector<Copy> copies;
  std::vector<Span> scratchpads(steps_.size());
  auto want = [](const StepArgs& s, int arg) {
    return s.pd->query_md(dnnl::query::exec_arg_md, arg);
  };
  auto in_place = [this](Handle h, const memory::desc& d) {
    const Tensor& t = tensors_[h];
    if (t.role == Role::kTemp || d != t.layout) return false;
    return t.role == Role::kInput || t.req == mxplug::kWriteTo || t.req == mxplug::kWriteInplace;
  };
  auto find = [&copies](Handle h, const std::optional<memory::desc>& d) -> Copy* {
    for (Copy& c : copies)
      if (c.tensor == h && (!d || c.desc == *d)) return &c;
    return nullptr;
  };
  for (size_t i = 0; i < steps_.size(); ++i) {
    const StepArgs& s = steps_[i];
    scratchpads[i] = {s.pd->scratchpad_desc().get_size(), i, i};
    for (const auto& [arg, h] : s.args) {
      const memory::desc d = want(s, arg);
      if (in_place(h, d)) continue;
      const bool temp = tensors_[h].role == Role::kTemp;
      if (Copy* c = find(h, temp ? std::nullopt : std::optional<memory::desc>(d)))
        c->span.last = i;
      else
        copies.push_back({h, d, {d.get_size(), i, i}, false});
    }
  }
  std::vector<Span*> spans;
  for (Copy& c : copies) spans.push_back(&c.span);
  for (Span& s : scratchpads) spans.push_back(&s);
  const size_t total = PlaceSpans(spans);

  char* base = nullptr;
  if (total > 0) {
    auto it = std::find_if(
        ctx_.requested.begin(), ctx_.requested.end(),
        [](const mxplug::Resource& r) { return r.type == mxplug::ResourceRequest::kTempSpace; });
    if (it == ctx_.requested.end())
      throw std::logic_error(
          "a oneDNN kernel needs " + std::to_string(total) +
          " bytes of temp space, but its op requested no temp space resource (its "
          "ForwardResource/BackwardResource must return onednn::Resources())");
    base = static_cast<char*>(it->get_space(total));
  }

  static thread_local dnnl::stream stream(Engine());
  for (size_t i = 0; i < steps_.size(); ++i) {
    const StepArgs& s = steps_[i];
    std::unordered_map<int, memory> args;
    std::vector<std::pair<memory, Handle>> results;  // scratch outputs to bring back
    for (const auto& [arg, h] : s.args) {
      const Tensor& t = tensors_[h];
      const memory::desc d = want(s, arg);
      if (in_place(h, d)) {
        args[arg] = memory(t.layout, Engine(), t.data);
        continue;
      }
      Copy* c = find(h, t.role == Role::kTemp ? std::nullopt : std::optional<memory::desc>(d));
      memory m(c->desc, Engine(), base + c->span.offset);
      if (t.role == Role::kInput && !c->filled) {
        memory user(t.layout, Engine(), t.data);
        dnnl::reorder(user, m).execute(stream, user, m);
        c->filled = true;
      }
      if (t.role == Role::kOutput) results.emplace_back(m, h);
      args[arg] = m;
    }
    if (scratchpads[i].bytes > 0)
      args[DNNL_ARG_SCRATCHPAD] =
          memory(s.pd->scratchpad_desc(), Engine(), base + scratchpads[i].offset);
    s.primitive->execute(stream, args);
    for (auto& [m, h] : results) {
      const Tensor& t = tensors_[h];
      if (t.req == mxplug::kNullOp) continue;
      memory user(t.layout, Engine(), t.data);
      dnnl::primitive_attr attr;
      if (t.req == mxplug::kAddTo) {
        dnnl::post_ops sum;
        sum.append_sum(1.0f);
        attr.set_post_ops(sum);
      }
      dnnl::reorder(dnnl::reorder::primitive_desc(m, user, attr)).execute(stream, m, user);
    }
  }
  stream.wait();
}

}  // namespace mxplug_nn::onednn
