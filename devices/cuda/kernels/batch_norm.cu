// GPU kernels of BatchNorm: the math of its definition header (plugins/nn/batch_norm.h), the
// per-channel sums on the device's reductions (reduce.cuh: a block per channel, merged in a fixed
// tree, so results repeat from run to run) and the per-element work one thread per element.
// Statistics are kept in the compute type, which is the parameters' (float for float16 data, as
// MXNet keeps them: ParamType), in the op's temp space: mean, inverse standard deviation, and in
// backward the sums of dy and dy * xhat. On CUDA, cuDNN does the statistics, the normalization and
// the gradients where it takes the call (cudnn_layers.h, Note [cuDNN layers]); the moving
// statistics are always these kernels' own.
#include <vector>

#if !defined(MXPLUG_HIP)
#include "cudnn_layers.h"
#endif
#include "launch.cuh"
#include "nn/batch_norm.h"
#include "reduce.cuh"
#include "tensor/reduce.h"

namespace mxplug_cuda {
namespace {

using mxplug::OpContext;
using mxplug::OpReqType;
using mxplug::TBlob;
using namespace mxplug_nn::batch_norm;  // NOLINT: the op's names (kData, Split, BatchNormParam)
using Sum = mxplug_tensor::Reducer<mxplug_tensor::ReduceKind::kSum>;

/*! \brief Where element i's channel is: data seen as (outer, channels, inner). */
struct ChannelIndex {
  int64_t channels, inner;
  __device__ int64_t operator()(int64_t i) const { return (i / inner) % channels; }
};

// Loads for the per-channel sums; j is the channel.
template <class T>
struct LoadCentredSquare {  // (x - mean)^2
  const T* x;
  const mxplug::ComputeType<T>* mean;
  __device__ mxplug::ComputeType<T> operator()(int64_t j, int64_t i) const {
    const auto d = static_cast<mxplug::ComputeType<T>>(x[i]) - mean[j];
    return d * d;
  }
};
template <class T>
struct LoadGradTimesXhat {  // dy * (x - mean) * invstd
  const T *x, *dy;
  const mxplug::ComputeType<T>*mean, *invstd;
  __device__ mxplug::ComputeType<T> operator()(int64_t j, int64_t i) const {
    using C = mxplug::ComputeType<T>;
    return static_cast<C>(dy[i]) * (static_cast<C>(x[i]) - mean[j]) * invstd[j];
  }
};
// Stores of the per-channel sums.
template <class C>
struct StoreMean {
  C* mean;
  C m;
  __device__ void operator()(int64_t j, C sum) const { mean[j] = sum / m; }
};
template <class C>
struct StoreInvStd {
  C* invstd;
  C m;
  double eps;
  __device__ void operator()(int64_t j, C sum) const { invstd[j] = InvStd(sum / m, eps); }
};
template <class C>
struct StoreSum {
  C* out;
  __device__ void operator()(int64_t j, C sum) const { out[j] = sum; }
};

// Per channel: the statistics from the moving ones, or from the saved outputs.
template <class C>
struct StatsFrom {
  const C *mean_in, *var_or_invstd;
  bool is_var;  // moving_var (then eps applies) or a saved inverse standard deviation
  double eps;
  C *mean, *invstd;
  __device__ void operator()(int64_t c) const {
    mean[c] = mean_in[c];
    invstd[c] = is_var ? InvStd(var_or_invstd[c], eps) : var_or_invstd[c];
  }
};

template <class C>
struct FillOnes {
  C* out;
  __device__ void operator()(int64_t c) const { out[c] = C(1); }
};

template <class T>
struct NormalizeElements {
  using C = ParamType<T>;
  ChannelIndex ch;
  const T* x;
  const C *gamma, *beta, *mean, *invstd;
  bool fix_gamma;
  T* y;
  int req;
  __device__ void operator()(int64_t i) const {
    const int64_t c = ch(i);
    const C scale = (fix_gamma ? C(1) : gamma[c]) * invstd[c];
    const C shift = beta[c] - mean[c] * scale;
    mxplug::StoreAs<C>(y[i], req, static_cast<C>(x[i]) * scale + shift);
  }
};

// The outputs mean and var (the inverse standard deviation), in the parameters' type.
template <class C>
struct WriteStats {
  const C *mean, *invstd;
  C *out_mean, *out_invstd;
  int mean_req, invstd_req;
  __device__ void operator()(int64_t c) const {
    mxplug::StoreAs<C>(out_mean[c], mean_req, mean[c]);
    mxplug::StoreAs<C>(out_invstd[c], invstd_req, invstd[c]);
  }
};

template <class C>
struct UpdateMoving {
  const C *mean, *invstd;
  C *moving_mean, *moving_var;
  float momentum;
  double eps;
  __device__ void operator()(int64_t c) const {
    moving_mean[c] = MovingAverage(moving_mean[c], mean[c], momentum);
    moving_var[c] = MovingAverage(moving_var[c], VarianceOf(invstd[c], eps), momentum);
  }
};

template <class T>
struct DataGradElements {
  using C = ParamType<T>;
  ChannelIndex ch;
  const T *x, *dy;
  const C *gamma, *mean, *invstd, *sum_dy, *sum_dy_xhat;
  C m;
  bool batch_stats, fix_gamma;
  T* dx;
  int req;
  __device__ void operator()(int64_t i) const {
    const int64_t c = ch(i);
    const C xhat = (static_cast<C>(x[i]) - mean[c]) * invstd[c];
    const C g = fix_gamma ? C(1) : gamma[c];
    mxplug::StoreAs<C>(dx[i], req,
                       DataGradient(static_cast<C>(dy[i]), xhat, sum_dy[c], sum_dy_xhat[c], m,
                                    batch_stats, g, invstd[c]));
  }
};

template <class C>
struct ParamGrads {
  const C *sum_dy, *sum_dy_xhat;
  bool fix_gamma;
  C *dgamma, *dbeta;
  int gamma_req, beta_req;
  __device__ void operator()(int64_t c) const {
    if (gamma_req != mxplug::kNullOp)  // fix_gamma: gamma's gradient is 0, as in MXNet
      mxplug::StoreAs<C>(dgamma[c], gamma_req, fix_gamma ? C(0) : sum_dy_xhat[c]);
    if (beta_req != mxplug::kNullOp) mxplug::StoreAs<C>(dbeta[c], beta_req, sum_dy[c]);
  }
};

class BatchNormGpu : public mxplug::Operator {
 public:
  BatchNormGpu(const mxplug::KwArgs& kwargs, mxplug::Context) { param_.Init(kwargs); }

  void Forward(const OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>& aux) override {
    const TBlob& data = in[kData];
    const Split s(data.shape_, Axis(data.shape_));
    const bool batch_stats = ctx.is_train && !param_.use_global_stats;
    const cudaStream_t stream = StreamOf(ctx);
    mxplug::FloatTypeSwitch(data.type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      using C = ParamType<T>;
      C* mean = ctx.requested[0].get_space_typed<C>(static_cast<size_t>(3 * s.channels));
      C *invstd = mean + s.channels, *ones = invstd + s.channels;
      const T* x = data.dptr<T>();
      const C* moving_mean = aux[kMovingMean].dptr<C>();
      const C* moving_var = aux[kMovingVar].dptr<C>();
      // cuDNN normalizes, saving the batch's statistics where it uses them.
      const bool normalized =
          req[kOut] != mxplug::kNullOp &&
          CudnnForward(ctx, data, ones, in[kGamma].dptr<C>(), in[kBeta].dptr<C>(), batch_stats,
                       moving_mean, moving_var, mean, invstd, out[kOut], req[kOut]);
      if (!batch_stats) {
        ForEach(s.channels, stream,
                StatsFrom<C>{moving_mean, moving_var, true, param_.eps, mean, invstd});
      } else if (!normalized) {
        const ReduceIndex ix = PerChannel(s);
        const C m = static_cast<C>(s.count());
        ReduceEach<Sum>(ix, C(0), stream, LoadElement<T>{x}, StoreMean<C>{mean, m});
        ReduceEach<Sum>(ix, C(0), stream, LoadCentredSquare<T>{x, mean},
                        StoreInvStd<C>{invstd, m, param_.eps});
      }
      if (req[kOut] != mxplug::kNullOp && !normalized)
        ForEach(
            data.Size(), stream,
            NormalizeElements<T>{Channels(s), x, in[kGamma].dptr<C>(), in[kBeta].dptr<C>(), mean,
                                 invstd, param_.fix_gamma, out[kOut].dptr<T>(), req[kOut]});
      ForEach(s.channels, stream,
              WriteStats<C>{mean, invstd, Written<C>(out[kMean], req[kMean]),
                            Written<C>(out[kInvStd], req[kInvStd]), req[kMean], req[kInvStd]});
    });
  }

  void Backward(const OpContext& ctx, const std::vector<TBlob>& out_grad,
                const std::vector<TBlob>& in_data, const std::vector<TBlob>& out_data,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& in_grad,
                const std::vector<TBlob>& aux) override {
    const TBlob& data = in_data[kData];
    const Split s(data.shape_, Axis(data.shape_));
    const bool batch_stats = ctx.is_train && !param_.use_global_stats;
    const cudaStream_t stream = StreamOf(ctx);
    mxplug::FloatTypeSwitch(data.type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      using C = ParamType<T>;
      C* mean = ctx.requested[0].get_space_typed<C>(static_cast<size_t>(5 * s.channels));
      C *invstd = mean + s.channels, *sum_dy = invstd + s.channels,
        *sum_dy_xhat = sum_dy + s.channels, *ones = sum_dy_xhat + s.channels;
      const T* x = data.dptr<T>();
      const T* dy = out_grad[kOut].dptr<T>();
      const C* gamma = in_data[kGamma].dptr<C>();
      bool done = false;  // the data gradient and the sums, by cuDNN
      if (batch_stats) {  // the moving statistics follow the batch's, then its gradient
        ForEach(s.channels, stream,
                UpdateMoving<C>{out_data[kMean].dptr<C>(), out_data[kInvStd].dptr<C>(),
                                aux[kMovingMean].dptr<C>(), aux[kMovingVar].dptr<C>(),
                                param_.momentum, param_.eps});
        done = CudnnBackward(ctx, data, ones, gamma, out_data[kMean].dptr<C>(),
                             out_data[kInvStd].dptr<C>(), out_grad[kOut], in_grad[kData],
                             req[kData], sum_dy_xhat, sum_dy);
        if (!done)
          ForEach(s.channels, stream,
                  StatsFrom<C>{out_data[kMean].dptr<C>(), out_data[kInvStd].dptr<C>(), false,
                               param_.eps, mean, invstd});
      } else {
        ForEach(s.channels, stream,
                StatsFrom<C>{aux[kMovingMean].dptr<C>(), aux[kMovingVar].dptr<C>(), true,
                             param_.eps, mean, invstd});
      }
      if (!done) {
        const ReduceIndex ix = PerChannel(s);
        ReduceEach<Sum>(ix, C(0), stream, LoadElement<T>{dy}, StoreSum<C>{sum_dy});
        ReduceEach<Sum>(ix, C(0), stream, LoadGradTimesXhat<T>{x, dy, mean, invstd},
                        StoreSum<C>{sum_dy_xhat});
        if (req[kData] != mxplug::kNullOp)
          ForEach(data.Size(), stream,
                  DataGradElements<T>{Channels(s), x, dy, gamma, mean, invstd, sum_dy, sum_dy_xhat,
                                      static_cast<C>(s.count()), batch_stats, param_.fix_gamma,
                                      in_grad[kData].dptr<T>(), req[kData]});
      }
      ForEach(s.channels, stream,
              ParamGrads<C>{sum_dy, sum_dy_xhat, param_.fix_gamma,
                            Written<C>(in_grad[kGamma], req[kGamma]),
                            Written<C>(in_grad[kBeta], req[kBeta]), req[kGamma], req[kBeta]});
    });
  }

 private:
  // cuDNN's scale: gamma, or ones under fix_gamma (filled into `ones`).
  template <class C>
  const C* Scale(C* ones, const C* gamma, const mxplug::TShape& shape, cudaStream_t stream) const {
    if (!param_.fix_gamma) return gamma;
    ForEach(shape[Axis(shape)], stream, FillOnes<C>{ones});
    return ones;
  }
  // cuDNN's part (cudnn_layers.h), unless cudnn_off, the portable kernels or HIP.
  template <class C>
  bool CudnnForward(const OpContext& ctx, const TBlob& data, C* ones, const C* gamma, const C* beta,
                    bool batch_stats, const C* moving_mean, const C* moving_var, C* mean, C* invstd,
                    const TBlob& out, OpReqType req) const {
#if defined(MXPLUG_HIP)
    return false;
#else
    return !param_.cudnn_off && !UsePortableKernels() &&
           CudnnBatchNormForward(ctx, data, Axis(data.shape_), param_.eps, batch_stats,
                                 Scale(ones, gamma, data.shape_, StreamOf(ctx)), beta, moving_mean,
                                 moving_var, mean, invstd, out, req);
#endif
  }
  template <class C>
  bool CudnnBackward(const OpContext& ctx, const TBlob& data, C* ones, const C* gamma,
                     const C* mean, const C* invstd, const TBlob& out_grad, const TBlob& data_grad,
                     OpReqType req, C* dscale, C* dbias) const {
#if defined(MXPLUG_HIP)
    return false;
#else
    return !param_.cudnn_off && !UsePortableKernels() &&
           CudnnBatchNormBackward(ctx, data, Axis(data.shape_), param_.eps,
                                  Scale(ones, gamma, data.shape_, StreamOf(ctx)), mean, invstd,
                                  out_grad, data_grad, req, dscale, dbias);
#endif
  }
  // An output's memory, or null where it is not written (its blob may be empty).
  template <class T>
  static T* Written(const TBlob& blob, OpReqType req) {
    return req == mxplug::kNullOp ? nullptr : blob.dptr<T>();
  }
  int Axis(const mxplug::TShape& s) const {
    return param_.axis < 0 ? param_.axis + s.ndim() : param_.axis;
  }
  static ChannelIndex Channels(const Split& s) { return {s.channels, s.inner}; }
  // Every element of a channel reduces into it: (outer, channels, inner) reduced on 0 and 2.
  static ReduceIndex PerChannel(const Split& s) {
    return MakeReduceIndex(mxplug::TShape{s.outer, s.channels, s.inner}, {true, false, true});
  }

  BatchNormParam param_;
};

[[maybe_unused]] const bool registered = [] {
  mxplug::sdk::RegisterKernel<BatchNormGpu>("BatchNorm", kGpuDevice);
  mxplug::sdk::RegisterKernel<BatchNormV1Kernel<BatchNormGpu, CudaLoop>>("BatchNorm_v1",
                                                                         kGpuDevice);
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
