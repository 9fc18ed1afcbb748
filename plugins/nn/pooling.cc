// Registers Pooling (pooling.h) and its CPU kernel.
#include "pooling.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "mxplug/plugin.hpp"
#include "onednn/onednn.h"
#include "pooling_v1.h"
#include "spatial.h"

namespace {

using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;
using mxplug_nn::PoolingParam;
using mxplug_nn::Window;

// Planes of work from which a pooling loop runs on an OpenMP team (below it, a team's start
// costs more than it saves).
constexpr int64_t kParallelElements = int64_t{1} << 16;

// Whether every window of w holds at least one data element (no window wholly in padding, where
// max pooling gives the dtype's lowest value and the functors of pooling.h are the reference).
bool EveryWindowHoldsData(const Window& w) {
  for (int a = 0; a < w.axes(); ++a)
    if (w.pad[a] >= w.kernel[a] || (w.positions[a] - 1) * w.stride[a] - w.pad[a] >= w.image[a])
      return false;
  return true;
}

// One axis of a 2-d window: per output position, the first data element its window covers, how
// many it covers, and avg pooling's divisor along this axis (the window clipped to the padded
// data, or to the data alone without count_include_pad; the divisor is their product).
struct PoolAxis {
  std::vector<int64_t> first, count, divisor;
  PoolAxis(const Window& w, int a, bool include_pad) {
    for (int64_t p = 0; p < w.positions[a]; ++p) {
      const int64_t start = p * w.stride[a] - w.pad[a], end = start + w.kernel[a];
      const int64_t s = std::max<int64_t>(start, 0), e = std::min(end, w.image[a]);
      first.push_back(s);
      count.push_back(e - s);
      divisor.push_back(include_pad ? std::min(end, w.image[a] + w.pad[a]) - start : e - s);
    }
  }
};

// 2-d max and avg pooling's forward, separably: for each output row, the data rows its windows
// cover are reduced into a row buffer (a loop over contiguous elements the compiler vectorises),
// then each output reduces its kernel[1] neighbours in that buffer, whose ends hold the padding
// (the reduction's identity). Max takes the largest value as the functors' first maximum does
// (NaN is skipped, as in MXNet's CPU loop); avg divides the sum as PoolGeometry::Divisor does.
// Planes run on an OpenMP team when large. oneDNN has no vectorised kernel for mxplug's plain
// layout on machines without AVX-512 (it runs simple_nchw): this is 10-20x faster there.
// Needs EveryWindowHoldsData(w).
template <class T>
void Pool2dForward(const Window& w, bool max, bool include_pad, int64_t planes, const T* x, T* y,
                   OpReqType req) {
  using C = mxplug::ComputeType<T>;
  const int64_t ih = w.image[0], iw = w.image[1], oh = w.positions[0], ow = w.positions[1];
  const int64_t kw = w.kernel[1], sw = w.stride[1], left = w.pad[1];
  const PoolAxis rows(w, 0, include_pad), cols(w, 1, include_pad);
  const int64_t width = std::max((ow - 1) * sw + kw, left + iw);
  const C identity = max ? -std::numeric_limits<C>::infinity() : C(0);
#pragma omp parallel if (planes > 1 && planes * ih * iw >= kParallelElements)
  {
    std::vector<C> buffer(width, identity);
    C* mid = buffer.data() + left;  // mid[i]: data column i
#pragma omp for schedule(static)
    for (int64_t c = 0; c < planes; ++c) {
      const T* plane = x + c * ih * iw;
      T* out = y + c * oh * ow;
      for (int64_t py = 0; py < oh; ++py) {
        const T* r = plane + rows.first[py] * iw;
        for (int64_t i = 0; i < iw; ++i) mid[i] = C(r[i]);
        for (int64_t k = 1; k < rows.count[py]; ++k) {
          r += iw;
          if (max)
            for (int64_t i = 0; i < iw; ++i) mid[i] = C(r[i]) > mid[i] ? C(r[i]) : mid[i];
          else
            for (int64_t i = 0; i < iw; ++i) mid[i] += C(r[i]);
        }
        for (int64_t px = 0; px < ow; ++px) {
          const C* s = buffer.data() + px * sw;
          C v = s[0];
          for (int64_t k = 1; k < kw; ++k) v = max ? (s[k] > v ? s[k] : v) : v + s[k];
          if (!max) v /= C(rows.divisor[py] * cols.divisor[px]);
          mxplug::StoreAs<C>(out[py * ow + px], req, v);
        }
      }
    }
  }
}

// Max pooling's backward over 2-d windows: each output gradient goes to the first maximum of its
// window (row-major, padding skipped), as PoolBackwardElements (pooling.h) does for any
// rank. kKernel > 0 is a square kKernel x kKernel window that never leaves the image, whose
// fixed trip counts the compiler unrolls. Faster than oneDNN's backward, which on mxplug's plain
// layout must first run a training forward for its workspace (LeNet's first pooling, 2x2 over
// 64x20x24x24: 0.8 ms against 3 ms).
template <int kKernel, class T>
void MaxPool2dBackwardWindows(const Window& w, int64_t planes, const T* planes_x,
                              const T* planes_og, T* planes_dx) {
  const int64_t ih = w.image[0], iw = w.image[1], oh = w.positions[0], ow = w.positions[1];
#pragma omp parallel for schedule(static) if (planes > 1 && planes * ih * iw >= kParallelElements)
  for (int64_t c = 0; c < planes; ++c) {
    const T* x = planes_x + c * ih * iw;
    const T* og = planes_og + c * oh * ow;
    T* dx = planes_dx + c * ih * iw;
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
    inside =
        inside && w.pad[a] == 0 && (w.positions[a] - 1) * w.stride[a] + w.kernel[a] <= w.image[a];
  const bool square = w.kernel[0] == w.kernel[1];
  if (inside && square && w.kernel[0] == 2)
    return MaxPool2dBackwardWindows<2>(w, planes, x, og, dx);
  if (inside && square && w.kernel[0] == 3)
    return MaxPool2dBackwardWindows<3>(w, planes, x, og, dx);
  MaxPool2dBackwardWindows<0>(w, planes, x, og, dx);
}

// The CPU's Pooling: oneDNN for max and avg pooling in float32 where the plugin has it and it
// has a vectorised kernel, Pool2dForward for other 2-d max and avg forwards, 2-d max pooling's
// backward by MaxPool2dBackward, and the per-element functors of pooling.h otherwise.
class PoolingCpu : public mxplug_nn::PoolingKernel<mxplug::CpuLoop> {
 public:
  using PoolingKernel::PoolingKernel;

  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>& aux) override {
    if (req[0] == mxplug::kNullOp) return;
    const Window w = mxplug_nn::MakeWindow(param_, in[0].shape_);
    const bool direct = w.axes() == 2 && OneDnnKind() && EveryWindowHoldsData(w);
    if (OneDnnKind() && mxplug_nn::onednn::PoolingForward(ctx, w, *OneDnnKind(), in[0], out[0],
                                                          req[0], /*jit_only=*/direct))
      return;
    if (direct) {
      const TShape& shape = in[0].shape_;
      mxplug::RealTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
        using T = decltype(zero);
        Pool2dForward(w, param_.pool_type == mxplug_nn::kMax,
                      param_.count_include_pad.value_or(true), shape[0] * shape[1], in[0].dptr<T>(),
                      out[0].dptr<T>(), req[0]);
      });
      return;
    }
    PoolingKernel::Forward(ctx, in, req, out, aux);
  }

  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& out_grad,
                const std::vector<TBlob>& in_data, const std::vector<TBlob>& out_data,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& in_grad,
                const std::vector<TBlob>& aux) override {
    if (req[0] == mxplug::kNullOp) return;
    const TShape& shape = in_grad[0].shape_;
    const Window w = mxplug_nn::MakeWindow(param_, shape);
    if (param_.pool_type == mxplug_nn::kMax && w.axes() == 2) {
      mxplug::RealTypeSwitch(in_grad[0].type_flag_, "", [&](auto zero) {
        using T = decltype(zero);
        if (req[0] != mxplug::kAddTo)
          std::memset(in_grad[0].dptr<T>(), 0, sizeof(T) * in_grad[0].Size());
        MaxPool2dBackward(w, shape[0] * shape[1], in_data[0].dptr<T>(), out_grad[0].dptr<T>(),
                          in_grad[0].dptr<T>());
      });
      return;
    }
    if (OneDnnKind() && mxplug_nn::onednn::PoolingBackward(ctx, w, *OneDnnKind(), out_grad[0],
                                                           in_data[0], in_grad[0], req[0]))
      return;
    PoolingKernel::Backward(ctx, out_grad, in_data, out_data, req, in_grad, aux);
  }

 private:
  // The pooling types oneDNN has (sum and lp stay with the functors).
  std::optional<mxplug_nn::onednn::PoolKind> OneDnnKind() const {
    using mxplug_nn::onednn::PoolKind;
    if (param_.pool_type == mxplug_nn::kMax) return PoolKind::kMax;
    if (param_.pool_type != mxplug_nn::kAvg) return std::nullopt;
    return param_.count_include_pad.value_or(true) ? PoolKind::kAvgIncludePad
                                                   : PoolKind::kAvgExcludePad;
  }
};

}  // namespace

std::vector<mxplug::ResourceRequest> mxplug_nn::PoolingProp::ForwardResource(
    const std::vector<TShape>&) const {
  return mxplug_nn::onednn::Resources();
}
std::vector<mxplug::ResourceRequest> mxplug_nn::PoolingProp::BackwardResource(
    const std::vector<TShape>&) const {
  return mxplug_nn::onednn::Resources();
}

namespace {

MXPLUG_REGISTER_PARAMETER(PoolingParam);
using mxplug_nn::PoolingV1Param;
MXPLUG_REGISTER_PARAMETER(PoolingV1Param);

[[maybe_unused]] const bool registered = [] {
  mxplug::RegisterOpProperty<mxplug_nn::PoolingProp>("Pooling")
      .describe(
          "Pools each channel over sliding windows: the maximum, average, sum or p-norm of each "
          "window. Output size per axis: floor((x + 2 * pad - kernel) / stride) + 1 for the valid "
          "convention, ceil for full, ceil(x / stride) for same (1-d, no pad); 1 with global_pool.")
      .add_argument("data", "NDArray-or-Symbol",
                    "Input data: (batch, channel, [depth, height,] width).")
      .add_arguments(PoolingParam::Fields());
  mxplug::sdk::RegisterKernel<PoolingCpu>("Pooling", kDLCPU);
  mxplug::RegisterOpProperty<mxplug_nn::PoolingV1Prop>("Pooling_v1")
      .describe(
          "MXNet 0.x's 2-d pooling (deprecated): Pooling over zero-padded data (pooling_v1.h).")
      .add_argument("data", "NDArray-or-Symbol", "Input data to the pooling operator.")
      .add_arguments(mxplug_nn::PoolingV1Param::Fields());
  mxplug_nn::RegisterPoolingV1Kernels<mxplug::CpuLoop>(kDLCPU);
  return true;
}();

}  // namespace
