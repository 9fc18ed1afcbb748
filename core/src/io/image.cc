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

void CheckInterpolation(Interpolation interp) {
  if (static_cast<int>(interp) < 0 || static_cast<int>(interp) > 4)
    throw Error("unknown interpolation " + std::to_string(static_cast<int>(interp)) +
                    ": 0 (nearest), 1 (bilinear), 2 (bicubic), 3 (area) or 4 (Lanczos)",
                kMXPInvalidArgument);
}

// Resizes by the axes' taps: each source row's output columns into floats, then the rows,
// rounded once.
Image ResampleImage(const Image& image, int height, int width, Interpolation interp) {
  const bool averaging = image.height >= height && image.width >= width;
  const ResampleAxis rows{image.height, height, interp, averaging},
      cols{image.width, width, interp, averaging};
  const int c = image.channels;
  std::vector<float> across(static_cast<size_t>(image.height) * width * c);
  for (int y = 0; y < image.height; ++y) {
    const uint8_t* src = image.pixels.data() + static_cast<size_t>(y) * image.width * c;
    float* dst = across.data() + static_cast<size_t>(y) * width * c;
    for (int x = 0; x < width; ++x)
      for (int k = 0; k < c; ++k) {
        float sum = 0;
        cols.ForEachTap(x, [&](int s, float w) { sum += w * src[static_cast<size_t>(s) * c + k]; });
        dst[static_cast<size_t>(x) * c + k] = sum;
      }
  }
  Image out;
  out.height = height;
  out.width = width;
  out.channels = c;
  out.pixels.resize(static_cast<size_t>(height) * width * c);
  const size_t row = static_cast<size_t>(width) * c;
  for (int y = 0; y < height; ++y) {
    uint8_t* dst = out.pixels.data() + static_cast<size_t>(y) * row;
    for (size_t i = 0; i < row; ++i) {
      float sum = 0;
      rows.ForEachTap(y,
                      [&](int s, float w) { sum += w * across[static_cast<size_t>(s) * row + i]; });
      dst[i] = static_cast<uint8_t>(std::clamp(std::lround(sum), 0L, 255L));
    }
  }
  return out;
}

}  // namespace

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
