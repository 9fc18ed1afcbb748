#include "io/image_augment.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "mxplug/error.h"

namespace mxplug::io {

// Note [MXNet's augmenter, observed]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// MXNet 1.9.1 (OpenCV inside libmxnet) was run on the same records with one argument at a time.
// What it showed, and this file keeps:
//  - Augmentation is reproducible: each run of a script draws the same numbers (a fixed seed per
//    decoding thread) and seed_aug changes them. Here each batch draws from a generator seeded
//    with (seed_aug or MXNet's default, the epoch, the batch), so that runs repeat whatever the
//    number of threads; epochs differ, as MXNet's do.
//  - Pixels stay 8-bit between steps, each step rounding to nearest (even on ties) and
//    saturating, as cv::Mat::convertTo does: brightness 1.125 makes 150 169 and 100 112.
//  - Contrast and saturation mix with a grey of 0.299 B + 0.587 G + 0.114 R: MXNet applies the
//    RGB weights to OpenCV's BGR order (so (R, G, B) = (200, 150, 100) has grey 140.75, not
//    159.25). Contrast mixes with the mean grey of the image, saturation with each pixel's.
//  - The mean image it creates (mean_img naming a missing file) is the mean of the normalized
//    rows (mean_r..., std_..., scale applied, and mirror), and a row is then
//    (pixel - mean image) * contrast + illumination, times scale / std: the file holds
//    normalized values that are normalized again. Saved as {"mean_img": (c, h, w) float32}.
//    A mirrored row is the mirror of the unmirrored image less the mean image.
//  - max_random_contrast scales and max_random_illumination adds before scale / std:
//    ((pixel - mean) * contrast + illumination) * scale / std.
// The affine warp maps source to output as MXNet's matrix says and samples as OpenCV's
// warpAffine with bilinear interpolation: coordinates in 1/32 pixel, 15-bit weights, the
// fill_value outside the source.

namespace {

uint8_t Saturate(double v) {
  return static_cast<uint8_t>(std::clamp<double>(std::nearbyint(v), 0.0, 255.0));
}

float Uniform01(std::mt19937& rng) { return std::uniform_real_distribution<float>(0, 1)(rng); }

// OpenCV's warpAffine with INTER_LINEAR and a constant border: `m` maps source to output; each
// output pixel reads the source at the inverse map, in fixed point.
Image WarpAffine(const Image& src, const double m[6], int height, int width, uint8_t fill) {
  double det = m[0] * m[4] - m[1] * m[3];
  det = det != 0 ? 1.0 / det : 0.0;
  const double a11 = m[4] * det, a22 = m[0] * det, a12 = -m[1] * det, a21 = -m[3] * det;
  const double inv[6] = {a11, a12, -a11 * m[2] - a12 * m[5], a21, a22, -a21 * m[2] - a22 * m[5]};
  constexpr int kAbBits = 10, kInterBits = 5, kTab = 1 << kInterBits, kCoefBits = 15;
  constexpr int kAbScale = 1 << kAbBits, kRound = kAbScale / kTab / 2;
  Image out;
  out.height = height;
  out.width = width;
  out.channels = src.channels;
  out.pixels.resize(static_cast<size_t>(height) * width * src.channels);
  const int c = src.channels;
  auto at = [&](int y, int x, int k) -> int {
    if (y < 0 || y >= src.height || x < 0 || x >= src.width) return fill;
    return src.pixels[(static_cast<size_t>(y) * src.width + x) * c + k];
  };
  for (int y = 0; y < height; ++y) {
    const int x0 = static_cast<int>(std::nearbyint((inv[1] * y + inv[2]) * kAbScale)) + kRound;
    const int y0 = static_cast<int>(std::nearbyint((inv[4] * y + inv[5]) * kAbScale)) + kRound;
    for (int x = 0; x < width; ++x) {
      const int sx =
          (x0 + static_cast<int>(std::nearbyint(inv[0] * x * kAbScale))) >> (kAbBits - kInterBits);
      const int sy =
          (y0 + static_cast<int>(std::nearbyint(inv[3] * x * kAbScale))) >> (kAbBits - kInterBits);
      const int ix = sx >> kInterBits, iy = sy >> kInterBits;
      const int fx = sx & (kTab - 1), fy = sy & (kTab - 1);
      // Weights in 1/1024 are exact in 15 bits: (32 - f) * (32 - g) * 32 of 32768.
      const int w00 = (kTab - fx) * (kTab - fy) * 32, w01 = fx * (kTab - fy) * 32;
      const int w10 = (kTab - fx) * fy * 32, w11 = fx * fy * 32;
      uint8_t* dst = out.pixels.data() + (static_cast<size_t>(y) * width + x) * c;
      for (int k = 0; k < c; ++k) {
        const int sum = at(iy, ix, k) * w00 + at(iy, ix + 1, k) * w01 + at(iy + 1, ix, k) * w10 +
                        at(iy + 1, ix + 1, k) * w11;
        dst[k] =
            static_cast<uint8_t>(std::clamp((sum + (1 << (kCoefBits - 1))) >> kCoefBits, 0, 255));
      }
    }
  }
  return out;
}

// OpenCV's 8-bit RGB <-> HLS: hue in [0, 180) (degrees / 2), lightness and saturation in [0, 255].
void RgbToHls(const uint8_t* rgb, int* hls) {
  constexpr float kUnit = 1.f / 255.f;  // OpenCV multiplies by it; dividing rounds otherwise
  const float r = rgb[0] * kUnit, g = rgb[1] * kUnit, b = rgb[2] * kUnit;
  const float vmax = std::max({r, g, b}), vmin = std::min({r, g, b}), diff = vmax - vmin;
  const float l = (vmax + vmin) * 0.5f;
  float h = 0, s = 0;
  if (diff > 1.1920929e-07f) {
    s = l < 0.5f ? diff / (vmax + vmin) : diff / (2 - vmax - vmin);
    const float k = 60.f / diff;
    h = vmax == r ? (g - b) * k : vmax == g ? (b - r) * k + 120 : (r - g) * k + 240;
    if (h < 0) h += 360;
  }
  hls[0] = Saturate(h * 0.5f);
  hls[1] = Saturate(l * 255);
  hls[2] = Saturate(s * 255);
}

void HlsToRgb(const int* hls, uint8_t* rgb) {
  constexpr float kUnit = 1.f / 255.f;
  const float l = hls[1] * kUnit, s = hls[2] * kUnit;
  float r = l, g = l, b = l;
  if (s != 0) {
    static const int kSector[6][3] = {{1, 3, 0}, {1, 0, 2}, {3, 0, 1},
                                      {0, 2, 1}, {0, 1, 3}, {2, 1, 0}};
    const float p2 = l <= 0.5f ? l * (1 + s) : l + s - l * s, p1 = 2 * l - p2;
    float h = hls[0] * 2 / 60.f;  // sixths of the circle
    while (h < 0) h += 6;
    while (h >= 6) h -= 6;
    const int sector = static_cast<int>(std::floor(h));
    h -= static_cast<float>(sector);
    const float tab[4] = {p2, p1, p1 + (p2 - p1) * (1 - h), p1 + (p2 - p1) * h};
    b = tab[kSector[sector][0]];
    g = tab[kSector[sector][1]];
    r = tab[kSector[sector][2]];
  }
  rgb[0] = Saturate(r * 255);
  rgb[1] = Saturate(g * 255);
  rgb[2] = Saturate(b * 255);
}

// The grey MXNet mixes with (Note [MXNet's augmenter, observed]), of an RGB pixel.
float Grey(const uint8_t* rgb) { return 0.299f * rgb[2] + 0.587f * rgb[1] + 0.114f * rgb[0]; }

}  // namespace

Image CropImage(const Image& src, int y, int x, int height, int width) {
  Image out;
  out.height = height;
  out.width = width;
  out.channels = src.channels;
  const size_t row = static_cast<size_t>(width) * src.channels;
  out.pixels.resize(row * height);
  for (int i = 0; i < height; ++i)
    std::copy_n(src.pixels.data() + (static_cast<size_t>(y + i) * src.width + x) * src.channels,
                row, out.pixels.data() + i * row);
  return out;
}

Image PadImage(const Image& src, int top, int bottom, int left, int right, uint8_t fill) {
  Image out;
  out.height = src.height + top + bottom;
  out.width = src.width + left + right;
  out.channels = src.channels;
  out.pixels.assign(static_cast<size_t>(out.height) * out.width * out.channels, fill);
  const size_t row = static_cast<size_t>(src.width) * src.channels;
  for (int i = 0; i < src.height; ++i)
    std::copy_n(
        src.pixels.data() + i * row, row,
        out.pixels.data() + (static_cast<size_t>(i + top) * out.width + left) * out.channels);
  return out;
}

void ShiftHls(Image* image, int dh, int dl, int ds) {
  if (image->channels < 3) return;
  const size_t pixels = static_cast<size_t>(image->height) * image->width;
  const int c = image->channels;
  uint8_t* p = image->pixels.data();
  for (size_t i = 0; i < pixels; ++i) {
    int hls[3];
    RgbToHls(p + i * c, hls);
    hls[0] = std::clamp(hls[0] + dh, 0, 180);
    hls[1] = std::clamp(hls[1] + dl, 0, 255);
    hls[2] = std::clamp(hls[2] + ds, 0, 255);
    HlsToRgb(hls, p + i * c);
  }
}

Image MirrorImage(const Image& src) {
  Image out = src;
  const int c = src.channels;
  for (int y = 0; y < src.height; ++y)
    for (int x = 0; x < src.width; ++x)
      std::copy_n(src.pixels.data() + (static_cast<size_t>(y) * src.width + x) * c, c,
                  out.pixels.data() + (static_cast<size_t>(y) * src.width + src.width - 1 - x) * c);
  return out;
}

ImageAugmenter::ImageAugmenter(IterArgs* args, const TShape& data_shape)
    : height_(static_cast<int>(data_shape[1])),
      width_(static_cast<int>(data_shape[2])),
      data_shape_(data_shape.ToString()) {
  const std::string& iter = args->iter();
  auto bad = [&](const std::string& what) { throw Error(iter + ": " + what, kMXPInvalidArgument); };
  resize_ = args->TakeInt("resize", -1, -1);
  if (resize_ == 0) bad("argument 'resize' is 0, expected -1 or a size");
  const int inter_method = args->TakeInt("inter_method", 1, 0);
  if (inter_method != 1)
    bad("argument 'inter_method' is " + std::to_string(inter_method) +
        ", only 1 (bilinear) is supported");
  rand_crop_ = args->TakeBool("rand_crop", false);
  random_resized_crop_ = args->TakeBool("random_resized_crop", false);
  max_rotate_angle_ = args->TakeInt("max_rotate_angle", 0, 0);
  rotate_ = args->TakeInt("rotate", -1, -1);
  max_aspect_ratio_ = args->TakeFloat("max_aspect_ratio", 0.f);
  min_aspect_ratio_ = args->TakeOptionalFloat("min_aspect_ratio");
  max_shear_ratio_ = args->TakeFloat("max_shear_ratio", 0.f);
  max_crop_size_ = args->TakeInt("max_crop_size", -1, -1);
  min_crop_size_ = args->TakeInt("min_crop_size", -1, -1);
  max_random_scale_ = args->TakeFloat("max_random_scale", 1.f);
  min_random_scale_ = args->TakeFloat("min_random_scale", 1.f);
  max_random_area_ = args->TakeFloat("max_random_area", 1.f);
  min_random_area_ = args->TakeFloat("min_random_area", 1.f);
  max_img_size_ = args->TakeFloat("max_img_size", 1e10f);
  min_img_size_ = args->TakeFloat("min_img_size", 0.f);
  brightness_ = args->TakeFloat("brightness", 0.f);
  contrast_ = args->TakeFloat("contrast", 0.f);
  saturation_ = args->TakeFloat("saturation", 0.f);
  pca_noise_ = args->TakeFloat("pca_noise", 0.f);
  random_h_ = args->TakeInt("random_h", 0, 0);
  random_s_ = args->TakeInt("random_s", 0, 0);
  random_l_ = args->TakeInt("random_l", 0, 0);
  fill_value_ = args->TakeInt("fill_value", 255, 0);
  pad_ = args->TakeInt("pad", 0, 0);
  mirror_ = args->TakeBool("mirror", false);
  rand_mirror_ = args->TakeBool("rand_mirror", false);
  mean_img_ = args->TakeString("mean_img", "");
  const char* channel[] = {"r", "g", "b", "a"};
  for (int c = 0; c < 4; ++c) {
    mean_[c] = args->TakeFloat(std::string("mean_") + channel[c], 0.f);
    std_[c] = args->TakeFloat(std::string("std_") + channel[c], 1.f);
    if (std_[c] == 0.f) bad(std::string("argument 'std_") + channel[c] + "' is 0");
  }
  scale_ = args->TakeFloat("scale", 1.f);
  max_random_contrast_ = args->TakeFloat("max_random_contrast", 0.f);
  max_random_illumination_ = args->TakeFloat("max_random_illumination", 0.f);
  // MXNet's decoding threads seed with multiples of a constant; seed_aug moves them.
  seed_ = static_cast<unsigned>(args->TakeOptionalInt("seed_aug", -0x7fffffff).value_or(0));
  if (fill_value_ > 255)
    bad("argument 'fill_value' is " + std::to_string(fill_value_) + ", expected 0 to 255");
  if (min_random_scale_ > max_random_scale_ || min_random_scale_ <= 0)
    bad("arguments 'min_random_scale' and 'max_random_scale' are " +
        std::to_string(min_random_scale_) + " and " + std::to_string(max_random_scale_) +
        ", expected 0 < min_random_scale <= max_random_scale");
  if (min_random_area_ > max_random_area_ || min_random_area_ <= 0 || max_random_area_ > 1)
    bad("arguments 'min_random_area' and 'max_random_area' are " +
        std::to_string(min_random_area_) + " and " + std::to_string(max_random_area_) +
        ", expected 0 < min_random_area <= max_random_area <= 1");
  if (min_aspect_ratio_ && (*min_aspect_ratio_ <= 0 || *min_aspect_ratio_ > max_aspect_ratio_))
    bad("arguments 'min_aspect_ratio' and 'max_aspect_ratio' are " +
        std::to_string(*min_aspect_ratio_) + " and " + std::to_string(max_aspect_ratio_) +
        ", expected 0 < min_aspect_ratio <= max_aspect_ratio");
  if (!min_aspect_ratio_ && (max_aspect_ratio_ < 0 || max_aspect_ratio_ >= 1))
    bad("argument 'max_aspect_ratio' is " + std::to_string(max_aspect_ratio_) +
        ", expected 0 <= max_aspect_ratio < 1 without min_aspect_ratio");
  if ((max_crop_size_ != -1 || min_crop_size_ != -1) &&
      (min_crop_size_ < 1 || max_crop_size_ < min_crop_size_))
    bad("arguments 'min_crop_size' and 'max_crop_size' are " + std::to_string(min_crop_size_) +
        " and " + std::to_string(max_crop_size_) +
        ", expected 1 <= min_crop_size <= max_crop_size");
}

bool ImageAugmenter::Warps() const {
  return max_rotate_angle_ > 0 || max_shear_ratio_ > 0 || rotate_ > 0 || max_random_scale_ != 1 ||
         min_random_scale_ != 1 || max_aspect_ratio_ != 0 || min_aspect_ratio_ ||
         max_img_size_ != 1e10f || min_img_size_ != 0;
}

Image ImageAugmenter::Warp(const Image& image, std::mt19937& rng) const {
  const float shear = Uniform01(rng) * max_shear_ratio_ * 2 - max_shear_ratio_;
  int angle = std::uniform_int_distribution<int>(-max_rotate_angle_, max_rotate_angle_)(rng);
  if (rotate_ > 0) angle = rotate_;
  const float a = static_cast<float>(std::cos(angle / 180.0 * M_PI));
  const float b = static_cast<float>(std::sin(angle / 180.0 * M_PI));
  const float scale = Uniform01(rng) * (max_random_scale_ - min_random_scale_) + min_random_scale_;
  const float ratio =
      min_aspect_ratio_
          ? Uniform01(rng) * (max_aspect_ratio_ - *min_aspect_ratio_) + *min_aspect_ratio_
          : Uniform01(rng) * max_aspect_ratio_ * 2 - max_aspect_ratio_ + 1;
  const float hs = 2 * scale / (1 + ratio), ws = ratio * hs;
  const float new_width = std::max(min_img_size_, std::min(max_img_size_, scale * image.width));
  const float new_height = std::max(min_img_size_, std::min(max_img_size_, scale * image.height));
  // The matrix in float, as MXNet builds it; OpenCV then works in double.
  float m[6];
  m[0] = hs * a - shear * b * ws;
  m[3] = -b * ws;
  m[1] = hs * b + shear * a * ws;
  m[4] = a * ws;
  const float centre_x = m[0] * image.width + m[1] * image.height;
  const float centre_y = m[3] * image.width + m[4] * image.height;
  m[2] = (new_width - centre_x) / 2;
  m[5] = (new_height - centre_y) / 2;
  const double md[6] = {m[0], m[1], m[2], m[3], m[4], m[5]};
  return WarpAffine(image, md, static_cast<int>(new_height), static_cast<int>(new_width),
                    static_cast<uint8_t>(fill_value_));
}

Image ImageAugmenter::RandomResizedCrop(const Image& image, std::mt19937& rng) const {
  // A window of a random share of the area and a random aspect ratio (log-uniform), ten tries;
  // else the largest centred square.
  const float max_ratio = min_aspect_ratio_ ? max_aspect_ratio_ : 1 + max_aspect_ratio_;
  const float min_ratio = min_aspect_ratio_ ? *min_aspect_ratio_ : 1 - max_aspect_ratio_;
  const double area = static_cast<double>(image.height) * image.width;
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target =
        area * (Uniform01(rng) * (max_random_area_ - min_random_area_) + min_random_area_);
    const double log_min = std::log(min_ratio), log_max = std::log(max_ratio);
    const double ratio = std::exp(Uniform01(rng) * (log_max - log_min) + log_min);
    const int w = static_cast<int>(std::lround(std::sqrt(target * ratio)));
    const int h = static_cast<int>(std::lround(std::sqrt(target / ratio)));
    if (w < 1 || h < 1 || w > image.width || h > image.height) continue;
    const int x = std::uniform_int_distribution<int>(0, image.width - w)(rng);
    const int y = std::uniform_int_distribution<int>(0, image.height - h)(rng);
    return ResizeImage(CropImage(image, y, x, h, w), height_, width_);
  }
  const int side = std::min(image.height, image.width);
  return ResizeImage(
      CropImage(image, (image.height - side) / 2, (image.width - side) / 2, side, side), height_,
      width_);
}

Image ImageAugmenter::Crop(const Image& image, std::mt19937& rng, const std::string& where) const {
  // A window of data_shape, or of a random square size then resized to it; centred, or at a
  // random place with rand_crop.
  const bool sized = max_crop_size_ != -1 || min_crop_size_ != -1;
  if (sized && (image.width < max_crop_size_ || image.height < max_crop_size_))
    throw Error(where + " is an image of " + std::to_string(image.height) + "x" +
                    std::to_string(image.width) + ", smaller than max_crop_size " +
                    std::to_string(max_crop_size_),
                kMXPInvalidArgument);
  if (!sized && (image.height < height_ || image.width < width_))
    throw Error(where + " is an image of " + std::to_string(image.height) + "x" +
                    std::to_string(image.width) + ", smaller than data_shape " + data_shape_ +
                    " (its size after resize and augmentation); resize= scales images up",
                kMXPInvalidArgument);
  const int size =
      sized ? std::uniform_int_distribution<int>(min_crop_size_, max_crop_size_)(rng) : 0;
  const int height = sized ? size : height_, width = sized ? size : width_;
  int y = image.height - height, x = image.width - width;
  if (rand_crop_) {
    y = std::uniform_int_distribution<int>(0, y)(rng);
    x = std::uniform_int_distribution<int>(0, x)(rng);
  } else {
    y /= 2;
    x /= 2;
  }
  Image window = CropImage(image, y, x, height, width);
  return sized ? ResizeImage(window, height_, width_) : window;
}

void ImageAugmenter::Recolour(Image* image, std::mt19937& rng) const {
  if (image->channels < 3) return;  // colour augmentations of a grey image change nothing
  const size_t pixels = static_cast<size_t>(image->height) * image->width;
  const int c = image->channels;
  uint8_t* p = image->pixels.data();
  if (random_h_ != 0 || random_s_ != 0 || random_l_ != 0) {
    const int dh = static_cast<int>(Uniform01(rng) * random_h_ * 2 - random_h_);
    const int ds = static_cast<int>(Uniform01(rng) * random_s_ * 2 - random_s_);
    const int dl = static_cast<int>(Uniform01(rng) * random_l_ * 2 - random_l_);
    ShiftHls(image, dh, dl, ds);
  }
  auto jitter = [&](float amount) {
    return 1 + std::uniform_real_distribution<float>(-amount, amount)(rng);
  };
  if (brightness_ > 0) {
    const float alpha = jitter(brightness_);
    for (size_t i = 0; i < pixels; ++i)
      for (int k = 0; k < 3; ++k) p[i * c + k] = Saturate(p[i * c + k] * alpha);
  }
  if (contrast_ > 0) {
    const float alpha = jitter(contrast_);
    double grey = 0;
    for (size_t i = 0; i < pixels; ++i) grey += Grey(p + i * c);
    const double shift = (1 - alpha) * grey / static_cast<double>(pixels);
    for (size_t i = 0; i < pixels; ++i)
      for (int k = 0; k < 3; ++k) p[i * c + k] = Saturate(p[i * c + k] * alpha + shift);
  }
  if (saturation_ > 0) {
    const float alpha = jitter(saturation_);
    for (size_t i = 0; i < pixels; ++i) {
      const float grey = Grey(p + i * c) * (1 - alpha);
      for (int k = 0; k < 3; ++k) p[i * c + k] = Saturate(p[i * c + k] * alpha + grey);
    }
  }
  if (pca_noise_ > 0) {
    // AlexNet's lighting noise: the principal components of ImageNet's RGB pixels, scaled by
    // normal draws of deviation pca_noise.
    static const float kEigenvalue[3] = {55.46f, 4.794f, 1.148f};
    static const float kEigenvector[3][3] = {{-0.5675f, 0.7192f, 0.4009f},
                                             {-0.5808f, -0.0045f, -0.8140f},
                                             {-0.5836f, -0.6948f, 0.4203f}};
    std::normal_distribution<float> normal(0, pca_noise_);
    float weight[3];
    for (float& w : weight) w = normal(rng);
    float shift[3];
    for (int k = 0; k < 3; ++k)
      shift[k] = kEigenvector[k][0] * weight[0] * kEigenvalue[0] +
                 kEigenvector[k][1] * weight[1] * kEigenvalue[1] +
                 kEigenvector[k][2] * weight[2] * kEigenvalue[2];
    for (size_t i = 0; i < pixels; ++i)
      for (int k = 0; k < 3; ++k) p[i * c + k] = Saturate(p[i * c + k] + shift[k]);
  }
}

Image ImageAugmenter::Augment(Image image, std::mt19937& rng, const std::string& where) const {
  if (resize_ > 0) {
    // The shorter edge becomes `resize`, the other keeps the aspect ratio (rounded down).
    const int64_t r = resize_;
    image = image.height > image.width
                ? ResizeImage(image, static_cast<int>(r * image.height / image.width), resize_)
                : ResizeImage(image, resize_, static_cast<int>(r * image.width / image.height));
  }
  // MXNet's random resized crop acts only with an area or aspect ratio range to draw from;
  // without one, the image goes on to the usual crop.
  if (random_resized_crop_ && (max_random_area_ != 1 || min_random_area_ != 1 ||
                               max_aspect_ratio_ != 0 || min_aspect_ratio_)) {
    image = RandomResizedCrop(image, rng);
  } else {
    if (Warps()) image = Warp(image, rng);
    if (pad_ > 0)
      image = PadImage(image, pad_, pad_, pad_, pad_, static_cast<uint8_t>(fill_value_));
    image = Crop(image, rng, where);
  }
  Recolour(&image, rng);
  return image;
}

void ImageAugmenter::Pixels(const Image& image, std::mt19937& rng, int dtype, void* out) const {
  Uniform01(rng);  // the contrast and illumination Normalize draws
  Uniform01(rng);
  const bool mirror = mirror_ || (rand_mirror_ && Uniform01(rng) < 0.5f);
  const int channels = image.channels, height = image.height, width = image.width;
  const size_t plane = static_cast<size_t>(height) * width;
  for (int c = 0; c < channels; ++c)
    for (int i = 0; i < height; ++i) {
      const uint8_t* src = image.pixels.data() + static_cast<size_t>(i) * width * channels + c;
      const size_t row = c * plane + static_cast<size_t>(i) * width;
      for (int j = 0; j < width; ++j) {
        const uint8_t pixel = src[static_cast<size_t>(mirror ? width - 1 - j : j) * channels];
        if (dtype == kMXPUint8)
          static_cast<uint8_t*>(out)[row + j] = pixel;
        else
          static_cast<int8_t*>(out)[row + j] = static_cast<int8_t>(std::min<int>(pixel, 127));
      }
    }
}

void ImageAugmenter::Normalize(const Image& image, std::mt19937& rng, const float* mean_image,
                               float* out) const {
  const float contrast = Uniform01(rng) * max_random_contrast_ * 2 - max_random_contrast_ + 1;
  const float illumination =
      Uniform01(rng) * max_random_illumination_ * 2 - max_random_illumination_;
  const bool mirror = mirror_ || (rand_mirror_ && Uniform01(rng) < 0.5f);
  const int channels = image.channels, height = image.height, width = image.width;
  const size_t plane = static_cast<size_t>(height) * width;
  for (int c = 0; c < channels; ++c) {
    const float factor = scale_ / std_[c];
    for (int i = 0; i < height; ++i) {
      const uint8_t* src = image.pixels.data() + static_cast<size_t>(i) * width * channels + c;
      const size_t row = c * plane + static_cast<size_t>(i) * width;
      for (int j = 0; j < width; ++j) {
        // Mirrored after the mean image is taken away, as MXNet does.
        const int from = mirror ? width - 1 - j : j;
        const float pixel = src[static_cast<size_t>(from) * channels];
        const float mean = mean_image ? mean_image[row + from] : mean_[c];
        out[row + j] = ((pixel - mean) * contrast + illumination) * factor;
      }
    }
  }
}

}  // namespace mxplug::io
