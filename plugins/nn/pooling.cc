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

// Max pooling's backward over 2-d windows: each output gradient goes to the first maximum of its
// window (row-major, padding skipped), as PoolBackwardElements (pooling.h) does for any
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
    inside =
        inside && w.pad[a] == 0 && (w.positions[a] - 1) * w.stride[a] + w.kernel[a] <= w.image[a];
  const bool square = w.kernel[0] == w.kernel[1];
  if (inside && square && w.kernel[0] == 2)
    return MaxPool2dBackwardWindows<2>(w, planes, x, og, dx);
  if (inside && square && w.kernel[0] == 3)
    return MaxPool2dBackwardWindows<3>(w, planes, x, og, dx);
  MaxPool2dBackwardWindows<0>(w, planes, x, og, dx);
}

// The CPU's Pooling: oneDNN for max and avg pooling in float32 where the plugin has it, 2-d max
// pooling's backward by MaxPool2dBackward, and the per-element functors of pooling.h otherwise.
class PoolingCpu : public mxplug_nn::PoolingKernel<mxplug::CpuLoop> {
 public:
  using PoolingKernel::PoolingKernel;

  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>& aux) override {
    if (req[0] == mxplug::kNullOp) return;
    const Window w = mxplug_nn::MakeWindow(param_, in[0].shape_);
    if (OneDnnKind() &&
        mxplug_nn::onednn::PoolingForward(ctx, w, *OneDnnKind(), in[0], out[0], req[0]))
      return;
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
