// What the oneDNN kernels share: the engine, plain (row-major float32) memory descriptors, a
// process-wide cache of primitives, and Call, which runs primitives on the op's own buffers.
#ifndef MXPLUG_PLUGINS_NN_ONEDNN_CALL_H_
#define MXPLUG_PLUGINS_NN_ONEDNN_CALL_H_

#include <cstdint>
#include <dnnl.hpp>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mxplug/plugin.hpp"

namespace mxplug_nn::onednn {

using dnnl::memory;

// float32 data, and oneDNN not switched off with MXPLUG_ONEDNN=0 (read once per process).
bool Enabled(int dtype);

const dnnl::engine& Engine();

// Every primitive is made with this: the scratchpad comes from Call (the op's temp space), so
// primitives can run on several engine workers at once.
const dnnl::primitive_attr& Attr();

memory::dims Dims(const mxplug::TShape& shape);
memory::desc Plain(const memory::dims& dims);  // float32, row-major: how mxplug stores tensors
memory::desc Any(const memory::dims& dims);    // float32, the layout the primitive prefers

// Note [Serial primitives]
// A primitive whose work is small runs on the calling engine thread alone rather than on the
// OpenMP team: forking the team and meeting at its barriers then cost more than the work, and
// the team's helpers, spinning between regions, take the cores that the Python thread and the
// data iterator's threads need (MXNet's operator tuning makes the same choice for its loops).
// oneDNN fixes a primitive's thread count when it is made, so a SerialScope is open both when
// the primitive is made and when it runs, and its key names it. Measured on 2 cores at batch
// 128: FullyConnected 128 -> 64 and 64 -> 10 and relu on 128 x 128 take as long or longer on
// two threads than on one; 784 -> 128 takes 190 us against 290.
constexpr double kSerialFlops = 8e6;         // a matmul or inner product below this runs serially
constexpr double kSerialElements = 1 << 16;  // an elementwise primitive below this runs serially

// Sets the calling thread's OpenMP thread count to 1 for its lifetime when `serial`.
class SerialScope {
 public:
  explicit SerialScope(bool serial);
  ~SerialScope();
  SerialScope(const SerialScope&) = delete;
  SerialScope& operator=(const SerialScope&) = delete;
  // What a cache key adds: a serial primitive is another primitive.
  const char* KeySuffix() const { return saved_ > 0 ? "|serial" : ""; }

 private:
  int saved_ = 0;  // the thread count to restore; 0 when nothing was changed
};

// A cache key: the kernel's name and the numbers that pick its primitive.
template <class... Lists>
std::string Key(const char* kernel, const Lists&... lists) {
  std::string key = kernel;
  auto append = [&key](const auto& list) {
    key += '|';
    for (auto v : list) key += std::to_string(v) + ',';
  };
  (append(lists), ...);
  return key;
}

// The primitives of one key, made once per process by make(). A configuration oneDNN refuses
// (make throws dnnl::error) is remembered as nullptr, so the op's plain loops take it at once.
std::shared_ptr<void> CachedErased(const std::string& key,
                                   const std::function<std::shared_ptr<void>()>& make);
template <class Entry, class Make>
std::shared_ptr<const Entry> Cached(const std::string& key, Make&& make) {
  return std::static_pointer_cast<const Entry>(
      CachedErased(key, [&] { return std::shared_ptr<void>(std::make_shared<Entry>(make())); }));
}

// A primitive with the descriptor it was made from: Call reads the layouts each argument
// wants from the descriptor.
template <class P>
struct Primitive {
  typename P::primitive_desc pd;
  P primitive;
  explicit Primitive(typename P::primitive_desc d) : pd(std::move(d)), primitive(pd) {}
  // Whether oneDNN runs code it generated for this CPU ("jit:avx2", "brg:avx512_core",
  // "gemm:jit") rather than one of its plain C++ loops ("ref:any", "simple_nchw:any",
  // "ncsp_bnorm:any"), which it falls back to for mxplug's plain layout on machines without
  // AVX-512 and which the plugin's own vectorised loops beat (pooling.cc, batch_norm.cc).
  bool IsJit() const {
    const std::string name = pd.impl_info_str();
    return name.find("jit") != std::string::npos || name.rfind("brg", 0) == 0;
  }
};

// One kernel call: primitives run in order on the op's tensors, each given in mxplug's plain
// layout. Where a primitive wants another layout, Run reorders the input into scratch and the
// output back (adding for kAddTo); scratch, scratchpads and Temp buffers are carved from one
// request to the op's temp space resource.
class Call {
 public:
  using Handle = int;
  explicit Call(const mxplug::OpContext& ctx) : ctx_(ctx) {}

  Handle Input(const memory::dims& dims, const void* data);
  // An input whose layout is not row-major (a transposed view of the op's buffer).
  Handle Input(const memory::desc& desc, const void* data);
  Handle Output(const memory::dims& dims, void* data, mxplug::OpReqType req);
  // A buffer only primitives see (a workspace, an unused output), laid out as the first step
  // that uses it wants.
  Handle Temp();
  template <class P>
  void Step(const Primitive<P>& p, std::vector<std::pair<int, Handle>> args) {
    steps_.push_back({&p.primitive, &p.pd, std::move(args)});
  }
  void Run();

 private:
  enum class Role { kInput, kOutput, kTemp };
  struct Tensor {
    Role role;
    memory::desc layout;  // of the op's buffer: row-major, or as Input(desc, ...) gave it
    void* data;
    mxplug::OpReqType req;
  };
  struct StepArgs {
    const dnnl::primitive* primitive;
    const dnnl::primitive_desc_base* pd;
    std::vector<std::pair<int, Handle>> args;
  };

  const mxplug::OpContext& ctx_;
  std::vector<Tensor> tensors_;
  std::vector<StepArgs> steps_;
};

// Runs one primitive from an input (DNNL_ARG_SRC) to an output (DNNL_ARG_DST), both in mxplug's
// plain layout: the call of most forward kernels.
template <class P>
void RunSrcToDst(const mxplug::OpContext& ctx, const Primitive<P>& p, const memory::dims& src_dims,
                 const void* src, const memory::dims& dst_dims, void* dst, mxplug::OpReqType req) {
  Call call(ctx);
  call.Step(p, {{DNNL_ARG_SRC, call.Input(src_dims, src)},
                {DNNL_ARG_DST, call.Output(dst_dims, dst, req)}});
  call.Run();
}

}  // namespace mxplug_nn::onednn

#endif  // MXPLUG_PLUGINS_NN_ONEDNN_CALL_H_
