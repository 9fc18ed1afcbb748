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

constexpr int kMaxConvAxes = 3;

/*! \brief A call's window, passed to kernels by value. */
struct ConvGeometry {
  int axes = 0;
  int64_t image[kMaxConvAxes] = {}, positions[kMaxConvAxes] = {}, kernel[kMaxConvAxes] = {};
  int64_t stride[kMaxConvAxes] = {}, dilate[kMaxConvAxes] = {}, pad[kMaxConvAxes] = {};
  int64_t taps = 1, npos = 1, nimage = 1;  // K, P and I of the window

  /*! \brief The image element tap t of position p reads, or -1 in padding. */
  __device__ int64_t Source(int64_t t, int64_t p) const {
    int64_t k[kMaxConvAxes], q[kMaxConvAxes];
    for (int a = axes - 1; a >= 0; --a) {
      k[a] = t % kernel[a], t /= kernel[a];
      q[a] = p % positions[a], p /= positions[a];
    }
    int64_t idx = 0;
    for (int a = 0; a < axes; ++a) {
      const int64_t i = q[a] * stride[a] - pad[a] + k[a] * dilate[a];
      if (i < 0 || i >= image[a]) return -1;
      idx = idx * image[a] + i;
    }
    return idx;
  }
};

template <class T>
struct Im2ColElements {
  ConvGeometry g;
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
  ConvGeometry g;
  const T* col;
  T* image;
  int req;
  __device__ void operator()(int64_t e) const {  // e = c * I + i
    const int64_t c = e / g.nimage;
    int64_t x[kMaxConvAxes], rest = e % g.nimage;
    for (int a = g.axes - 1; a >= 0; --a) x[a] = rest % g.image[a], rest /= g.image[a];
    mxplug::ComputeType<T> sum = 0;
    for (int64_t t = 0; t < g.taps; ++t) {
      int64_t k = t, p = 0, scale = 1;
      bool inside = true;
      for (int a = g.axes - 1; a >= 0 && inside; --a) {
        const int64_t ka = k % g.kernel[a];
        k /= g.kernel[a];
        const int64_t num = x[a] + g.pad[a] - ka * g.dilate[a];
        const int64_t q = num / g.stride[a];
        inside = num >= 0 && q * g.stride[a] == num && q < g.positions[a];
        p += q * scale, scale *= g.positions[a];
      }
      if (inside) sum += static_cast<mxplug::ComputeType<T>>(col[(c * g.taps + t) * g.npos + p]);
    }
    mxplug::StoreAs<mxplug::ComputeType<T>>(image[e], req, sum);
  }
};

template <class T>
struct AddChannelBiasElements {
  T* out;
  const T* bias;
  int64_t channels, size;
  __device__ void operator()(int64_t i) const { out[i] += bias[(i / size) % channels]; }
};

struct GpuSpatial {
  template <typename T>
  static ConvGeometry MakePlan(const Window& w) {
    if (w.axes() > kMaxConvAxes)
      throw std::invalid_argument(std::string("convolutions on ") + kGpuName + " have up to " +
                                  std::to_string(kMaxConvAxes) + " spatial axes, not " +
                                  std::to_string(w.axes()));
    ConvGeometry g;
    g.axes = w.axes();
    for (int a = 0; a < g.axes; ++a) {
      g.image[a] = w.image[a], g.positions[a] = w.positions[a], g.kernel[a] = w.kernel[a];
      g.stride[a] = w.stride[a], g.dilate[a] = w.dilate[a], g.pad[a] = w.pad[a];
    }
    g.taps = w.KernelSize(), g.npos = w.PositionCount(), g.nimage = w.ImageSize();
    return g;
  }
  template <typename T>
  static void Im2Col(const OpContext& ctx, const ConvGeometry& g, int64_t channels, const T* image,
                     T* col) {
    ForEach(channels * g.taps * g.npos, StreamOf(ctx), Im2ColElements<T>{g, image, col});
  }
  template <typename T>
  static void Col2Im(const OpContext& ctx, const ConvGeometry& g, int64_t channels, const T* col,
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
