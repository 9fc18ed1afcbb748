// Definition of MXNet 1.9.1's `_image_resize`: (H, W, C) images or (N, H, W, C) batches resized
// to `size` (width, height), or one number for both, or with `keep_ratio` for the shorter edge
// (the other scaled in integers), with OpenCV's interpolation `interp` (mxplug/sdk/resample.hpp).
// Each output element sums its taps, the columns' within each row tap, in float (double for
// float64 images), as the core's 8-bit resize; integer types are rounded to the nearest and
// saturated (OpenCV's 8-bit fixed point may differ by 1). Any dtype: MXNet's OpenCV path
// refuses float16 and int32.
//
// The gradient is the map's adjoint: each input element gathers the head gradient of the output
// pixels that sample it (ResampleAxis::Samplers), one element loop with no atomics. MXNet 1.9.1
// has none (its backward fails on a dtype check).
#ifndef MXPLUG_PLUGINS_TENSOR_IMAGE_RESIZE_H_
#define MXPLUG_PLUGINS_TENSOR_IMAGE_RESIZE_H_

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "image.h"
#include "mxplug/plugin.hpp"
#include "mxplug/sdk/resample.hpp"

namespace mxplug_tensor {
namespace image {

struct ResizeParam : mxplug::Parameter<ResizeParam> {
  TShape size;
  bool keep_ratio = false;
  int interp = 1;
  MXPLUG_DECLARE_PARAMETER(ResizeParam) {
    MXPLUG_DECLARE_FIELD(size)
        .set_default(TShape(std::vector<int64_t>{}))
        .describe("Size of new image. Could be (width, height) or (size)");
    MXPLUG_DECLARE_FIELD(keep_ratio)
        .set_default(false)
        .describe(
            "Whether to resize the short edge or both edges to `size`, if size is give as "
            "an integer.");
    MXPLUG_DECLARE_FIELD(interp).set_default(1).describe(
        "Interpolation method for resizing: 0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 "
        "Lanczos.");
  }
};

/*! \brief Both axes of one resize, and the batch and channels around them. */
struct ResizeMap {
  int64_t N = 1, C = 1;
  mxplug::ResampleAxis rows, cols;
  /*! \brief Where element i of an (N, height, width, C) array is. */
  struct At {
    int64_t n, y, x, c;
  };
  MXPLUG_XINLINE At Locate(int64_t i, int64_t height, int64_t width) const {
    return {i / (C * width * height), (i / (C * width)) % height, (i / C) % width, i % C};
  }
  int64_t InSize() const { return N * rows.source * cols.source * C; }
};

/*! \brief The resize of `s` ((H, W, C) or (N, H, W, C)) that `p` asks for (checked, with MXNet's
 * messages). */
inline ResizeMap MakeResizeMap(const ResizeParam& p, const TShape& s) {
  if (s.ndim() != 3 && s.ndim() != 4)
    throw std::invalid_argument("Input image dimension should be 3 or 4 but got " +
                                std::to_string(s.ndim()));
  if (p.size.ndim() != 1 && p.size.ndim() != 2)
    throw std::invalid_argument("Input size dimension must be 1 or 2, but got " +
                                std::to_string(p.size.ndim()));
  if (p.interp < 0 || p.interp > 4)
    throw std::invalid_argument("Unknown interpolation method " + std::to_string(p.interp) +
                                ": 0 (nearest), 1 (bilinear), 2 (bicubic), 3 (area) or 4 "
                                "(Lanczos)");
  const int b = s.ndim() == 4 ? 1 : 0;
  const int64_t h = s[b], w = s[b + 1];
  if (h < 1 || w < 1)
    throw std::invalid_argument("cannot resize an image of shape " + s.ToString());
  int64_t out_h = 0, out_w = 0;
  if (p.size.ndim() == 1) {
    if (p.size[0] <= 0)
      throw std::invalid_argument("Input size should be greater than 0, but got " +
                                  std::to_string(p.size[0]));
    out_h = out_w = p.size[0];
    if (p.keep_ratio) {  // the shorter edge to size, the other in integer arithmetic
      if (h > w)
        out_h = h * p.size[0] / w;
      else
        out_w = w * p.size[0] / h;
    }
  } else {
    if (p.size[0] <= 0)
      throw std::invalid_argument("Input width should be greater than 0, but got " +
                                  std::to_string(p.size[0]));
    if (p.size[1] <= 0)
      throw std::invalid_argument("Input height should be greater than 0, but got " +
                                  std::to_string(p.size[1]));
    out_w = p.size[0], out_h = p.size[1];
  }
  ResizeMap m;
  m.N = b ? s[0] : 1;
  m.C = s[b + 2];
  const auto interp = static_cast<mxplug::Interpolation>(p.interp);
  const bool averaging = h >= out_h && w >= out_w;
  m.rows = {static_cast<int>(h), static_cast<int>(out_h), interp, averaging};
  m.cols = {static_cast<int>(w), static_cast<int>(out_w), interp, averaging};
  return m;
}

inline TShape ResizedShape(const ResizeMap& m, int ndim) {
  std::vector<int64_t> d;
  if (ndim == 4) d.push_back(m.N);
  d.insert(d.end(), {int64_t{m.rows.target}, int64_t{m.cols.target}, m.C});
  return TShape(d);
}

template <class T>
using ResizeAcc = std::conditional_t<std::is_same_v<T, double>, double, float>;

/*! \brief acc as T: integers rounded to the nearest and saturated, floats cast. */
template <class T, class A>
MXPLUG_XINLINE T RoundTo(A acc) {
  if constexpr (std::is_integral_v<T>) {
    const A lo = static_cast<A>(std::numeric_limits<T>::lowest()),
            hi = static_cast<A>(std::numeric_limits<T>::max());
    const A r = acc < 0 ? -std::floor(-acc + A(0.5)) : std::floor(acc + A(0.5));
    return static_cast<T>(r < lo ? lo : (r > hi ? hi : r));
  } else {
    return static_cast<T>(acc);
  }
}

template <class T>
struct ResizeForward {
  const T* in;
  T* out;
  ResizeMap m;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using A = ResizeAcc<T>;
    const ResizeMap::At at = m.Locate(i, m.rows.target, m.cols.target);
    const int64_t n = at.n, y = at.y, x = at.x, c = at.c;
    const T* image = in + n * m.rows.source * m.cols.source * m.C;
    A acc = 0;
    m.rows.ForEachTap(static_cast<int>(y), [&](int r, float wr) {
      A across = 0;
      m.cols.ForEachTap(static_cast<int>(x), [&](int s, float wc) {
        across += A(wc) * static_cast<A>(image[(r * m.cols.source + s) * m.C + c]);
      });
      acc += A(wr) * across;
    });
    mxplug::StoreAs<mxplug::ComputeType<T>>(out[i], req,
                                            static_cast<mxplug::ComputeType<T>>(RoundTo<T>(acc)));
  }
};

/*! \brief Input gradient element i: the output pixels that sample it, their head gradient
 * weighted by the weight they give it. */
template <class T>
struct ResizeBackward {
  const T* og;
  T* grad;
  ResizeMap m;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using A = ResizeAcc<T>;
    const ResizeMap::At at = m.Locate(i, m.rows.source, m.cols.source);
    const int64_t n = at.n, r = at.y, s = at.x, c = at.c;
    const T* head = og + n * m.rows.target * m.cols.target * m.C;
    int y0, y1, x0, x1;
    m.rows.Samplers(static_cast<int>(r), &y0, &y1);
    m.cols.Samplers(static_cast<int>(s), &x0, &x1);
    A acc = 0;
    for (int y = y0; y <= y1; ++y) {
      const double wr = m.rows.WeightOf(y, static_cast<int>(r));
      if (wr == 0) continue;
      A across = 0;
      for (int x = x0; x <= x1; ++x) {
        const double wc = m.cols.WeightOf(x, static_cast<int>(s));
        if (wc != 0) across += A(wc) * static_cast<A>(head[(y * m.cols.target + x) * m.C + c]);
      }
      acc += A(wr) * across;
    }
    mxplug::StoreAs<mxplug::ComputeType<T>>(grad[i], req, static_cast<mxplug::ComputeType<T>>(acc));
  }
};

class ResizeProp : public ImageOpProp<ResizeParam> {
 protected:
  TShape OutputShape(const TShape& s) const override {
    return ResizedShape(MakeResizeMap(param_, s), s.ndim());
  }
};

template <class Loop>
class ResizeKernel : public mxplug::Operator {
 public:
  ResizeKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const ResizeMap m = MakeResizeMap(p_, in[0].shape_);
    mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(ctx, out[0].Size(), ResizeForward<T>{in[0].dptr<T>(), out[0].dptr<T>(), m, req[0]});
    });
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                const std::vector<TBlob>&, const std::vector<TBlob>&,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const int t = ig[0].type_flag_;
    if (t != kMXPFloat16 && t != kMXPFloat32 && t != kMXPFloat64) {
      Loop::Zero(ctx, ig[0], req[0]);  // an integer image has no gradient
      return;
    }
    const ResizeMap m = MakeResizeMap(p_, ig[0].shape_);
    mxplug::FloatTypeSwitch(t, "", [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(ctx, ig[0].Size(), ResizeBackward<T>{og[0].dptr<T>(), ig[0].dptr<T>(), m, req[0]});
    });
  }

 private:
  ResizeParam p_;
};

}  // namespace image
}  // namespace mxplug_tensor

#endif  // MXPLUG_PLUGINS_TENSOR_IMAGE_RESIZE_H_
