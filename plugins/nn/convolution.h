// Convolution and Deconvolution (1-d, 2-d and 3-d, channels first, grouped, dilated) with
// MXNet's parameters: the definitions (parameters, window, shapes), registered by convolution.cc,
// and the unrolled (im2col + GEMM) kernel every device builds from its own primitives (Note [One
// convolution kernel per device]); a deconvolution is the same pair run the other way (its
// forward is a convolution's data gradient). The CPU's primitives are in convolution.cc, CUDA's
// and HIP's in devices/cuda/kernels/convolution.cu.
#ifndef MXPLUG_PLUGINS_NN_CONVOLUTION_H_
#define MXPLUG_PLUGINS_NN_CONVOLUTION_H_

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "matmul.h"
#include "mxplug/plugin.hpp"
#include "spatial.h"

namespace mxplug_nn {

using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;

enum CudnnTune { kTuneOff, kTuneLimited, kTuneFastest };

// One parameter struct for both ops: Deconvolution adds adj and target_shape, and its bias is
// off by default (MXNet's defaults).
template <bool kDeconv>
struct ConvParam : mxplug::Parameter<ConvParam<kDeconv>> {
  TShape kernel, stride, dilate, pad, adj, target_shape;
  int num_filter;
  int num_group;
  int64_t workspace;
  bool no_bias;
  std::optional<int> cudnn_tune;
  bool cudnn_off;
  std::optional<int> layout;
  MXPLUG_DECLARE_PARAMETER(ConvParam) {
    const TShape empty(std::vector<int64_t>{});
    MXPLUG_DECLARE_FIELD(kernel).describe("Kernel size: (w,), (h, w) or (d, h, w).");
    MXPLUG_DECLARE_FIELD(stride).set_default(empty).describe(
        "Stride per axis. Defaults to 1 for each axis.");
    MXPLUG_DECLARE_FIELD(dilate).set_default(empty).describe(
        "Dilation per axis. Defaults to 1 for each axis.");
    MXPLUG_DECLARE_FIELD(pad).set_default(empty).describe(
        kDeconv ? "Padding per axis, removed from the output. Defaults to no padding."
                : "Zero pad per axis. Defaults to no padding.");
    if constexpr (kDeconv) {
      MXPLUG_DECLARE_FIELD(adj).set_default(empty).describe(
          "Extra size added to one side of each output axis. Ignored when target_shape is set.");
      MXPLUG_DECLARE_FIELD(target_shape)
          .set_default(empty)
          .describe("Output spatial shape; pad and adj are computed from it when it is set.");
    }
    MXPLUG_DECLARE_FIELD(num_filter)
        .set_lower_bound(1)
        .describe(kDeconv ? "Number of output channels."
                          : "Number of convolution filters (output channels).");
    MXPLUG_DECLARE_FIELD(num_group).set_default(1).set_lower_bound(1).describe(
        "Number of groups the channels are split into.");
    MXPLUG_DECLARE_FIELD(workspace)
        .set_default(kDeconv ? 512 : 1024)
        .set_lower_bound(0)
        .describe(
            "Maximum temporary workspace in MB (accepted for compatibility; the CPU path needs one "
            "image's unrolled columns).");
    MXPLUG_DECLARE_FIELD(no_bias).set_default(kDeconv).describe(
        "Whether to disable the bias parameter.");
    MXPLUG_DECLARE_FIELD(cudnn_tune)
        .set_default(std::nullopt)
        .add_enum("off", kTuneOff)
        .add_enum("limited_workspace", kTuneLimited)
        .add_enum("fastest", kTuneFastest)
        .describe("Whether to pick the convolution algorithm by running tests (cuDNN only).");
    MXPLUG_DECLARE_FIELD(cudnn_off).set_default(false).describe("Turn off cuDNN for this layer.");
    mxplug_nn::AddLayoutEnum(
        MXPLUG_DECLARE_FIELD(layout)
            .set_default(std::nullopt)
            .describe("Data layout; only channels-first (NCW, NCHW, NCDHW) is computed on CPU."));
  }

  int axes() const { return kernel.ndim(); }
};
using ConvolutionParam = ConvParam<false>;
using DeconvolutionParam = ConvParam<true>;

// The window of a call: for a convolution the image is the input and the positions are the
// output; for a deconvolution the other way round. Sizes are checked here, at the call.
template <bool kDeconv>
inline Window MakeWindow(const ConvParam<kDeconv>& p, const TShape& data) {
  const int n = p.axes();
  Window w;
  w.kernel.assign(p.kernel.begin(), p.kernel.end());
  w.stride = mxplug_nn::PerAxis(p.stride, n, 1, "stride", 1);
  w.dilate = mxplug_nn::PerAxis(p.dilate, n, 1, "dilate", 1);
  w.pad = mxplug_nn::PerAxis(p.pad, n, 0, "pad", 0);
  std::vector<int64_t> adj =
      kDeconv ? mxplug_nn::PerAxis(p.adj, n, 0, "adj", 0) : std::vector<int64_t>(n, 0);
  const std::vector<int64_t> target =
      kDeconv && p.target_shape.ndim() > 0
          ? mxplug_nn::PerAxis(p.target_shape, n, 0, "target_shape", 1)
          : std::vector<int64_t>{};
  for (int a = 0; a < n; ++a) {
    const int64_t x = data[2 + a];
    if constexpr (kDeconv) {
      int64_t full = w.stride[a] * (x - 1) + w.Dilated(a);
      if (!target.empty()) {  // MXNet's rule: split the excess over pad, the odd one into adj
        if (target[a] > full)
          throw std::invalid_argument("target_shape " + p.target_shape.ToString() +
                                      " is larger than " + std::to_string(full) +
                                      ", the most data " + data.ToString() + " gives on axis " +
                                      std::to_string(a));
        const int64_t excess = full - target[a];
        adj[a] = excess % 2;
        w.pad[a] = (excess + 1) / 2;
      }
      const int64_t out = full - 2 * w.pad[a] + adj[a];
      if (out < 1)
        throw std::invalid_argument("pad " + p.pad.ToString() + " leaves no output for data " +
                                    data.ToString());
      w.image.push_back(out);
      w.positions.push_back(x);
    } else {
      const int64_t padded = x + 2 * w.pad[a];
      if (w.Dilated(a) > padded)
        throw std::invalid_argument(
            "kernel " + p.kernel.ToString() + " (dilated to " + std::to_string(w.Dilated(a)) +
            ") is larger than the padded data (" + std::to_string(padded) + ") on spatial axis " +
            std::to_string(a) + " of data " + data.ToString());
      w.image.push_back(x);
      w.positions.push_back((padded - w.Dilated(a)) / w.stride[a] + 1);
    }
  }
  return w;
}

// How an output is written from a GEMM: over it, or added to it (the GEMM's beta, in the type it
// computes in).
template <typename T>
mxplug::ComputeType<T> Beta(OpReqType req) {
  using C = mxplug::ComputeType<T>;
  return req == mxplug::kAddTo ? C(1) : C(0);
}

// Batch, channel and group sizes of a call.
struct ConvSizes {
  int64_t batch, in_channels, filters, groups;
  int64_t in_per_group() const { return in_channels / groups; }
  int64_t filters_per_group() const { return filters / groups; }
};

template <bool kDeconv>
class ConvolutionProp : public mxplug_nn::WeightedLayerProp {
 public:
  void Init(const mxplug::KwArgs& kwargs) override {
    param_.Init(kwargs);
    if (param_.axes() < 1 || param_.axes() > 3)
      throw std::invalid_argument("kernel " + param_.kernel.ToString() + " has " +
                                  std::to_string(param_.axes()) + " axes; expected 1, 2 or 3");
    for (int64_t k : param_.kernel)
      if (k < 1)
        throw std::invalid_argument("kernel " + param_.kernel.ToString() +
                                    " must be >= 1 on every axis");
    if (param_.num_filter % param_.num_group != 0)
      throw std::invalid_argument("num_filter " + std::to_string(param_.num_filter) +
                                  " is not a multiple of num_group " +
                                  std::to_string(param_.num_group));
    mxplug_nn::CheckLayout(param_.layout, param_.axes());
  }

  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& data = (*in)[0];
    if (data.ndim() < 0) return false;
    const int n = param_.axes();
    if (data.ndim() != n + 2)
      throw std::invalid_argument("data has shape " + data.ToString() + "; expected " +
                                  std::to_string(n + 2) + " axes (batch, channel and " +
                                  std::to_string(n) + " spatial) for kernel " +
                                  param_.kernel.ToString());
    // The batch size may come from the output (MXNet 1.x's partial inference: a recurrent
    // cell's begin state of batch 0 learns it from where its convolution's output goes).
    const TShape& given = (*out)[0];
    if (data[0] < 0 && given.ndim() == data.ndim() && given[0] >= 0) (*in)[0][0] = given[0];
    if (!data.IsKnown()) return false;
    const int64_t channels = data[1], groups = param_.num_group, filters = param_.num_filter;
    if (channels % groups != 0)
      throw std::invalid_argument("data has " + std::to_string(channels) +
                                  " channels, not a multiple of num_group " +
                                  std::to_string(groups));
    const Window w = MakeWindow(param_, data);
    std::vector<int64_t> wshape = kDeconv ? std::vector<int64_t>{channels, filters / groups}
                                          : std::vector<int64_t>{filters, channels / groups};
    wshape.insert(wshape.end(), w.kernel.begin(), w.kernel.end());
    mxplug::InferParameterShape(&(*in)[1], TShape(wshape), "weight", data);
    if (!param_.no_bias) mxplug::InferParameterShape(&(*in)[2], TShape{filters}, "bias", data);
    std::vector<int64_t> oshape{data[0], filters};
    const std::vector<int64_t>& spatial = kDeconv ? w.image : w.positions;
    oshape.insert(oshape.end(), spatial.begin(), spatial.end());
    (*out)[0] = TShape(oshape);
    return true;
  }

 private:
  bool NoBias() const override { return param_.no_bias; }
  ConvParam<kDeconv> param_;
};

// Note [One convolution kernel per device]: the unrolled (im2col) algorithm is written once, here,
// over two device policies: B, the matrix-product BLAS of matmul.h (a batched GEMM over the
// groups), and S, the spatial primitives:
//   S::Plan<T>(w)                       whatever the device precomputes per call for window w
//   S::Im2Col(ctx, plan, channels, image, col)     col[c * K + t][p], zeros in padding
//   S::Col2Im(ctx, plan, channels, col, image, req) the adjoint, written to image as req says
//   S::AddChannelBias(ctx, out, bias, batch, channels, size)
//   S::ChannelBiasGradient(ctx, og, db, req, batch, channels, size)
//   S::Zero(ctx, blob)                 all-zero bits (kWriteTo / kWriteInplace outputs)
//   S::FusedForward / S::FusedBackward  a vendor library's whole convolution (oneDNN on the CPU,
//                                       cuDNN on CUDA), or false to run the loops here.
// The loops are the reference the vendor paths are checked against, and the kernels a device
// without a vendor library runs (HIP, Note [Portable GEMM]). Images go one at a time, so the
// scratch is one image's columns (channels * K * P), as in MXNet's own im2col path.
template <bool kDeconv, class B, class S>
class ConvolutionKernel : public mxplug::Operator {
 public:
  ConvolutionKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { param_.Init(kwargs); }

  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const Window w = MakeWindow(param_, in[0].shape_);
    const ConvSizes d = GetDims(in[0].shape_);
    if (S::template FusedForward<kDeconv>(ctx, Shape(w, d), in[0], in[1],
                                          param_.no_bias ? nullptr : &in[2], out[0], req[0]))
      return;
    const int64_t K = w.KernelSize(), P = w.PositionCount(), I = w.ImageSize();
    const int64_t Cg = d.in_per_group(), Fg = d.filters_per_group();
    mxplug::FloatTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      using C = mxplug::ComputeType<T>;  // GEMMs' beta
      const auto plan = S::template MakePlan<T>(w);
      const T* x = in[0].dptr<T>();
      const T* wt = in[1].dptr<T>();
      T* y = out[0].dptr<T>();
      if constexpr (!kDeconv) {  // y[g] = W[g] (Fg x Cg*K) * col[g] (Cg*K x P)
        T* col = Columns<T>(ctx, w, d.in_channels);
        for (int64_t n = 0; n < d.batch; ++n) {
          const T* cols = Unroll(ctx, w, plan, d.in_channels, x + n * d.in_channels * I, col);
          B::Gemm(ctx, false, false, Fg, P, Cg * K, wt, Cg * K, cols, P, Beta<T>(req[0]),
                  y + n * d.filters * P, P, d.groups, Fg * Cg * K, Cg * K * P, Fg * P);
        }
        if (!param_.no_bias) S::AddChannelBias(ctx, y, in[2].dptr<T>(), d.batch, d.filters, P);
      } else {  // col[g] = W[g]^T (Fg*K x Cg) * x[g] (Cg x P), folded back onto the output
        T* col = Columns<T>(ctx, w, d.filters);
        for (int64_t n = 0; n < d.batch; ++n) {
          B::Gemm(ctx, true, false, Fg * K, P, Cg, wt, Fg * K, x + n * d.in_channels * P, P, C(0),
                  col, P, d.groups, Cg * Fg * K, Cg * P, Fg * K * P);
          S::Col2Im(ctx, plan, d.filters, col, y + n * d.filters * I, req[0]);
        }
        if (!param_.no_bias) S::AddChannelBias(ctx, y, in[2].dptr<T>(), d.batch, d.filters, I);
      }
    });
  }

  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& out_grad,
                const std::vector<TBlob>& in_data, const std::vector<TBlob>&,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& in_grad,
                const std::vector<TBlob>&) override {
    const Window w = MakeWindow(param_, in_data[0].shape_);
    const ConvSizes d = GetDims(in_data[0].shape_);
    const LayerGrads grads{&in_grad[0], &in_grad[1], param_.no_bias ? nullptr : &in_grad[2],
                           req[0],      req[1],      param_.no_bias ? mxplug::kNullOp : req[2]};
    if (S::template FusedBackward<kDeconv>(ctx, Shape(w, d), out_grad[0], in_data[0], in_data[1],
                                           grads))
      return;
    const int64_t K = w.KernelSize(), P = w.PositionCount(), I = w.ImageSize();
    const int64_t Cg = d.in_per_group(), Fg = d.filters_per_group();
    mxplug::FloatTypeSwitch(in_data[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      using C = mxplug::ComputeType<T>;  // GEMMs' beta
      const auto plan = S::template MakePlan<T>(w);
      const T* og = out_grad[0].dptr<T>();
      const T* x = in_data[0].dptr<T>();
      const T* wt = in_data[1].dptr<T>();
      T* dx = in_grad[0].dptr<T>();
      T* dw = in_grad[1].dptr<T>();
      if constexpr (!kDeconv) {
        T* col = Columns<T>(ctx, w, d.in_channels);
        for (int64_t n = 0; n < d.batch; ++n) {
          const T* ogn = og + n * d.filters * P;
          if (req[1] != mxplug::kNullOp) {  // dW[g] += og[g] (Fg x P) * col[g]^T (P x Cg*K)
            const T* cols = Unroll(ctx, w, plan, d.in_channels, x + n * d.in_channels * I, col);
            B::Gemm(ctx, false, true, Fg, Cg * K, P, ogn, P, cols, P,
                    n == 0 ? Beta<T>(req[1]) : C(1), dw, Cg * K, d.groups, Fg * P, Cg * K * P,
                    Fg * Cg * K);
          }
          if (req[0] != mxplug::kNullOp) {  // dcol[g] = W[g]^T (Cg*K x Fg) * og[g] (Fg x P)
            B::Gemm(ctx, true, false, Cg * K, P, Fg, wt, Cg * K, ogn, P, C(0), col, P, d.groups,
                    Fg * Cg * K, Fg * P, Cg * K * P);
            // Each image's gradient is written once: only the caller's kAddTo adds.
            S::Col2Im(ctx, plan, d.in_channels, col, dx + n * d.in_channels * I, req[0]);
          }
        }
        if (!param_.no_bias)
          S::ChannelBiasGradient(ctx, og, in_grad[2].dptr<T>(), req[2], d.batch, d.filters, P);
      } else {
        T* col = Columns<T>(ctx, w, d.filters);
        for (int64_t n = 0; n < d.batch; ++n) {
          S::Im2Col(ctx, plan, d.filters, og + n * d.filters * I, col);
          if (req[0] != mxplug::kNullOp)  // dx[g] = W[g] (Cg x Fg*K) * col[g] (Fg*K x P)
            B::Gemm(ctx, false, false, Cg, P, Fg * K, wt, Fg * K, col, P, Beta<T>(req[0]),
                    dx + n * d.in_channels * P, P, d.groups, Cg * Fg * K, Fg * K * P, Cg * P);
          if (req[1] != mxplug::kNullOp)  // dW[g] += x[g] (Cg x P) * col[g]^T (P x Fg*K)
            B::Gemm(ctx, false, true, Cg, Fg * K, P, x + n * d.in_channels * P, P, col, P,
                    n == 0 ? Beta<T>(req[1]) : C(1), dw, Fg * K, d.groups, Cg * P, Fg * K * P,
                    Cg * Fg * K);
        }
        if (!param_.no_bias)
          S::ChannelBiasGradient(ctx, og, in_grad[2].dptr<T>(), req[2], d.batch, d.filters, I);
      }
    });
  }

 private:
  ConvSizes GetDims(const TShape& data) const {
    return {data[0], data[1], param_.num_filter, param_.num_group};
  }

  ConvShape Shape(const Window& w, const ConvSizes& d) const {
    return {w,
            d.batch,
            d.in_channels,
            d.filters,
            d.groups,
            !param_.no_bias,
            param_.cudnn_off,
            param_.cudnn_tune.value_or(-1),
            param_.workspace};
  }

  // Scratch for one image's columns: channels * kernel taps * positions.
  template <typename T>
  static T* Columns(const mxplug::OpContext& ctx, const Window& w, int64_t channels) {
    return ctx.requested[0].get_space_typed<T>(
        static_cast<size_t>(channels * w.KernelSize() * w.PositionCount()));
  }

  // A 1x1 window with unit stride and no padding needs no unrolling: the image is its columns.
  template <typename T, class Plan>
  static const T* Unroll(const mxplug::OpContext& ctx, const Window& w, const Plan& plan,
                         int64_t channels, const T* image, T* col) {
    bool identity = w.KernelSize() == 1;
    for (int a = 0; a < w.axes() && identity; ++a) identity = w.stride[a] == 1 && w.pad[a] == 0;
    if (identity) return image;
    S::Im2Col(ctx, plan, channels, image, col);
    return col;
  }

  ConvParam<kDeconv> param_;
};

/*! \brief Registers Convolution's and Deconvolution's kernels for `device` (Note [One convolution
 * kernel per device]). */
template <class B, class S>
void RegisterConvolutionKernels(DLDeviceType device) {
  mxplug::sdk::RegisterKernel<ConvolutionKernel<false, B, S>>("Convolution", device);
  mxplug::sdk::RegisterKernel<ConvolutionKernel<false, B, S>>("Convolution_v1", device);
  mxplug::sdk::RegisterKernel<ConvolutionKernel<true, B, S>>("Deconvolution", device);
}

}  // namespace mxplug_nn

#endif  // MXPLUG_PLUGINS_NN_CONVOLUTION_H_
