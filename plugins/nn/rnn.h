// Definition of RNN: MXNet 1.9.1's fused recurrent operator, several layers of an Elman RNN
// (relu or tanh), LSTM or GRU over a whole sequence, optionally bidirectional, with dropout
// between layers. Its arguments and outputs are MXNet's (and cuDNN's):
//   data (T, N, I) in TNC layout; parameters: one vector, every weight first (layer by layer,
//   direction by direction: W_i2h (G H, in) then W_h2h (G H, H)) and then every bias in the same
//   order (b_i2h (G H), b_h2h (G H)), G = 1, 4 or 3 gates in MXNet's order (LSTM i, f, g, o; GRU
//   r, z, n); state (L D, N, H) and, for LSTM, state_cell; with use_sequence_length,
//   sequence_length (N,). Outputs: output (T, N, D H) and, with state_outputs, the last hidden
//   state and the LSTM's last cell state.
//
// Note [RNN kernel]: one source for every device, over its element loop (Loop) and its BLAS (B,
// blas.h / gpu_blas.cuh). Per layer and direction, the input projection of every step is one
// GEMM; each step is then one GEMM of the previous hidden state by W_h2h and one element loop for
// the gates. Forward saves what backward needs (the gates after their activations, each step's
// incoming state, the LSTM cells, the GRU's W_hn h + b_hn, each layer's output and dropout mask)
// in a hidden last output, as cuDNN's reserve space; backward walks the steps in reverse with one
// GEMM per step for the state's gradient, then the weights' and the inputs' gradients are one
// GEMM each over all steps. With sequence lengths, sequence n runs steps 0 .. len_n - 1; the
// reverse direction starts at its own last step; outputs past the end are zero and the returned
// state is the one at the end (cuDNN's semantics; MXNet's CPU ignores the lengths). LSTM state
// clipping clips each new cell state to [min, max] (NaN too with lstm_state_clip_nan), as cuDNN
// does; a clipped cell passes no gradient back through the clip. projection_size is refused, as
// MXNet's CPU refuses it. On the CPU in float32 a step's gates run in passes on oneDNN's vector
// kernels (Note [RNN on the CPU]). rnn.cc registers the definition and the CPU kernel,
// devices/cuda/kernels/rnn.cu the GPU's (cuBLAS, not cuDNN's RNN).
#ifndef MXPLUG_PLUGINS_NN_RNN_H_
#define MXPLUG_PLUGINS_NN_RNN_H_

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "elements.h"
#include "mxplug/plugin.hpp"

namespace mxplug_nn {

using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;

enum RNNMode { kRnnRelu, kRnnTanh, kLstm, kGru };

struct RNNParam : mxplug::Parameter<RNNParam> {
  int state_size = 0, num_layers = 0, mode = kLstm;
  bool bidirectional = false, state_outputs = false, lstm_state_clip_nan = false,
       use_sequence_length = false;
  float p = 0;
  std::optional<int> projection_size;
  std::optional<double> lstm_state_clip_min, lstm_state_clip_max;
  MXPLUG_DECLARE_PARAMETER(RNNParam) {
    MXPLUG_DECLARE_FIELD(state_size)
        .set_lower_bound(0)
        .describe("size of the state for each layer");
    MXPLUG_DECLARE_FIELD(num_layers).set_lower_bound(0).describe("number of stacked layers");
    MXPLUG_DECLARE_FIELD(bidirectional)
        .set_default(false)
        .describe("whether to use bidirectional recurrent layers");
    MXPLUG_DECLARE_FIELD(mode)
        .add_enum("rnn_relu", kRnnRelu)
        .add_enum("rnn_tanh", kRnnTanh)
        .add_enum("lstm", kLstm)
        .add_enum("gru", kGru)
        .describe("the type of RNN to compute");
    MXPLUG_DECLARE_FIELD(p).set_default(0.f).set_range(0, 1).describe(
        "drop rate of the dropout on the outputs of each RNN layer, except the last layer.");
    MXPLUG_DECLARE_FIELD(state_outputs)
        .set_default(false)
        .describe("Whether to have the states as symbol outputs.");
    MXPLUG_DECLARE_FIELD(projection_size)
        .set_default(std::nullopt)
        .describe("size of project size");
    MXPLUG_DECLARE_FIELD(lstm_state_clip_min)
        .set_default(std::nullopt)
        .describe(
            "Minimum clip value of LSTM states. This option must be used together with "
            "lstm_state_clip_max.");
    MXPLUG_DECLARE_FIELD(lstm_state_clip_max)
        .set_default(std::nullopt)
        .describe(
            "Maximum clip value of LSTM states. This option must be used together with "
            "lstm_state_clip_min.");
    MXPLUG_DECLARE_FIELD(lstm_state_clip_nan)
        .set_default(false)
        .describe(
            "Whether to stop NaN from propagating in state by clipping it to min/max. If clipping "
            "range is not specified, this option is ignored.");
    MXPLUG_DECLARE_FIELD(use_sequence_length)
        .set_default(false)
        .describe(
            "If set to true, this layer takes in an extra input parameter `sequence_length` to "
            "specify variable length sequence");
  }
};

/*! \brief The sizes of one RNN call and where each part of the parameters and of the reserve
 * (the hidden output) lies. */
struct RnnLayout {
  int64_t T = 0, N = 0, I = 0, H = 0, L = 0, D = 1, G = 1;
  int mode = kLstm;
  bool dropout = false;  // whether the layers' outputs have masks (p > 0 and several layers)
  // Per layer, on the CPU: the floats of oneDNN's training workspace, which the layer's part of
  // the reserve must hold instead of the plain trace (ReserveCpuWorkspaces; empty: none).
  std::vector<int64_t> workspace;

  RnnLayout(const RNNParam& p, int64_t steps, int64_t batch, int64_t input)
      : T(steps),
        N(batch),
        I(input),
        H(p.state_size),
        L(p.num_layers),
        D(p.bidirectional ? 2 : 1),
        G(p.mode == kLstm  ? 4
          : p.mode == kGru ? 3
                           : 1),
        mode(p.mode),
        dropout(p.p > 0 && p.num_layers > 1) {}

  int64_t InputSize(int64_t l) const { return l == 0 ? I : D * H; }
  int64_t ParameterSize() const {
    int64_t n = 0;
    for (int64_t l = 0; l < L; ++l) n += D * (G * H * (InputSize(l) + H) + 2 * G * H);
    return n;
  }
  // Parameters: W_i2h of (l, d), then its W_h2h; the biases after every weight.
  int64_t WeightOffset(int64_t l, int64_t d) const {
    int64_t off = 0;
    for (int64_t k = 0; k < l; ++k) off += D * G * H * (InputSize(k) + H);
    return off + d * G * H * (InputSize(l) + H);
  }
  int64_t BiasOffset(int64_t l, int64_t d) const {
    int64_t off = 0;
    for (int64_t k = 0; k < L; ++k) off += D * G * H * (InputSize(k) + H);
    return off + (l * D + d) * 2 * G * H;
  }
  // Reserve, per layer and direction: the gates (T N G H), the incoming hidden state of each step
  // (T N H), the LSTM's cell and incoming cell (T N H each) or the GRU's W_hn h + b_hn (T N H);
  // then per layer below the top: its output after dropout (T N D H) and, with dropout, its mask.
  int64_t PerDirection() const {
    return T * N * G * H + T * N * H + (mode == kLstm ? 2 : mode == kGru ? 1 : 0) * T * N * H;
  }
  // A layer's trace (or oneDNN's workspace), then, below the top, its output (and mask).
  int64_t TraceRoom(int64_t l) const {
    const int64_t trace = D * PerDirection();
    return l < static_cast<int64_t>(workspace.size()) ? std::max(trace, workspace[l]) : trace;
  }
  int64_t PerLayer(int64_t l) const {
    return TraceRoom(l) + (l + 1 < L ? (dropout ? 2 : 1) * T * N * D * H : 0);
  }
  int64_t LayerOutputOffset(int64_t l) const { return LayerOffset(l) + TraceRoom(l); }
  inline void ReserveCpuWorkspaces(const RNNParam& p);
  // Last, one element on the CPU: what the forward left in the reserve (RnnTraceKind; Note [RNN
  // on oneDNN]). A GPU leaves it alone.
  int64_t ReserveSize() const { return TraceFlag() + 1; }
  int64_t TraceFlag() const {
    int64_t n = 0;
    for (int64_t l = 0; l < L; ++l) n += PerLayer(l);
    return n;
  }
  int64_t LayerOffset(int64_t l) const {
    int64_t off = 0;
    for (int64_t k = 0; k < l; ++k) off += PerLayer(k);
    return off;
  }
};

/*! \brief The floats of oneDNN's training workspace for layer l of an LSTM on the CPU in float32
 * (Note [RNN on oneDNN], rnn.cc); 0 where oneDNN does not train it. */
int64_t RnnCpuWorkspaceFloats(const RnnLayout& s, const RNNParam& p, int64_t l);

// The op's reserve is sized with these, on every device (the definition does not know where it
// runs); a GPU's kernel lays out its trace without them, in the front of a larger reserve.
inline void RnnLayout::ReserveCpuWorkspaces(const RNNParam& p) {
  workspace.clear();
  for (int64_t l = 0; l < L; ++l) workspace.push_back(RnnCpuWorkspaceFloats(*this, p, l));
}

class RNNProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override {
    param_.Init(kwargs);
    if (param_.projection_size.has_value())
      throw std::invalid_argument(
          "RNN: projection_size is not supported (MXNet 1.9.1 has it only with cuDNN); the "
          "LSTM's projection needs cuDNN's RNN, which mxplug does not use yet");
    if (param_.lstm_state_clip_min.has_value() != param_.lstm_state_clip_max.has_value())
      throw std::invalid_argument(
          "RNN: lstm_state_clip_min and lstm_state_clip_max must be given together");
    if (param_.lstm_state_clip_min.has_value() &&
        *param_.lstm_state_clip_min > *param_.lstm_state_clip_max)
      throw std::invalid_argument("RNN: lstm_state_clip_min (" +
                                  std::to_string(*param_.lstm_state_clip_min) +
                                  ") must not exceed lstm_state_clip_max (" +
                                  std::to_string(*param_.lstm_state_clip_max) + ")");
  }
  std::vector<std::string> ListArguments() const override {
    std::vector<std::string> names{"data", "parameters", "state"};
    if (param_.mode == kLstm) names.push_back("state_cell");
    if (param_.use_sequence_length) names.push_back("sequence_length");
    return names;
  }
  std::vector<std::string> ListOutputs() const override {
    std::vector<std::string> names{"output"};
    if (param_.state_outputs) {
      names.push_back("state_output");
      if (param_.mode == kLstm) names.push_back("statecell_output");
    }
    names.push_back("reserve");
    return names;
  }
  int NumVisibleOutputs() const override { return static_cast<int>(ListOutputs().size()) - 1; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& d = (*in)[0];
    if (d.ndim() < 0) return false;
    if (d.ndim() != 3)
      throw std::invalid_argument("data has shape " + d.ToString() +
                                  ", expected 3 axes (sequence length, batch, input size)");
    if (!d.IsKnown()) return false;
    RnnLayout s(param_, d[0], d[1], d[2]);
    s.ReserveCpuWorkspaces(param_);
    const TShape state{s.L * s.D, s.N, s.H};
    mxplug::InferParameterShape(&(*in)[1], TShape{s.ParameterSize()}, "parameters", d);
    mxplug::InferParameterShape(&(*in)[2], state, "state", d);
    size_t next = 3;
    if (param_.mode == kLstm) mxplug::InferParameterShape(&(*in)[next++], state, "state_cell", d);
    if (param_.use_sequence_length)
      mxplug::InferParameterShape(&(*in)[next], TShape{s.N}, "sequence_length", d);
    (*out)[0] = TShape{s.T, s.N, s.D * s.H};
    for (size_t i = 1; i + 1 < out->size(); ++i) (*out)[i] = state;
    out->back() = TShape{s.ReserveSize()};
    return true;
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    int t = (*in)[0];
    if (t == kMXPUnknownDType) return false;
    const std::vector<std::string> args = ListArguments();
    for (size_t i = 1; i < in->size(); ++i) {
      if (args[i] == "sequence_length") {
        if ((*in)[i] == kMXPUnknownDType) (*in)[i] = kMXPInt32;
        continue;
      }
      if ((*in)[i] != kMXPUnknownDType && (*in)[i] != t)
        throw std::invalid_argument("argument '" + args[i] + "' has dtype " +
                                    mxplug::DTypeName((*in)[i]) + ", expected " +
                                    mxplug::DTypeName(t) + " like data");
      (*in)[i] = t;
    }
    for (int& o : *out) o = t;
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>& out) const override {
    std::vector<int> deps(og.begin(), og.end() - 1);  // not the reserve's
    deps.insert(deps.end(), in.begin(), in.end());
    deps.push_back(out.back());
    return deps;
  }
  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override {
    return {mxplug::ResourceRequest::kTempSpace, mxplug::ResourceRequest::kRandom};
  }
  std::vector<mxplug::ResourceRequest> BackwardResource(const std::vector<TShape>&) const override {
    return {mxplug::ResourceRequest::kTempSpace};
  }

 private:
  RNNParam param_;
};

// ---- The element loops of one step (Note [RNN kernel]); element i = n H + j. ----

/*! \brief x = sigmoid(x) or tanh(x) in place on the CPU's vector kernels (oneDNN's eltwise, in
 * rnn.cc); false where the plugin has none (the element loop runs instead). */
bool RnnActivateOnCpu(const mxplug::OpContext& ctx, bool tanh, float* x, int64_t n);

/*! \brief What a CPU forward left in the reserve: nothing a backward can use (oneDNN's
 * inference), the plain kernel's trace, or oneDNN's workspaces (Note [RNN on oneDNN]). */
enum RnnTraceKind { kNoTrace = 0, kPlainTrace = 1, kOneDnnTrace = 2 };

/*! \brief A float32 LSTM's forward on oneDNN's primitives (Note [RNN on oneDNN], rnn.cc); false
 * where they do not run (the kernel's own steps run instead). Outside training it writes the
 * visible outputs only; in training the reserve holds oneDNN's workspaces, for
 * RnnLstmBackwardOnCpu. */
bool RnnLstmForwardOnCpu(const mxplug::OpContext& ctx, const RnnLayout& s, const RNNParam& p,
                         const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                         const std::vector<TBlob>& out, bool training);
bool RnnLstmBackwardOnCpu(const mxplug::OpContext& ctx, const RnnLayout& s, const RNNParam& p,
                          const std::vector<TBlob>& og, const std::vector<TBlob>& in,
                          const std::vector<TBlob>& out, const std::vector<OpReqType>& req,
                          const std::vector<TBlob>& ig);

template <class C>
MXPLUG_XINLINE C Sigmoid(C x) {
  return C(1) / (C(1) + std::exp(-x));
}

/*! \brief Where sequence n is at step k of a direction: its time position, and whether it has
 * reached its end (then the step leaves its state alone and zeroes position k's output). */
struct RnnStep {
  const double* lengths;  // (N,) or null: every sequence has all T steps
  int64_t T, k;
  bool reverse;
  MXPLUG_XINLINE int64_t Length(int64_t n) const {
    if (!lengths) return T;
    const int64_t len = static_cast<int64_t>(lengths[n]);
    return len < 0 ? 0 : len > T ? T : len;
  }
  MXPLUG_XINLINE bool Active(int64_t n) const { return k < Length(n); }
  MXPLUG_XINLINE int64_t Position(int64_t n) const {
    return !Active(n) ? k : reverse ? Length(n) - 1 - k : k;
  }
};

/*! \brief How a step's element function F (F::Element(n, j, position, active)) is run: for one
 * element i = n H + j (a GPU thread), or for sequence n's whole row (the CPU, its position found
 * once). */
struct RnnUnits {
  template <class F>
  static MXPLUG_XINLINE void Each(const F& f, const RnnStep& step, int64_t H, int64_t i) {
    const int64_t n = i / H;
    f.Element(n, i % H, step.Position(n), step.Active(n));
  }
  template <class F>
  static MXPLUG_XINLINE void Row(const F& f, const RnnStep& step, int64_t H, int64_t n) {
    const int64_t t = step.Position(n);
    const bool active = step.Active(n);
    for (int64_t j = 0; j < H; ++j) f.Element(n, j, t, active);
  }
};

/*! \brief One direction's step buffers and saved tensors (reserve), position-indexed. */
template <class T>
struct RnnTrace {
  T* gates;   // (T, N, G H) after the activations
  T* h_in;    // (T, N, H) the hidden state each step started from
  T* c;       // LSTM: (T, N, H) the new cell state
  T* c_in;    // LSTM: (T, N, H) the cell state each step started from
  T* hh_new;  // GRU: (T, N, H) W_hn h + b_hn
};

template <class T>
struct RnnForwardStep {
  using C = mxplug::ComputeType<T>;
  RnnStep step;
  int64_t N, H, G;
  int mode;
  const T* xi;  // (T, N, G H): W_i2h x of every position
  const T* hh;  // (N, G H): W_h2h h of this step
  const T *bi, *bh;
  const T *h_prev, *c_prev;  // (N, H)
  T *h_next, *c_next;        // (N, H)
  RnnTrace<T> trace;
  T* y;  // (T, N, D H) at this direction's column
  int64_t ldy;
  bool clip, clip_nan;
  double clip_min, clip_max;
  MXPLUG_XINLINE void operator()(int64_t i) const { RnnUnits::Each(*this, step, H, i); }
  MXPLUG_XINLINE void Row(int64_t n) const { RnnUnits::Row(*this, step, H, n); }
  MXPLUG_XINLINE void Element(int64_t n, int64_t j, int64_t t, bool active) const {
    const int64_t i = n * H + j, GH = G * H;
    const int64_t row = (t * N + n) * GH, at = (t * N + n) * H + j;
    T* y_at = y + (t * N + n) * ldy + j;
    if (!active) {  // past the end: the state waits; the output and trace are zero
      h_next[i] = h_prev[i];
      if (mode == kLstm) c_next[i] = c_prev[i];
      *y_at = T(0);
      trace.h_in[at] = T(0);
      for (int64_t g = 0; g < G; ++g) trace.gates[row + g * H + j] = T(0);
      return;
    }
    auto pre = [&](int64_t g) {
      return C(xi[row + g * H + j]) + C(bi[g * H + j]) + C(hh[n * GH + g * H + j]) +
             C(bh[g * H + j]);
    };
    const C hp = C(h_prev[i]);
    trace.h_in[at] = h_prev[i];
    C h = 0;
    if (mode == kLstm) {
      const C in = Sigmoid(pre(0)), f = Sigmoid(pre(1)), g = std::tanh(pre(2)), o = Sigmoid(pre(3));
      const C cp = C(c_prev[i]);
      C c = f * cp + in * g;
      if (clip) {
        if (c != c) {
          if (clip_nan) c = C(clip_min);
        } else {
          c = c < C(clip_min) ? C(clip_min) : c > C(clip_max) ? C(clip_max) : c;
        }
      }
      h = o * std::tanh(c);
      const C act[4] = {in, f, g, o};
      for (int64_t k = 0; k < 4; ++k) trace.gates[row + k * H + j] = T(act[k]);
      trace.c[at] = T(c);
      trace.c_in[at] = c_prev[i];
      c_next[i] = T(c);
    } else if (mode == kGru) {
      const C hn = C(hh[n * GH + 2 * H + j]) + C(bh[2 * H + j]);
      const C r = Sigmoid(pre(0)), z = Sigmoid(pre(1));
      const C nn = std::tanh(C(xi[row + 2 * H + j]) + C(bi[2 * H + j]) + r * hn);
      h = (C(1) - z) * nn + z * hp;
      trace.gates[row + j] = T(r);
      trace.gates[row + H + j] = T(z);
      trace.gates[row + 2 * H + j] = T(nn);
      trace.hh_new[at] = T(hn);
    } else {
      const C a = pre(0);
      h = mode == kRnnTanh ? std::tanh(a) : (a > C(0) ? a : C(0));
      trace.gates[row + j] = T(h);
    }
    h_next[i] = T(h);
    *y_at = T(h);
  }
};

/*! \brief Backward of one step: from the gradient reaching the step's output (dy at its position
 * plus dh carried from the later step) to the gates' pre-activation gradients (dgi for W_i2h,
 * dgh for W_h2h: they differ only in the GRU's n gate), and the carried gradients (dh, dc) as far
 * as they go without W_h2h; the GEMM by W_h2h then adds into dh. */
template <class T>
struct RnnBackwardStep {
  using C = mxplug::ComputeType<T>;
  RnnStep step;
  int64_t N, H, G;
  int mode;
  RnnTrace<T> trace;
  const T* dy;  // (T, N, D H) at this direction's column
  int64_t ldy;
  T *dh, *dc;    // (N, H) carried, read and rewritten in place
  T *dgi, *dgh;  // (T, N, G H) position-indexed
  T* dgh_step;   // (N, G H): this step's dgh, for the GEMM by W_h2h
  bool clip;
  double clip_min, clip_max;
  MXPLUG_XINLINE void operator()(int64_t i) const { RnnUnits::Each(*this, step, H, i); }
  MXPLUG_XINLINE void Row(int64_t n) const { RnnUnits::Row(*this, step, H, n); }
  MXPLUG_XINLINE void Element(int64_t n, int64_t j, int64_t t, bool active) const {
    const int64_t i = n * H + j, GH = G * H;
    const int64_t row = (t * N + n) * GH, at = (t * N + n) * H + j;
    if (!active) {  // the carried gradients pass by untouched
      for (int64_t g = 0; g < G; ++g) {
        dgi[row + g * H + j] = dgh[row + g * H + j] = T(0);
        dgh_step[n * GH + g * H + j] = T(0);
      }
      return;
    }
    const C d = C(dy[(t * N + n) * ldy + j]) + C(dh[i]);
    const T* a = trace.gates + row;
    C gi[4] = {0, 0, 0, 0}, gh[4] = {0, 0, 0, 0};
    C dh_prev = 0;
    if (mode == kLstm) {
      const C in = C(a[j]), f = C(a[H + j]), g = C(a[2 * H + j]), o = C(a[3 * H + j]);
      const C c = C(trace.c[at]), tc = std::tanh(c), cp = C(trace.c_in[at]);
      C dcell = C(dc[i]) + d * o * (C(1) - tc * tc);
      if (clip) {
        const C raw = f * cp + in * g;
        if (!(raw >= C(clip_min) && raw <= C(clip_max))) dcell = C(0);
      }
      gi[0] = dcell * g * in * (C(1) - in);
      gi[1] = dcell * cp * f * (C(1) - f);
      gi[2] = dcell * in * (C(1) - g * g);
      gi[3] = d * tc * o * (C(1) - o);
      for (int k = 0; k < 4; ++k) gh[k] = gi[k];
      dc[i] = T(dcell * f);
    } else if (mode == kGru) {
      const C r = C(a[j]), z = C(a[H + j]), nn = C(a[2 * H + j]);
      const C hp = C(trace.h_in[at]), hn = C(trace.hh_new[at]);
      const C dn = d * (C(1) - z) * (C(1) - nn * nn);
      gi[0] = gh[0] = dn * hn * r * (C(1) - r);
      gi[1] = gh[1] = d * (hp - nn) * z * (C(1) - z);
      gi[2] = dn;
      gh[2] = dn * r;
      dh_prev = d * z;
    } else {
      const C h = C(a[j]);
      gi[0] = gh[0] = mode == kRnnTanh ? d * (C(1) - h * h) : (h > C(0) ? d : C(0));
    }
    for (int64_t g = 0; g < G; ++g) {
      dgi[row + g * H + j] = T(gi[g]);
      dgh[row + g * H + j] = T(gh[g]);
      dgh_step[n * GH + g * H + j] = T(gh[g]);
    }
    dh[i] = T(dh_prev);
  }
};

template <class T>
struct RnnCopy {
  const T* from;
  T* to;
  MXPLUG_XINLINE void operator()(int64_t i) const { to[i] = from[i]; }
};

template <class T>
struct RnnFill {
  T* to;
  MXPLUG_XINLINE void operator()(int64_t i) const { to[i] = T(0); }
};

/*! \brief out = from (req), for the states' outputs and gradients. */
template <class T>
struct RnnStore {
  const T* from;
  T* to;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    mxplug::StoreAs<mxplug::ComputeType<T>>(to[i], req, mxplug::ComputeType<T>(from[i]));
  }
};

/*! \brief Dropout between layers: the next layer's input x * mask, mask 1 / keep or 0. */
template <class T>
struct RnnDropout {
  T *x, *mask;
  uint64_t key, counter;
  float keep;
  bool active;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    C m = C(1);
    if (active)
      m = mxplug::UniformFloatOf(mxplug::PhiloxDraw(key, counter, i)) < keep ? C(1.0 / keep) : C(0);
    mask[i] = T(m);
    x[i] = T(C(x[i]) * m);
  }
};

template <class T>
struct RnnScale {
  T* x;
  const T* mask;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    x[i] = T(C(x[i]) * C(mask[i]));
  }
};

template <class S>
struct RnnLengths {
  const S* in;
  double* out;
  MXPLUG_XINLINE void operator()(int64_t i) const { out[i] = AsDouble(in[i]); }
};

template <class Loop, class B>
class RNNKernel : public mxplug::Operator {
 public:
  RNNKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }

  static constexpr bool kOnCpu = std::is_same_v<Loop, mxplug::CpuLoop>;

  // The call's layout: on the CPU in float32 with room for oneDNN's workspaces, as the
  // definition sized the reserve.
  RnnLayout Layout(const std::vector<TBlob>& in) const {
    RnnLayout s(p_, in[0].shape_[0], in[0].shape_[1], in[0].shape_[2]);
    if constexpr (kOnCpu) {
      if (in[0].type_flag_ == kMXPFloat32) s.ReserveCpuWorkspaces(p_);
    }
    return s;
  }

  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    const RnnLayout s = Layout(in);
    if constexpr (kOnCpu) {
      if (RnnLstmForwardOnCpu(ctx, s, p_, in, req, out, ctx.is_train)) {
        SetTrace(s, out.back(), ctx.is_train ? kOneDnnTrace : kNoTrace);
        return;
      }
    }
    RunSteps(ctx, s, in, req, out, ctx.is_train);
    if constexpr (kOnCpu) SetTrace(s, out.back(), kPlainTrace);
  }

 private:
  // On the CPU: what the reserve holds (RnnLayout::TraceFlag).
  static void SetTrace(const RnnLayout& s, const TBlob& reserve, RnnTraceKind kind) {
    mxplug::FloatTypeSwitch(reserve.type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      reserve.dptr<T>()[s.TraceFlag()] = T(static_cast<int>(kind));
    });
  }
  static RnnTraceKind TraceKind(const RnnLayout& s, const TBlob& reserve) {
    int kind = kPlainTrace;
    mxplug::FloatTypeSwitch(reserve.type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      kind = static_cast<int>(static_cast<float>(reserve.dptr<T>()[s.TraceFlag()]));
    });
    return static_cast<RnnTraceKind>(kind);
  }

  // The forward's steps, filling the reserve's trace; `train` applies dropout between layers. A
  // visible output whose request is kNullOp is computed into scratch (the backward's recompute).
  void RunSteps(const mxplug::OpContext& ctx, const RnnLayout& s, const std::vector<TBlob>& in,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
                bool train) const {
    mxplug::FloatTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      const int64_t NH = s.N * s.H, GH = s.G * s.H, TN = s.T * s.N;
      // Scratch: the input projections (T N G H), this step's W_h2h h (N G H), two hidden and two
      // cell states (N H each), the final states when they are not outputs (L D N H each), and
      // the lengths.
      const size_t states = static_cast<size_t>(s.L * s.D * NH);
      const size_t lengths = p_.use_sequence_length ? static_cast<size_t>(s.N) : 0;
      const size_t top = req[0] == mxplug::kNullOp ? static_cast<size_t>(TN * s.D * s.H) : 0;
      size_t count = static_cast<size_t>(TN * GH + s.N * GH + 4 * NH + 5 * NH) + 2 * states + top;
      char* raw = static_cast<char*>(ctx.resource(mxplug::ResourceRequest::kTempSpace)
                                         .get_space(count * sizeof(T) + lengths * sizeof(double)));
      double* len = lengths ? reinterpret_cast<double*>(raw) : nullptr;
      T* scratch = reinterpret_cast<T*>(raw + lengths * sizeof(double));
      if (len) ConvertLengths(ctx, in.back(), len);
      T *xi = scratch, *hh = xi + TN * GH, *h[2] = {hh + s.N * GH, hh + s.N * GH + NH};
      T* c[2] = {h[1] + NH, h[1] + 2 * NH};
      T* hy = c[1] + NH;
      T* cy = hy + states;
      T* act = cy + states;  // the CPU's gate blocks (Note [RNN on the CPU]) and tanh(c)
      T* tc = act + 4 * NH;
      T* y_top = top ? tc + NH : out[0].dptr<T>();
      size_t vis = 1;
      auto writes = [&](size_t o) {
        return req[o] == mxplug::kWriteTo || req[o] == mxplug::kWriteInplace;
      };
      if (p_.state_outputs) {
        if (writes(vis)) hy = out[vis].dptr<T>();
        ++vis;
        if (s.mode == kLstm && writes(vis)) cy = out[vis].dptr<T>();
      }
      const T* w = in[1].dptr<T>();
      T* reserve = out.back().dptr<T>();
      mxplug::RandomStream random(0, 0, 0);
      const bool drop = s.dropout && train;
      for (int64_t l = 0; l < s.L; ++l) {
        const int64_t ni = s.InputSize(l);
        const T* x = l == 0 ? in[0].dptr<T>() : LayerOutput<T>(s, reserve, l - 1);
        T* y = l + 1 == s.L ? y_top : LayerOutput<T>(s, reserve, l);
        for (int64_t d = 0; d < s.D; ++d) {
          const T* wi = w + s.WeightOffset(l, d);
          const T* wh = wi + GH * ni;
          const T* bi = w + s.BiasOffset(l, d);
          const T* bh = bi + GH;
          const RnnTrace<T> trace = Trace<T>(s, reserve, l, d);
          const int64_t sd = l * s.D + d;
          B::Gemm(ctx, false, true, TN, GH, ni, x, ni, wi, ni, 0, xi, GH, 1, 0, 0, 0);
          Loop::Run(ctx, NH, RnnCopy<T>{in[2].dptr<T>() + sd * NH, h[0]});
          if (s.mode == kLstm) Loop::Run(ctx, NH, RnnCopy<T>{in[3].dptr<T>() + sd * NH, c[0]});
          for (int64_t k = 0; k < s.T; ++k) {
            const int a = k % 2, b = 1 - a;
            B::Gemm(ctx, false, true, s.N, GH, s.H, h[a], s.H, wh, s.H, 0, hh, GH, 1, 0, 0, 0);
            RnnForwardStep<T> f{RnnStep{len, s.T, k, d == 1},
                                s.N,
                                s.H,
                                s.G,
                                s.mode,
                                xi,
                                hh,
                                bi,
                                bh,
                                h[a],
                                c[a],
                                h[b],
                                c[b],
                                trace,
                                y + d * s.H,
                                s.D * s.H,
                                p_.lstm_state_clip_min.has_value(),
                                p_.lstm_state_clip_nan,
                                p_.lstm_state_clip_min.value_or(0),
                                p_.lstm_state_clip_max.value_or(0)};
            if constexpr (std::is_same_v<Loop, mxplug::CpuLoop> && std::is_same_v<T, float>) {
              if (CpuForwardStep(ctx, f, act, tc)) continue;
            }
            EachUnit(ctx, s, f);
          }
          const int last = static_cast<int>(s.T % 2);
          Loop::Run(ctx, NH, RnnCopy<T>{h[last], hy + sd * NH});
          if (s.mode == kLstm) Loop::Run(ctx, NH, RnnCopy<T>{c[last], cy + sd * NH});
        }
        if (l + 1 < s.L && s.dropout) {
          uint64_t key = 0, counter = 0;
          if (drop) {
            random = ctx.resource(mxplug::ResourceRequest::kRandom)
                         .get_random(static_cast<uint64_t>(TN * s.D * s.H));
            key = random.key(), counter = random.counter();
          }
          Loop::Run(ctx, TN * s.D * s.H,
                    RnnDropout<T>{y, y + TN * s.D * s.H, key, counter, 1.0f - p_.p, drop});
        }
      }
      // The states' outputs, as their requests say (the kernel wrote them in place for kWriteTo).
      vis = 1;
      if (p_.state_outputs) {
        StoreIfAdd<T>(ctx, req[vis], hy, out[vis]);
        ++vis;
        if (s.mode == kLstm) StoreIfAdd<T>(ctx, req[vis], cy, out[vis]);
      }
    });
  }

 public:
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                const std::vector<TBlob>& in, const std::vector<TBlob>& out,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    const RnnLayout s = Layout(in);
    if constexpr (kOnCpu) {
      const RnnTraceKind left = TraceKind(s, out.back());
      if (left == kOneDnnTrace && RnnLstmBackwardOnCpu(ctx, s, p_, og, in, out, req, ig)) return;
      // A forward outside training on oneDNN left no trace (autograd's record(train_mode=False)
      // then backward), and oneDNN's workspaces serve its backward alone: recompute the trace,
      // without dropout as those forwards ran, before this call's scratch is taken from the same
      // temp space.
      if (left != kPlainTrace) {
        RunSteps(ctx, s, in, std::vector<OpReqType>(out.size(), mxplug::kNullOp), out, false);
        SetTrace(s, out.back(), kPlainTrace);
      }
    }
    mxplug::FloatTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      using CT = mxplug::ComputeType<T>;
      const int64_t NH = s.N * s.H, GH = s.G * s.H, TN = s.T * s.N, DH = s.D * s.H;
      const bool gru = s.mode == kGru;
      // Scratch: dgi and dgh (T N G H each; one buffer unless GRU), this step's dgh (N G H), the
      // carried dh and dc (N H each), two layer-output gradients (T N D H each), and lengths.
      const size_t lengths = p_.use_sequence_length ? static_cast<size_t>(s.N) : 0;
      const size_t count =
          static_cast<size_t>((gru ? 2 : 1) * TN * GH + s.N * GH + 2 * NH + 2 * TN * DH);
      char* raw = static_cast<char*>(ctx.resource(mxplug::ResourceRequest::kTempSpace)
                                         .get_space(count * sizeof(T) + lengths * sizeof(double)));
      double* len = lengths ? reinterpret_cast<double*>(raw) : nullptr;
      T* scratch = reinterpret_cast<T*>(raw + lengths * sizeof(double));
      if (len) ConvertLengths(ctx, in.back(), len);
      T* dgi = scratch;
      T* dgh = gru ? dgi + TN * GH : dgi;
      T* dgh_step = dgi + (gru ? 2 : 1) * TN * GH;
      T *dh = dgh_step + s.N * GH, *dc = dh + NH;
      T* dy_buf[2] = {dc + NH, dc + NH + TN * DH};
      const T* w = in[1].dptr<T>();
      const T* reserve = out.back().dptr<T>();
      T* dw = req[1] != mxplug::kNullOp ? ig[1].dptr<T>() : nullptr;
      const CT wbeta = req[1] == mxplug::kAddTo ? CT(1) : CT(0);
      // The gradients of the states' outputs, when the op has them.
      const T *dhy = nullptr, *dcy = nullptr;
      if (p_.state_outputs) {
        dhy = og[1].dptr<T>();
        if (s.mode == kLstm) dcy = og[2].dptr<T>();
      }
      const T* dy = og[0].dptr<T>();
      for (int64_t l = s.L - 1; l >= 0; --l) {
        const int64_t ni = s.InputSize(l);
        const T* x = l == 0 ? in[0].dptr<T>() : LayerOutput<T>(s, const_cast<T*>(reserve), l - 1);
        // Where this layer's input gradient goes: the data's gradient, or the layer below's.
        T* dx = l == 0 ? (req[0] != mxplug::kNullOp ? ig[0].dptr<T>() : nullptr) : dy_buf[l % 2];
        for (int64_t d = 0; d < s.D; ++d) {
          const T* wi = w + s.WeightOffset(l, d);
          const T* wh = wi + GH * ni;
          const RnnTrace<T> trace = Trace<T>(s, const_cast<T*>(reserve), l, d);
          const int64_t sd = l * s.D + d;
          if (dhy)
            Loop::Run(ctx, NH, RnnCopy<T>{dhy + sd * NH, dh});
          else
            Loop::Run(ctx, NH, RnnFill<T>{dh});
          if (s.mode == kLstm) {
            if (dcy)
              Loop::Run(ctx, NH, RnnCopy<T>{dcy + sd * NH, dc});
            else
              Loop::Run(ctx, NH, RnnFill<T>{dc});
          }
          for (int64_t k = s.T - 1; k >= 0; --k) {
            RnnBackwardStep<T> b{RnnStep{len, s.T, k, d == 1},
                                 s.N,
                                 s.H,
                                 s.G,
                                 s.mode,
                                 trace,
                                 dy + d * s.H,
                                 DH,
                                 dh,
                                 dc,
                                 dgi,
                                 dgh,
                                 dgh_step,
                                 p_.lstm_state_clip_min.has_value(),
                                 p_.lstm_state_clip_min.value_or(0),
                                 p_.lstm_state_clip_max.value_or(0)};
            EachUnit(ctx, s, b);
            B::Gemm(ctx, false, false, s.N, s.H, GH, dgh_step, GH, wh, s.H, 1, dh, s.H, 1, 0, 0, 0);
          }
          // The initial states' gradients.
          if (req[2] != mxplug::kNullOp)
            Loop::Run(ctx, NH, RnnStore<T>{dh, ig[2].dptr<T>() + sd * NH, req[2]});
          if (s.mode == kLstm && req[3] != mxplug::kNullOp)
            Loop::Run(ctx, NH, RnnStore<T>{dc, ig[3].dptr<T>() + sd * NH, req[3]});
          // The weights' and biases' gradients, then the input's.
          if (dw) {
            T* dwi = dw + s.WeightOffset(l, d);
            T* dwh = dwi + GH * ni;
            T* dbi = dw + s.BiasOffset(l, d);
            B::Gemm(ctx, true, false, GH, ni, TN, dgi, GH, x, ni, wbeta, dwi, ni, 1, 0, 0, 0);
            B::Gemm(ctx, true, false, GH, s.H, TN, dgh, GH, trace.h_in, s.H, wbeta, dwh, s.H, 1, 0,
                    0, 0);
            B::SumRows(ctx, dgi, dbi, TN, GH, req[1]);
            B::SumRows(ctx, dgh, dbi + GH, TN, GH, req[1]);
          }
          if (dx) {
            const CT beta = d > 0 || (l == 0 && req[0] == mxplug::kAddTo) ? CT(1) : CT(0);
            B::Gemm(ctx, false, false, TN, ni, GH, dgi, GH, wi, ni, beta, dx, ni, 1, 0, 0, 0);
          }
        }
        if (l > 0) {
          // Through the dropout between layer l - 1 and this one.
          if (s.dropout)
            Loop::Run(ctx, TN * DH,
                      RnnScale<T>{dx, LayerOutput<T>(s, const_cast<T*>(reserve), l - 1) + TN * DH});
          dy = dx;
        }
      }
      // The sequence lengths have no gradient.
      if (p_.use_sequence_length) Loop::Zero(ctx, ig.back(), req.back());
    });
  }

 private:
  template <class T>
  static T* LayerOutput(const RnnLayout& s, T* reserve, int64_t l) {
    return reserve + s.LayerOutputOffset(l);
  }
  template <class T>
  static RnnTrace<T> Trace(const RnnLayout& s, T* reserve, int64_t l, int64_t d) {
    const int64_t TNH = s.T * s.N * s.H;
    T* at = reserve + s.LayerOffset(l) + d * s.PerDirection();
    RnnTrace<T> t{at, at + s.G * TNH, nullptr, nullptr, nullptr};
    if (s.mode == kLstm) t.c = t.h_in + TNH, t.c_in = t.c + TNH;
    if (s.mode == kGru) t.hh_new = t.h_in + TNH;
    return t;
  }
  // Note [RNN on the CPU]: the gates' exp and tanh, one element at a time, were most of a step's
  // time on the CPU. In float32 the step runs in passes instead: the pre-activations into gate
  // blocks (the sigmoid gates contiguous, then the tanh ones), each block activated at once on
  // oneDNN's vector kernels, then the cell and the traces in plain loops. Same formulas and
  // traces as RnnForwardStep, which runs where oneDNN is absent and on other devices.
  static bool CpuForwardStep(const mxplug::OpContext& ctx, const RnnForwardStep<float>& f,
                             float* act, float* tc) {
    const int64_t N = f.N, H = f.H, G = f.G, NH = N * H, GH = G * H;
    auto row_of = [&](int64_t n) { return (f.step.Position(n) * N + n) * GH; };
    auto pre = [&](int64_t n, int64_t k, int64_t j) {
      return f.xi[row_of(n) + k * H + j] + f.bi[k * H + j] + f.hh[n * GH + k * H + j] +
             f.bh[k * H + j];
    };
    // LSTM blocks: i, f, o (sigmoid), g (tanh); GRU: r, z (sigmoid), n (tanh), W_hn h + b_hn.
    static constexpr int kLstmBlock[4] = {0, 1, 3, 2};
    for (int64_t n = 0; n < N; ++n)
      for (int64_t j = 0; j < H; ++j) {
        if (f.mode == kLstm) {
          for (int64_t k = 0; k < 4; ++k) act[kLstmBlock[k] * NH + n * H + j] = pre(n, k, j);
        } else if (f.mode == kGru) {
          act[n * H + j] = pre(n, 0, j);
          act[NH + n * H + j] = pre(n, 1, j);
          act[3 * NH + n * H + j] = f.hh[n * GH + 2 * H + j] + f.bh[2 * H + j];
        } else {
          const float a = pre(n, 0, j);
          act[n * H + j] = f.mode == kRnnRelu ? (a > 0 ? a : 0.f) : a;
        }
      }
    const int64_t sigmoids = f.mode == kLstm ? 3 * NH : f.mode == kGru ? 2 * NH : 0;
    if (sigmoids && !RnnActivateOnCpu(ctx, false, act, sigmoids)) return false;
    if (f.mode == kLstm && !RnnActivateOnCpu(ctx, true, act + 3 * NH, NH)) return false;
    if (f.mode == kRnnTanh && !RnnActivateOnCpu(ctx, true, act, NH)) return false;
    if (f.mode == kGru) {
      for (int64_t n = 0; n < N; ++n)
        for (int64_t j = 0; j < H; ++j)
          act[2 * NH + n * H + j] = f.xi[row_of(n) + 2 * H + j] + f.bi[2 * H + j] +
                                    act[n * H + j] * act[3 * NH + n * H + j];
      if (!RnnActivateOnCpu(ctx, true, act + 2 * NH, NH)) return false;
    }
    for (int64_t n = 0; n < N; ++n) {
      const int64_t t = f.step.Position(n), row = (t * N + n) * GH;
      const bool active = f.step.Active(n);
      for (int64_t j = 0; j < H; ++j) {
        const int64_t i = n * H + j, at = (t * N + n) * H + j;
        if (!active) {  // as RnnForwardStep: the state waits, the output and trace are zero
          f.h_next[i] = f.h_prev[i];
          if (f.mode == kLstm) f.c_next[i] = f.c_prev[i];
          f.y[(t * N + n) * f.ldy + j] = 0.f;
          f.trace.h_in[at] = 0.f;
          for (int64_t g = 0; g < G; ++g) f.trace.gates[row + g * H + j] = 0.f;
          continue;
        }
        f.trace.h_in[at] = f.h_prev[i];
        if (f.mode == kLstm) {
          const float in = act[i], fg = act[NH + i], o = act[2 * NH + i], g = act[3 * NH + i];
          float c = fg * f.c_prev[i] + in * g;
          if (f.clip) {
            if (c != c) {
              if (f.clip_nan) c = static_cast<float>(f.clip_min);
            } else {
              c = c < f.clip_min   ? static_cast<float>(f.clip_min)
                  : c > f.clip_max ? static_cast<float>(f.clip_max)
                                   : c;
            }
          }
          const float gates[4] = {in, fg, g, o};
          for (int64_t k = 0; k < 4; ++k) f.trace.gates[row + k * H + j] = gates[k];
          f.trace.c[at] = c;
          f.trace.c_in[at] = f.c_prev[i];
          f.c_next[i] = c;
          tc[i] = c;
        } else if (f.mode == kGru) {
          const float r = act[i], z = act[NH + i], nn = act[2 * NH + i];
          const float h = (1.f - z) * nn + z * f.h_prev[i];
          f.trace.gates[row + j] = r;
          f.trace.gates[row + H + j] = z;
          f.trace.gates[row + 2 * H + j] = nn;
          f.trace.hh_new[at] = act[3 * NH + i];
          f.h_next[i] = h;
          f.y[(t * N + n) * f.ldy + j] = h;
        } else {
          f.trace.gates[row + j] = act[i];
          f.h_next[i] = act[i];
          f.y[(t * N + n) * f.ldy + j] = act[i];
        }
      }
    }
    if (f.mode == kLstm) {
      if (!RnnActivateOnCpu(ctx, true, tc, NH))
        for (int64_t i = 0; i < NH; ++i) tc[i] = std::tanh(tc[i]);
      for (int64_t n = 0; n < N; ++n) {
        if (!f.step.Active(n)) continue;
        const int64_t t = f.step.Position(n);
        for (int64_t j = 0; j < H; ++j) {
          const float h = act[2 * NH + n * H + j] * tc[n * H + j];
          f.h_next[n * H + j] = h;
          f.y[(t * N + n) * f.ldy + j] = h;
        }
      }
    }
    return true;
  }

  /*! \brief Runs a step functor over every (sequence, unit): row by row on the CPU (so that the
   * position and the index arithmetic stay out of the inner loop), an element a thread elsewhere.
   */
  template <class F>
  static void EachUnit(const mxplug::OpContext& ctx, const RnnLayout& s, const F& f) {
    if constexpr (std::is_same_v<Loop, mxplug::CpuLoop>) {
      // One thread: an OpenMP team per step fought OpenBLAS's threads between the step's GEMMs
      // and made the LSTM benchmark 1.9x slower on 2 cores (tools/bench ops).
      for (int64_t n = 0; n < s.N; ++n) f.Row(n);
    } else {
      Loop::Run(ctx, s.N * s.H, f);
    }
  }
  void ConvertLengths(const mxplug::OpContext& ctx, const TBlob& lengths, double* to) const {
    mxplug::TypeSwitch(lengths.type_flag_, [&](auto zero) {
      using S = decltype(zero);
      Loop::Run(ctx, lengths.Size(), RnnLengths<S>{lengths.dptr<S>(), to});
    });
  }
  // kAddTo: the final state went to scratch first, now added to the output.
  template <class T>
  static void StoreIfAdd(const mxplug::OpContext& ctx, OpReqType req, const T* from,
                         const TBlob& to) {
    if (req == mxplug::kAddTo) Loop::Run(ctx, to.Size(), RnnStore<T>{from, to.dptr<T>(), req});
  }

  RNNParam p_;
};

template <class Loop, class B>
void RegisterRNNKernels(DLDeviceType device) {
  mxplug::sdk::RegisterKernel<RNNKernel<Loop, B>>("RNN", device);
}

}  // namespace mxplug_nn

#endif  // MXPLUG_PLUGINS_NN_RNN_H_
