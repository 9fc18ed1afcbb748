/*!
 * \file plugins/mxnet_lib/lib_api.h
 * \brief The host side of MXNet 1.9's custom-op library interface (its include/mxnet/lib_api.h,
 * MX_LIBRARY_VERSION 11): the C entry points a library exports, as the host calls them, and the
 * library as the adapter holds it.
 *
 * Only C types cross this boundary (Note [What crosses the lib_api boundary] in
 * tests/mxnet_lib/lib_api_min.h): the library's functions for an op (parse, infer shape, forward,
 * create state...) reach the host as opaque pointers, which it hands back to the library's
 * _opCall* entry points; so none of lib_api.h's C++ classes is needed here.
 */
#ifndef MXPLUG_PLUGINS_MXNET_LIB_LIB_API_H_
#define MXPLUG_PLUGINS_MXNET_LIB_LIB_API_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

namespace mxplug::mxnet_lib {

/*! \brief The library interface version this adapter speaks: MXNet 1.9's. */
constexpr int kLibraryVersion = 11;
/*! \brief What initialize() is told: the MXNet release whose behaviour mxplug follows. */
constexpr int kMXNetVersion = 10901;
/*! \brief How many CPU random generators a library may index (MX_NUM_CPU_RANDOM_STATES). */
constexpr int kCpuRandomStates = 1024;

using OpaqueFn = void*;  // one of the library's own functions, passed back to it unread
using XpuMallocFn = void* (*)(void* alloc, int bytes);

// The library's entry points, by the names MXNet looks up.
using OpVersionFn = int (*)();
using InitializeFn = int (*)(int version);
using MsgSizeFn = int (*)();
using MsgGetFn = void (*)(int idx, const char** msg);
using RegSizeFn = int (*)();
using OpRegGetFn = void (*)(int idx, const char** name, int* is_subgraph_op,
                            const char*** forward_ctx, OpaqueFn** forward, int* forward_count,
                            const char*** backward_ctx, OpaqueFn** backward, int* backward_count,
                            const char*** create_ctx, OpaqueFn** create, int* create_count,
                            OpaqueFn* parse, OpaqueFn* infer_type, OpaqueFn* infer_stype,
                            OpaqueFn* infer_shape, OpaqueFn* mutate);
using CallFreeFn = void (*)(void* ptr);
using CallParseAttrsFn = int (*)(OpaqueFn parse, const char* const* keys, const char* const* vals,
                                 int num, int* num_in, int* num_out);
using CallInferShapeFn = int (*)(OpaqueFn infer_shape, const char* const* keys,
                                 const char* const* vals, int num, unsigned int** inshapes,
                                 int* indims, int num_in, unsigned int*** mod_inshapes,
                                 int** mod_indims, unsigned int*** outshapes, int** outdims,
                                 int num_out);
using CallInferTypeFn = int (*)(OpaqueFn infer_type, const char* const* keys,
                                const char* const* vals, int num, int* intypes, int num_in,
                                int* outtypes, int num_out);
using CallMutateInputsFn = int (*)(OpaqueFn mutate, const char* const* keys,
                                   const char* const* vals, int num, int** indices, int* size);
using CallCreateOpStateFn = int (*)(OpaqueFn create, const char* const* keys,
                                    const char* const* vals, int num, const char* dev_type,
                                    int dev_id, unsigned int** inshapes, int* indims, int num_in,
                                    const int* intypes, void** state);
using CallDestroyOpStateFn = void (*)(void* state);

// The tensors and services of one compute call, in the order _opCallFCompute and
// _opCallFStatefulCompute take them after their first arguments.
#define MXPLUG_LIB_API_COMPUTE_ARGS                                                                \
  const int64_t **inshapes, int *indims, void **indata, int *intypes, size_t *inIDs,               \
      const char **indev_type, int *indev_id, int num_in, const int64_t **outshapes, int *outdims, \
      void **outdata, int *outtypes, size_t *outIDs, const char **outdev_type, int *outdev_id,     \
      int num_out, XpuMallocFn cpu_malloc, void *cpu_alloc, XpuMallocFn gpu_malloc,                \
      void *gpu_alloc, void *cuda_stream, void *sparse_malloc, void *sparse_alloc, int *instypes,  \
      int *outstypes, void **in_indices, void **out_indices, void **in_indptr, void **out_indptr,  \
      int64_t *in_indices_shapes, int64_t *out_indices_shapes, int64_t *in_indptr_shapes,          \
      int64_t *out_indptr_shapes, void *rng_cpu_states, void *rng_gpu_states
using CallFComputeFn = int (*)(OpaqueFn fcomp, const char* const* keys, const char* const* vals,
                               int num, MXPLUG_LIB_API_COMPUTE_ARGS);
using CallFStatefulComputeFn = int (*)(int is_forward, void* state, MXPLUG_LIB_API_COMPUTE_ARGS);
#undef MXPLUG_LIB_API_COMPUTE_ARGS

/*! \brief A loaded library's entry points, and what it said when a call failed. */
struct Library {
  std::string path;
  CallFreeFn call_free = nullptr;
  CallParseAttrsFn parse_attrs = nullptr;
  CallInferShapeFn infer_shape = nullptr;
  CallInferTypeFn infer_type = nullptr;
  CallMutateInputsFn mutate_inputs = nullptr;
  CallFComputeFn fcompute = nullptr;
  CallCreateOpStateFn create_op_state = nullptr;
  CallDestroyOpStateFn destroy_op_state = nullptr;
  CallFStatefulComputeFn stateful_compute = nullptr;
  MsgSizeFn msg_size = nullptr;  // optional
  MsgGetFn msg_get = nullptr;

  /*!
   * \brief What failed and why, as MXNet says it: "Error calling <what> for custom operator
   * '<op>'" and, under "Extension Traceback:", the messages the library added (MX_ERROR_MSG)
   * since the last failure; MXNet repeats every earlier one too.
   */
  std::string Failure(const std::string& what, const std::string& op) const;

  /*! \brief The CPU generators handed to compute calls, seeded from the host's random stream
   * (reseeded when that stream's key changes: mx.random.seed). */
  std::mt19937* CpuRandomStates(uint64_t key);

 private:
  mutable std::mutex mu_;
  mutable int messages_seen_ = 0;
  std::unique_ptr<std::mt19937[]> cpu_random_;
  uint64_t cpu_random_key_ = 0;
};

/*! \brief One op of a library: its functions per context ("cpu", "gpu"). */
struct LibOp {
  Library* lib = nullptr;
  std::string name;
  OpaqueFn parse = nullptr, infer_type = nullptr, infer_shape = nullptr, mutate = nullptr;
  std::map<std::string, OpaqueFn> forward, backward, create;
  bool stateful() const { return !create.empty(); }
};

}  // namespace mxplug::mxnet_lib

#endif  // MXPLUG_PLUGINS_MXNET_LIB_LIB_API_H_
