// Pooling (max, avg, sum, lp) over 1-d, 2-d and 3-d channels-first data with MXNet's parameters
// (global_pool, pooling_convention valid (floor), full (ceil) or same, stride, pad,
// count_include_pad):
// the definitions, registered by pooling.cc, and the computation as per-element functors every
// device runs (PoolingKernel<Loop>): the CPU behind oneDNN and its own 2-d max backward
// (pooling.cc), CUDA and HIP as they are (devices/cuda/kernels/pooling.cu).
#ifndef MXPLUG_PLUGINS_NN_POOLING_H_
#define MXPLUG_PLUGINS_NN_POOLING_H_

#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "mxplug/plugin.hpp"
#include "spatial.h"

namespace mxplug_nn {

using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;

enum PoolType { kMax, kAvg, kSum, kLp };
enum Convention { kValid, kFull, kSame };

struct PoolingParam : mxplug::Parameter<PoolingParam> {
  TShape kernel, stride, pad;
  int pool_type;
  bool global_pool;
  bool cudnn_off;
  int pooling_convention;
  std::optional<int> p_value;
  std::optional<bool> count_include_pad;
  std::optional<int> layout;
  MXPLUG_DECLARE_PARAMETER(PoolingParam) {
    const TShape empty(std::vector<int64_t>{});
    MXPLUG_DECLARE_FIELD(kernel).set_default(empty).describe(
        "Pooling kernel size: (w,), (h, w) or (d, h, w). Ignored with global_pool.");
    MXPLUG_DECLARE_FIELD(pool_type)
        .set_default(kMax)
        .add_enum("max", kMax)
        .add_enum("avg", kAvg)
        .add_enum("sum", kSum)
        .add_enum("lp", kLp)
        .describe("Pooling type to be applied.");
    MXPLUG_DECLARE_FIELD(global_pool)
        .set_default(false)
        .describe("Pool over the whole spatial extent, ignoring kernel, stride and pad.");
    MXPLUG_DECLARE_FIELD(cudnn_off).set_default(false).describe(
        "Turn off cuDNN pooling (accepted on CPU).");
    MXPLUG_DECLARE_FIELD(pooling_convention)
        .set_default(kValid)
        .add_enum("valid", kValid)
        .add_enum("full", kFull)
        .add_enum("same", kSame)
        .describe(
            "How the output size is rounded: valid floors, full ceils; same gives ceil(x / stride) "
            "windows from the first element, for 1-d data without pad.");
    MXPLUG_DECLARE_FIELD(stride).set_default(empty).describe(
        "Stride per axis. Defaults to 1 for each axis.");
    MXPLUG_DECLARE_FIELD(pad).set_default(empty).describe("Pad per axis. Defaults to no padding.");
    MXPLUG_DECLARE_FIELD(p_value)
        .set_default(std::nullopt)
        .describe("Value of p for lp pooling: 1, 2 or 3.");
    MXPLUG_DECLARE_FIELD(count_include_pad)
        .set_default(std::nullopt)
        .describe("Whether average pooling counts the padded positions (default true).");
    mxplug_nn::AddLayoutEnum(
        MXPLUG_DECLARE_FIELD(layout)
            .set_default(std::nullopt)
            .describe("Data layout; only channels-first (NCW, NCHW, NCDHW) is computed on CPU."));
  }
};
// MXNet's Pooling reads the first values of stride and pad, one per kernel axis, and ignores any
// more (its 'same' convention even demands pad=(0, 0, 0) of 1-d pooling, reading three).
inline TShape Leading(const TShape& given, int axes) {
  if (given.ndim() <= axes) return given;
  return TShape(std::vector<int64_t>(given.begin(), given.begin() + axes));
}

// The window of a call, with the output size each convention gives.
inline Window MakeWindow(const PoolingParam& p, const TShape& data) {
  const int n = data.ndim() - 2;
  Window w;
  w.image.assign(data.begin() + 2, data.end());
  w.dilate.assign(n, 1);
  if (p.global_pool) {
    w.kernel = w.image;
    w.stride.assign(n, 1);
    w.pad.assign(n, 0);
    w.positions.assign(n, 1);
    return w;
  }
  w.kernel.assign(p.kernel.begin(), p.kernel.end());
  w.stride = mxplug_nn::PerAxis(Leading(p.stride, n), n, 1, "stride", 1);
  w.pad = mxplug_nn::PerAxis(Leading(p.pad, n), n, 0, "pad", 0);
  for (int a = 0; a < n; ++a) {
    if (p.pooling_convention == kSame) {  // windows from element 0, the last one clipped
      w.positions.push_back((w.image[a] + w.stride[a] - 1) / w.stride[a]);
      continue;
    }
    const int64_t span = w.image[a] + 2 * w.pad[a] - w.kernel[a];
    if (span < 0)
      throw std::invalid_argument("kernel " + p.kernel.ToString() +
                                  " is larger than the padded data on spatial axis " +
                                  std::to_string(a) + " of data " + data.ToString());
    const int64_t steps =
        p.pooling_convention == kFull ? (span + w.stride[a] - 1) / w.stride[a] : span / w.stride[a];
    w.positions.push_back(steps + 1);
  }
  return w;
}

class PoolingProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override {
    param_.Init(kwargs);
    if (!param_.global_pool) {
      if (param_.kernel.ndim() < 1 || param_.kernel.ndim() > 3)
        throw std::invalid_argument("kernel " + param_.kernel.ToString() + " has " +
                                    std::to_string(param_.kernel.ndim()) +
                                    " axes; expected 1, 2 or 3 (or global_pool=True)");
      for (int64_t k : param_.kernel)
        if (k < 1)
          throw std::invalid_argument("kernel " + param_.kernel.ToString() +
                                      " must be >= 1 on every axis");
    }
    if (param_.pooling_convention == kSame && !param_.global_pool)
      for (int64_t v : param_.pad)
        if (v != 0)
          throw std::invalid_argument(
              "pooling_convention 'same' takes no pad; pad is " + param_.pad.ToString() +
              " (Same pooling convention disables the use of pad parameter.)");
    if (param_.pool_type == kLp && (!param_.p_value || *param_.p_value < 1 || *param_.p_value > 3))
      throw std::invalid_argument("lp pooling needs p_value 1, 2 or 3");
  }

  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& data = (*in)[0];
    if (data.ndim() < 0) return false;
    if (param_.global_pool ? (data.ndim() < 3 || data.ndim() > 5)
                           : data.ndim() != param_.kernel.ndim() + 2)
      throw std::invalid_argument("data has shape " + data.ToString() + "; expected " +
                                  (param_.global_pool
                                       ? std::string("3 to 5 axes")
                                       : std::to_string(param_.kernel.ndim() + 2) +
                                             " axes for kernel " + param_.kernel.ToString()) +
                                  " (batch, channel, spatial)");
    mxplug_nn::CheckLayout(param_.layout, data.ndim() - 2);
    if (param_.pooling_convention == kSame && !param_.global_pool && data.ndim() != 3)
      throw std::invalid_argument("data has shape " + data.ToString() +
                                  "; pooling_convention 'same' takes 3-d data (batch, channel, x), "
                                  "as MXNet's does (Currently 'same' supports Max Pooling 1-D)");
    if (!data.IsKnown()) return false;
    const Window w = MakeWindow(param_, data);
    std::vector<int64_t> oshape{data[0], data[1]};
    oshape.insert(oshape.end(), w.positions.begin(), w.positions.end());
    (*out)[0] = TShape(oshape);
    return true;
  }

  // Max and lp pooling look at the data (lp also at the output); avg and sum need neither.
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad,
                                             const std::vector<int>& in_data,
                                             const std::vector<int>& out_data) const override {
    if (param_.pool_type == kMax) return {out_grad[0], in_data[0]};
    if (param_.pool_type == kLp) return {out_grad[0], in_data[0], out_data[0]};
    return {out_grad[0]};
  }
  // Temp space for oneDNN where the nn plugin has it (defined in pooling.cc, which knows).
  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override;
  std::vector<mxplug::ResourceRequest> BackwardResource(const std::vector<TShape>&) const override;

 private:
  PoolingParam param_;
};

// ---- The computation, written once for every device ----

/*!
 * \brief A call's window and pooling type, passed to kernels by value. Per output position q, its
 * window's taps are image elements or padding (Source: -1); avg divides by the window clipped
 * to the padded data (MXNet's rule, so a window of the full convention past the padding counts
 * less), or to the data itself without count_include_pad; max takes the first maximum in the
 * window's row-major order, and a window wholly in padding gives the dtype's lowest value.
 */
struct PoolGeometry : WindowGeometry {
  int type = kMax, p = 1;
  bool include_pad = true;

  MXPLUG_XINLINE int64_t Divisor(int64_t q) const {
    if (!include_pad) {
      int64_t n = 0;
      for (int64_t t = 0; t < taps; ++t) n += Source(t, q) >= 0;
      return n;
    }
    int64_t size = 1;
    for (int a = axes - 1; a >= 0; --a) {
      const int64_t start = (q % positions[a]) * stride[a] - pad[a];
      q /= positions[a];
      const int64_t end =
          start + kernel[a] < image[a] + pad[a] ? start + kernel[a] : image[a] + pad[a];
      size *= end - start;
    }
    return size;
  }
  /*! \brief The first maximum of window q in plane x, or -1 for a window wholly in padding. */
  template <class T>
  MXPLUG_XINLINE int64_t ArgMax(const T* x, int64_t q) const {
    int64_t best = -1;
    for (int64_t t = 0; t < taps; ++t) {
      const int64_t i = Source(t, q);
      if (i >= 0 && (best < 0 || x[i] > x[best])) best = i;
    }
    return best;
  }
};

template <class C>
MXPLUG_XINLINE C PowP(C x, int p) {
  return p == 1 ? x : p == 2 ? x * x : x * x * x;
}

inline PoolGeometry MakePoolGeometry(const PoolingParam& param, const Window& w) {
  PoolGeometry g;
  static_cast<WindowGeometry&>(g) = MakeWindowGeometry(w);
  g.type = param.pool_type, g.p = param.p_value.value_or(1);
  g.include_pad = param.count_include_pad.value_or(true);
  return g;
}

/*! \brief y[plane, q] for output element o = plane * npos + q. */
template <class T>
struct PoolForwardElements {
  PoolGeometry g;
  const T* x;
  T* y;
  int req;
  MXPLUG_XINLINE void operator()(int64_t o) const {
    using C = mxplug::ComputeType<T>;
    const int64_t q = o % g.npos;
    const T* plane = x + (o / g.npos) * g.nimage;
    if (g.type == kMax) {
      const int64_t best = g.ArgMax(plane, q);
      // A window wholly in padding gives the dtype's lowest value, as in MXNet.
      mxplug::StoreAs<C>(y[o], req,
                         static_cast<C>(best < 0 ? std::numeric_limits<T>::lowest() : plane[best]));
      return;
    }
    C acc = 0;
    for (int64_t t = 0; t < g.taps; ++t) {
      const int64_t i = g.Source(t, q);
      if (i >= 0)
        acc += g.type == kLp ? PowP(static_cast<C>(plane[i]), g.p) : static_cast<C>(plane[i]);
    }
    if (g.type == kAvg) acc /= static_cast<C>(g.Divisor(q));
    if (g.type == kLp) acc = g.p == 1 ? acc : g.p == 2 ? std::sqrt(acc) : std::cbrt(acc);
    mxplug::StoreAs<C>(y[o], req, acc);
  }
};

/*!
 * \brief dx[plane, i] for input element e = plane * nimage + i: the sum over the windows that
 * hold i (found by inverting position * stride - pad + tap = i per axis) of what each sends it, so
 * every element is written once, by one thread, in an order fixed by the shapes.
 */
template <class T>
struct PoolBackwardElements {
  PoolGeometry g;
  const T *x, *y, *og;  // x for max and lp, y for lp
  T* dx;
  int req;
  MXPLUG_XINLINE void operator()(int64_t e) const {
    using C = mxplug::ComputeType<T>;
    const int64_t plane = e / g.nimage, i = e % g.nimage;
    C sum = 0;
    for (int64_t t = 0; t < g.taps; ++t) {
      const int64_t q = g.Reader(i, t);
      if (q < 0) continue;
      const C grad = static_cast<C>(og[plane * g.npos + q]);
      if (g.type == kMax) {
        if (g.ArgMax(x + plane * g.nimage, q) == i) sum += grad;
      } else if (g.type == kAvg) {
        sum += grad / static_cast<C>(g.Divisor(q));
      } else if (g.type == kSum || g.p == 1) {
        sum += grad;
      } else {
        const C out = static_cast<C>(y[plane * g.npos + q]);
        sum += out == C(0) ? C(0) : grad * PowP(static_cast<C>(x[e]) / out, g.p - 1);
      }
    }
    mxplug::StoreAs<C>(dx[e], req, sum);
  }
};

/*! \brief Pooling on `Loop` (mxplug::CpuLoop, a device's loop): one element per iteration. */
template <class Loop>
class PoolingKernel : public mxplug::Operator {
 public:
  PoolingKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { param_.Init(kwargs); }
  explicit PoolingKernel(const PoolingParam& param) : param_(param) {}

  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const PoolGeometry g = MakePoolGeometry(param_, MakeWindow(param_, in[0].shape_));
    mxplug::RealTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(ctx, static_cast<int64_t>(out[0].Size()),
                PoolForwardElements<T>{g, in[0].dptr<T>(), out[0].dptr<T>(), req[0]});
    });
  }

  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& out_grad,
                const std::vector<TBlob>& in_data, const std::vector<TBlob>& out_data,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& in_grad,
                const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const PoolGeometry g = MakePoolGeometry(param_, MakeWindow(param_, in_grad[0].shape_));
    const bool reads_x = g.type == kMax || g.type == kLp, reads_y = g.type == kLp;
    mxplug::RealTypeSwitch(in_grad[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(ctx, static_cast<int64_t>(in_grad[0].Size()),
                PoolBackwardElements<T>{g, reads_x ? in_data[0].dptr<T>() : nullptr,
                                        reads_y ? out_data[0].dptr<T>() : nullptr,
                                        out_grad[0].dptr<T>(), in_grad[0].dptr<T>(), req[0]});
    });
  }

 protected:
  PoolingParam param_;
};

template <class Loop>
void RegisterPoolingKernels(DLDeviceType device) {
  mxplug::sdk::RegisterKernel<PoolingKernel<Loop>>("Pooling", device);
}

}  // namespace mxplug_nn

#endif  // MXPLUG_PLUGINS_NN_POOLING_H_
