/*!
 * \file mxplug/sdk/resample.hpp
 * \brief Where each pixel of a resized image samples one axis of the source, with OpenCV's
 * interpolations (MXNet's `interp`): the taps and weights of output pixel i, computed on its own
 * (MXPLUG_XINLINE), so that the core's image resize and a device kernel of `_image_resize` sample
 * alike. A 2-D resize is separable: the weights along the rows times those along the columns.
 */
#ifndef MXPLUG_SDK_RESAMPLE_HPP_
#define MXPLUG_SDK_RESAMPLE_HPP_

#include <cmath>

#include "mxplug/sdk/xinline.hpp"

namespace mxplug {

/*! \brief OpenCV's interpolations, by its numbers (MXNet's `interp`). */
enum class Interpolation { kNearest = 0, kLinear = 1, kCubic = 2, kArea = 3, kLanczos4 = 4 };

/*!
 * \brief One axis of a resize: `source` pixels to `target`. Bilinear, bicubic (a = -0.75) and
 * Lanczos (8 taps) sample at pixel centres (x_src = (x + 0.5) * source / target - 0.5, the
 * borders replicated); nearest at floor(x * source / target); area averages each output pixel's
 * footprint when `averaging` (the image shrinks along both axes), else it is OpenCV's bilinear
 * variant. Weights are float, as the core's 8-bit resize has always computed them.
 */
struct ResampleAxis {
  int source = 1, target = 1;
  Interpolation interp = Interpolation::kLinear;
  bool averaging = false;

  /*! \brief Source pixels per output pixel, as OpenCV computes it (the inverse of target /
   * source, which can differ from source / target in the last bit and so move a nearest tap). */
  MXPLUG_XINLINE double Scale() const { return 1.0 / (static_cast<double>(target) / source); }
  MXPLUG_XINLINE int Clamp(int s) const { return s < 0 ? 0 : (s >= source ? source - 1 : s); }

  /*! \brief The most taps an output pixel has. */
  MXPLUG_XINLINE int MaxTaps() const {
    switch (interp) {
      case Interpolation::kNearest:
        return 1;
      case Interpolation::kCubic:
        return 4;
      case Interpolation::kLanczos4:
        return 8;
      case Interpolation::kArea:
        return averaging ? static_cast<int>(std::ceil(Scale())) + 1 : 2;
      default:
        return 2;
    }
  }

  /*! \brief Calls visit(s, w) for each tap of output pixel i, in order: source pixel s (clamped
   * to the image, so a border pixel may come more than once) with weight w. */
  template <class Visit>
  MXPLUG_XINLINE void ForEachTap(int i, Visit&& visit) const {
    const double scale = Scale();
    const double centre = (i + 0.5) * scale - 0.5;
    const int lower = static_cast<int>(std::floor(centre));
    const auto f = static_cast<float>(centre - lower);
    switch (interp) {
      case Interpolation::kNearest: {
        const int s = static_cast<int>(std::floor(i * scale));
        visit(s < source ? s : source - 1, 1.f);
        break;
      }
      case Interpolation::kCubic: {  // OpenCV's weights for pixels lower - 1 .. lower + 2
        const float a = -0.75f;
        const float w0 = ((a * (f + 1) - 5 * a) * (f + 1) + 8 * a) * (f + 1) - 4 * a;
        const float w1 = ((a + 2) * f - (a + 3)) * f * f + 1;
        const float w2 = ((a + 2) * (1 - f) - (a + 3)) * (1 - f) * (1 - f) + 1;
        const float w[4] = {w0, w1, w2, 1.f - w0 - w1 - w2};
        for (int t = 0; t < 4; ++t) visit(Clamp(lower - 1 + t), w[t]);
        break;
      }
      case Interpolation::kLanczos4: {  // pixels lower - 3 .. lower + 4, normalized to sum 1
        float w[8] = {0, 0, 0, 1, 0, 0, 0, 0};
        if (f >= 1e-7f) {
          const double pi = 3.14159265358979323846;
          double sum = 0;
          for (int t = 0; t < 8; ++t) {
            const double d = f + 3 - t;  // the distance from tap t
            sum += w[t] =
                static_cast<float>(std::sin(pi * d) * std::sin(pi * d / 4) / (pi * pi * d * d / 4));
          }
          for (float& v : w) v = static_cast<float>(v / sum);
        }
        for (int t = 0; t < 8; ++t) visit(Clamp(lower - 3 + t), w[t]);
        break;
      }
      case Interpolation::kArea:
        if (averaging) {  // each source pixel weighs by how much of it the output pixel covers
          const double begin = i * scale, end = (i + 1) * scale;
          for (int s = static_cast<int>(std::floor(begin)); s < end && s < source; ++s) {
            const double hi = s + 1 < end ? s + 1 : end, lo = s > begin ? s : begin;
            visit(Clamp(s), static_cast<float>((hi - lo) / scale));
          }
        } else {  // OpenCV's: bilinear with the fraction measured from the next output pixel
          int s = static_cast<int>(std::floor(i * scale));
          float g = static_cast<float>((i + 1) - (s + 1) / scale);
          g = g <= 0 ? 0.f : g - std::floor(g);
          if (s >= source - 1) s = source - 1, g = 0.f;
          visit(Clamp(s), 1.f - g);
          visit(Clamp(s + 1), g);
        }
        break;
      default:
        visit(Clamp(lower), 1.f - f);
        visit(Clamp(lower + 1), f);
        break;
    }
  }

  /*! \brief The weight output pixel i gives source pixel s (0 when it does not sample it): its
   * taps there summed in double (a border pixel clamped to more than once). */
  MXPLUG_XINLINE double WeightOf(int i, int s) const {
    double w = 0;
    ForEachTap(i, [&](int at, float weight) {
      if (at == s) w += weight;
    });
    return w;
  }

  /*! \brief The output pixels [*first, *last] that may sample source pixel s (WeightOf tells
   * which do): those whose taps' span reaches it, with a pixel of margin. */
  MXPLUG_XINLINE void Samplers(int s, int* first, int* last) const {
    const double scale = Scale(), reach = MaxTaps() + 1.0;
    const int lo = static_cast<int>(std::floor((s - reach + 0.5) / scale - 0.5)) - 1;
    const int hi = static_cast<int>(std::ceil((s + reach + 0.5) / scale - 0.5)) + 1;
    *first = lo < 0 ? 0 : lo;
    *last = hi >= target ? target - 1 : hi;
  }
};

}  // namespace mxplug

#endif  // MXPLUG_SDK_RESAMPLE_HPP_
