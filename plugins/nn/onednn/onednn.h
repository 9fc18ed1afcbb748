// The nn plugin's oneDNN kernels: what each op asks of oneDNN, and the plumbing they share.
//
// Every entry point returns false when it does not compute the call (a build without oneDNN,
// MXPLUG_ONEDNN=0, a dtype other than float32, or a configuration oneDNN or MXNet's semantics
// rule out); the op then runs its plain C++ loops, which stay the reference (Note [oneDNN]).
#ifndef MXPLUG_PLUGINS_NN_ONEDNN_ONEDNN_H_
#define MXPLUG_PLUGINS_NN_ONEDNN_ONEDNN_H_

#include <cstdint>
#include <vector>

#include "../matmul.h"
#include "../spatial.h"
#include "mxplug/plugin.hpp"

namespace mxplug_nn {
struct RnnLayout;  // rnn.h
}  // namespace mxplug_nn

namespace mxplug_nn::onednn {

using mxplug_nn::ConvShape;  // spatial.h

// A FullyConnected call's sizes, and a layer's gradients (matmul.h).
using InnerProductShape = LinearShape;
using mxplug_nn::LayerGrads;

enum class PoolKind { kMax, kAvgIncludePad, kAvgExcludePad };

// The activations that may run on oneDNN (the rest return false).
enum class EltwiseKind { kRelu, kSigmoid, kTanh, kOther };

// A BatchNorm training forward (channels on axis 1): normalizes with the batch statistics and
// writes them as MXNet does, the mean and the inverse standard deviation 1 / sqrt(var + eps).
struct BatchNormArgs {
  const mxplug::TBlob *data, *gamma, *beta, *out, *mean, *invstd;
  float eps;
  bool fix_gamma;
  mxplug::OpReqType out_req, mean_req, invstd_req;
};

// A BatchNorm training backward with the batch statistics (channels on axis 1), from the mean
// and inverse standard deviation the forward wrote: the data gradient, and the gamma (unless
// fix_gamma) and beta gradients.
struct BatchNormGradArgs {
  const mxplug::TBlob *data, *gamma, *beta, *mean, *invstd, *out_grad, *data_grad, *gamma_grad,
      *beta_grad;
  float eps;
  bool fix_gamma;
  mxplug::OpReqType data_req, gamma_req, beta_req;
};

// The resources an op asks for where its kernel may run on oneDNN: temp space for Call's
// reorders and oneDNN's scratchpad, and nothing in a build without oneDNN.
inline std::vector<mxplug::ResourceRequest> Resources() {
  if (MXPLUG_NN_ONEDNN) return {mxplug::ResourceRequest::kTempSpace};
  return {};
}

// An LSTM's float32 tensors in RNN's layout (rnn.h): data (T, N, I), the packed parameters, the
// initial states (L D, N, H); the output (T, N, D H) and the last states (null: not wanted).
struct LstmTensors {
  const float *data, *params, *hx, *cx;
  float *out, *hy, *cy;
  mxplug::OpReqType out_req, hy_req, cy_req;
};

// An LSTM's gradients: of the output and (with state outputs) of the last states, and what the
// backward writes, each with its request (the packed parameters' gradient has one).
struct LstmGrads {
  const float *out_grad, *hy_grad, *cy_grad;
  float *data_grad, *params_grad, *hx_grad, *cx_grad;
  mxplug::OpReqType data_req, params_req, hx_req, cx_req;
};

struct LrnParams {
  int64_t nsize;
  float alpha, beta, knorm;
};

#if MXPLUG_NN_ONEDNN
bool ConvolutionForward(const mxplug::OpContext& ctx, const ConvShape& s, const mxplug::TBlob& data,
                        const mxplug::TBlob& weight, const mxplug::TBlob* bias,
                        const mxplug::TBlob& out, mxplug::OpReqType req);
bool ConvolutionBackward(const mxplug::OpContext& ctx, const ConvShape& s,
                         const mxplug::TBlob& out_grad, const mxplug::TBlob& data,
                         const mxplug::TBlob& weight, const LayerGrads& grads);
bool InnerProductForward(const mxplug::OpContext& ctx, const InnerProductShape& s,
                         const mxplug::TBlob& data, const mxplug::TBlob& weight,
                         const mxplug::TBlob* bias, const mxplug::TBlob& out,
                         mxplug::OpReqType req);
bool InnerProductBackward(const mxplug::OpContext& ctx, const InnerProductShape& s,
                          const mxplug::TBlob& out_grad, const mxplug::TBlob& data,
                          const mxplug::TBlob& weight, const LayerGrads& grads);
// jit_only: return false where oneDNN has no generated kernel for the call (it runs its
// simple_nchw loop on machines without AVX-512), because the caller has a faster loop.
bool PoolingForward(const mxplug::OpContext& ctx, const Window& w, PoolKind kind,
                    const mxplug::TBlob& data, const mxplug::TBlob& out, mxplug::OpReqType req,
                    bool jit_only);
bool PoolingBackward(const mxplug::OpContext& ctx, const Window& w, PoolKind kind,
                     const mxplug::TBlob& out_grad, const mxplug::TBlob& data,
                     const mxplug::TBlob& data_grad, mxplug::OpReqType req);
// BatchNorm's training passes return false where oneDNN has no generated kernel (its ncsp_bnorm
// loop for the plain layout without AVX-512): batch_norm.cc's own loops are faster.
bool BatchNormTrainingForward(const mxplug::OpContext& ctx, const BatchNormArgs& a);
bool BatchNormTrainingBackward(const mxplug::OpContext& ctx, const BatchNormGradArgs& a);
bool SoftmaxForward(const mxplug::OpContext& ctx, const mxplug::TBlob& data, int axis, bool log,
                    const mxplug::TBlob& out, mxplug::OpReqType req);
// LRN on oneDNN writes the output only: the op's hidden tmp_norm output stays unwritten, and the
// backward recomputes what it needs (as MXNet's oneDNN LRN).
bool LrnForward(const mxplug::OpContext& ctx, const LrnParams& params, const mxplug::TBlob& data,
                const mxplug::TBlob& out, mxplug::OpReqType req);
bool LrnBackward(const mxplug::OpContext& ctx, const LrnParams& params,
                 const mxplug::TBlob& out_grad, const mxplug::TBlob& data,
                 const mxplug::TBlob& data_grad, mxplug::OpReqType req);
// Activation; the backward reads the output, not the input (either may be written in place).
bool EltwiseForward(const mxplug::OpContext& ctx, EltwiseKind kind, const mxplug::TBlob& data,
                    const mxplug::TBlob& out, mxplug::OpReqType req);
bool EltwiseBackward(const mxplug::OpContext& ctx, EltwiseKind kind, const mxplug::TBlob& out_grad,
                     const mxplug::TBlob& out, const mxplug::TBlob& data_grad,
                     mxplug::OpReqType req);
// An LSTM's forward (Note [RNN on oneDNN]): outside training with `reserve` null; in training
// with the op's reserve, which then holds what LstmBackward reads (each layer's workspace, last
// states and output). False for another mode, or where oneDNN refuses the call.
bool LstmForward(const mxplug::OpContext& ctx, const RnnLayout& s, const LstmTensors& t,
                 float* reserve);
// The floats a training forward keeps in the reserve for layer l (0 where oneDNN does not run it).
int64_t LstmWorkspaceFloats(const RnnLayout& s, int64_t l, bool states_out);
bool LstmBackward(const mxplug::OpContext& ctx, const RnnLayout& s, const LstmTensors& t,
                  const LstmGrads& g, const float* reserve);
#else
inline bool LstmForward(const mxplug::OpContext&, const RnnLayout&, const LstmTensors&, float*) {
  return false;
}
inline int64_t LstmWorkspaceFloats(const RnnLayout&, int64_t, bool) { return 0; }
inline bool LstmBackward(const mxplug::OpContext&, const RnnLayout&, const LstmTensors&,
                         const LstmGrads&, const float*) {
  return false;
}
inline bool EltwiseForward(const mxplug::OpContext&, EltwiseKind, const mxplug::TBlob&,
                           const mxplug::TBlob&, mxplug::OpReqType) {
  return false;
}
inline bool EltwiseBackward(const mxplug::OpContext&, EltwiseKind, const mxplug::TBlob&,
                            const mxplug::TBlob&, const mxplug::TBlob&, mxplug::OpReqType) {
  return false;
}
inline bool ConvolutionForward(const mxplug::OpContext&, const ConvShape&, const mxplug::TBlob&,
                               const mxplug::TBlob&, const mxplug::TBlob*, const mxplug::TBlob&,
                               mxplug::OpReqType) {
  return false;
}
inline bool ConvolutionBackward(const mxplug::OpContext&, const ConvShape&, const mxplug::TBlob&,
                                const mxplug::TBlob&, const mxplug::TBlob&, const LayerGrads&) {
  return false;
}
inline bool InnerProductForward(const mxplug::OpContext&, const InnerProductShape&,
                                const mxplug::TBlob&, const mxplug::TBlob&, const mxplug::TBlob*,
                                const mxplug::TBlob&, mxplug::OpReqType) {
  return false;
}
inline bool InnerProductBackward(const mxplug::OpContext&, const InnerProductShape&,
                                 const mxplug::TBlob&, const mxplug::TBlob&, const mxplug::TBlob&,
                                 const LayerGrads&) {
  return false;
}
inline bool PoolingForward(const mxplug::OpContext&, const Window&, PoolKind, const mxplug::TBlob&,
                           const mxplug::TBlob&, mxplug::OpReqType, bool) {
  return false;
}
inline bool PoolingBackward(const mxplug::OpContext&, const Window&, PoolKind, const mxplug::TBlob&,
                            const mxplug::TBlob&, const mxplug::TBlob&, mxplug::OpReqType) {
  return false;
}
inline bool BatchNormTrainingForward(const mxplug::OpContext&, const BatchNormArgs&) {
  return false;
}
inline bool BatchNormTrainingBackward(const mxplug::OpContext&, const BatchNormGradArgs&) {
  return false;
}
inline bool SoftmaxForward(const mxplug::OpContext&, const mxplug::TBlob&, int, bool,
                           const mxplug::TBlob&, mxplug::OpReqType) {
  return false;
}
inline bool LrnForward(const mxplug::OpContext&, const LrnParams&, const mxplug::TBlob&,
                       const mxplug::TBlob&, mxplug::OpReqType) {
  return false;
}
inline bool LrnBackward(const mxplug::OpContext&, const LrnParams&, const mxplug::TBlob&,
                        const mxplug::TBlob&, const mxplug::TBlob&, mxplug::OpReqType) {
  return false;
}
#endif

}  // namespace mxplug_nn::onednn

#endif  // MXPLUG_PLUGINS_NN_ONEDNN_ONEDNN_H_
