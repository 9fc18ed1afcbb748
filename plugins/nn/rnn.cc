// Registers RNN (rnn.h) with the CPU kernel on OpenBLAS.
#include "rnn.h"

#include "blas.h"
#include "onednn/onednn.h"

namespace mxplug_nn {

bool RnnActivateOnCpu(const mxplug::OpContext& ctx, bool tanh, float* x, int64_t n) {
  mxplug::TBlob blob;
  blob.dptr_ = x;
  blob.shape_ = mxplug::TShape{n};
  blob.type_flag_ = kMXPFloat32;
  return onednn::EltwiseForward(ctx,
                                tanh ? onednn::EltwiseKind::kTanh : onednn::EltwiseKind::kSigmoid,
                                blob, blob, mxplug::kWriteTo);
}

namespace {

// The cases the plain kernel keeps: another mode or dtype, sequence lengths (cuDNN's semantics)
// and state clipping.
bool OneDnnLstm(const RnnLayout& s, const RNNParam& p, const std::vector<TBlob>& in) {
  return s.mode == kLstm && in[0].type_flag_ == kMXPFloat32 && !p.use_sequence_length &&
         !p.lstm_state_clip_min;
}

// The forward's tensors; the last states where they are outputs and `wanted` says so.
onednn::LstmTensors Tensors(const RNNParam& p, const std::vector<TBlob>& in,
                            const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
                            bool wanted) {
  auto state = [&](size_t o) -> float* {
    return p.state_outputs && wanted && req[o] != mxplug::kNullOp ? out[o].dptr<float>() : nullptr;
  };
  return {in[0].dptr<float>(),
          in[1].dptr<float>(),
          in[2].dptr<float>(),
          in[3].dptr<float>(),
          out[0].dptr<float>(),
          state(1),
          state(2),
          req[0],
          p.state_outputs ? req[1] : mxplug::kNullOp,
          p.state_outputs ? req[2] : mxplug::kNullOp};
}

}  // namespace

int64_t RnnCpuWorkspaceFloats(const RnnLayout& s, const RNNParam& p, int64_t l) {
  // Only where a training forward may run on oneDNN (RnnLstmForwardOnCpu): float32 is the
  // kernel's to check; the definition sizes the reserve before it knows the dtype.
  if (s.mode != kLstm || p.use_sequence_length || p.lstm_state_clip_min || s.dropout) return 0;
  return onednn::LstmWorkspaceFloats(s, l, p.state_outputs);
}

bool RnnLstmForwardOnCpu(const mxplug::OpContext& ctx, const RnnLayout& s, const RNNParam& p,
                         const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                         const std::vector<TBlob>& out, bool training) {
  if (!OneDnnLstm(s, p, in)) return false;
  if (!training) return onednn::LstmForward(ctx, s, Tensors(p, in, req, out, true), nullptr);
  // Training: the backward's primitive must know the forward's, so the last states are written
  // whenever they are outputs, and dropout between layers stays on the plain kernel.
  if (s.dropout || (p.state_outputs && (req[1] == mxplug::kNullOp || req[2] == mxplug::kNullOp)))
    return false;
  return onednn::LstmForward(ctx, s, Tensors(p, in, req, out, true), out.back().dptr<float>());
}

bool RnnLstmBackwardOnCpu(const mxplug::OpContext& ctx, const RnnLayout& s, const RNNParam& p,
                          const std::vector<TBlob>& og, const std::vector<TBlob>& in,
                          const std::vector<TBlob>& out, const std::vector<OpReqType>& req,
                          const std::vector<TBlob>& ig) {
  if (!OneDnnLstm(s, p, in)) return false;
  const std::vector<OpReqType> written(out.size(), mxplug::kWriteTo);
  const onednn::LstmGrads g{og[0].dptr<float>(),
                            p.state_outputs ? og[1].dptr<float>() : nullptr,
                            p.state_outputs ? og[2].dptr<float>() : nullptr,
                            ig[0].dptr<float>(),
                            ig[1].dptr<float>(),
                            ig[2].dptr<float>(),
                            ig[3].dptr<float>(),
                            req[0],
                            req[1],
                            req[2],
                            req[3]};
  return onednn::LstmBackward(ctx, s, Tensors(p, in, written, out, true), g,
                              out.back().dptr<float>());
}

}  // namespace mxplug_nn

namespace {

using mxplug_nn::RNNParam;

MXPLUG_REGISTER_PARAMETER(RNNParam);

[[maybe_unused]] const bool registered = [] {
  mxplug::RegisterOpProperty<mxplug_nn::RNNProp>("RNN")
      .describe(
          "Applies recurrent layers to input data: vanilla RNN (relu or tanh), LSTM and GRU, "
          "multi-layer and bidirectional.")
      .add_argument("data", "NDArray-or-Symbol", "Input data to RNN")
      .add_argument("parameters", "NDArray-or-Symbol",
                    "Vector of all RNN trainable parameters concatenated")
      .add_argument("state", "NDArray-or-Symbol", "initial hidden state of the RNN")
      .add_argument("state_cell", "NDArray-or-Symbol",
                    "initial cell state for LSTM networks (only for LSTM)")
      .add_argument("sequence_length", "NDArray-or-Symbol",
                    "Vector of valid sequence lengths for each element in batch. (Only used if "
                    "use_sequence_length kwarg is True)")
      .add_arguments(RNNParam::Fields());
  mxplug_nn::RegisterRNNKernels<mxplug::CpuLoop, mxplug_nn::CpuBlas>(kDLCPU);
  return true;
}();

}  // namespace
