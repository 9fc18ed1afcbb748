// GPU kernels of Convolution and Deconvolution: the unrolled kernel of their definition header
// (plugins/nn/convolution.h, Note [One convolution kernel per device]) on the GPU's BLAS
// (gpu_blas.cuh: cuBLAS, or the portable GEMM under HIP and with MXPLUG_CUDA_PORTABLE_KERNELS=1)
// and the spatial primitives below: HIP's convolutions, and CUDA's where cuDNN does not take the
// call (cudnn_off, MXPLUG_CUDA_PORTABLE_KERNELS=1, what cuDNN does not support).
//
// im2col writes each column element from its one image element. Its adjoint, col2im, is a gather:
// each image element sums the column entries of every (tap, position) whose window covers it,
// found by inverting position * stride - pad + tap * dilate = x per axis, so that no two threads
// write one element (no atomics) and the sum's order is fixed by the shapes.
#include <stdexcept>
#include <string>

#if !defined(MXPLUG_HIP)
#include "cudnn_convolution.h"
#endif
#include "gpu_blas.cuh"
#include "launch.cuh"
#include "nn/convolution.h"
#include "reduce.cuh"
#include "tensor/reduce.h"

namespace mxplug_cuda {
namespace {

using mxplug::OpContext;
using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug_nn::Window;

using mxplug_nn::WindowGeometry;

template <class T>
struct Im2ColElements {
  WindowGeometry g;
  const T* image;
  T* col;
  __device__ void operator()(int64_t e) const {  // e = (c * K + t) * P + p
    const int64_t p = e % g.npos, ct = e / g.npos, t = ct % g.taps, c = ct / g.taps;
    const int64_t src = g.Source(t, p);
    col[e] = src < 0 ? T(0) : image[c * g.nimage + src];
  }
};

template <class T>
struct Col2ImElements {
  WindowGeometry g;
  const T* col;
  T* image;
  int req;
  __device__ void operator()(int64_t e) const {  // e = c * I + i
    const int64_t c = e / g.nimage, i = e % g.nimage;
    mxplug::ComputeType<T> sum = 0;
    for (int64_t t = 0; t < g.taps; ++t) {
      const int64_t q = g.Reader(i, t);
      if (q >= 0) sum += static_cast<mxplug::ComputeType<T>>(col[(c * g.taps + t) * g.npos + q]);
    }
    mxplug::StoreAs<mxplug::ComputeType<T>>(image[e], req, sum);
  }
};

template <class T>
struct AddChannelBiasElements {
  T* out;
  const T* bias;
  int64_t channels, size;
  __device__ void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    out[i] = static_cast<T>(static_cast<C>(out[i]) + static_cast<C>(bias[(i / size) % channels]));
  }
};

struct GpuSpatial {
  template <typename T>
  static WindowGeometry MakePlan(const Window& w) {
    return mxplug_nn::MakeWindowGeometry(w);
  }
  template <typename T>
  static void Im2Col(const OpContext& ctx, const WindowGeometry& g, int64_t channels,
                     const T* image, T* col) {
    ForEach(channels * g.taps * g.npos, StreamOf(ctx), Im2ColElements<T>{g, image, col});
  }
  template <typename T>
  static void Col2Im(const OpContext& ctx, const WindowGeometry& g, int64_t channels, const T* col,
                     T* image, OpReqType req) {
    if (req == mxplug::kNullOp) return;
    ForEach(channels * g.nimage, StreamOf(ctx), Col2ImElements<T>{g, col, image, req});
  }
  template <typename T>
  static void AddChannelBias(const OpContext& ctx, T* out, const T* bias, int64_t batch,
                             int64_t channels, int64_t size) {
    ForEach(batch * channels * size, StreamOf(ctx),
            AddChannelBiasElements<T>{out, bias, channels, size});
  }
  template <typename T>
  static void ChannelBiasGradient(const OpContext& ctx, const T* og, T* db, OpReqType req,
                                  int64_t batch, int64_t channels, int64_t size) {
    if (req == mxplug::kNullOp) return;
    using Sum = mxplug_tensor::Reducer<mxplug_tensor::ReduceKind::kSum>;
    ReduceEach<Sum>(MakeReduceIndex(mxplug::TShape{batch, channels, size}, {true, false, true}),
                    mxplug::ComputeType<T>(0), StreamOf(ctx), LoadElement<T>{og},
                    StoreReduced<T>{db, req});
  }
  // cuDNN's whole convolution on CUDA (cudnn_convolution.h), unless the portable kernels were
  // chosen; HIP has no MIOpen on Debian 12.
  template <bool kDeconv>
  static bool FusedForward(const OpContext& ctx, const mxplug_nn::ConvShape& s, const TBlob& data,
                           const TBlob& weight, const TBlob* bias, const TBlob& out,
                           OpReqType req) {
#if defined(MXPLUG_HIP)
    return false;
#else
    return !UsePortableKernels() &&
           CudnnConvolutionForward(kDeconv, ctx, s, data, weight, bias, out, req);
#endif
  }
  template <bool kDeconv>
  static bool FusedBackward(const OpContext& ctx, const mxplug_nn::ConvShape& s,
                            const TBlob& out_grad, const TBlob& data, const TBlob& weight,
                            const mxplug_nn::LayerGrads& grads) {
#if defined(MXPLUG_HIP)
    return false;
#else
    return !UsePortableKernels() &&
           CudnnConvolutionBackward(kDeconv, ctx, s, out_grad, data, weight, grads);
#endif
  }
};

[[maybe_unused]] const bool registered = [] {
  WithBlas([](auto blas) {
    mxplug_nn::RegisterConvolutionKernels<decltype(blas), GpuSpatial>(kGpuDevice);
  });
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
