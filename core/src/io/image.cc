#include "mxplug/image.h"

#include <png.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "mxplug/error.h"

namespace mxplug {
namespace {

bool IsJpeg(const unsigned char* p, size_t size) {
  return size >= 3 && p[0] == 0xFF && p[1] == 0xD8 && p[2] == 0xFF;
}
bool IsPng(const unsigned char* p, size_t size) { return size >= 8 && png_sig_cmp(p, 0, 8) == 0; }

using TjHandle = std::unique_ptr<void, int (*)(tjhandle)>;

int TjFormat(int channels, ChannelOrder order) {
  if (channels == 1) return TJPF_GRAY;
  return order == ChannelOrder::kRGB ? TJPF_RGB : TJPF_BGR;
}

png_uint_32 PngFormat(int channels, ChannelOrder order) {
  const bool bgr = order == ChannelOrder::kBGR;
  if (channels == 1) return PNG_FORMAT_GRAY;
  if (channels == 3) return bgr ? PNG_FORMAT_BGR : PNG_FORMAT_RGB;
  return bgr ? PNG_FORMAT_BGRA : PNG_FORMAT_RGBA;
}

Image DecodeJpeg(const unsigned char* data, size_t size, int channels, ChannelOrder order) {
  TjHandle tj(tjInitDecompress(), tjDestroy);
  if (!tj)
    throw Error(std::string("cannot start a JPEG decoder: ") + tjGetErrorStr2(nullptr),
                kMXPInternal);
  int width = 0, height = 0, subsampling = 0, colorspace = 0;
  if (tjDecompressHeader3(tj.get(), data, static_cast<unsigned long>(size), &width, &height,
                          &subsampling, &colorspace) != 0)
    throw Error(std::string("the JPEG does not decode: ") + tjGetErrorStr2(tj.get()),
                kMXPInvalidArgument);
  Image image;
  image.height = height;
  image.width = width;
  image.channels = channels != 0 ? channels : (colorspace == TJCS_GRAY ? 1 : 3);
  image.pixels.resize(static_cast<size_t>(width) * height * image.channels);
  // A warning (a stream that ends early, say) still gives an image, as OpenCV's decoder does.
  if (tjDecompress2(tj.get(), data, static_cast<unsigned long>(size), image.pixels.data(), width, 0,
                    height, TjFormat(image.channels, order), 0) != 0 &&
      tjGetErrorCode(tj.get()) != TJERR_WARNING)
    throw Error(std::string("the JPEG does not decode: ") + tjGetErrorStr2(tj.get()),
                kMXPInvalidArgument);
  return image;
}

// A color PNG read as gray, as OpenCV's PNG reader reads it: libpng's own conversion
// (png_set_rgb_to_gray with weights 0.299 and 0.587, through the file's gamma), which the
// simplified API does not offer. libpng reports errors by longjmp to the setjmp below; nothing
// between holds a C++ object.
Image DecodePngAsGray(const unsigned char* data, size_t size) {
  struct Source {
    const unsigned char* at;
    size_t left;
  } source{data, size};
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!info) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    throw Error("cannot start a PNG decoder", kMXPInternal);
  }
  Image image;
  std::vector<png_bytep> rows;
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    throw Error("the PNG does not decode", kMXPInvalidArgument);
  }
  png_set_read_fn(png, &source, [](png_structp p, png_bytep out, size_t n) {
    auto* from = static_cast<Source*>(png_get_io_ptr(p));
    if (n > from->left) png_error(p, "truncated");
    std::memcpy(out, from->at, n);
    from->at += n;
    from->left -= n;
  });
  png_read_info(png, info);
  png_set_strip_16(png);
  png_set_strip_alpha(png);
  if (png_get_color_type(png, info) == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  png_set_rgb_to_gray(png, 1, 0.299, 0.587);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  image.height = static_cast<int>(png_get_image_height(png, info));
  image.width = static_cast<int>(png_get_image_width(png, info));
  image.channels = 1;
  image.pixels.resize(static_cast<size_t>(image.height) * image.width);
  rows.resize(static_cast<size_t>(image.height));
  for (int y = 0; y < image.height; ++y)
    rows[static_cast<size_t>(y)] = image.pixels.data() + static_cast<size_t>(y) * image.width;
  png_read_image(png, rows.data());
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  return image;
}

Image DecodePng(const unsigned char* data, size_t size, int channels, ChannelOrder order) {
  png_image png;
  std::memset(&png, 0, sizeof(png));
  png.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&png, data, size))
    throw Error(std::string("the PNG does not decode: ") + png.message, kMXPInvalidArgument);
  const bool color = png.format & PNG_FORMAT_FLAG_COLOR, alpha = png.format & PNG_FORMAT_FLAG_ALPHA;
  Image image;
  image.height = static_cast<int>(png.height);
  image.width = static_cast<int>(png.width);
  image.channels = channels != 0 ? channels : (!color ? 1 : alpha ? 4 : 3);
  if (color && image.channels == 1) {
    png_image_free(&png);
    return DecodePngAsGray(data, size);
  }
  png.format = PngFormat(image.channels, order);
  image.pixels.resize(PNG_IMAGE_SIZE(png));
  if (!png_image_finish_read(&png, nullptr, image.pixels.data(), 0, nullptr)) {
    const std::string why = png.message;
    png_image_free(&png);
    throw Error("the PNG does not decode: " + why, kMXPInvalidArgument);
  }
  return image;
}

std::string EncodeJpeg(const Image& image, int quality, ChannelOrder order) {
  if (quality < 1 || quality > 100)
    throw Error("JPEG quality " + std::to_string(quality) + " is not in 1..100",
                kMXPInvalidArgument);
  if (image.channels != 1 && image.channels != 3)
    throw Error("a JPEG holds 1 or 3 channels, the image has " + std::to_string(image.channels),
                kMXPInvalidArgument);
  TjHandle tj(tjInitCompress(), tjDestroy);
  if (!tj)
    throw Error(std::string("cannot start a JPEG encoder: ") + tjGetErrorStr2(nullptr),
                kMXPInternal);
  unsigned char* out = nullptr;
  unsigned long size = 0;
  const int subsampling = image.channels == 1 ? TJSAMP_GRAY : TJSAMP_420;
  if (tjCompress2(tj.get(), image.pixels.data(), image.width, 0, image.height,
                  TjFormat(image.channels, order), &out, &size, subsampling, quality, 0) != 0) {
    tjFree(out);
    throw Error(std::string("cannot encode the JPEG: ") + tjGetErrorStr2(tj.get()), kMXPInternal);
  }
  std::string bytes(reinterpret_cast<const char*>(out), size);
  tjFree(out);
  return bytes;
}

std::string EncodePng(const Image& image, int level, ChannelOrder order) {
  if (level < 0 || level > 9)
    throw Error("PNG compression " + std::to_string(level) + " is not in 0..9",
                kMXPInvalidArgument);
  if (image.channels == 2)
    throw Error("a PNG is written from 1, 3 or 4 channels, the image has 2", kMXPInvalidArgument);
  png_image png;
  std::memset(&png, 0, sizeof(png));
  png.version = PNG_IMAGE_VERSION;
  png.width = static_cast<png_uint_32>(image.width);
  png.height = static_cast<png_uint_32>(image.height);
  png.format = PngFormat(image.channels, order);
  if (level <= 3) png.flags |= PNG_IMAGE_FLAG_FAST;
  png_alloc_size_t size = 0;
  if (!png_image_write_to_memory(&png, nullptr, &size, 0, image.pixels.data(), 0, nullptr))
    throw Error(std::string("cannot encode the PNG: ") + png.message, kMXPInternal);
  std::string bytes(size, '\0');
  if (!png_image_write_to_memory(&png, bytes.data(), &size, 0, image.pixels.data(), 0, nullptr))
    throw Error(std::string("cannot encode the PNG: ") + png.message, kMXPInternal);
  bytes.resize(size);
  return bytes;
}

// Where destination pixel i samples along one axis: the lower source pixel and its weight.
struct Tap {
  int lower;
  float upper_weight;
};

std::vector<Tap> Taps(int source, int target) {
  std::vector<Tap> taps(static_cast<size_t>(target));
  const double scale = static_cast<double>(source) / target;
  for (int i = 0; i < target; ++i) {
    const double at = (i + 0.5) * scale - 0.5;
    int lower = static_cast<int>(std::floor(at));
    float weight = static_cast<float>(at - lower);
    if (lower < 0) lower = 0, weight = 0.f;
    if (lower >= source - 1) lower = source - 1, weight = 0.f;
    taps[static_cast<size_t>(i)] = {lower, weight};
  }
  return taps;
}

// Where an output pixel samples one axis: source pixels first, first + 1, ... (clamped to the
// image at use) with these weights.
struct Footprint {
  int first = 0;
  std::vector<float> weights;
};

// OpenCV's bicubic weights (a = -0.75) for a fraction f of the way from pixel 1 to pixel 2 of 4.
std::vector<float> CubicWeights(float f) {
  const float a = -0.75f;
  const float w0 = ((a * (f + 1) - 5 * a) * (f + 1) + 8 * a) * (f + 1) - 4 * a;
  const float w1 = ((a + 2) * f - (a + 3)) * f * f + 1;
  const float w2 = ((a + 2) * (1 - f) - (a + 3)) * (1 - f) * (1 - f) + 1;
  return {w0, w1, w2, 1.f - w0 - w1 - w2};
}

// Lanczos weights (a = 4) for a fraction f of the way from pixel 3 to pixel 4 of 8, normalized
// to sum to 1, as OpenCV's.
std::vector<float> LanczosWeights(float f) {
  std::vector<float> w(8, 0.f);
  if (f < 1e-7f) {
    w[3] = 1.f;
    return w;
  }
  const double pi = 3.14159265358979323846;
  double sum = 0;
  for (int i = 0; i < 8; ++i) {
    const double t = f + 3 - i;  // the distance from source pixel i
    sum += w[static_cast<size_t>(i)] =
        static_cast<float>(std::sin(pi * t) * std::sin(pi * t / 4) / (pi * pi * t * t / 4));
  }
  for (float& v : w) v = static_cast<float>(v / sum);
  return w;
}

// Area shrinks by averaging only when neither axis grows (`averaging`); otherwise both axes take
// OpenCV's bilinear variant.
std::vector<Footprint> Footprints(int source, int target, Interpolation interp, bool averaging) {
  std::vector<Footprint> out(static_cast<size_t>(target));
  const double scale = static_cast<double>(source) / target;
  for (int i = 0; i < target; ++i) {
    Footprint& fp = out[static_cast<size_t>(i)];
    const double centre = (i + 0.5) * scale - 0.5;
    const int lower = static_cast<int>(std::floor(centre));
    const auto frac = static_cast<float>(centre - lower);
    switch (interp) {
      case Interpolation::kNearest:
        fp.first = std::min(static_cast<int>(std::floor(i * scale)), source - 1);
        fp.weights = {1.f};
        break;
      case Interpolation::kCubic:
        fp.first = lower - 1;
        fp.weights = CubicWeights(frac);
        break;
      case Interpolation::kLanczos4:
        fp.first = lower - 3;
        fp.weights = LanczosWeights(frac);
        break;
      case Interpolation::kArea:
        if (averaging) {  // each source pixel weighs by how much of it the output pixel covers
          const double begin = i * scale, end = (i + 1) * scale;
          fp.first = static_cast<int>(std::floor(begin));
          for (int s = fp.first; s < end && s < source; ++s)
            fp.weights.push_back(static_cast<float>(
                (std::min<double>(s + 1, end) - std::max<double>(s, begin)) / scale));
        } else {  // OpenCV's: bilinear with the fraction measured from the next output pixel
          int sx = static_cast<int>(std::floor(i * scale));
          float f = static_cast<float>((i + 1) - (sx + 1) / scale);
          f = f <= 0 ? 0.f : f - std::floor(f);
          if (sx >= source - 1) sx = source - 1, f = 0.f;
          fp.first = sx;
          fp.weights = {1.f - f, f};
        }
        break;
      case Interpolation::kLinear:
        fp.first = lower;
        fp.weights = {1.f - frac, frac};
        break;
    }
  }
  return out;
}

void CheckInterpolation(Interpolation interp) {
  if (static_cast<int>(interp) < 0 || static_cast<int>(interp) > 4)
    throw Error("unknown interpolation " + std::to_string(static_cast<int>(interp)) +
                    ": 0 (nearest), 1 (bilinear), 2 (bicubic), 3 (area) or 4 (Lanczos)",
                kMXPInvalidArgument);
}

// Resizes by footprints: rows first into floats, then columns, rounded once.
Image ResampleImage(const Image& image, int height, int width, Interpolation interp) {
  const bool averaging = image.height >= height && image.width >= width;
  const std::vector<Footprint> rows = Footprints(image.height, height, interp, averaging),
                               cols = Footprints(image.width, width, interp, averaging);
  const int c = image.channels;
  auto at = [](int i, int n) { return std::clamp(i, 0, n - 1); };
  // Each output column of every source row.
  std::vector<float> across(static_cast<size_t>(image.height) * width * c);
  for (int y = 0; y < image.height; ++y) {
    const uint8_t* src = image.pixels.data() + static_cast<size_t>(y) * image.width * c;
    float* dst = across.data() + static_cast<size_t>(y) * width * c;
    for (int x = 0; x < width; ++x) {
      const Footprint& fp = cols[static_cast<size_t>(x)];
      for (int k = 0; k < c; ++k) {
        float sum = 0;
        for (size_t t = 0; t < fp.weights.size(); ++t)
          sum += fp.weights[t] *
                 src[static_cast<size_t>(at(fp.first + static_cast<int>(t), image.width)) * c + k];
        dst[static_cast<size_t>(x) * c + k] = sum;
      }
    }
  }
  Image out;
  out.height = height;
  out.width = width;
  out.channels = c;
  out.pixels.resize(static_cast<size_t>(height) * width * c);
  const size_t row = static_cast<size_t>(width) * c;
  for (int y = 0; y < height; ++y) {
    const Footprint& fp = rows[static_cast<size_t>(y)];
    uint8_t* dst = out.pixels.data() + static_cast<size_t>(y) * row;
    for (size_t i = 0; i < row; ++i) {
      float sum = 0;
      for (size_t t = 0; t < fp.weights.size(); ++t)
        sum +=
            fp.weights[t] *
            across[static_cast<size_t>(at(fp.first + static_cast<int>(t), image.height)) * row + i];
      dst[i] = static_cast<uint8_t>(std::clamp(std::lround(sum), 0L, 255L));
    }
  }
  return out;
}

}  // namespace

std::vector<float> ResizeWeights(int source, int target, Interpolation interp, bool averaging) {
  CheckInterpolation(interp);
  if (source < 1 || target < 1)
    throw Error("cannot resize " + std::to_string(source) + " pixels to " + std::to_string(target),
                kMXPInvalidArgument);
  std::vector<float> matrix(static_cast<size_t>(target) * source, 0.f);
  const std::vector<Footprint> fps = Footprints(source, target, interp, averaging);
  for (int i = 0; i < target; ++i) {
    const Footprint& fp = fps[static_cast<size_t>(i)];
    for (size_t t = 0; t < fp.weights.size(); ++t) {
      const int s = std::clamp(fp.first + static_cast<int>(t), 0, source - 1);
      matrix[static_cast<size_t>(i) * source + s] += fp.weights[t];
    }
  }
  return matrix;
}

Image DecodeImage(const void* data, size_t size, int channels, ChannelOrder order) {
  if (channels != 0 && channels != 1 && channels != 3)
    throw Error("cannot decode an image to " + std::to_string(channels) +
                    " channels: 0 (as stored), 1 or 3",
                kMXPInvalidArgument);
  const auto* bytes = static_cast<const unsigned char*>(data);
  if (IsJpeg(bytes, size)) return DecodeJpeg(bytes, size, channels, order);
  if (IsPng(bytes, size)) return DecodePng(bytes, size, channels, order);
  throw Error("the " + std::to_string(size) +
                  " bytes are not an image: neither a JPEG nor a PNG by their first bytes",
              kMXPInvalidArgument);
}

std::string EncodeImage(const Image& image, const std::string& format, int quality,
                        ChannelOrder order) {
  if (image.height < 1 || image.width < 1 || image.channels < 1 || image.channels > 4 ||
      image.pixels.size() != static_cast<size_t>(image.height) * image.width * image.channels)
    throw Error("cannot encode an image of " + std::to_string(image.height) + "x" +
                    std::to_string(image.width) + "x" + std::to_string(image.channels) + " with " +
                    std::to_string(image.pixels.size()) + " pixel bytes",
                kMXPInvalidArgument);
  std::string lower = format;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (lower == ".jpg" || lower == ".jpeg") return EncodeJpeg(image, quality, order);
  if (lower == ".png") return EncodePng(image, quality, order);
  throw Error("cannot encode an image as '" + format + "': the formats are '.jpg' and '.png'",
              kMXPInvalidArgument);
}

Image ResizeImage(const Image& image, int height, int width, Interpolation interp) {
  if (height < 1 || width < 1)
    throw Error("cannot resize an image to " + std::to_string(height) + "x" + std::to_string(width),
                kMXPInvalidArgument);
  if (image.height < 1 || image.width < 1)
    throw Error("cannot resize an image of " + std::to_string(image.height) + "x" +
                    std::to_string(image.width) + " pixels",
                kMXPInvalidArgument);
  CheckInterpolation(interp);
  if (interp != Interpolation::kLinear) return ResampleImage(image, height, width, interp);
  Image out;
  out.height = height;
  out.width = width;
  out.channels = image.channels;
  out.pixels.resize(static_cast<size_t>(height) * width * image.channels);
  const std::vector<Tap> rows = Taps(image.height, height), cols = Taps(image.width, width);
  const size_t c = static_cast<size_t>(image.channels),
               in_row = static_cast<size_t>(image.width) * c;
  for (int y = 0; y < height; ++y) {
    const Tap ty = rows[static_cast<size_t>(y)];
    const uint8_t* top = image.pixels.data() + static_cast<size_t>(ty.lower) * in_row;
    const uint8_t* bottom = ty.upper_weight > 0.f ? top + in_row : top;
    uint8_t* dst = out.pixels.data() + static_cast<size_t>(y) * width * c;
    for (int x = 0; x < width; ++x) {
      const Tap tx = cols[static_cast<size_t>(x)];
      const size_t left = static_cast<size_t>(tx.lower) * c,
                   right = tx.upper_weight > 0.f ? left + c : left;
      for (size_t k = 0; k < c; ++k) {
        const float upper = top[left + k] + tx.upper_weight * (top[right + k] - top[left + k]);
        const float lower =
            bottom[left + k] + tx.upper_weight * (bottom[right + k] - bottom[left + k]);
        const float value = upper + ty.upper_weight * (lower - upper);
        dst[static_cast<size_t>(x) * c + k] =
            static_cast<uint8_t>(std::clamp(std::lround(value), 0L, 255L));
      }
    }
  }
  return out;
}

}  // namespace mxplug
