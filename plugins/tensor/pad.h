// Definition of Pad (and its other name pad), MXNet's: 4-d or 5-d data padded on its spatial axes
// with a constant, the edge values, or the reflection about the edges, and its kernels, written
// once over a device's element loop. Forward gathers each output element's source; backward
// gathers, for each input element, the output gradients of every position that reads it (the
// adjoint, without atomics). pad.cc registers the definitions and the CPU kernels,
// devices/cuda/kernels/pad.cu the GPU kernels.
#ifndef MXPLUG_PLUGINS_TENSOR_PAD_H_
#define MXPLUG_PLUGINS_TENSOR_PAD_H_

#include <stdexcept>
#include <string>
#include <vector>

#include "elementwise.h"
#include "mxplug/plugin.hpp"

namespace mxplug_tensor {

using mxplug::OpReqType;

enum PadMode { kPadConstant, kPadEdge, kPadReflect };

struct PadParam : mxplug::Parameter<PadParam> {
  int mode;
  TShape pad_width;
  double constant_value;
  MXPLUG_DECLARE_PARAMETER(PadParam) {
    MXPLUG_DECLARE_FIELD(mode)
        .add_enum("constant", kPadConstant)
        .add_enum("edge", kPadEdge)
        .add_enum("reflect", kPadReflect)
        .describe("Padding with a constant, the edge values, or the reflection about the edges.");
    MXPLUG_DECLARE_FIELD(pad_width).describe(
        "Pads before and after each axis: (before_0, after_0, before_1, ...); 0 on the first two.");
    MXPLUG_DECLARE_FIELD(constant_value)
        .set_default(0.0)
        .describe("The value of the padding in constant mode.");
  }
};

constexpr int kMaxPadAxes = 5;

/*! \brief A call's shapes and pads. Passed to kernels by value. */
struct PadGeometry {
  int nd = 0, mode = kPadConstant;
  int64_t in[kMaxPadAxes] = {}, out[kMaxPadAxes] = {}, before[kMaxPadAxes] = {},
          after[kMaxPadAxes] = {};
  double value = 0;

  /*! \brief The input coordinate output coordinate o of axis d reads, or -1 for the constant. */
  MXPLUG_XINLINE int64_t Source(int d, int64_t o) const {
    const int64_t c = o - before[d], n = in[d];
    if (c >= 0 && c < n) return c;
    if (mode == kPadConstant) return -1;
    if (mode == kPadEdge) return c < 0 ? 0 : n - 1;
    return c < 0 ? -c : 2 * (n - 1) - c;  // reflect: pads are smaller than n
  }
  /*! \brief The output coordinates of axis d that read input coordinate c, as up to three ranges
   * [lo[k], hi[k]); returns how many. */
  MXPLUG_XINLINE int Readers(int d, int64_t c, int64_t* lo, int64_t* hi) const {
    const int64_t n = in[d], b = before[d], a = after[d];
    int k = 0;
    lo[k] = c + b, hi[k] = c + b + 1, ++k;
    if (mode == kPadEdge) {
      if (c == 0 && b > 0) lo[k] = 0, hi[k] = b, ++k;
      if (c == n - 1 && a > 0) lo[k] = b + n, hi[k] = b + n + a, ++k;
    } else if (mode == kPadReflect) {
      if (c >= 1 && c <= b) lo[k] = b - c, hi[k] = b - c + 1, ++k;
      if (c <= n - 2 && c >= n - 1 - a) lo[k] = b + 2 * (n - 1) - c, hi[k] = lo[k] + 1, ++k;
    }
    return k;
  }
};

inline PadGeometry MakePadGeometry(const PadParam& p, const TShape& s) {
  if (s.ndim() != 4 && s.ndim() != 5)
    throw std::invalid_argument("data has shape " + s.ToString() +
                                "; Current implementation only supports 4-D or 5-D input.");
  if (p.pad_width.ndim() != 2 * s.ndim())
    throw std::invalid_argument("pad_width " + p.pad_width.ToString() + " has " +
                                std::to_string(p.pad_width.ndim()) + " values, expected " +
                                std::to_string(2 * s.ndim()) + " for data " + s.ToString() +
                                " (Input shape vs padding spec mismatch.)");
  for (int i = 0; i < 4; ++i)
    if (p.pad_width[i] != 0)
      throw std::invalid_argument(
          "pad_width " + p.pad_width.ToString() +
          " pads the batch or channel axis: Current implementation expects padding on the first "
          "two axes to be zero.");
  PadGeometry g;
  g.nd = s.ndim(), g.mode = p.mode, g.value = p.constant_value;
  for (int d = 0; d < s.ndim(); ++d) {
    g.in[d] = s[d], g.before[d] = p.pad_width[2 * d], g.after[d] = p.pad_width[2 * d + 1];
    if (g.before[d] < 0 || g.after[d] < 0)
      throw std::invalid_argument("pad_width " + p.pad_width.ToString() + " has a negative pad");
    if (p.mode == kPadReflect && (g.before[d] >= s[d] || g.after[d] >= s[d]))
      throw std::invalid_argument(
          "pad_width " + p.pad_width.ToString() + " reflects axis " + std::to_string(d) +
          " of data " + s.ToString() +
          " by as much as its size: Current implementation of reflection padding only supports "
          "padding sizes smaller than the input size.");
    g.out[d] = g.in[d] + g.before[d] + g.after[d];
  }
  return g;
}

class PadProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& s = (*in)[0];
    if (s.ndim() < 0 || !s.IsKnown()) return false;
    const PadGeometry g = MakePadGeometry(param_, s);
    (*out)[0] = TShape(std::vector<int64_t>(g.out, g.out + g.nd));
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return {og[0]};
  }

 private:
  PadParam param_;
};

template <class T>
struct PadForward {
  PadGeometry g;
  const T* x;
  T* y;
  int req;
  MXPLUG_XINLINE void operator()(int64_t o) const {
    using C = mxplug::ComputeType<T>;
    int64_t rest = o, src = 0, stride = 1;
    bool constant = false;
    for (int d = g.nd - 1; d >= 0; --d) {
      const int64_t c = g.Source(d, rest % g.out[d]);
      rest /= g.out[d];
      constant = constant || c < 0;
      src += c * stride;
      stride *= g.in[d];
    }
    mxplug::StoreAs<C>(y[o], req, constant ? static_cast<C>(g.value) : static_cast<C>(x[src]));
  }
};

template <class T>
struct PadBackward {
  PadGeometry g;
  const T* dy;
  T* dx;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    int64_t lo[kMaxPadAxes][3], hi[kMaxPadAxes][3];
    int ranges[kMaxPadAxes];
    int64_t rest = i;
    for (int d = g.nd - 1; d >= 0; --d) {
      ranges[d] = g.Readers(d, rest % g.in[d], lo[d], hi[d]);
      rest /= g.in[d];
    }
    // Every combination of one reader per axis: an odometer over (range, position) per axis.
    int k[kMaxPadAxes];
    int64_t pos[kMaxPadAxes];
    for (int d = 0; d < g.nd; ++d) k[d] = 0, pos[d] = lo[d][0];
    double sum = 0;
    while (true) {
      int64_t o = 0;
      for (int d = 0; d < g.nd; ++d) o = o * g.out[d] + pos[d];
      sum += static_cast<double>(static_cast<C>(dy[o]));
      int d = g.nd - 1;
      for (; d >= 0; --d) {
        if (++pos[d] < hi[d][k[d]]) break;
        if (++k[d] < ranges[d]) {
          pos[d] = lo[d][k[d]];
          break;
        }
        k[d] = 0, pos[d] = lo[d][0];
      }
      if (d < 0) break;
    }
    mxplug::StoreAs<C>(dx[i], req, static_cast<C>(sum));
  }
};

/*! \brief Pad on a device whose element loop is Loop. */
template <class Loop>
class PadKernel : public mxplug::Operator {
 public:
  PadKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const PadGeometry g = MakePadGeometry(p_, in[0].shape_);
    mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(ctx, static_cast<int64_t>(out[0].Size()),
                PadForward<T>{g, in[0].dptr<T>(), out[0].dptr<T>(), req[0]});
    });
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                const std::vector<TBlob>&, const std::vector<TBlob>&,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const PadGeometry g = MakePadGeometry(p_, ig[0].shape_);
    mxplug::TypeSwitch(ig[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(ctx, static_cast<int64_t>(ig[0].Size()),
                PadBackward<T>{g, og[0].dptr<T>(), ig[0].dptr<T>(), req[0]});
    });
  }

 private:
  PadParam p_;
};

/*! \brief Calls visit.template Op<Prop, Kernel>(name, doc, inputs, params) for Pad and pad. */
template <class Visitor>
void ForEachPadOp(Visitor&& visit) {
  for (const char* name : {"Pad", "pad"})
    visit.template Op<PadProp, PadKernel>(
        name, "Pads the spatial axes of 4-d or 5-d data: a constant, the edges, or a reflection.",
        {{"data", "An n-dimensional input array."}}, PadParam::Fields());
}

}  // namespace mxplug_tensor

#endif  // MXPLUG_PLUGINS_TENSOR_PAD_H_
