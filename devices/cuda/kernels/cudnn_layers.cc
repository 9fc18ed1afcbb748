// cuDNN's normalization and activation layers (cudnn_layers.h). Host code only, with cuDNN's
// legacy API for batch normalization and activations, which cuDNN 9 keeps but marks deprecated
// (cmake/mxplugCudnn.cmake checks at configure time that the installed cuDNN still declares it;
// without it MXPLUG_CUDNN is 0 and the ops' own kernels run).
//
// Note [cuDNN layers]: what each op hands to cuDNN, and what it keeps for itself because cuDNN's
// semantics differ from MXNet's or the op does not keep what cuDNN needs.
//   - BatchNorm: cuDNN's spatial batch normalization over the data seen as (outer, channels,
//     inner, 1) around the channel axis (SetAroundAxis), so any axis works. In training, cuDNN
//     computes the batch's mean and inverse standard deviation (the op's mean and var outputs, as
//     MXNet saves them) and normalizes; its backward gives the data gradient and the sums that
//     gamma's and beta's gradients are. The moving statistics are not cuDNN's: it would average an
//     unbiased variance into moving_var, where MXNet's CPU kernel (and mxplug's on every device)
//     averages the batch's biased one, in backward. So cuDNN gets no running statistics, and the
//     op's kernel updates them in backward from the saved ones. Inference, and use_global_stats
//     in forward, normalize with the moving statistics through cuDNN's inference call; backward
//     with global statistics is the op's kernel (cuDNN's backward assumes batch statistics).
//     fix_gamma passes a scale of ones; gamma's zero gradient is the op's kernel's.
//   - Activation: relu only. Its backward keeps the output, not the input (it may run in place);
//     cuDNN's backward takes both, and for relu the output stands for the input (y > 0 exactly
//     where x > 0). Sigmoid and tanh would need the input, which MXNet keeps for cuDNN and the op
//     does not, so they and softrelu and softsign run the op's kernel.
//   - softmax and log_softmax at temperature 1, SoftmaxOutput's forward: cuDNN's channel softmax
//     (accurate: the maximum is subtracted, as in the op's kernel; or log) over the data seen as
//     (outer, n, inner, 1) around the axis; backward from the output. Never in place.
//   - LRN: the backward, where cuDNN's limits allow the op's nsize, knorm and beta; cuDNN's
//     formula is MXNet's (alpha divided by the window). The forward stays the op's kernel, which
//     writes tmp_norm in the same pass; cuDNN's does not produce it.
#include "cudnn_layers.h"

#if MXPLUG_CUDNN

#include "cudnn_common.h"
#include "nn/activation.h"  // kRelu

namespace mxplug_cuda {
namespace {

using cudnn::CheckRun;
using cudnn::HandleFor;
using cudnn::NotSupported;
using cudnn::Scale;
using cudnn::TensorDesc;
using mxplug::OpContext;
using mxplug::OpReqType;
using mxplug::TBlob;

// Spatial batch normalization: one scale, bias, mean and variance per channel.
constexpr cudnnBatchNormMode_t kPerChannel = CUDNN_BATCHNORM_SPATIAL;

/*! \brief The data's descriptor around `axis` and the per-channel one cuDNN derives from it. */
struct BatchNormDescs {
  TensorDesc x, channel;
  cudnnDataType_t dtype;
  BatchNormDescs(const TBlob& data, int axis, double eps)
      : dtype(cudnn::DataType(data.type_flag_)) {
    if (eps < CUDNN_BN_MIN_EPSILON) throw NotSupported{};
    cudnn::SetAroundAxis(x, dtype, data.shape_, axis);
    cudnn::Check(cudnnDeriveBNTensorDescriptor(channel.d, x.d, kPerChannel),
                 "cudnnDeriveBNTensorDescriptor");
  }
};

/*! \brief cuDNN's type for the ops whose own kernels take float32 and float64 only (Activation,
 * softmax, LRN): float16 stays refused by those kernels on every device. */
cudnnDataType_t RealDataType(int type_flag) {
  if (type_flag == kMXPFloat16) throw NotSupported{};
  return cudnn::DataType(type_flag);
}

// The calls below run `body` and turn NotSupported, thrown while setting up, into false.
template <class F>
bool Try(F&& body) {
  try {
    body();
    return true;
  } catch (const NotSupported&) {
    return false;
  }
}

}  // namespace

bool CudnnBatchNormForward(const OpContext& ctx, const TBlob& data, int axis, double eps,
                           bool batch_stats, const void* scale, const void* bias,
                           const void* moving_mean, const void* moving_var, void* save_mean,
                           void* save_invstd, const TBlob& out, OpReqType req) {
  if (!cudnn::WritesOrAdds(req) || data.dptr_ == out.dptr_) return false;
  // One value per channel has no spread: the op's kernel gives its (eps-bound) result.
  if (batch_stats && data.Size() <= data.shape_[axis]) return false;
  return Try([&] {
    const BatchNormDescs d(data, axis, eps);
    const Scale s(d.dtype);
    cudnnHandle_t h = HandleFor(ctx);
    if (batch_stats) {
      // No running statistics (Note [cuDNN layers]): the factor is then unused.
      CheckRun(cudnnBatchNormalizationForwardTraining(
                   h, kPerChannel, s.one(), s.beta(req), d.x.d, data.dptr_, d.x.d, out.dptr_,
                   d.channel.d, scale, bias, 0.0, nullptr, nullptr, eps, save_mean, save_invstd),
               "cudnnBatchNormalizationForwardTraining");
    } else {
      CheckRun(cudnnBatchNormalizationForwardInference(h, kPerChannel, s.one(), s.beta(req), d.x.d,
                                                       data.dptr_, d.x.d, out.dptr_, d.channel.d,
                                                       scale, bias, moving_mean, moving_var, eps),
               "cudnnBatchNormalizationForwardInference");
    }
  });
}

bool CudnnBatchNormBackward(const OpContext& ctx, const TBlob& data, int axis, double eps,
                            const void* scale, const void* saved_mean, const void* saved_invstd,
                            const TBlob& out_grad, const TBlob& data_grad, OpReqType req,
                            void* dscale, void* dbias) {
  if (!cudnn::WritesOrAdds(req) || data_grad.dptr_ == data.dptr_) return false;
  if (data.Size() <= data.shape_[axis]) return false;  // as in the forward
  return Try([&] {
    const BatchNormDescs d(data, axis, eps);
    const Scale s(d.dtype);
    // The parameter sums are written (beta 0) to scratch; the op's kernel stores them as gamma's
    // and beta's requests say.
    CheckRun(cudnnBatchNormalizationBackward(HandleFor(ctx), kPerChannel, s.one(), s.beta(req),
                                             s.one(), s.zero(), d.x.d, data.dptr_, d.x.d,
                                             out_grad.dptr_, d.x.d, data_grad.dptr_, d.channel.d,
                                             scale, dscale, dbias, eps, saved_mean, saved_invstd),
             "cudnnBatchNormalizationBackward");
  });
}

namespace {

/*! \brief An activation descriptor, destroyed with its owner. */
struct ActivationDesc {
  cudnnActivationDescriptor_t d = nullptr;
  explicit ActivationDesc(int act_type) {
    if (act_type != mxplug_nn::kRelu) throw NotSupported{};  // Note [cuDNN layers]
    cudnn::Check(cudnnCreateActivationDescriptor(&d), "cudnnCreateActivationDescriptor");
    // relu(NaN) is 0, as the op's kernel (x > 0 ? x : 0) and MXNet's give.
    cudnn::Check(
        cudnnSetActivationDescriptor(d, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0),
        "cudnnSetActivationDescriptor");
  }
  ~ActivationDesc() { cudnnDestroyActivationDescriptor(d); }
  ActivationDesc(const ActivationDesc&) = delete;
  ActivationDesc& operator=(const ActivationDesc&) = delete;
};

/*! \brief The one descriptor of a call whose tensors share a shape, seen around `axis`, and the
 * scaling factors of its type. */
struct SameShape {
  cudnnDataType_t dtype;
  TensorDesc t;
  Scale s;
  SameShape(int type_flag, const mxplug::TShape& shape, int axis)
      : dtype(RealDataType(type_flag)), s(dtype) {
    cudnn::SetAroundAxis(t, dtype, shape, axis);
  }
};
/*! \brief The activations are elementwise: their tensors as one run of elements. */
SameShape Flat(const TBlob& b) { return SameShape(b.type_flag_, mxplug::TShape{b.Size()}, 0); }

}  // namespace

bool CudnnActivationForward(const OpContext& ctx, int act_type, const TBlob& data, const TBlob& out,
                            OpReqType req) {
  if (!cudnn::WritesOrAdds(req)) return false;
  return Try([&] {
    const ActivationDesc act(act_type);
    const SameShape d = Flat(data);
    // In place is allowed (the same descriptor for both).
    CheckRun(cudnnActivationForward(HandleFor(ctx), act.d, d.s.one(), d.t.d, data.dptr_,
                                    d.s.beta(req), d.t.d, out.dptr_),
             "cudnnActivationForward");
  });
}

bool CudnnActivationBackward(const OpContext& ctx, int act_type, const TBlob& out_grad,
                             const TBlob& out, const TBlob& data_grad, OpReqType req) {
  if (!cudnn::WritesOrAdds(req)) return false;
  return Try([&] {
    const ActivationDesc act(act_type);
    const SameShape d = Flat(out);
    // relu's output stands for its input (Note [cuDNN layers]); dx may be dy's memory.
    CheckRun(cudnnActivationBackward(HandleFor(ctx), act.d, d.s.one(), d.t.d, out.dptr_, d.t.d,
                                     out_grad.dptr_, d.t.d, out.dptr_, d.s.beta(req), d.t.d,
                                     data_grad.dptr_),
             "cudnnActivationBackward");
  });
}

bool CudnnSoftmaxForward(const OpContext& ctx, const TBlob& data, int axis, bool log,
                         const TBlob& out, OpReqType req) {
  if (!cudnn::WritesOrAdds(req) || data.dptr_ == out.dptr_) return false;
  return Try([&] {
    const SameShape d(data.type_flag_, data.shape_, axis);
    CheckRun(cudnnSoftmaxForward(HandleFor(ctx), log ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE,
                                 CUDNN_SOFTMAX_MODE_CHANNEL, d.s.one(), d.t.d, data.dptr_,
                                 d.s.beta(req), d.t.d, out.dptr_),
             "cudnnSoftmaxForward");
  });
}

bool CudnnSoftmaxBackward(const OpContext& ctx, const TBlob& out_grad, const TBlob& out, int axis,
                          bool log, const TBlob& data_grad, OpReqType req) {
  if (!cudnn::WritesOrAdds(req) || data_grad.dptr_ == out.dptr_ ||
      data_grad.dptr_ == out_grad.dptr_)
    return false;
  return Try([&] {
    const SameShape d(out.type_flag_, out.shape_, axis);
    CheckRun(cudnnSoftmaxBackward(HandleFor(ctx), log ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE,
                                  CUDNN_SOFTMAX_MODE_CHANNEL, d.s.one(), d.t.d, out.dptr_, d.t.d,
                                  out_grad.dptr_, d.s.beta(req), d.t.d, data_grad.dptr_),
             "cudnnSoftmaxBackward");
  });
}

namespace {

struct LrnDesc {
  cudnnLRNDescriptor_t d = nullptr;
  explicit LrnDesc(const mxplug_nn::LRNParam& p) {
    if (p.nsize < CUDNN_LRN_MIN_N || p.nsize > CUDNN_LRN_MAX_N || p.knorm < CUDNN_LRN_MIN_K ||
        p.beta < CUDNN_LRN_MIN_BETA)
      throw NotSupported{};
    cudnn::Check(cudnnCreateLRNDescriptor(&d), "cudnnCreateLRNDescriptor");
    cudnn::Check(cudnnSetLRNDescriptor(d, static_cast<unsigned>(p.nsize), p.alpha, p.beta, p.knorm),
                 "cudnnSetLRNDescriptor");
  }
  ~LrnDesc() { cudnnDestroyLRNDescriptor(d); }
  LrnDesc(const LrnDesc&) = delete;
  LrnDesc& operator=(const LrnDesc&) = delete;
};

}  // namespace

bool CudnnLrnBackward(const OpContext& ctx, const mxplug_nn::LRNParam& param, const TBlob& data,
                      const TBlob& out, const TBlob& out_grad, const TBlob& data_grad,
                      OpReqType req) {
  if (!cudnn::WritesOrAdds(req) || data_grad.dptr_ == data.dptr_ || data_grad.dptr_ == out.dptr_ ||
      data_grad.dptr_ == out_grad.dptr_)
    return false;
  return Try([&] {
    const LrnDesc lrn(param);
    // (batch, channels, the rest, 1): across the channels of axis 1.
    const SameShape d(data.type_flag_, data.shape_, 1);
    CheckRun(cudnnLRNCrossChannelBackward(HandleFor(ctx), lrn.d, CUDNN_LRN_CROSS_CHANNEL_DIM1,
                                          d.s.one(), d.t.d, out.dptr_, d.t.d, out_grad.dptr_, d.t.d,
                                          data.dptr_, d.s.beta(req), d.t.d, data_grad.dptr_),
             "cudnnLRNCrossChannelBackward");
  });
}

}  // namespace mxplug_cuda

#else  // no cuDNN in this build: the ops' own kernels run

namespace mxplug_cuda {
bool CudnnBatchNormForward(const mxplug::OpContext&, const mxplug::TBlob&, int, double, bool,
                           const void*, const void*, const void*, const void*, void*, void*,
                           const mxplug::TBlob&, mxplug::OpReqType) {
  return false;
}
bool CudnnBatchNormBackward(const mxplug::OpContext&, const mxplug::TBlob&, int, double,
                            const void*, const void*, const void*, const mxplug::TBlob&,
                            const mxplug::TBlob&, mxplug::OpReqType, void*, void*) {
  return false;
}
bool CudnnActivationForward(const mxplug::OpContext&, int, const mxplug::TBlob&,
                            const mxplug::TBlob&, mxplug::OpReqType) {
  return false;
}
bool CudnnActivationBackward(const mxplug::OpContext&, int, const mxplug::TBlob&,
                             const mxplug::TBlob&, const mxplug::TBlob&, mxplug::OpReqType) {
  return false;
}
bool CudnnSoftmaxForward(const mxplug::OpContext&, const mxplug::TBlob&, int, bool,
                         const mxplug::TBlob&, mxplug::OpReqType) {
  return false;
}
bool CudnnSoftmaxBackward(const mxplug::OpContext&, const mxplug::TBlob&, const mxplug::TBlob&, int,
                          bool, const mxplug::TBlob&, mxplug::OpReqType) {
  return false;
}
bool CudnnLrnBackward(const mxplug::OpContext&, const mxplug_nn::LRNParam&, const mxplug::TBlob&,
                      const mxplug::TBlob&, const mxplug::TBlob&, const mxplug::TBlob&,
                      mxplug::OpReqType) {
  return false;
}
}  // namespace mxplug_cuda

#endif
