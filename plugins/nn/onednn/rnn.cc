// Note [RNN on oneDNN]
// An LSTM in float32 on the CPU runs on oneDNN's LSTM primitives, one per layer (a layer's input
// is I wide for the first and D H for the rest), as MXNet 1.9.1's CPU does. The plain kernel
// (rnn.h) runs a step as one GEMM through OpenBLAS's thread pool and the gates in passes;
// oneDNN's primitive fuses the gates into its GEMMs and keeps one OpenMP team for the whole
// sequence (the ops benchmark's 2x256 LSTM, T 35, N 32, on 2 AVX2 cores: forward 69 to 44 ms,
// forward and backward 232 to 150 ms, docs/performance.md). Its gate order is MXNet's (i, f, g,
// o). The packed parameter vector is read as oneDNN's ldgoi weights (gathered per layer where
// there are two directions; Call reorders them into the primitive's layout), the two biases,
// which oneDNN takes as one, are summed, and the backward's weight gradients (ldigo) are written
// back into the packed gradient, the one bias gradient as both biases'.
//
// Outside training (is_train false: inference, and autograd's record(train_mode=False)) oneDNN
// keeps nothing for a backward: the kernel marks its reserve as holding no trace, and a backward
// recomputes the plain trace first (RNNKernel::Backward). In training the reserve holds, per
// layer, oneDNN's workspace, the layer's last states and (top layer) its output, since the
// executor keeps only the reserve of the op's outputs for the backward; the definition sizes the
// reserve for them (RnnCpuWorkspaceFloats, the larger of them and the plain trace, on every
// device). Sequence lengths, state clipping and dropout between layers in training stay on the
// plain kernel, as do other modes and dtypes.
#include "../rnn.h"

#include <algorithm>
#include <optional>
#include <vector>

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

using LstmBackwardP = Primitive<dnnl::lstm_backward>;

dnnl::rnn_direction Direction(const RnnLayout& s) {
  return s.D == 2 ? dnnl::rnn_direction::bidirectional_concat
                  : dnnl::rnn_direction::unidirectional_left2right;
}

// What layer l's primitives take: data, states and bias plain, the weights in the primitive's
// layout, their gradients in plain ldigo (oneDNN adds into them, so LstmBackward hands it zeroed
// buffers).
struct LayerDescs {
  memory::desc src, states, weights_layer, weights_iter, bias, dst, diff_weights_layer,
      diff_weights_iter;
  LayerDescs(const RnnLayout& s, int64_t l)
      : src(Plain({s.T, s.N, s.InputSize(l)})),
        states(Plain({1, s.D, s.N, s.H})),
        weights_layer(Any({1, s.D, s.InputSize(l), s.G, s.H})),
        weights_iter(Any({1, s.D, s.H, s.G, s.H})),
        bias(Plain({1, s.D, s.G, s.H})),
        dst(Plain({s.T, s.N, s.D * s.H})),
        diff_weights_layer(Plain({1, s.D, s.InputSize(l), s.G, s.H})),
        diff_weights_iter(Plain({1, s.D, s.H, s.G, s.H})) {}
};

std::shared_ptr<const Lstm> ForwardLayer(const RnnLayout& s, int64_t l, bool training, bool want_hy,
                                         bool want_cy) {
  const memory::dims key{s.T, s.N, s.InputSize(l), s.H, s.D, want_hy, want_cy, training};
  return Cached<Lstm>(Key("lstm", key), [&] {
    const LayerDescs d(s, l);
    const memory::desc none;
    const auto prop =
        training ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference;
    return Lstm({{prop, Direction(s), d.src, d.states, d.states, d.weights_layer, d.weights_iter,
                  d.bias, d.dst, want_hy ? d.states : none, want_cy ? d.states : none},
                 Attr(),
                 Engine()});
  });
}

std::shared_ptr<const LstmBackwardP> BackwardLayer(const RnnLayout& s, int64_t l, bool states_out,
                                                   const Lstm& forward) {
  const memory::dims key{s.T, s.N, s.InputSize(l), s.H, s.D, states_out};
  return Cached<LstmBackwardP>(Key("lstm_backward", key), [&] {
    const LayerDescs d(s, l);
    const memory::desc st = states_out ? d.states : memory::desc();
    return LstmBackwardP({{dnnl::prop_kind::backward,
                           Direction(s),
                           d.src,
                           d.states,
                           d.states,
                           d.weights_layer,
                           d.weights_iter,
                           d.bias,
                           d.dst,
                           st,
                           st,
                           d.src,
                           d.states,
                           d.states,
                           d.diff_weights_layer,
                           d.diff_weights_iter,
                           d.bias,
                           d.dst,
                           st,
                           st},
                          Attr(),
                          Engine(),
                          forward.pd});
  });
}

// What a training forward keeps in the op's reserve for the backward, per layer where the plain
// kernel keeps that layer's trace (RnnLayout::LayerOffset): oneDNN's workspace, then the layer's
// last states where they are outputs and, for the top layer, its output. The executor does not
// keep the op's visible outputs for the backward (RNNProp::DeclareBackwardDependency), so these
// are copies, made by the primitive, from which the visible outputs are written with their
// requests. Below the top, a layer's output sits where the plain kernel keeps it.
struct TrainingReserve {
  float *workspace, *hy, *cy, *y;
};

int64_t WorkspaceFloats(const Lstm& p) {
  // Whole cache lines, so that what follows stays 64-byte aligned relative to the workspace.
  return static_cast<int64_t>((p.pd.workspace_desc().get_size() + 63) / 64 * 16);
}

TrainingReserve Kept(const RnnLayout& s, const Lstm& p, float* reserve, int64_t l,
                     bool states_out) {
  TrainingReserve k{};
  k.workspace = reserve + s.LayerOffset(l);
  float* next = k.workspace + WorkspaceFloats(p);
  if (states_out) {
    k.hy = next;
    k.cy = next + s.D * s.N * s.H;
    next = k.cy + s.D * s.N * s.H;
  }
  k.y = l + 1 == s.L ? next : reserve + s.LayerOutputOffset(l);
  return k;
}

int64_t KeptFloats(const RnnLayout& s, const Lstm& p, int64_t l, bool states_out) {
  return WorkspaceFloats(p) + (states_out ? 2 * s.D * s.N * s.H : 0) +
         (l + 1 == s.L ? s.T * s.N * s.D * s.H : 0);
}

// to[i] = from[i] as `req` says (mxplug::Assign).
void CopyWithRequest(const float* from, float* to, int64_t n, mxplug::OpReqType req) {
  for (int64_t i = 0; i < n; ++i) mxplug::Assign(to[i], req, from[i]);
}

// Layer l's two biases of every direction summed, as oneDNN's one bias {1, D, 4, H}.
void SumBiases(const RnnLayout& s, const float* params, int64_t l, std::vector<float>* bias) {
  const int64_t GH = s.G * s.H;
  bias->resize(static_cast<size_t>(s.D * GH));
  for (int64_t d = 0; d < s.D; ++d) {
    const float* b = params + s.BiasOffset(l, d);  // b_i2h, then b_h2h
    for (int64_t j = 0; j < GH; ++j) (*bias)[d * GH + j] = b[j] + b[GH + j];
  }
}

// Layer l's parameters as oneDNN takes them; they must outlive the call's Run.
struct LayerParams {
  std::vector<float> bias, gathered_layer, gathered_iter;
};

// The arguments every primitive of layer l takes: its input x and output y, the initial states,
// the weights and the summed bias.
std::vector<std::pair<int, Call::Handle>> LayerArgs(Call& call, const RnnLayout& s,
                                                    const LstmTensors& t, int64_t l, Call::Handle x,
                                                    Call::Handle y, LayerParams* p) {
  const int64_t in = s.InputSize(l), first = l * s.D * s.N * s.H;
  const memory::dims states{1, s.D, s.N, s.H};
  SumBiases(s, t.params, l, &p->bias);
  const float* wi = DirectionsDense(s, t.params, l, 0, in, &p->gathered_layer);
  const float* wh = DirectionsDense(s, t.params, l, s.G * s.H * in, s.H, &p->gathered_iter);
  return {{DNNL_ARG_SRC_LAYER, x},
          {DNNL_ARG_SRC_ITER, call.Input(states, t.hx + first)},
          {DNNL_ARG_SRC_ITER_C, call.Input(states, t.cx + first)},
          {DNNL_ARG_WEIGHTS_LAYER, call.Input(Ldgoi(s, in), wi)},
          {DNNL_ARG_WEIGHTS_ITER, call.Input(Ldgoi(s, s.H), wh)},
          {DNNL_ARG_BIAS, call.Input(memory::dims{1, s.D, s.G, s.H}, p->bias.data())},
          {DNNL_ARG_DST_LAYER, y}};
}

}  // namespace

int64_t LstmWorkspaceFloats(const RnnLayout& s, int64_t l, bool states_out) {
  if (!Enabled(kMXPFloat32) || s.mode != kLstm || s.T == 0 || s.N == 0 || s.H == 0) return 0;
  auto p = ForwardLayer(s, l, true, states_out, states_out);
  return p ? KeptFloats(s, *p, l, states_out) : 0;
}

bool LstmForward(const mxplug::OpContext& ctx, const RnnLayout& s, const LstmTensors& t,
                 float* reserve) {
  const bool training = reserve != nullptr;
  if (!Enabled(kMXPFloat32) || s.mode != kLstm || t.out_req == mxplug::kNullOp || s.T == 0 ||
      s.N == 0 || s.H == 0)
    return false;
  const bool want_hy = t.hy != nullptr, want_cy = t.cy != nullptr;
  const memory::dims states{1, s.D, s.N, s.H};
  std::vector<std::shared_ptr<const Lstm>> layers;
  for (int64_t l = 0; l < s.L; ++l) {
    auto p = ForwardLayer(s, l, training, want_hy, want_cy);
    // A training forward's workspace must fit where the plain kernel keeps the layer's trace
    // (the definition sized it with LstmWorkspaceFloats).
    if (!p || (training && KeptFloats(s, *p, l, want_hy) > s.TraceRoom(l))) return false;
    layers.push_back(std::move(p));
  }

  Call call(ctx);
  std::vector<LayerParams> params(s.L);
  const int64_t NH = s.N * s.H;
  Call::Handle x = call.Input(memory::dims{s.T, s.N, s.I}, t.data);
  for (int64_t l = 0; l < s.L; ++l) {
    const int64_t first = l * s.D * NH;  // this layer's states in (L D, N, H)
    const memory::dims dst{s.T, s.N, s.D * s.H};
    const bool top = l + 1 == s.L;
    Call::Handle y;
    std::optional<TrainingReserve> kept;
    if (training) {
      kept = Kept(s, *layers[l], reserve, l, want_hy);
      y = call.Output(dst, kept->y, mxplug::kWriteTo);
    } else {
      y = top ? call.Output(dst, t.out, t.out_req) : call.Temp();
    }
    std::vector<std::pair<int, Call::Handle>> args = LayerArgs(call, s, t, l, x, y, &params[l]);
    if (want_hy)
      args.push_back({DNNL_ARG_DST_ITER, kept ? call.Output(states, kept->hy, mxplug::kWriteTo)
                                              : call.Output(states, t.hy + first, t.hy_req)});
    if (want_cy)
      args.push_back({DNNL_ARG_DST_ITER_C, kept ? call.Output(states, kept->cy, mxplug::kWriteTo)
                                                : call.Output(states, t.cy + first, t.cy_req)});
    if (kept)  // written by the primitive in its own layout: an "input" used in place
      args.push_back(
          {DNNL_ARG_WORKSPACE, call.Input(layers[l]->pd.workspace_desc(), kept->workspace)});
    call.Step(*layers[l], std::move(args));
    x = y;
  }
  call.Run();
  if (training) {  // the visible outputs, from what the reserve keeps
    const int64_t DNH = s.D * NH;
    for (int64_t l = 0; l < s.L; ++l) {
      const TrainingReserve k = Kept(s, *layers[l], reserve, l, want_hy);
      if (l + 1 == s.L) CopyWithRequest(k.y, t.out, s.T * DNH, t.out_req);
      if (want_hy) CopyWithRequest(k.hy, t.hy + l * DNH, DNH, t.hy_req);
      if (want_cy) CopyWithRequest(k.cy, t.cy + l * DNH, DNH, t.cy_req);
    }
  }
  return true;
}

bool LstmBackward(const mxplug::OpContext& ctx, const RnnLayout& s, const LstmTensors& t,
                  const LstmGrads& g, const float* reserve_in) {
  if (!Enabled(kMXPFloat32) || s.mode != kLstm) return false;
  float* reserve = const_cast<float*>(reserve_in);  // the primitives take non-const memory
  // The forward had the last states as outputs: their gradients come (the outputs themselves
  // are not kept for the backward).
  const bool states_out = g.hy_grad != nullptr;
  std::vector<std::shared_ptr<const Lstm>> forward;
  std::vector<std::shared_ptr<const LstmBackwardP>> layers;
  for (int64_t l = 0; l < s.L; ++l) {
    forward.push_back(ForwardLayer(s, l, true, states_out, states_out));
    auto p = forward.back() ? BackwardLayer(s, l, states_out, *forward.back()) : nullptr;
    if (!p) return false;
    layers.push_back(std::move(p));
  }

  Call call(ctx);
  const int64_t GH = s.G * s.H, NH = s.N * s.H;
  const memory::dims states{1, s.D, s.N, s.H}, dst{s.T, s.N, s.D * s.H};
  std::vector<LayerParams> params(s.L);
  std::vector<std::vector<float>> dwl(s.L), dwi(s.L), db(s.L);
  Call::Handle dy = call.Input(dst, g.out_grad);
  for (int64_t l = s.L - 1; l >= 0; --l) {
    const int64_t in = s.InputSize(l), first = l * s.D * NH;
    dwl[l].assign(static_cast<size_t>(s.D * in * GH), 0.0f);  // oneDNN adds into these
    dwi[l].assign(static_cast<size_t>(s.D * s.H * GH), 0.0f);
    db[l].assign(static_cast<size_t>(s.D * GH), 0.0f);
    const memory::dims src{s.T, s.N, in};
    const TrainingReserve k = Kept(s, *forward[l], reserve, l, states_out);
    const Call::Handle x =
        call.Input(src, l == 0 ? t.data : Kept(s, *forward[l - 1], reserve, l - 1, states_out).y);
    const Call::Handle y = call.Input(dst, k.y);
    const Call::Handle dx = l > 0 ? call.Temp()
                            : g.data_req != mxplug::kNullOp
                                ? call.Output(src, g.data_grad, g.data_req)
                                : call.Temp();
    auto state_grad = [&](float* grad, mxplug::OpReqType req) {
      return req != mxplug::kNullOp ? call.Output(states, grad + first, req) : call.Temp();
    };
    std::vector<std::pair<int, Call::Handle>> args = LayerArgs(call, s, t, l, x, y, &params[l]);
    std::vector<std::pair<int, Call::Handle>> grads{
        {DNNL_ARG_WORKSPACE, call.Input(layers[l]->pd.workspace_desc(), k.workspace)},
        {DNNL_ARG_DIFF_DST_LAYER, dy},
        {DNNL_ARG_DIFF_SRC_LAYER, dx},
        {DNNL_ARG_DIFF_SRC_ITER, state_grad(g.hx_grad, g.hx_req)},
        {DNNL_ARG_DIFF_SRC_ITER_C, state_grad(g.cx_grad, g.cx_req)},
        {DNNL_ARG_DIFF_WEIGHTS_LAYER,
         call.Output(memory::dims{1, s.D, in, s.G, s.H}, dwl[l].data(), mxplug::kWriteTo)},
        {DNNL_ARG_DIFF_WEIGHTS_ITER,
         call.Output(memory::dims{1, s.D, s.H, s.G, s.H}, dwi[l].data(), mxplug::kWriteTo)},
        {DNNL_ARG_DIFF_BIAS,
         call.Output(memory::dims{1, s.D, s.G, s.H}, db[l].data(), mxplug::kWriteTo)}};
    args.insert(args.end(), grads.begin(), grads.end());
    if (states_out) {
      args.push_back({DNNL_ARG_DST_ITER, call.Input(states, k.hy)});
      args.push_back({DNNL_ARG_DST_ITER_C, call.Input(states, k.cy)});
      args.push_back({DNNL_ARG_DIFF_DST_ITER, call.Input(states, g.hy_grad + first)});
      args.push_back({DNNL_ARG_DIFF_DST_ITER_C, call.Input(states, g.cy_grad + first)});
    }
    call.Step(*layers[l], std::move(args));
    dy = dx;
  }
  call.Run();

  // The packed gradient: each direction's W_i2h and W_h2h rows (ldgoi) from oneDNN's ldigo, and
  // the one bias gradient as both b_i2h's and b_h2h's.
  if (g.params_req == mxplug::kNullOp) return true;
  for (int64_t l = 0; l < s.L; ++l) {
    const int64_t in = s.InputSize(l);
    for (int64_t d = 0; d < s.D; ++d) {
      float* wi = g.params_grad + s.WeightOffset(l, d);
      float* wh = wi + GH * in;
      for (int64_t i = 0; i < in; ++i)
        for (int64_t j = 0; j < GH; ++j)
          mxplug::Assign(wi[j * in + i], g.params_req, dwl[l][(d * in + i) * GH + j]);
      for (int64_t i = 0; i < s.H; ++i)
        for (int64_t j = 0; j < GH; ++j)
          mxplug::Assign(wh[j * s.H + i], g.params_req, dwi[l][(d * s.H + i) * GH + j]);
      float* b = g.params_grad + s.BiasOffset(l, d);
      for (int64_t j = 0; j < GH; ++j) {
        mxplug::Assign(b[j], g.params_req, db[l][d * GH + j]);
        mxplug::Assign(b[GH + j], g.params_req, db[l][d * GH + j]);
      }
    }
  }
  return true;
}

}  // namespace mxplug_nn::onednn
