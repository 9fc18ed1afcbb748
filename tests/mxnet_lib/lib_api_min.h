/*!
 * \file lib_api_min.h
 * \brief The library side of MXNet 1.9's custom-op library interface (lib_api.h, library version
 * 11), written for mxplug's tests: the C entry points MXNet's MXLoadLib looks up (_opVersion,
 * initialize, _opRegSize, _opRegGet, _opCall*...), over a small registry of ops.
 *
 * Note [What crosses the lib_api boundary]
 * The host never looks inside the library's C++ types: it receives function pointers from
 * _opRegGet and hands them back, unread, to the library's _opCall* functions, which make C++
 * calls out of C arrays. So a library may implement its ops with any C++ types of its own, as
 * this one does, and still load into MXNet 1.9.1 (and into mxplug's adapter, plugins/mxnet_lib)
 * exactly like one built with MXNet's lib_api.h. Include this file in exactly one source file:
 * it defines the entry points.
 */
#ifndef MXPLUG_TESTS_MXNET_LIB_LIB_API_MIN_H_
#define MXPLUG_TESTS_MXNET_LIB_LIB_API_MIN_H_

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace minlib {

using Attrs = std::map<std::string, std::string>;
using Shape = std::vector<unsigned int>;

// mshadow's type codes, which lib_api uses.
enum DType {
  kFloat32 = 0,
  kFloat64 = 1,
  kFloat16 = 2,
  kUint8 = 3,
  kInt32 = 4,
  kInt8 = 5,
  kInt64 = 6
};

struct Tensor {
  void* data;
  std::vector<int64_t> shape;
  int dtype;
  std::string dev_type;
  int dev_id;
  int64_t Size() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  template <typename T>
  T* Ptr() const {
    return static_cast<T*>(data);
  }
};

using MallocFn = void* (*)(void* alloc, int bytes);

struct Resource {
  MallocFn cpu_malloc;
  void* cpu_alloc;
  std::mt19937* cpu_rng;  // MX_NUM_CPU_RANDOM_STATES of them
  void* AllocCpu(int bytes) const { return cpu_malloc(cpu_alloc, bytes); }
};

using ParseFn = bool (*)(const Attrs&, int* num_in, int* num_out);
using ShapeFn = bool (*)(const Attrs&, std::vector<Shape>* in, std::vector<Shape>* out);
using TypeFn = bool (*)(const Attrs&, std::vector<int>* in, std::vector<int>* out);
using MutateFn = bool (*)(const Attrs&, std::vector<int>* mutated);
using ComputeFn = bool (*)(const Attrs&, std::vector<Tensor>* in, std::vector<Tensor>* out,
                           const Resource&);

// MXNet's host reads two fields of a stateful op (lib_api.h's CustomStatefulOp): after the
// vtable pointer, `ignore_warn`, then `created` (true when made by CustomStatefulOp::create,
// which this library's ops always are). So the layout is kept; everything else is the library's.
class StatefulOp {
 public:
  virtual ~StatefulOp() = default;
  virtual bool Forward(std::vector<Tensor>* in, std::vector<Tensor>* out, const Resource&) = 0;
  virtual bool Backward(std::vector<Tensor>* in, std::vector<Tensor>* out, const Resource&) = 0;
  bool ignore_warn = false;
  bool created = true;
};
using CreateFn = bool (*)(const Attrs&, const std::string& dev_type,
                          const std::vector<Shape>& in_shapes, const std::vector<int>& in_types,
                          StatefulOp** state);

struct OpDef {
  const char* name = nullptr;
  ParseFn parse = nullptr;
  ShapeFn shape = nullptr;
  TypeFn type = nullptr;
  MutateFn mutate = nullptr;
  // One entry per context ("cpu"): what _opRegGet hands out.
  std::vector<const char*> forward_ctx, backward_ctx, create_ctx;
  std::vector<ComputeFn> forward, backward;
  std::vector<CreateFn> create;
};

inline std::vector<OpDef>& Ops() {
  static std::vector<OpDef> ops;
  return ops;
}

// What MX_ERROR_MSG collects: the host reads it through _msgSize/_msgGet after a failure.
inline std::vector<std::string>& Messages() {
  static std::vector<std::string> messages;
  return messages;
}
inline bool Fail(const std::string& message) {
  Messages().push_back(message);
  return false;
}

// Called from initialize(): the test library registers its ops there.
void RegisterOps();

namespace detail {
inline Attrs ToAttrs(const char* const* keys, const char* const* vals, int num) {
  Attrs attrs;
  for (int i = 0; i < num; ++i) attrs[keys[i]] = vals[i];
  return attrs;
}
inline std::vector<Tensor> ToTensors(const int64_t** shapes, const int* dims, void** data,
                                     const int* types, const char** dev_type, const int* dev_id,
                                     int n) {
  std::vector<Tensor> out;
  for (int i = 0; i < n; ++i)
    out.push_back({data[i], std::vector<int64_t>(shapes[i], shapes[i] + dims[i]), types[i],
                   dev_type[i], dev_id[i]});
  return out;
}
template <typename T>
T* CopyOut(const std::vector<T>& v) {
  T* p = static_cast<T*>(std::malloc(sizeof(T) * (v.empty() ? 1 : v.size())));
  if (!v.empty()) std::memcpy(p, v.data(), sizeof(T) * v.size());
  return p;
}
}  // namespace detail

}  // namespace minlib

#define MINLIB_EXPORT extern "C" __attribute__((visibility("default")))

#ifndef MINLIB_VERSION
#define MINLIB_VERSION 11  // MX_LIBRARY_VERSION of MXNet 1.9
#endif
MINLIB_EXPORT int _opVersion() { return MINLIB_VERSION; }

MINLIB_EXPORT int initialize(int version) {
  if (version < 10900) return minlib::Fail("this library needs MXNet 1.9 or newer");
#ifdef MINLIB_INIT_FAILS
  return minlib::Fail("this build of the library refuses to initialize");
#endif
  minlib::Ops().clear();  // initialized again (a second host in the process): registered anew
  minlib::RegisterOps();
  return 1;
}

MINLIB_EXPORT int _msgSize() { return static_cast<int>(minlib::Messages().size()); }
MINLIB_EXPORT void _msgGet(int idx, const char** msg) { *msg = minlib::Messages().at(idx).c_str(); }

MINLIB_EXPORT int _opRegSize() { return static_cast<int>(minlib::Ops().size()); }

MINLIB_EXPORT void _opRegGet(int idx, const char** name, int* is_subgraph_op,
                             const char*** forward_ctx, void*** forward_fp, int* forward_count,
                             const char*** backward_ctx, void*** backward_fp, int* backward_count,
                             const char*** create_ctx, void*** create_fp, int* create_count,
                             void** parse, void** type, void** stype, void** shape, void** mutate) {
  minlib::OpDef& op = minlib::Ops().at(idx);
  *name = op.name;
  *is_subgraph_op = 0;
  *forward_ctx = op.forward_ctx.data();
  *forward_fp = reinterpret_cast<void**>(op.forward.data());
  *forward_count = static_cast<int>(op.forward.size());
  *backward_ctx = op.backward_ctx.data();
  *backward_fp = reinterpret_cast<void**>(op.backward.data());
  *backward_count = static_cast<int>(op.backward.size());
  *create_ctx = op.create_ctx.data();
  *create_fp = reinterpret_cast<void**>(op.create.data());
  *create_count = static_cast<int>(op.create.size());
  *parse = reinterpret_cast<void*>(op.parse);
  *type = reinterpret_cast<void*>(op.type);
  *stype = nullptr;
  *shape = reinterpret_cast<void*>(op.shape);
  *mutate = reinterpret_cast<void*>(op.mutate);
}

MINLIB_EXPORT void _opCallFree(void* ptr) { std::free(ptr); }

MINLIB_EXPORT int _opCallParseAttrs(void* parse, const char* const* keys, const char* const* vals,
                                    int num, int* num_in, int* num_out) {
  return reinterpret_cast<minlib::ParseFn>(parse)(minlib::detail::ToAttrs(keys, vals, num), num_in,
                                                  num_out);
}

MINLIB_EXPORT int _opCallInferShape(void* shape_fn, const char* const* keys,
                                    const char* const* vals, int num, unsigned int** inshapes,
                                    int* indims, int num_in, unsigned int*** mod_inshapes,
                                    int** mod_indims, unsigned int*** outshapes, int** outdims,
                                    int num_out) {
  std::vector<minlib::Shape> in(num_in), out(num_out);
  for (int i = 0; i < num_in; ++i) in[i].assign(inshapes[i], inshapes[i] + indims[i]);
  if (!reinterpret_cast<minlib::ShapeFn>(shape_fn)(minlib::detail::ToAttrs(keys, vals, num), &in,
                                                   &out))
    return 0;
  // Arrays the host frees with _opCallFree.
  *mod_inshapes = static_cast<unsigned int**>(std::malloc(sizeof(unsigned int*) * (num_in + 1)));
  *mod_indims = static_cast<int*>(std::malloc(sizeof(int) * (num_in + 1)));
  for (int i = 0; i < num_in; ++i) {
    (*mod_inshapes)[i] = minlib::detail::CopyOut(in[i]);
    (*mod_indims)[i] = static_cast<int>(in[i].size());
  }
  *outshapes = static_cast<unsigned int**>(std::malloc(sizeof(unsigned int*) * (num_out + 1)));
  *outdims = static_cast<int*>(std::malloc(sizeof(int) * (num_out + 1)));
  for (int i = 0; i < num_out; ++i) {
    (*outshapes)[i] = minlib::detail::CopyOut(out[i]);
    (*outdims)[i] = static_cast<int>(out[i].size());
  }
  return 1;
}

MINLIB_EXPORT int _opCallInferType(void* type_fn, const char* const* keys, const char* const* vals,
                                   int num, int* intypes, int num_in, int* outtypes, int num_out) {
  std::vector<int> in(intypes, intypes + num_in), out(outtypes, outtypes + num_out);
  if (!reinterpret_cast<minlib::TypeFn>(type_fn)(minlib::detail::ToAttrs(keys, vals, num), &in,
                                                 &out))
    return 0;
  std::copy(in.begin(), in.end(), intypes);
  std::copy(out.begin(), out.end(), outtypes);
  return 1;
}

MINLIB_EXPORT int _opCallInferSType(void*, const char* const*, const char* const*, int, int*, int,
                                    int*, int) {
  return minlib::Fail("this library has dense ops only");
}

MINLIB_EXPORT int _opCallMutateInputs(void* mutate_fn, const char* const* keys,
                                      const char* const* vals, int num, int** indices, int* size) {
  std::vector<int> mutated;
  if (!reinterpret_cast<minlib::MutateFn>(mutate_fn)(minlib::detail::ToAttrs(keys, vals, num),
                                                     &mutated))
    return 0;
  *indices = minlib::detail::CopyOut(mutated);
  *size = static_cast<int>(mutated.size());
  return 1;
}

#define MINLIB_COMPUTE_PARAMS                                                                      \
  const int64_t **inshapes, int *indims, void **indata, int *intypes, size_t *,                    \
      const char **indev, int *indev_id, int num_in, const int64_t **outshapes, int *outdims,      \
      void **outdata, int *outtypes, size_t *, const char **outdev, int *outdev_id, int num_out,   \
      minlib::MallocFn cpu_malloc, void *cpu_alloc, void *, void *, void *, void *, void *, int *, \
      int *, void **, void **, void **, void **, int64_t *, int64_t *, int64_t *, int64_t *,       \
      void *rng_cpu, void *

#define MINLIB_TENSORS_AND_RESOURCE                                                          \
  std::vector<minlib::Tensor> in =                                                           \
      minlib::detail::ToTensors(inshapes, indims, indata, intypes, indev, indev_id, num_in); \
  std::vector<minlib::Tensor> out = minlib::detail::ToTensors(                               \
      outshapes, outdims, outdata, outtypes, outdev, outdev_id, num_out);                    \
  minlib::Resource res { cpu_malloc, cpu_alloc, static_cast<std::mt19937*>(rng_cpu) }

MINLIB_EXPORT int _opCallFCompute(void* fn, const char* const* keys, const char* const* vals,
                                  int num, MINLIB_COMPUTE_PARAMS) {
  MINLIB_TENSORS_AND_RESOURCE;
  return reinterpret_cast<minlib::ComputeFn>(fn)(minlib::detail::ToAttrs(keys, vals, num), &in,
                                                 &out, res);
}

MINLIB_EXPORT int _opCallCreateOpState(void* create_fn, const char* const* keys,
                                       const char* const* vals, int num, const char* dev_type, int,
                                       unsigned int** inshapes, int* indims, int num_in,
                                       const int* intypes, void** state) {
  std::vector<minlib::Shape> shapes(num_in);
  for (int i = 0; i < num_in; ++i) shapes[i].assign(inshapes[i], inshapes[i] + indims[i]);
  minlib::StatefulOp* op = nullptr;
  if (!reinterpret_cast<minlib::CreateFn>(create_fn)(
          minlib::detail::ToAttrs(keys, vals, num), dev_type, shapes,
          std::vector<int>(intypes, intypes + num_in), &op))
    return 0;
  *state = op;
  return 1;
}

MINLIB_EXPORT void _opCallDestroyOpState(void* state) {
  delete static_cast<minlib::StatefulOp*>(state);
}

MINLIB_EXPORT int _opCallFStatefulCompute(int is_forward, void* state, MINLIB_COMPUTE_PARAMS) {
  MINLIB_TENSORS_AND_RESOURCE;
  auto* op = static_cast<minlib::StatefulOp*>(state);
  return is_forward ? op->Forward(&in, &out, res) : op->Backward(&in, &out, res);
}

// MXNet's loader looks these up too; this library has no partitioners and no graph passes.
MINLIB_EXPORT int _partRegSize() { return 0; }
MINLIB_EXPORT int _passRegSize() { return 0; }
#define MINLIB_UNUSED_ENTRY(name) \
  MINLIB_EXPORT int name() { return minlib::Fail(#name " is not implemented by this library"); }
MINLIB_UNUSED_ENTRY(_partRegGetCount)
MINLIB_UNUSED_ENTRY(_partRegGet)
MINLIB_UNUSED_ENTRY(_partCallSupportedOps)
MINLIB_UNUSED_ENTRY(_partCallCreateSelector)
MINLIB_UNUSED_ENTRY(_partCallSelect)
MINLIB_UNUSED_ENTRY(_partCallSelectInput)
MINLIB_UNUSED_ENTRY(_partCallSelectOutput)
MINLIB_UNUSED_ENTRY(_partCallFilter)
MINLIB_UNUSED_ENTRY(_partCallReset)
MINLIB_UNUSED_ENTRY(_partCallReviewSubgraph)
MINLIB_UNUSED_ENTRY(_passRegGet)
MINLIB_UNUSED_ENTRY(_passCallGraphPass)

#endif  // MXPLUG_TESTS_MXNET_LIB_LIB_API_MIN_H_
