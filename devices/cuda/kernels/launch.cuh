// What every CUDA kernel of the plugin shares: the stream of the engine worker running it, a
// grid-stride launch of a functor over n elements (CudaLoop), and zeroing a gradient.
#ifndef MXPLUG_DEVICES_CUDA_KERNELS_LAUNCH_CUH_
#define MXPLUG_DEVICES_CUDA_KERNELS_LAUNCH_CUH_

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_check.h"
#include "mxplug/plugin.hpp"

namespace mxplug_cuda {

/*!
 * \brief Whether ops use the project's portable kernels (portable_gemm.cuh) instead of the
 * vendor's libraries: always under HIP (Debian 12 has no rocBLAS or MIOpen); on CUDA when
 * MXPLUG_CUDA_PORTABLE_KERNELS=1, read once when the plugin registers its kernels, so that the
 * kernels HIP runs are checked on NVIDIA GPUs.
 */
inline bool UsePortableKernels() {
#if defined(MXPLUG_HIP)
  return true;
#else
  static const bool chosen = [] {
    const char* v = std::getenv("MXPLUG_CUDA_PORTABLE_KERNELS");
    return v && std::string(v) == "1";
  }();
  return chosen;
#endif
}

constexpr int kThreads = 256;
// Enough blocks to fill an H100 many times over; a grid-stride loop covers any n.
constexpr int64_t kMaxBlocks = 1 << 16;

/*! \brief The stream the host gave this call (the worker's; Note [Native streams]). */
inline cudaStream_t StreamOf(const mxplug::OpContext& ctx) {
  return ctx.run_ctx.get_stream<cudaStream_t>();
}

template <class F>
__global__ void ForEachKernel(int64_t n, F f) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    f(i);
}

/*! \brief Runs f(i) for i in [0, n) on `stream`, one thread per element. */
template <class F>
void ForEach(int64_t n, cudaStream_t stream, const F& f) {
  if (n <= 0) return;
  const int64_t blocks = std::min<int64_t>((n + kThreads - 1) / kThreads, kMaxBlocks);
  ForEachKernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(n, f);
  Check(cudaGetLastError(), ("launching a kernel over " + std::to_string(n) + " elements").c_str());
}

/*! \brief Zeros into `grad` as `req` says (an input with no gradient); all-zero bits are 0 in
 * every dtype. */
inline void ZeroGradient(const mxplug::TBlob& grad, mxplug::OpReqType req, cudaStream_t stream) {
  if (req == mxplug::kNullOp || req == mxplug::kAddTo || grad.Size() == 0) return;
  Check(cudaMemsetAsync(grad.dptr_, 0, grad.Size() * mxplug::DTypeSize(grad.type_flag_), stream),
        "zeroing a gradient");
}

/*! \brief The device loop of kernels written once for every device (mxplug::CpuLoop's
 * counterpart): a thread per element, on the call's stream. */
struct CudaLoop {
  template <class F>
  static void Run(const mxplug::OpContext& ctx, int64_t n, const F& f) {
    ForEach(n, StreamOf(ctx), f);
  }
  static void Zero(const mxplug::OpContext& ctx, const mxplug::TBlob& grad, mxplug::OpReqType req) {
    ZeroGradient(grad, req, StreamOf(ctx));
  }
};

// Broadcast index arithmetic on the device: at most kMaxDims axes.
constexpr int kMaxDims = 8;

/*! \brief An output shape and, for up to two inputs, their element strides along it (0 on axes
 * that broadcast), passed to kernels by value. */
struct BroadcastIndex {
  int ndim = 0;
  int64_t shape[kMaxDims] = {};
  int64_t stride[2][kMaxDims] = {};

  /*! \brief Maps output element `o` to the elements of input 0 and 1 it reads. */
  __device__ void Map(int64_t o, int64_t* i0, int64_t* i1) const {
    int64_t a = 0, b = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t k = o % shape[d];
      o /= shape[d];
      a += k * stride[0][d], b += k * stride[1][d];
    }
    *i0 = a, *i1 = b;
  }
};

/*! \brief The index of `out` broadcast from inputs of shapes a and b (NumPy's rules). */
inline BroadcastIndex MakeBroadcastIndex(const mxplug::TShape& out, const mxplug::TShape& a,
                                         const mxplug::TShape& b) {
  if (out.ndim() > kMaxDims)
    throw std::invalid_argument(std::string("broadcasting on ") + kGpuName + " supports up to " +
                                std::to_string(kMaxDims) + " axes, not " +
                                std::to_string(out.ndim()));
  BroadcastIndex ix;
  ix.ndim = out.ndim();
  const mxplug::TShape* in[2] = {&a, &b};
  for (int which = 0; which < 2; ++which) {
    int64_t stride = 1;
    for (int d = out.ndim() - 1; d >= 0; --d) {
      const int j = in[which]->ndim() - out.ndim() + d;
      const int64_t extent = j >= 0 ? (*in[which])[j] : 1;
      ix.stride[which][d] = extent == 1 ? 0 : stride;
      stride *= extent;
    }
  }
  for (int d = 0; d < out.ndim(); ++d) ix.shape[d] = out[d];
  return ix;
}

}  // namespace mxplug_cuda

#endif  // MXPLUG_DEVICES_CUDA_KERNELS_LAUNCH_CUH_
