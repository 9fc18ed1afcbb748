// Definitions of MXNet 1.9.1's color and random image operators, on (H, W, C) images with 1 or 3
// channels (RGB), of any dtype:
//   _image_adjust_lighting       AlexNet's lighting: each pixel plus ImageNet's RGB eigenvectors
//                                weighted by alpha (3 numbers) times their eigenvalues;
//   _image_random_lighting       the same with alpha drawn from normal(0, alpha_std);
//   _image_random_brightness     the image times a factor drawn from [min_factor, max_factor];
//   _image_random_contrast       alpha * image + (1 - alpha) * the image's mean luma;
//   _image_random_saturation     alpha * image + (1 - alpha) * each pixel's luma;
//   _image_random_hue            each pixel's hue (HLS) turned by alpha * 360 degrees;
//   _image_random_color_jitter   brightness, contrast, saturation and hue in a random order, each
//                                whose amount v > 0 with a factor 1 + uniform(-v, v) (hue: uniform
//                                (-v, v));
//   _image_random_flip_left_right / _top_bottom   the flip with probability 1/2.
// As MXNet's, each step computes in float and stores in the image's dtype, uint8 clipped to
// [0, 255] and truncated, other types cast; a jitter's later steps read the stored values.
// The draws are made on the host from the op's random stream (mx.random.seed), so every device
// makes the same; the steps are element loops over a device's Loop (image.cc, image.cu).
//
// Departures from MXNet 1.9.1, each a bug there (docs/python.md): its saturation takes
// 0.114 * blue alone as the luma; its flips leave an odd image's middle column (row) unwritten;
// on 1-channel images its hue, lighting and an all-zero jitter leave the output unwritten (here
// they copy the image, as its saturation does).
//
// The gradient, as MXNet's, passes the head gradient through unchanged ("_copy"): these are data
// augmentations, and MXNet's scripts record through them.
#ifndef MXPLUG_PLUGINS_TENSOR_IMAGE_COLOR_H_
#define MXPLUG_PLUGINS_TENSOR_IMAGE_COLOR_H_

#include <cfloat>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "image.h"
#include "mxplug/plugin.hpp"

namespace mxplug_tensor {
namespace image {

enum class ColorOp {
  kAdjustLighting,
  kRandomLighting,
  kRandomBrightness,
  kRandomContrast,
  kRandomSaturation,
  kRandomHue,
  kRandomColorJitter,
  kRandomFlipLeftRight,
  kRandomFlipTopBottom
};

struct AdjustLightingParam : mxplug::Parameter<AdjustLightingParam> {
  std::vector<float> alpha;
  MXPLUG_DECLARE_PARAMETER(AdjustLightingParam) {
    MXPLUG_DECLARE_FIELD(alpha).describe("The lighting alphas for the R, G, B channels.");
  }
};

struct RandomLightingParam : mxplug::Parameter<RandomLightingParam> {
  float alpha_std = 0.05f;
  MXPLUG_DECLARE_PARAMETER(RandomLightingParam) {
    MXPLUG_DECLARE_FIELD(alpha_std).set_default(0.05f).describe("Level of the lighting noise.");
  }
};

struct RandomEnhanceParam : mxplug::Parameter<RandomEnhanceParam> {
  float min_factor = 0, max_factor = 0;
  MXPLUG_DECLARE_PARAMETER(RandomEnhanceParam) {
    MXPLUG_DECLARE_FIELD(min_factor).set_lower_bound(0.0).describe("Minimum factor.");
    MXPLUG_DECLARE_FIELD(max_factor).set_lower_bound(0.0).describe("Maximum factor.");
  }
};

struct RandomColorJitterParam : mxplug::Parameter<RandomColorJitterParam> {
  float brightness = 0, contrast = 0, saturation = 0, hue = 0;
  MXPLUG_DECLARE_PARAMETER(RandomColorJitterParam) {
    MXPLUG_DECLARE_FIELD(brightness).describe("How much to jitter brightness.");
    MXPLUG_DECLARE_FIELD(contrast).describe("How much to jitter contrast.");
    MXPLUG_DECLARE_FIELD(saturation).describe("How much to jitter saturation.");
    MXPLUG_DECLARE_FIELD(hue).describe("How much to jitter hue.");
  }
};

template <ColorOp K>
using ColorParamOf = std::conditional_t<
    K == ColorOp::kAdjustLighting, AdjustLightingParam,
    std::conditional_t<K == ColorOp::kRandomLighting, RandomLightingParam,
                       std::conditional_t<K == ColorOp::kRandomColorJitter, RandomColorJitterParam,
                                          std::conditional_t<K == ColorOp::kRandomFlipLeftRight ||
                                                                 K == ColorOp::kRandomFlipTopBottom,
                                                             NoParam, RandomEnhanceParam>>>>;

/*! \brief One pass over the image. */
enum class ColorStep { kCopy, kBrightness, kContrast, kSaturation, kHue, kShift, kFlip };

/*! \brief What a call does, drawn: up to four steps, each with its amounts. */
struct ColorPlan {
  struct Step {
    ColorStep step = ColorStep::kCopy;
    float a[3] = {0, 0, 0};  // the factor (a[0]), or the per-channel shift
    ImageOp flip = ImageOp::kFlipLeftRight;
  };
  Step steps[4];
  int count = 0;
  void Add(ColorStep s, float a0, float a1 = 0, float a2 = 0) {
    steps[count].step = s;
    steps[count].a[0] = a0, steps[count].a[1] = a1, steps[count].a[2] = a2;
    ++count;
  }
};

// RGB luma weights (ITU-R 601), as MXNet's contrast and saturation weigh channels.
MXPLUG_XINLINE float Luma(int c) { return c == 0 ? 0.299f : (c == 1 ? 0.587f : 0.114f); }

/*! \brief The value stored for v: uint8 clipped to [0, 255] (then truncated), others cast. */
template <class T>
MXPLUG_XINLINE T Saturate(float v) {
  if constexpr (std::is_same_v<T, uint8_t>) v = v < 0.f ? 0.f : (v > 255.f ? 255.f : v);
  return static_cast<T>(v);
}

/*! \brief (r, g, b) in [0, 255] to hue (degrees), lightness and saturation (OpenCV's HLS in
 * float, as MXNet's hue kernel). */
MXPLUG_XINLINE void RgbToHls(float r, float g, float b, float* h, float* l, float* s) {
  r /= 255.f, g /= 255.f, b /= 255.f;
  const float hi = fmaxf(fmaxf(r, g), b), lo = fminf(fminf(r, g), b);
  const float diff = hi - lo;
  *l = (hi + lo) * 0.5f;
  *h = 0.f, *s = 0.f;
  if (diff > FLT_EPSILON) {
    *s = *l < 0.5f ? diff / (hi + lo) : diff / (2.0f - hi - lo);
    const float k = 60.f / diff;
    *h = hi == r ? (g - b) * k : (hi == g ? (b - r) * k + 120.f : (r - g) * k + 240.f);
    if (*h < 0.f) *h += 360.f;
  }
}

/*! \brief Back from HLS to (r, g, b) in [0, 255]. */
MXPLUG_XINLINE void HlsToRgb(float h, float l, float s, float* r, float* g, float* b) {
  *r = *g = *b = l;
  if (s != 0) {
    const float p2 = l <= 0.5f ? l * (1 + s) : l + s - l * s, p1 = 2 * l - p2;
    h *= 1.f / 60.f;
    while (h < 0) h += 6;
    while (h >= 6) h -= 6;
    const int sector = static_cast<int>(h);
    h -= sector;
    const float rising = p1 + (p2 - p1) * h, falling = p1 + (p2 - p1) * (1 - h);
    // The six sectors of the hue circle: which channel is high (p2), low (p1) or changing.
    switch (sector) {
      case 0:
        *r = p2, *g = rising, *b = p1;
        break;
      case 1:
        *r = falling, *g = p2, *b = p1;
        break;
      case 2:
        *r = p1, *g = p2, *b = rising;
        break;
      case 3:
        *r = p1, *g = falling, *b = p2;
        break;
      case 4:
        *r = rising, *g = p1, *b = p2;
        break;
      default:
        *r = p2, *g = p1, *b = falling;
        break;
    }
  }
  *r *= 255.f, *g *= 255.f, *b *= 255.f;
}

/*! \brief One color step on pixel p (all its channels), from `in` to `out` (which may be the
 * same array: each pixel is read whole before it is written). */
template <class T>
struct ColorPixel {
  const T* in;
  T* out;
  int64_t C;
  ColorStep step;
  float a0, a1, a2;
  const float* gray_mean;  // contrast's: the image's mean luma, on the device
  MXPLUG_XINLINE void operator()(int64_t p) const {
    const T* x = in + p * C;
    T* y = out + p * C;
    float v[3] = {static_cast<float>(x[0]), C == 3 ? static_cast<float>(x[1]) : 0.f,
                  C == 3 ? static_cast<float>(x[2]) : 0.f};
    const bool color = C == 3;
    switch (step) {
      case ColorStep::kBrightness:
        for (int c = 0; c < C; ++c) v[c] = v[c] * a0;
        break;
      case ColorStep::kContrast: {
        const float beta = (1 - a0) * gray_mean[0];
        for (int c = 0; c < C; ++c) v[c] = v[c] * a0 + beta;
        break;
      }
      case ColorStep::kSaturation:
        if (color) {
          const float gray = (v[0] * Luma(0) + v[1] * Luma(1) + v[2] * Luma(2)) * (1.f - a0);
          for (int c = 0; c < 3; ++c) v[c] = gray + v[c] * a0;
        }
        break;
      case ColorStep::kHue:
        if (color) {
          float h, l, s;
          RgbToHls(v[0], v[1], v[2], &h, &l, &s);
          HlsToRgb(h + a0 * 360.f, l, s, &v[0], &v[1], &v[2]);
        }
        break;
      case ColorStep::kShift:
        if (color) v[0] += a0, v[1] += a1, v[2] += a2;
        break;
      default:
        break;
    }
    for (int c = 0; c < C; ++c) y[c] = Saturate<T>(v[c]);
  }
};

/*! \brief The image's mean luma (the mean for one channel), summed in MXNet's order by one
 * thread: contrast's only reduction, over one image. */
template <class T>
struct GrayMean {
  const T* in;
  float* mean;
  int64_t pixels, C;
  MXPLUG_XINLINE void operator()(int64_t) const {
    float sum = 0.f;
    for (int64_t p = 0; p < pixels; ++p) {
      if (C == 3)
        for (int c = 0; c < 3; ++c) sum += static_cast<float>(in[p * 3 + c]) * Luma(c);
      else
        sum += static_cast<float>(in[p]);
    }
    mean[0] = sum / static_cast<float>(pixels);
  }
};

/*! \brief ImageNet's RGB lighting shift for alpha: eigenvectors times eigenvalues times alpha. */
inline void LightingShift(const float alpha[3], float shift[3]) {
  static const double kEigVal[3] = {55.46, 4.794, 1.148};
  static const double kEigVec[3][3] = {
      {-0.5675, 0.7192, 0.4009}, {-0.5808, -0.0045, -0.8140}, {-0.5836, -0.6948, 0.4203}};
  for (int c = 0; c < 3; ++c) {
    float sum = 0.f;
    for (int j = 0; j < 3; ++j) sum += static_cast<float>(kEigVal[j] * kEigVec[c][j]) * alpha[j];
    shift[c] = sum;
  }
}

/*! \brief What op K does for these parameters, its random choices drawn from `r`. */
template <ColorOp K>
ColorPlan MakeColorPlan(const ColorParamOf<K>& p, mxplug::RandomStream* r) {
  ColorPlan plan;
  auto uniform = [&](float lo, float hi) { return lo + r->UniformFloat() * (hi - lo); };
  if constexpr (K == ColorOp::kAdjustLighting || K == ColorOp::kRandomLighting) {
    float alpha[3], shift[3];
    for (int j = 0; j < 3; ++j) {
      if constexpr (K == ColorOp::kAdjustLighting)
        alpha[j] = p.alpha[static_cast<size_t>(j)];
      else
        alpha[j] = static_cast<float>(r->Normal() * p.alpha_std);
    }
    LightingShift(alpha, shift);
    plan.Add(ColorStep::kShift, shift[0], shift[1], shift[2]);
  } else if constexpr (K == ColorOp::kRandomBrightness) {
    plan.Add(ColorStep::kBrightness, uniform(p.min_factor, p.max_factor));
  } else if constexpr (K == ColorOp::kRandomContrast) {
    plan.Add(ColorStep::kContrast, uniform(p.min_factor, p.max_factor));
  } else if constexpr (K == ColorOp::kRandomSaturation) {
    plan.Add(ColorStep::kSaturation, uniform(p.min_factor, p.max_factor));
  } else if constexpr (K == ColorOp::kRandomHue) {
    plan.Add(ColorStep::kHue, uniform(p.min_factor, p.max_factor));
  } else if constexpr (K == ColorOp::kRandomColorJitter) {
    ColorStep order[4] = {ColorStep::kBrightness, ColorStep::kContrast, ColorStep::kSaturation,
                          ColorStep::kHue};
    for (int i = 3; i > 0; --i) {  // Fisher-Yates
      const int j = static_cast<int>(r->Below(static_cast<uint64_t>(i) + 1));
      const ColorStep t = order[i];
      order[i] = order[j], order[j] = t;
    }
    for (ColorStep s : order) {
      const float v = s == ColorStep::kBrightness   ? p.brightness
                      : s == ColorStep::kContrast   ? p.contrast
                      : s == ColorStep::kSaturation ? p.saturation
                                                    : p.hue;
      if (v > 0) plan.Add(s, (s == ColorStep::kHue ? 0.f : 1.f) + uniform(-v, v));
    }
  } else {  // the random flips
    if (r->UniformFloat() < 0.5f) {
      plan.Add(ColorStep::kFlip, 0);
      plan.steps[0].flip =
          K == ColorOp::kRandomFlipLeftRight ? ImageOp::kFlipLeftRight : ImageOp::kFlipTopBottom;
    }
  }
  if (plan.count == 0) plan.Add(ColorStep::kCopy, 0);
  return plan;
}

// A call's draws, at most: the jitter's order (3 x 2) and 4 factors; 3 normals (2 pairs of 4).
constexpr uint64_t kColorDraws = 10;

inline void CheckColorImage(const TShape& s) {
  if (s.ndim() != 3)
    throw std::invalid_argument("Input image must have shape (height, width, channels), but got " +
                                s.ToString());
  if (s[2] != 1 && s[2] != 3)
    throw std::invalid_argument(
        "The last dimension of input image must be the channel dimension with either 1 or 3 "
        "elements, but got input with shape " +
        s.ToString());
}

template <ColorOp K>
class ColorProp : public ImageOpProp<ColorParamOf<K>> {
 public:
  void Init(const mxplug::KwArgs& kwargs) override {
    this->param_.Init(kwargs);
    if constexpr (K == ColorOp::kAdjustLighting)
      if (this->param_.alpha.size() != 3)
        throw std::invalid_argument("alpha has " + std::to_string(this->param_.alpha.size()) +
                                    " values; expected 3, for the R, G and B channels");
  }
  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override {
    if (K == ColorOp::kAdjustLighting) return {mxplug::ResourceRequest::kTempSpace};
    return {mxplug::ResourceRequest::kRandom, mxplug::ResourceRequest::kTempSpace};
  }

 protected:
  TShape OutputShape(const TShape& s) const override {
    CheckColorImage(s);
    return s;
  }
};

template <ColorOp K, class Loop>
class ColorKernel : public mxplug::Operator {
 public:
  ColorKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    CheckColorImage(in[0].shape_);
    ColorPlan plan;
    if constexpr (K == ColorOp::kAdjustLighting) {
      plan = MakeColorPlan<K>(p_, nullptr);
    } else {
      mxplug::RandomStream r =
          ctx.resource(mxplug::ResourceRequest::kRandom).get_random(kColorDraws);
      plan = MakeColorPlan<K>(p_, &r);
    }
    const auto& scratch = ctx.resource(mxplug::ResourceRequest::kTempSpace);
    const int64_t n = in[0].Size(), C = in[0].shape_[2], pixels = n / C;
    mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      const T* src = in[0].dptr<T>();
      T* dst = out[0].dptr<T>();
      // Steps write the output, or scratch when they must add to it or a flip would read what
      // it writes.
      const bool flip_onto_itself =
          plan.steps[0].step == ColorStep::kFlip && static_cast<const void*>(src) == dst;
      const bool via_scratch = req[0] == mxplug::kAddTo || flip_onto_itself;
      // Scratch: contrast's mean (a float, kept 8-byte aligned), then the image if needed.
      char* space = static_cast<char*>(
          scratch.get_space(8 + (via_scratch ? static_cast<size_t>(n) * sizeof(T) : 0)));
      float* gray_mean = reinterpret_cast<float*>(space);
      T* target = via_scratch ? reinterpret_cast<T*>(space + 8) : dst;
      for (int i = 0; i < plan.count; ++i) {
        const ColorPlan::Step& s = plan.steps[i];
        const T* from = i == 0 ? src : target;
        if (s.step == ColorStep::kFlip) {
          ImageMap m;
          m.op = s.flip;
          m.H = in[0].shape_[0], m.W = in[0].shape_[1], m.C = C;
          Loop::Run(ctx, n, ImageForward<T, T>{from, target, m, mxplug::kWriteTo});
          continue;
        }
        if (s.step == ColorStep::kContrast)
          Loop::Run(ctx, 1, GrayMean<T>{from, gray_mean, pixels, C});
        Loop::Run(ctx, pixels,
                  ColorPixel<T>{from, target, C, s.step, s.a[0], s.a[1], s.a[2], gray_mean});
      }
      if (via_scratch) Loop::Run(ctx, n, ImageStore<T>{target, dst, req[0]});
    });
  }
  /*! \brief The head gradient, passed through (MXNet's "_copy"). */
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                const std::vector<TBlob>&, const std::vector<TBlob>&,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    mxplug::TypeSwitch(ig[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(ctx, ig[0].Size(), ImageStore<T>{og[0].dptr<T>(), ig[0].dptr<T>(), req[0]});
    });
  }

 private:
  ColorParamOf<K> p_;
};

/*! \brief Calls visit.template Op<K>(name, doc) for every color op (as ForEachImageOp). */
template <class Visitor>
void ForEachColorOp(Visitor&& visit) {
  visit.template Op<ColorOp::kAdjustLighting>(
      "_image_adjust_lighting",
      "AlexNet-style PCA lighting: adds ImageNet's RGB eigenvectors weighted by alpha times "
      "their eigenvalues to each pixel of an (H, W, 3) image.");
  visit.template Op<ColorOp::kRandomLighting>(
      "_image_random_lighting", "adjust_lighting with alpha drawn from normal(0, alpha_std).");
  visit.template Op<ColorOp::kRandomBrightness>(
      "_image_random_brightness",
      "Multiplies an (H, W, C) image by a factor drawn from [min_factor, max_factor].");
  visit.template Op<ColorOp::kRandomContrast>(
      "_image_random_contrast",
      "alpha * image + (1 - alpha) * its mean luma, alpha drawn from [min_factor, max_factor].");
  visit.template Op<ColorOp::kRandomSaturation>(
      "_image_random_saturation",
      "alpha * image + (1 - alpha) * each pixel's luma, alpha drawn from "
      "[min_factor, max_factor].");
  visit.template Op<ColorOp::kRandomHue>(
      "_image_random_hue",
      "Turns each pixel's hue by alpha * 360 degrees, alpha drawn from [min_factor, max_factor].");
  visit.template Op<ColorOp::kRandomColorJitter>(
      "_image_random_color_jitter",
      "Brightness, contrast, saturation and hue jitters in a random order.");
  visit.template Op<ColorOp::kRandomFlipLeftRight>("_image_random_flip_left_right",
                                                   "Mirrors an (H, W, C) image left to right with "
                                                   "probability 1/2.");
  visit.template Op<ColorOp::kRandomFlipTopBottom>(
      "_image_random_flip_top_bottom",
      "Turns an (H, W, C) image upside down with probability "
      "1/2.");
}

}  // namespace image
}  // namespace mxplug_tensor

#endif  // MXPLUG_PLUGINS_TENSOR_IMAGE_COLOR_H_
