// Definition of Correlation: MXNet 1.9.1's correlation layer of FlowNet (Dosovitskiy et al.,
// 2015), comparing each patch of data1 with the patches of data2 around it.
//   data1, data2 (N, C, H, W), both zero-padded by pad_size on each side. A patch is kernel_size
//   square (odd); data1's patches are taken every stride1 pixels, starting max_displacement +
//   the kernel's radius in from the padded border, and each is compared with data2's patches
//   displaced by -max_displacement .. max_displacement in steps of stride2 along both axes.
//   output (N, D * D, out_h, out_w), D = 2 (max_displacement / stride2) + 1, channel
//   dy_index * D + dx_index: the sum over the patch and the channels of data1 * data2
//   (is_multiply) or |data1 - data2|, divided by kernel_size^2 * C.
//   out_h = ceil((H + 2 pad - 2 (max_displacement + radius)) / stride1), out_w alike.
// MXNet keeps padded, channels-last copies of both inputs as hidden outputs; here the kernels
// read the inputs in place (a read in the padding is 0), so the op has one output. Backward
// gathers, for each input element, every output element it took part in (no atomics): from
// the output's gradient times the other input's element (multiply), or times the sign of the
// difference (+1 where data1 >= data2, as MXNet's). correlation.cc registers the definition and
// the CPU kernel, devices/cuda/kernels/correlation.cu the GPU's.
#ifndef MXPLUG_PLUGINS_NN_CORRELATION_H_
#define MXPLUG_PLUGINS_NN_CORRELATION_H_

#include <stdexcept>
#include <string>
#include <vector>

#include "mxplug/plugin.hpp"

namespace mxplug_nn {

using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;

struct CorrelationParam : mxplug::Parameter<CorrelationParam> {
  int kernel_size = 1, max_displacement = 1, stride1 = 1, stride2 = 1, pad_size = 0;
  bool is_multiply = true;
  MXPLUG_DECLARE_PARAMETER(CorrelationParam) {
    MXPLUG_DECLARE_FIELD(kernel_size)
        .set_default(1)
        .set_lower_bound(0)
        .describe("kernel size for Correlation must be an odd number");
    MXPLUG_DECLARE_FIELD(max_displacement)
        .set_default(1)
        .set_lower_bound(0)
        .describe("Max displacement of Correlation ");
    MXPLUG_DECLARE_FIELD(stride1).set_default(1).set_lower_bound(0).describe(
        "stride1 quantize data1 globally");
    MXPLUG_DECLARE_FIELD(stride2).set_default(1).set_lower_bound(0).describe(
        "stride2 quantize data2 within the neighborhood centered around data1");
    MXPLUG_DECLARE_FIELD(pad_size).set_default(0).set_lower_bound(0).describe(
        "pad for Correlation");
    MXPLUG_DECLARE_FIELD(is_multiply)
        .set_default(true)
        .describe("operation type is either multiplication or subduction");
  }
};

/*! \brief The sizes of one Correlation call. */
struct CorrelationGeometry {
  int64_t N = 0, C = 0, H = 0, W = 0;  // the inputs
  int64_t pad = 0, kernel = 1, displacement = 0, stride1 = 1, stride2 = 1;
  int64_t radius = 0;  // of the displacement grid, in stride2 steps
  int64_t grid = 1;    // 2 radius + 1
  int64_t out_h = 0, out_w = 0;
  bool multiply = true;

  CorrelationGeometry(const CorrelationParam& p, const TShape& s)
      : N(s[0]),
        C(s[1]),
        H(s[2]),
        W(s[3]),
        pad(p.pad_size),
        kernel(p.kernel_size),
        displacement(p.max_displacement),
        stride1(p.stride1),
        stride2(p.stride2),
        multiply(p.is_multiply) {
    radius = displacement / stride2;
    grid = 2 * radius + 1;
    const int64_t border = displacement + (kernel - 1) / 2;
    const int64_t h = H + 2 * pad - 2 * border, w = W + 2 * pad - 2 * border;
    out_h = h > 0 ? (h + stride1 - 1) / stride1 : 0;
    out_w = w > 0 ? (w + stride1 - 1) / stride1 : 0;
  }
  MXPLUG_XINLINE int64_t Channels() const { return grid * grid; }
  MXPLUG_XINLINE int64_t Norm() const { return kernel * kernel * C; }
};

inline void CheckCorrelationParam(const CorrelationParam& p) {
  if (p.kernel_size % 2 == 0)
    throw std::invalid_argument("kernel_size " + std::to_string(p.kernel_size) +
                                " must be an odd number");
  if (p.stride1 < 1 || p.stride2 < 1)
    throw std::invalid_argument("stride1 (" + std::to_string(p.stride1) + ") and stride2 (" +
                                std::to_string(p.stride2) + ") must be at least 1");
}

class CorrelationProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override {
    param_.Init(kwargs);
    CheckCorrelationParam(param_);
  }
  std::vector<std::string> ListArguments() const override { return {"data1", "data2"}; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    TShape& a = (*in)[0];
    TShape& b = (*in)[1];
    if (a.ndim() < 0 && b.ndim() >= 0) a = b;
    if (b.ndim() < 0 && a.ndim() >= 0) b = a;
    if (a.ndim() < 0) return false;
    if (a.ndim() != 4)
      throw std::invalid_argument("data1 has shape " + a.ToString() +
                                  "; expected 4 axes (batch, channel, height, width)");
    if (!mxplug::MergeShape(&a, b) || !mxplug::MergeShape(&b, a))
      throw std::invalid_argument("data1 " + a.ToString() + " and data2 " + b.ToString() +
                                  " must have the same shape");
    if (!a.IsKnown()) return false;
    const CorrelationGeometry g(param_, a);
    if (g.out_h < 1 || g.out_w < 1)
      throw std::invalid_argument(
          "data of shape " + a.ToString() + " padded by " + std::to_string(param_.pad_size) +
          " is too small for max_displacement " + std::to_string(param_.max_displacement) +
          " and kernel_size " + std::to_string(param_.kernel_size));
    (*out)[0] = TShape{g.N, g.Channels(), g.out_h, g.out_w};
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>&) const override {
    return {og[0], in[0], in[1]};
  }

 private:
  CorrelationParam param_;
};

/*! \brief Element (n, c, y, x) of a padded input: 0 in the padding. */
template <class T>
MXPLUG_XINLINE mxplug::ComputeType<T> PaddedAt(const T* x, const CorrelationGeometry& g, int64_t n,
                                               int64_t c, int64_t y, int64_t w) {
  y -= g.pad, w -= g.pad;
  if (y < 0 || y >= g.H || w < 0 || w >= g.W) return 0;
  return mxplug::ComputeType<T>(x[((n * g.C + c) * g.H + y) * g.W + w]);
}

/*! \brief One output element: its patch of data1 against the displaced patch of data2. */
template <class T>
struct CorrelationForward {
  const T *a, *b;
  T* out;
  CorrelationGeometry g;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    const int64_t j = i % g.out_w, r = (i / g.out_w) % g.out_h;
    const int64_t t = (i / (g.out_w * g.out_h)) % g.Channels(),
                  n = i / (g.out_w * g.out_h * g.Channels());
    const int64_t x1 = j * g.stride1 + g.displacement, y1 = r * g.stride1 + g.displacement;
    const int64_t dx = (t % g.grid - g.radius) * g.stride2,
                  dy = (t / g.grid - g.radius) * g.stride2;
    C sum = 0;
    for (int64_t h = 0; h < g.kernel; ++h)
      for (int64_t w = 0; w < g.kernel; ++w)
        for (int64_t c = 0; c < g.C; ++c) {
          const C u = PaddedAt(a, g, n, c, y1 + h, x1 + w);
          const C v = PaddedAt(b, g, n, c, y1 + dy + h, x1 + dx + w);
          sum += g.multiply ? u * v : (u > v ? u - v : v - u);
        }
    mxplug::StoreAs<C>(out[i], req, sum / C(g.Norm()));
  }
};

/*! \brief The gradient of input element (n, c, y, x) of data1 (kSecond false) or data2: every
 * output element whose patches held it, with the element of the other input it met there. */
template <class T, bool kSecond>
struct CorrelationBackward {
  const T *a, *b, *og;
  T* grad;
  CorrelationGeometry g;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    const int64_t x = i % g.W, y = (i / g.W) % g.H, c = (i / (g.W * g.H)) % g.C,
                  n = i / (g.W * g.H * g.C);
    const int64_t Y = y + g.pad, X = x + g.pad;  // in padded coordinates
    const C self = C((kSecond ? b : a)[i]);
    C sum = 0;
    for (int64_t t = 0; t < g.Channels(); ++t) {
      const int64_t dx = (t % g.grid - g.radius) * g.stride2,
                    dy = (t / g.grid - g.radius) * g.stride2;
      // Where data1's patch corner sits for this element: data2's element Y met data1's Y - dy.
      const int64_t Y1 = kSecond ? Y - dy : Y, X1 = kSecond ? X - dx : X;
      const C other = kSecond ? PaddedAt(a, g, n, c, Y1, X1) : PaddedAt(b, g, n, c, Y + dy, X + dx);
      C factor = other;
      if (!g.multiply) {  // d|u - v|: +1 for u where u >= v (MXNet's), the opposite for v
        const C u = kSecond ? other : self, v = kSecond ? self : other;
        factor = u >= v ? C(kSecond ? -1 : 1) : C(kSecond ? 1 : -1);
      }
      for (int64_t h = 0; h < g.kernel; ++h) {
        const int64_t ry = Y1 - h - g.displacement;
        if (ry < 0 || ry % g.stride1) continue;
        const int64_t r = ry / g.stride1;
        if (r >= g.out_h) continue;
        for (int64_t w = 0; w < g.kernel; ++w) {
          const int64_t rx = X1 - w - g.displacement;
          if (rx < 0 || rx % g.stride1) continue;
          const int64_t j = rx / g.stride1;
          if (j >= g.out_w) continue;
          sum += C(og[((n * g.Channels() + t) * g.out_h + r) * g.out_w + j]) * factor;
        }
      }
    }
    mxplug::StoreAs<C>(grad[i], req, sum / C(g.Norm()));
  }
};

template <class Loop>
class CorrelationKernel : public mxplug::Operator {
 public:
  CorrelationKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const CorrelationGeometry g(p_, in[0].shape_);
    mxplug::FloatTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(
          ctx, out[0].Size(),
          CorrelationForward<T>{in[0].dptr<T>(), in[1].dptr<T>(), out[0].dptr<T>(), g, req[0]});
    });
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                const std::vector<TBlob>& in, const std::vector<TBlob>&,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    const CorrelationGeometry g(p_, in[0].shape_);
    mxplug::FloatTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      const T *a = in[0].dptr<T>(), *b = in[1].dptr<T>(), *o = og[0].dptr<T>();
      if (req[0] != mxplug::kNullOp)
        Loop::Run(ctx, ig[0].Size(),
                  CorrelationBackward<T, false>{a, b, o, ig[0].dptr<T>(), g, req[0]});
      if (req[1] != mxplug::kNullOp)
        Loop::Run(ctx, ig[1].Size(),
                  CorrelationBackward<T, true>{a, b, o, ig[1].dptr<T>(), g, req[1]});
    });
  }

 private:
  CorrelationParam p_;
};

template <class Loop>
void RegisterCorrelationKernels(DLDeviceType device) {
  mxplug::sdk::RegisterKernel<CorrelationKernel<Loop>>("Correlation", device);
}

}  // namespace mxplug_nn

#endif  // MXPLUG_PLUGINS_NN_CORRELATION_H_
