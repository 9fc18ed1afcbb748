// Registers Convolution and Deconvolution (convolution.h) and their CPU kernels: the unrolled
// kernel over OpenBLAS (CpuBlas) and the CPU's spatial primitives below, behind oneDNN's
// convolution for float32 where the plugin has oneDNN.
#include "convolution.h"

#include <cstring>
#include <vector>

#include "blas.h"
#include "mxplug/plugin.hpp"
#include "onednn/onednn.h"

namespace {

using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug_nn::ConvolutionParam;
using mxplug_nn::DeconvolutionParam;
using mxplug_nn::Window;

MXPLUG_REGISTER_PARAMETER(ConvolutionParam);
MXPLUG_REGISTER_PARAMETER(DeconvolutionParam);

// out[n][f][...] += bias[f]
template <typename T>
void AddBias(T* out, const T* bias, int64_t batch, int64_t channels, int64_t size) {
  using C = mxplug::ComputeType<T>;
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < channels; ++c) {
      T* o = out + (n * channels + c) * size;
      for (int64_t i = 0; i < size; ++i) o[i] = static_cast<T>(C(o[i]) + C(bias[c]));
    }
}

// bias gradient: the output gradient summed over batch and space (in float for float16).
template <typename T>
void BiasGradient(const T* og, T* db, OpReqType req, int64_t batch, int64_t channels,
                  int64_t size) {
  if (req == mxplug::kNullOp) return;
  for (int64_t c = 0; c < channels; ++c) {
    mxplug::ComputeType<T> sum = 0;
    for (int64_t n = 0; n < batch; ++n) {
      const T* g = og + (n * channels + c) * size;
      for (int64_t i = 0; i < size; ++i) sum += g[i];
    }
    mxplug::StoreAs(db[c], req, sum);
  }
}

struct CpuSpatial {
  // Every (tap, position)'s image element, computed once per call and shared by every image.
  struct Plan {
    const Window* w;
    std::vector<int64_t> map;
  };
  template <typename T>
  static Plan MakePlan(const Window& w) {
    return {&w, mxplug_nn::TapMap(w)};
  }
  template <typename T>
  static void Im2Col(const mxplug::OpContext&, const Plan& p, int64_t channels, const T* image,
                     T* col) {
    mxplug_nn::Im2Col(*p.w, p.map, channels, image, col);
  }
  template <typename T>
  static void Col2Im(const mxplug::OpContext&, const Plan& p, int64_t channels, const T* col,
                     T* image, OpReqType req) {
    if (req == mxplug::kNullOp) return;
    if (req != mxplug::kAddTo) std::memset(image, 0, sizeof(T) * channels * p.w->ImageSize());
    mxplug_nn::Col2ImAdd(*p.w, p.map, channels, col, image);
  }
  template <typename T>
  static void AddChannelBias(const mxplug::OpContext&, T* out, const T* bias, int64_t batch,
                             int64_t channels, int64_t size) {
    AddBias(out, bias, batch, channels, size);
  }
  template <typename T>
  static void ChannelBiasGradient(const mxplug::OpContext&, const T* og, T* db, OpReqType req,
                                  int64_t batch, int64_t channels, int64_t size) {
    BiasGradient(og, db, req, batch, channels, size);
  }
  // oneDNN computes float32 convolutions; it has no deconvolution here (MXNet's has one).
  template <bool kDeconv>
  static bool FusedForward(const mxplug::OpContext& ctx, const mxplug_nn::ConvShape& s,
                           const TBlob& data, const TBlob& weight, const TBlob* bias,
                           const TBlob& out, OpReqType req) {
    return !kDeconv && mxplug_nn::onednn::ConvolutionForward(ctx, s, data, weight, bias, out, req);
  }
  template <bool kDeconv>
  static bool FusedBackward(const mxplug::OpContext& ctx, const mxplug_nn::ConvShape& s,
                            const TBlob& out_grad, const TBlob& data, const TBlob& weight,
                            const mxplug_nn::LayerGrads& grads) {
    return !kDeconv &&
           mxplug_nn::onednn::ConvolutionBackward(ctx, s, out_grad, data, weight, grads);
  }
};

[[maybe_unused]] const bool registered = [] {
  mxplug::RegisterOpProperty<mxplug_nn::ConvolutionProp<false>>("Convolution")
      .describe(
          "Convolution over 1-d, 2-d or 3-d channels-first data: out[n, f] = bias[f] + sum over "
          "the "
          "channels c of its group of weight[f, c] correlated with data[n, c], with stride, "
          "dilation "
          "and "
          "zero padding per axis.")
      .add_argument("data", "NDArray-or-Symbol",
                    "Input data: (batch, channel, [depth, height,] width).")
      .add_argument("weight", "NDArray-or-Symbol",
                    "Weight: (num_filter, channel / num_group, *kernel).")
      .add_argument("bias", "NDArray-or-Symbol", "Bias: (num_filter,).")
      .add_arguments(ConvolutionParam::Fields());

  // MXNet 0.x's Convolution, kept by MXNet 1.9.1: the same arguments and results.
  mxplug::RegisterOpProperty<mxplug_nn::ConvolutionProp<false>>("Convolution_v1")
      .describe("MXNet 0.x's Convolution (deprecated): the same as Convolution.")
      .add_argument("data", "NDArray-or-Symbol", "Input data to the ConvolutionV1Op.")
      .add_argument("weight", "NDArray-or-Symbol", "Weight matrix.")
      .add_argument("bias", "NDArray-or-Symbol", "Bias parameter.")
      .add_arguments(ConvolutionParam::Fields());

  mxplug::RegisterOpProperty<mxplug_nn::ConvolutionProp<true>>("Deconvolution")
      .describe(
          "Transposed convolution (the gradient of Convolution with respect to its data): each "
          "input "
          "position scatters weight-scaled copies of the kernel onto the output, which has size "
          "stride * (in - 1) + dilate * (kernel - 1) + 1 - 2 * pad + adj per axis.")
      .add_argument("data", "NDArray-or-Symbol",
                    "Input data: (batch, channel, [depth, height,] width).")
      .add_argument("weight", "NDArray-or-Symbol",
                    "Weight: (channel, num_filter / num_group, *kernel).")
      .add_argument("bias", "NDArray-or-Symbol", "Bias: (num_filter,).")
      .add_arguments(DeconvolutionParam::Fields());
  mxplug_nn::RegisterConvolutionKernels<mxplug_nn::CpuBlas, CpuSpatial>(kDLCPU);
  return true;
}();

}  // namespace
