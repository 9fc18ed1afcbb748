// Pooling (max, avg, sum, lp) over 1-d, 2-d and 3-d channels-first data, MXNet's parameters:
// global_pool, pooling_convention valid (floor) or full (ceil), stride, pad, count_include_pad.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "mxplug/plugin.hpp"
#include "onednn/onednn.h"
#include "spatial.h"

namespace {

using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;
using mxplug_nn::Window;

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
    MXPLUG_DECLARE_FIELD(pool_type).set_default(kMax).add_enum("max", kMax).add_enum("avg", kAvg)
        .add_enum("sum", kSum).add_enum("lp", kLp).describe("Pooling type to be applied.");
    MXPLUG_DECLARE_FIELD(global_pool).set_default(false).describe(
        "Pool over the whole spatial extent, ignoring kernel, stride and pad.");
    MXPLUG_DECLARE_FIELD(cudnn_off).set_default(false).describe("Turn off cuDNN pooling (accepted on CPU).");
    MXPLUG_DECLARE_FIELD(pooling_convention).set_default(kValid).add_enum("valid", kValid)
        .add_enum("full", kFull).add_enum("same", kSame)
        .describe("How the output size is rounded: valid floors, full ceils.");
    MXPLUG_DECLARE_FIELD(stride).set_default(empty).describe("Stride per axis. Defaults to 1 for each axis.");
    MXPLUG_DECLARE_FIELD(pad).set_default(empty).describe("Pad per axis. Defaults to no padding.");
    MXPLUG_DECLARE_FIELD(p_value).set_default(std::nullopt).describe("Value of p for lp pooling: 1, 2 or 3.");
    MXPLUG_DECLARE_FIELD(count_include_pad).set_default(std::nullopt).describe(
        "Whether average pooling counts the padded positions (default true).");
    mxplug_nn::AddLayoutEnum(MXPLUG_DECLARE_FIELD(layout).set_default(std::nullopt).describe(
        "Data layout; only channels-first (NCW, NCHW, NCDHW) is computed on CPU."));
  }
};
MXPLUG_REGISTER_PARAMETER(PoolingParam);

// The window of a call, with the output size each convention gives.
Window MakeWindow(const PoolingParam& p, const TShape& data) {
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
  w.stride = mxplug_nn::PerAxis(p.stride, n, 1, "stride", 1);
  w.pad = mxplug_nn::PerAxis(p.pad, n, 0, "pad", 0);
  for (int a = 0; a < n; ++a) {
    const int64_t span = w.image[a] + 2 * w.pad[a] - w.kernel[a];
    if (span < 0)
      throw std::invalid_argument("kernel " + p.kernel.ToString() + " is larger than the padded data on spatial axis " +
                                  std::to_string(a) + " of data " + data.ToString());
    const int64_t steps = p.pooling_convention == kFull ? (span + w.stride[a] - 1) / w.stride[a] : span / w.stride[a];
    w.positions.push_back(steps + 1);
  }
  return w;
}

// The divisor of average pooling at each position: the window clipped to the padded data
// (MXNet's rule, so a window of the full convention past the padding counts less), or to the
// data itself without count_include_pad.
std::vector<int64_t> AverageDivisors(const Window& w, const std::vector<int64_t>& map, bool include_pad) {
  const int64_t np = w.PositionCount(), nk = w.KernelSize();
  std::vector<int64_t> div(static_cast<size_t>(np), 0);
  if (!include_pad) {
    for (int64_t t = 0; t < nk; ++t)
      for (int64_t p = 0; p < np; ++p) div[p] += map[t * np + p] >= 0;
    return div;
  }
  const int n = w.axes();
  std::vector<int64_t> pos(n, 0);
  for (int64_t p = 0; p < np; ++p) {
    int64_t size = 1;
    for (int a = 0; a < n; ++a) {
      const int64_t start = pos[a] * w.stride[a] - w.pad[a];
      size *= std::min(start + w.kernel[a], w.image[a] + w.pad[a]) - start;
    }
    div[p] = size;
    for (int a = n - 1; a >= 0 && ++pos[a] == w.positions[a]; --a) pos[a] = 0;
  }
  return div;
}

double PowP(double x, int p) { return p == 1 ? x : p == 2 ? x * x : x * x * x; }

// Max pooling's backward over 2-d windows: each output gradient goes to the first maximum of its
// window (row-major, padding skipped), as the tap-map loop in PoolingOp::Backward does for any
// rank. kKernel > 0 is a square kKernel x kKernel window that never leaves the image, whose
// fixed trip counts the compiler unrolls. Faster than oneDNN's backward, which on mxplug's plain
// layout must first run a training forward for its workspace (LeNet's first pooling, 2x2 over
// 64x20x24x24: 0.8 ms against 3 ms).
template <int kKernel, class T>
void MaxPool2dBackwardWindows(const Window& w, int64_t planes, const T* x, const T* og, T* dx) {
  const int64_t ih = w.image[0], iw = w.image[1], oh = w.positions[0], ow = w.positions[1];
  for (int64_t c = 0; c < planes; ++c, x += ih * iw, dx += ih * iw, og += oh * ow) {
    for (int64_t py = 0; py < oh; ++py) {
      const int64_t y0 = py * w.stride[0] - w.pad[0];
      const int64_t ys = std::max<int64_t>(y0, 0), ye = std::min(y0 + w.kernel[0], ih);
      for (int64_t px = 0; px < ow; ++px) {
        const int64_t x0 = px * w.stride[1] - w.pad[1];
        const int64_t xs = std::max<int64_t>(x0, 0), xe = std::min(x0 + w.kernel[1], iw);
        const int64_t kh = kKernel > 0 ? kKernel : ye - ys, kw = kKernel > 0 ? kKernel : xe - xs;
        if (kh <= 0 || kw <= 0) continue;  // a window wholly in padding
        int64_t best = ys * iw + xs;
        T top = x[best];
        for (int64_t ky = 0; ky < kh; ++ky)
          for (int64_t kx = 0; kx < kw; ++kx) {
            const int64_t i = (ys + ky) * iw + xs + kx;
            const bool more = x[i] > top;
            best = more ? i : best;
            top = more ? x[i] : top;
          }
        dx[best] += og[py * ow + px];
      }
    }
  }
}

template <class T>
void MaxPool2dBackward(const Window& w, int64_t planes, const T* x, const T* og, T* dx) {
  bool inside = true;
  for (int a = 0; a < 2; ++a)
    inside = inside && w.pad[a] == 0 && (w.positions[a] - 1) * w.stride[a] + w.kernel[a] <= w.image[a];
  const bool square = w.kernel[0] == w.kernel[1];
  if (inside && square && w.kernel[0] == 2) return MaxPool2dBackwardWindows<2>(w, planes, x, og, dx);
  if (inside && square && w.kernel[0] == 3) return MaxPool2dBackwardWindows<3>(w, planes, x, og, dx);
  MaxPool2dBackwardWindows<0>(w, planes, x, og, dx);
}

class PoolingOp : public mxplug::Operator {
 public:
  explicit PoolingOp(const PoolingParam& p) : param_(p) {}

  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
               const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const Window w = MakeWindow(param_, in[0].shape_);
    if (OneDnnKind() && mxplug_nn::onednn::PoolingForward(ctx, w, *OneDnnKind(), in[0], out[0], req[0])) return;
    const std::vector<int64_t> map = mxplug_nn::TapMap(w);
    const std::vector<int64_t> div = Divisors(w, map);
    const int64_t planes = in[0].shape_[0] * in[0].shape_[1], np = w.PositionCount(), nk = w.KernelSize();
    const int p = param_.p_value.value_or(1);
    mxplug::RealTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      for (int64_t c = 0; c < planes; ++c) {
        const T* x = in[0].dptr<T>() + c * w.ImageSize();
        T* y = out[0].dptr<T>() + c * np;
        for (int64_t q = 0; q < np; ++q) {
          double acc = param_.pool_type == kMax ? -std::numeric_limits<double>::infinity() : 0.0;
          for (int64_t t = 0; t < nk; ++t) {
            const int64_t i = map[t * np + q];
            if (i < 0) continue;
            if (param_.pool_type == kMax) acc = std::max(acc, double(x[i]));
            else acc += param_.pool_type == kLp ? PowP(double(x[i]), p) : double(x[i]);
          }
          if (param_.pool_type == kAvg) acc /= double(div[q]);
          if (param_.pool_type == kLp) acc = p == 1 ? acc : p == 2 ? std::sqrt(acc) : std::cbrt(acc);
          if (param_.pool_type == kMax && acc == -std::numeric_limits<double>::infinity())
            acc = std::numeric_limits<T>::lowest();  // a window wholly in padding, as MXNet
          mxplug::Assign(y[q], req[0], static_cast<T>(acc));
        }
      }
    });
  }

  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& out_grad, const std::vector<TBlob>& in_data,
                const std::vector<TBlob>& out_data, const std::vector<OpReqType>& req,
                const std::vector<TBlob>& in_grad, const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const TShape& shape = in_grad[0].shape_;
    const Window w = MakeWindow(param_, shape);
    const int64_t planes = shape[0] * shape[1], np = w.PositionCount(), nk = w.KernelSize(), ni = w.ImageSize();
    const bool max_2d = param_.pool_type == kMax && w.axes() == 2;  // MaxPool2dBackward's case
    if (!max_2d && OneDnnKind() &&
        mxplug_nn::onednn::PoolingBackward(ctx, w, *OneDnnKind(), out_grad[0], in_data[0], in_grad[0], req[0]))
      return;
    const std::vector<int64_t> map = max_2d ? std::vector<int64_t>{} : mxplug_nn::TapMap(w);
    const std::vector<int64_t> div = Divisors(w, map);
    const int p = param_.p_value.value_or(1);
    mxplug::RealTypeSwitch(in_grad[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      if (req[0] != mxplug::kAddTo) std::memset(in_grad[0].dptr<T>(), 0, sizeof(T) * in_grad[0].Size());
      if (max_2d)
        return MaxPool2dBackward(w, planes, in_data[0].dptr<T>(), out_grad[0].dptr<T>(), in_grad[0].dptr<T>());
      for (int64_t c = 0; c < planes; ++c) {
        const T* og = out_grad[0].dptr<T>() + c * np;
        T* dx = in_grad[0].dptr<T>() + c * ni;
        const T* x = param_.pool_type == kMax || param_.pool_type == kLp ? in_data[0].dptr<T>() + c * ni : nullptr;
        for (int64_t q = 0; q < np; ++q) {
          if (param_.pool_type == kMax) {  // to the first maximum of the window
            int64_t best = -1;
            for (int64_t t = 0; t < nk; ++t) {
              const int64_t i = map[t * np + q];
              if (i >= 0 && (best < 0 || x[i] > x[best])) best = i;
            }
            if (best >= 0) dx[best] += og[q];
            continue;
          }
          const double y = param_.pool_type == kLp ? double(out_data[0].dptr<T>()[c * np + q]) : 0.0;
          for (int64_t t = 0; t < nk; ++t) {
            const int64_t i = map[t * np + q];
            if (i < 0) continue;
            double g = double(og[q]);
            if (param_.pool_type == kAvg) g /= double(div[q]);
            else if (param_.pool_type == kLp && p > 1) g *= y == 0 ? 0.0 : PowP(double(x[i]) / y, p - 1);
            dx[i] += static_cast<T>(g);
          }
        }
      }
    });
  }

 private:
  // The pooling types oneDNN has (sum and lp stay with the loops below).
  std::optional<mxplug_nn::onednn::PoolKind> OneDnnKind() const {
    using mxplug_nn::onednn::PoolKind;
    if (param_.pool_type == kMax) return PoolKind::kMax;
    if (param_.pool_type != kAvg) return std::nullopt;
    return param_.count_include_pad.value_or(true) ? PoolKind::kAvgIncludePad : PoolKind::kAvgExcludePad;
  }

  std::vector<int64_t> Divisors(const Window& w, const std::vector<int64_t>& map) const {
    if (param_.pool_type != kAvg) return {};
    return AverageDivisors(w, map, param_.count_include_pad.value_or(true));
  }

  PoolingParam param_;
};

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
        if (k < 1) throw std::invalid_argument("kernel " + param_.kernel.ToString() + " must be >= 1 on every axis");
    }
    if (param_.pooling_convention == kSame)
      throw std::invalid_argument("pooling_convention 'same' is not supported on CPU; expected 'valid' or 'full'");
    if (param_.pool_type == kLp && (!param_.p_value || *param_.p_value < 1 || *param_.p_value > 3))
      throw std::invalid_argument("lp pooling needs p_value 1, 2 or 3");
  }

  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out, std::vector<TShape>*) const override {
    const TShape& data = (*in)[0];
    if (data.ndim() < 0) return false;
    if (param_.global_pool ? (data.ndim() < 3 || data.ndim() > 5) : data.ndim() != param_.kernel.ndim() + 2)
      throw std::invalid_argument(
          "data has shape " + data.ToString() + "; expected " +
          (param_.global_pool ? std::string("3 to 5 axes")
                              : std::to_string(param_.kernel.ndim() + 2) + " axes for kernel " + param_.kernel.ToString()) +
          " (batch, channel, spatial)");
    mxplug_nn::CheckLayout(param_.layout, data.ndim() - 2);
    if (!data.IsKnown()) return false;
    const Window w = MakeWindow(param_, data);
    std::vector<int64_t> oshape{data[0], data[1]};
    oshape.insert(oshape.end(), w.positions.begin(), w.positions.end());
    (*out)[0] = TShape(oshape);
    return true;
  }

  // Max and lp pooling look at the data (lp also at the output); avg and sum need neither.
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad, const std::vector<int>& in_data,
                                             const std::vector<int>& out_data) const override {
    if (param_.pool_type == kMax) return {out_grad[0], in_data[0]};
    if (param_.pool_type == kLp) return {out_grad[0], in_data[0], out_data[0]};
    return {out_grad[0]};
  }
  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override {
    return mxplug_nn::onednn::Resources();
  }
  std::vector<mxplug::ResourceRequest> BackwardResource(const std::vector<TShape>&) const override {
    return mxplug_nn::onednn::Resources();
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override { return new PoolingOp(param_); }

 private:
  PoolingParam param_;
};

}  // namespace

MXPLUG_REGISTER_OP_PROPERTY(Pooling, PoolingProp)
    .describe("Pools each channel over sliding windows: the maximum, average, sum or p-norm of each "
              "window. Output size per axis: floor((x + 2 * pad - kernel) / stride) + 1 for the valid "
              "convention, ceil for full; 1 with global_pool.")
    .add_argument("data", "NDArray-or-Symbol", "Input data: (batch, channel, [depth, height,] width).")
    .add_arguments(PoolingParam::Fields())
    .add_kernel(kDLCPU);
