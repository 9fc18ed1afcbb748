// What every cuDNN caller of the CUDA plugin shares (cudnn_convolution.cc, cudnn_layers.cc): the
// handle per device and stream, tensor descriptors, the scaling factors that say "write" or "add",
// and the rule for errors. Host code only, and only in builds with cuDNN (MXPLUG_CUDNN).
//
// Note [cuDNN errors]: while a call is being set up (descriptors, algorithms), cuDNN's "not
// supported" means "let the project's kernel do it": the setup throws NotSupported, the caller
// returns false and the op's own kernel runs. Once any work is queued, every failure is an error,
// so that nothing is computed twice or half.
#ifndef MXPLUG_DEVICES_CUDA_KERNELS_CUDNN_COMMON_H_
#define MXPLUG_DEVICES_CUDA_KERNELS_CUDNN_COMMON_H_

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <map>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "mxplug/plugin.hpp"

namespace mxplug_cuda {
namespace cudnn {

/*! \brief Thrown while setting up for what cuDNN does not take (Note [cuDNN errors]). */
struct NotSupported {};

inline void Check(cudnnStatus_t status, const std::string& call, bool setting_up = true) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  if (status == CUDNN_STATUS_ALLOC_FAILED) throw std::bad_alloc();
  if (status == CUDNN_STATUS_NOT_SUPPORTED && setting_up) throw NotSupported{};
  throw std::runtime_error(call + ": " + cudnnGetErrorString(status));
}
/*! \brief For a call that queues work: every failure is an error. */
inline void CheckRun(cudnnStatus_t status, const char* call) { Check(status, call, false); }

inline int CurrentDevice() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) throw std::runtime_error("cudaGetDevice failed");
  return device;
}

inline cudaStream_t StreamOf(const mxplug::OpContext& ctx) {
  return ctx.run_ctx.get_stream<cudaStream_t>();
}

/*! \brief The cuDNN handle of the current device for `stream` (as Note [cuBLAS handles]). */
inline cudnnHandle_t HandleFor(cudaStream_t stream) {
  static std::mutex mutex;
  static std::map<std::pair<int, cudaStream_t>, cudnnHandle_t> handles;
  const int device = CurrentDevice();
  std::lock_guard<std::mutex> lock(mutex);
  cudnnHandle_t& h = handles[{device, stream}];
  if (!h) {
    cudnnHandle_t made = nullptr;
    Check(cudnnCreate(&made), "cudnnCreate on cuda(" + std::to_string(device) + ")");
    Check(cudnnSetStream(made, stream), "cudnnSetStream");
    h = made;
  }
  return h;
}
inline cudnnHandle_t HandleFor(const mxplug::OpContext& ctx) { return HandleFor(StreamOf(ctx)); }

/*! \brief cuDNN's type for an mxplug dtype flag. \throws NotSupported for the others. */
inline cudnnDataType_t DataType(int type_flag) {
  switch (type_flag) {
    case kMXPFloat32:
      return CUDNN_DATA_FLOAT;
    case kMXPFloat64:
      return CUDNN_DATA_DOUBLE;
    case kMXPFloat16:
      return CUDNN_DATA_HALF;
    default:
      throw NotSupported{};
  }
}

/*! \brief A dimension as cuDNN's int. \throws NotSupported past its range. */
inline int Int(int64_t v) {
  if (v > 0x7fffffff) throw NotSupported{};
  return static_cast<int>(v);
}

/*! \brief A tensor descriptor, destroyed with its owner. */
struct TensorDesc {
  cudnnTensorDescriptor_t d = nullptr;
  TensorDesc() { Check(cudnnCreateTensorDescriptor(&d), "cudnnCreateTensorDescriptor"); }
  ~TensorDesc() { cudnnDestroyTensorDescriptor(d); }
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
};

/*! \brief Describes a dense row-major tensor of `dims`. */
inline void SetTensor(const TensorDesc& t, cudnnDataType_t dtype, const std::vector<int>& dims) {
  std::vector<int> strides(dims.size());
  int s = 1;
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) strides[i] = s, s *= dims[i];
  Check(cudnnSetTensorNdDescriptor(t.d, dtype, static_cast<int>(dims.size()), dims.data(),
                                   strides.data()),
        "cudnnSetTensorNdDescriptor");
}

/*!
 * \brief A tensor seen as (outer, channels, inner) around one axis, described to cuDNN as the
 * NCHW tensor (outer, channels, inner, 1): cuDNN's per-channel operations (batch normalization,
 * softmax over channels, LRN across channels) then act on that axis whatever its place.
 */
inline void SetAroundAxis(const TensorDesc& t, cudnnDataType_t dtype, const mxplug::TShape& shape,
                          int axis) {
  int64_t outer = 1, channels = 1, inner = 1;
  for (int i = 0; i < shape.ndim(); ++i)
    (i < axis ? outer : i == axis ? channels : inner) *= shape[i];
  if (outer * channels * inner == 0) throw NotSupported{};  // the op's own kernel does nothing
  SetTensor(t, dtype, {Int(outer), Int(channels), Int(inner), 1});
}

/*! \brief 1 and 0 in the type cuDNN's scaling factors take for `dtype` (float for float16 and
 * float32, double for float64): alpha is one(), beta(req) adds for kAddTo and writes otherwise. */
struct Scale {
  float f1 = 1, f0 = 0;
  double d1 = 1, d0 = 0;
  bool is_double;
  explicit Scale(cudnnDataType_t dtype) : is_double(dtype == CUDNN_DATA_DOUBLE) {}
  const void* one() const { return is_double ? static_cast<const void*>(&d1) : &f1; }
  const void* zero() const { return is_double ? static_cast<const void*>(&d0) : &f0; }
  const void* beta(mxplug::OpReqType req) const { return req == mxplug::kAddTo ? one() : zero(); }
};

/*! \brief Whether `req` is one cuDNN's alpha and beta express (write or add). */
inline bool WritesOrAdds(mxplug::OpReqType req) {
  return req == mxplug::kWriteTo || req == mxplug::kWriteInplace || req == mxplug::kAddTo;
}

}  // namespace cudnn
}  // namespace mxplug_cuda

#endif  // MXPLUG_DEVICES_CUDA_KERNELS_CUDNN_COMMON_H_
