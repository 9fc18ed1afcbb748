// Note [RNN on oneDNN]
// An LSTM's forward outside training (is_train false: inference, and autograd's
// record(train_mode=False)) runs on oneDNN's LSTM primitive in float32, one primitive per layer
// (a layer's input is I wide for the first and D H for the rest), as MXNet 1.9.1's CPU does. The
// plain kernel (rnn.h) runs a step as one GEMM through OpenBLAS's thread pool and the gates in
// passes; oneDNN's primitive fuses the gates into its GEMM's output and keeps one OpenMP team for
// the whole sequence (the ops benchmark's 2x256 LSTM, T 35, N 32, on 2 AVX2 cores: 69 to 44 ms,
// docs/performance.md). Its gate order is MXNet's (i, f, g, o). The packed parameter vector is
// read in place as oneDNN's ldgoi weights (gathered per layer where there are two directions;
// Call reorders them into the primitive's layout), and the two biases, which oneDNN takes as
// one, are summed. oneDNN keeps no trace for a backward: the kernel marks its reserve as unfilled
// and a backward recomputes the trace first (RNNKernel::Backward). Sequence lengths, state
// clipping and training stay on the plain kernel.
#include <algorithm>
#include <vector>

#include "../rnn.h"
#include "call.h"
#include "onednn.h"

namespace mxplug_nn::onednn {

namespace {

using Lstm = Primitive<dnnl::lstm_forward>;

// Layer l's W_i2h (or, from `w_offset` on, W_h2h) of every direction as oneDNN's weights
// {1, D, in, 4, H} in its ldgoi layout: direction d's (4 H, in) row-major block. With one
// direction that is the packed vector itself; with two, W_h2h lies between the directions'
// blocks, and they are gathered into `gathered` (oneDNN reorders into its packed GEMM layout
// only from dense ldgoi or ldigo).
const float* DirectionsDense(const RnnLayout& s, const float* params, int64_t l, int64_t w_offset,
                             int64_t in, std::vector<float>* gathered) {
  const float* first = params + s.WeightOffset(l, 0) + w_offset;
  if (s.D == 1) return first;
  const int64_t block = s.G * s.H * in;
  gathered->resize(static_cast<size_t>(s.D * block));
  for (int64_t d = 0; d < s.D; ++d) {
    const float* from = params + s.WeightOffset(l, d) + w_offset;
    std::copy(from, from + block, gathered->data() + d * block);
  }
  return gathered->data();
}

memory::desc Ldgoi(const RnnLayout& s, int64_t in) {
  return memory::desc({1, s.D, in, s.G, s.H}, memory::data_type::f32, memory::format_tag::ldgoi);
}

}  // namespace

bool LstmInference(const mxplug::OpContext& ctx, const RnnLayout& s, const LstmTensors& t) {
  if (!Enabled(kMXPFloat32) || s.mode != kLstm || t.out_req == mxplug::kNullOp || s.T == 0 ||
      s.N == 0 || s.H == 0)
    return false;
  const bool want_hy = t.hy != nullptr, want_cy = t.cy != nullptr;
  const memory::dims states{1, s.D, s.N, s.H};
  std::vector<std::shared_ptr<const Lstm>> layers;
  for (int64_t l = 0; l < s.L; ++l) {
    const int64_t in = s.InputSize(l);
    const memory::dims src{s.T, s.N, in}, dst{s.T, s.N, s.D * s.H};
    auto p = Cached<Lstm>(Key("lstm", memory::dims{s.T, s.N, in, s.H, s.D, want_hy, want_cy}), [&] {
      const memory::desc none;
      return Lstm({{dnnl::prop_kind::forward_inference,
                    s.D == 2 ? dnnl::rnn_direction::bidirectional_concat
                             : dnnl::rnn_direction::unidirectional_left2right,
                    Plain(src), Plain(states), Plain(states), Any({1, s.D, in, s.G, s.H}),
                    Any({1, s.D, s.H, s.G, s.H}), Plain({1, s.D, s.G, s.H}), Plain(dst),
                    want_hy ? Plain(states) : none, want_cy ? Plain(states) : none},
                   Attr(),
                   Engine()});
    });
    if (!p) return false;
    layers.push_back(std::move(p));
  }

  Call call(ctx);
  std::vector<std::vector<float>> biases(s.L), gathered(2 * s.L);
  const int64_t GH = s.G * s.H, NH = s.N * s.H;
  Call::Handle x = call.Input(memory::dims{s.T, s.N, s.I}, t.data);
  for (int64_t l = 0; l < s.L; ++l) {
    const int64_t in = s.InputSize(l);
    std::vector<float>& bias = biases[l];
    bias.resize(static_cast<size_t>(s.D * GH));
    for (int64_t d = 0; d < s.D; ++d) {
      const float* b = t.params + s.BiasOffset(l, d);  // b_i2h, then b_h2h
      for (int64_t j = 0; j < GH; ++j) bias[d * GH + j] = b[j] + b[GH + j];
    }
    const float* wi = DirectionsDense(s, t.params, l, 0, in, &gathered[2 * l]);
    const float* wh = DirectionsDense(s, t.params, l, s.G * s.H * in, s.H, &gathered[2 * l + 1]);
    const int64_t first = l * s.D * NH;  // this layer's states in (L D, N, H)
    const bool top = l + 1 == s.L;
    const Call::Handle y =
        top ? call.Output(memory::dims{s.T, s.N, s.D * s.H}, t.out, t.out_req) : call.Temp();
    std::vector<std::pair<int, Call::Handle>> args{
        {DNNL_ARG_SRC_LAYER, x},
        {DNNL_ARG_SRC_ITER, call.Input(states, t.hx + first)},
        {DNNL_ARG_SRC_ITER_C, call.Input(states, t.cx + first)},
        {DNNL_ARG_WEIGHTS_LAYER, call.Input(Ldgoi(s, in), wi)},
        {DNNL_ARG_WEIGHTS_ITER, call.Input(Ldgoi(s, s.H), wh)},
        {DNNL_ARG_BIAS, call.Input(memory::dims{1, s.D, s.G, s.H}, bias.data())},
        {DNNL_ARG_DST_LAYER, y}};
    if (want_hy) args.push_back({DNNL_ARG_DST_ITER, call.Output(states, t.hy + first, t.hy_req)});
    if (want_cy) args.push_back({DNNL_ARG_DST_ITER_C, call.Output(states, t.cy + first, t.cy_req)});
    call.Step(*layers[l], std::move(args));
    x = y;
  }
  call.Run();
  return true;
}

}  // namespace mxplug_nn::onednn
