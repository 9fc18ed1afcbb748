/*!
 * \file mxplug/image.h
 * \brief Encoded images (JPEG through libjpeg-turbo, PNG through libpng) to pixels and back, and
 * the resize that ImageRecordIter and mx.image need. Pixels are 8-bit, rows of interleaved
 * channels (height x width x channels), as OpenCV and MXNet's image records hold them.
 */
#ifndef MXPLUG_IMAGE_H_
#define MXPLUG_IMAGE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "mxplug/sdk/resample.hpp"  // Interpolation, and how each samples

namespace mxplug {

struct Image {
  int height = 0, width = 0, channels = 0;  // channels: 1 (gray), 3 (color) or 4 (with alpha)
  std::vector<uint8_t> pixels;              // height * width * channels
};

/*! \brief The order of a color image's channels: MXNet's iterators give RGB; OpenCV (and so
 * mx.recordio.pack_img/unpack_img) BGR. */
enum class ChannelOrder { kRGB, kBGR };

/*!
 * \brief Decodes a JPEG or PNG (told apart by their first bytes). `channels` 0 keeps the file's
 * (1 for gray, 3 for color, 4 for PNG with alpha: OpenCV's IMREAD_UNCHANGED); 1 or 3 converts.
 * \throws Error saying why for bytes that are neither or do not decode; the caller adds where
 * they came from.
 */
Image DecodeImage(const void* data, size_t size, int channels, ChannelOrder order);

/*!
 * \brief Encodes `image` as ".jpg"/".jpeg" (quality 1-100, 4:2:0 chroma as OpenCV) or ".png"
 * (`quality` is the zlib level 0-9; 0-3 ask libpng for its fast setting). \throws Error for another
 * format, a quality out of range, or an image with no pixels or 2 channels.
 */
std::string EncodeImage(const Image& image, const std::string& format, int quality,
                        ChannelOrder order);

/*! \brief Resizes with OpenCV's sampling of each interpolation: bilinear, bicubic (a = -0.75) and
 * Lanczos (8 taps) at pixel centres (x_src = (x + 0.5) * w_src / w - 0.5, the borders
 * replicated), nearest at floor(x * w_src / w), area as the average over each output pixel's
 * footprint when shrinking (OpenCV's bilinear variant when enlarging); computed in float and
 * rounded to the nearest 8-bit value (OpenCV's fixed point may differ by 1). */
Image ResizeImage(const Image& image, int height, int width,
                  Interpolation interp = Interpolation::kLinear);

}  // namespace mxplug

#endif  // MXPLUG_IMAGE_H_
