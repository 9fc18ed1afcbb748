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

bool RnnLstmInferenceOnCpu(const mxplug::OpContext& ctx, const RnnLayout& s, const RNNParam& p,
                           const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                           const std::vector<TBlob>& out) {
  // The plain kernel's cases: sequence lengths (cuDNN's semantics) and state clipping.
  if (s.mode != kLstm || in[0].type_flag_ != kMXPFloat32 || p.use_sequence_length ||
      p.lstm_state_clip_min)
    return false;
  auto wanted = [&](size_t o) -> float* {
    return p.state_outputs && req[o] != mxplug::kNullOp ? out[o].dptr<float>() : nullptr;
  };
  onednn::LstmTensors t{in[0].dptr<float>(),
                        in[1].dptr<float>(),
                        in[2].dptr<float>(),
                        s.mode == kLstm ? in[3].dptr<float>() : nullptr,
                        out[0].dptr<float>(),
                        wanted(1),
                        s.mode == kLstm ? wanted(2) : nullptr,
                        req[0],
                        p.state_outputs ? req[1] : mxplug::kNullOp,
                        p.state_outputs && s.mode == kLstm ? req[2] : mxplug::kNullOp};
  return onednn::LstmInference(ctx, s, t);
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
