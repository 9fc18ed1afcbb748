// cuDNN's normalization and activation layers for the CUDA plugin's BatchNorm, Activation,
// softmax, log_softmax, SoftmaxOutput and LRN: their GPU kernels (batch_norm.cu, activation.cu,
// softmax.cu, lrn.cu) call these first. Each returns false, having queued nothing, where cuDNN does
// not take the call (a build without cuDNN, an unsupported configuration, Note [cuDNN errors]), and
// the op's own kernel runs instead. Note [cuDNN layers] in cudnn_layers.cc says what each one keeps
// of MXNet's semantics.
#ifndef MXPLUG_DEVICES_CUDA_KERNELS_CUDNN_LAYERS_H_
#define MXPLUG_DEVICES_CUDA_KERNELS_CUDNN_LAYERS_H_

#include "mxplug/plugin.hpp"
#include "nn/lrn.h"  // LRNParam

namespace mxplug_cuda {

/*!
 * \brief BatchNorm's output on cuDNN, the data normalized around `axis`. With `batch_stats` the
 * batch's mean and inverse standard deviation are computed and saved to save_mean and
 * save_invstd; without, moving_mean and moving_var normalize. Per-channel arrays are the
 * parameters' type (float for float16 data); `scale` is gamma, or ones under fix_gamma. The moving
 * statistics are not touched here.
 */
bool CudnnBatchNormForward(const mxplug::OpContext& ctx, const mxplug::TBlob& data, int axis,
                           double eps, bool batch_stats, const void* scale, const void* bias,
                           const void* moving_mean, const void* moving_var, void* save_mean,
                           void* save_invstd, const mxplug::TBlob& out, mxplug::OpReqType req);

/*!
 * \brief BatchNorm's backward with the batch's statistics (saved by the forward): the data
 * gradient as `req` says, and the sums that are gamma's and beta's gradients (dscale: sum of
 * dy * xhat, dbias: sum of dy), written to per-channel scratch.
 */
bool CudnnBatchNormBackward(const mxplug::OpContext& ctx, const mxplug::TBlob& data, int axis,
                            double eps, const void* scale, const void* saved_mean,
                            const void* saved_invstd, const mxplug::TBlob& out_grad,
                            const mxplug::TBlob& data_grad, mxplug::OpReqType req, void* dscale,
                            void* dbias);

/*! \brief Activation (act_type of nn/activation.h) forward and backward; backward has the output
 * only, as the op keeps it. */
bool CudnnActivationForward(const mxplug::OpContext& ctx, int act_type, const mxplug::TBlob& data,
                            const mxplug::TBlob& out, mxplug::OpReqType req);
bool CudnnActivationBackward(const mxplug::OpContext& ctx, int act_type,
                             const mxplug::TBlob& out_grad, const mxplug::TBlob& out,
                             const mxplug::TBlob& data_grad, mxplug::OpReqType req);

/*! \brief softmax (log false) or log_softmax along `axis`, at temperature 1, and its gradient
 * from the output. */
bool CudnnSoftmaxForward(const mxplug::OpContext& ctx, const mxplug::TBlob& data, int axis,
                         bool log, const mxplug::TBlob& out, mxplug::OpReqType req);
bool CudnnSoftmaxBackward(const mxplug::OpContext& ctx, const mxplug::TBlob& out_grad,
                          const mxplug::TBlob& out, int axis, bool log,
                          const mxplug::TBlob& data_grad, mxplug::OpReqType req);

/*! \brief LRN's data gradient from its input, output and output gradient. */
bool CudnnLrnBackward(const mxplug::OpContext& ctx, const mxplug_nn::LRNParam& param,
                      const mxplug::TBlob& data, const mxplug::TBlob& out,
                      const mxplug::TBlob& out_grad, const mxplug::TBlob& data_grad,
                      mxplug::OpReqType req);

}  // namespace mxplug_cuda

#endif  // MXPLUG_DEVICES_CUDA_KERNELS_CUDNN_LAYERS_H_
