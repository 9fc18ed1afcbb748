// What ImageRecordIter does to a decoded image before it is a row of the batch, with MXNet
// 1.9.1's arguments, defaults and order (its default augmenter, "aug_default", then its
// normalization): resize; a random resized crop, or an affine warp (rotate, shear, scale, aspect
// ratio, image size bounds); pad; crop (centred or random, of a fixed or random size); HLS, colour
// jitter and PCA lighting noise; then mirror, the mean (an image or per channel), random contrast
// and illumination, scale and standard deviation. Note [MXNet's augmenter, observed] says which
// of MXNet's quirks this keeps.
#ifndef MXPLUG_IO_IMAGE_AUGMENT_H_
#define MXPLUG_IO_IMAGE_AUGMENT_H_

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "io/iter_args.h"
#include "mxplug/image.h"
#include "mxplug/sdk/tshape.hpp"

namespace mxplug::io {

// Pixel operations both image iterators use (OpenCV's semantics).
/*! \brief The height x width window at row y, column x (inside the image). */
Image CropImage(const Image& src, int y, int x, int height, int width);
/*! \brief The image with a border of `fill` of the given widths (copyMakeBorder, constant). */
Image PadImage(const Image& src, int top, int bottom, int left, int right, uint8_t fill);
/*! \brief Shifts each pixel's OpenCV 8-bit HLS values (hue in [0, 180]) by dh, dl, ds, clamped;
 * an RGB image of 3 or more channels (a grey one is left as it is). */
void ShiftHls(Image* image, int dh, int dl, int ds);
/*! \brief The image mirrored left to right. */
Image MirrorImage(const Image& src);

class ImageAugmenter {
 public:
  /*! \brief Takes the augmenter's and normalization's arguments from `args` (MXNet's names and
   * defaults) for images of `data_shape` (channels, height, width). \throws Error naming the
   * argument for a value MXNet refuses. */
  ImageAugmenter(IterArgs* args, const TShape& data_shape);

  /*! \brief Resizes, warps, pads, crops and recolours a decoded image (RGB order) to the data
   * shape's height and width. `where` names the record in errors. */
  Image Augment(Image image, std::mt19937& rng, const std::string& where) const;

  /*! \brief Writes an augmented image as (channel, height, width) floats: mirrored when asked,
   * less the mean (`mean_image`, data_shape floats, or the per-channel means), times a random
   * contrast, plus a random illumination, times scale / std. */
  void Normalize(const Image& image, std::mt19937& rng, const float* mean_image, float* out) const;

  /*! \brief Writes an augmented image as (channel, height, width) pixels of `dtype` (uint8, or
   * int8 saturated at 127), mirrored when asked and not normalized, as MXNet's uint8 and int8
   * iterators do; it draws what Normalize draws, so the two see the same random mirroring. */
  void Pixels(const Image& image, std::mt19937& rng, int dtype, void* out) const;

  /*! \brief The mean image file (mean_img), or "" when the per-channel means are used. */
  const std::string& mean_image_path() const { return mean_img_; }
  /*! \brief The augmentations' seed (seed_aug), or MXNet's fixed one. */
  unsigned seed() const { return seed_; }

 private:
  bool Warps() const;
  Image Warp(const Image& image, std::mt19937& rng) const;
  Image RandomResizedCrop(const Image& image, std::mt19937& rng) const;
  Image Crop(const Image& image, std::mt19937& rng, const std::string& where) const;
  void Recolour(Image* image, std::mt19937& rng) const;

  int height_, width_;
  std::string data_shape_;  // for errors
  // resize, warp and pad
  int resize_ = -1, pad_ = 0, fill_value_ = 255;
  int max_rotate_angle_ = 0, rotate_ = -1;
  float max_shear_ratio_ = 0, max_random_scale_ = 1, min_random_scale_ = 1;
  float max_aspect_ratio_ = 0;
  std::optional<float> min_aspect_ratio_;
  float max_img_size_ = 1e10f, min_img_size_ = 0;
  bool random_resized_crop_ = false;
  float max_random_area_ = 1, min_random_area_ = 1;
  // crop
  bool rand_crop_ = false;
  int max_crop_size_ = -1, min_crop_size_ = -1;
  // colour
  int random_h_ = 0, random_s_ = 0, random_l_ = 0;
  float brightness_ = 0, contrast_ = 0, saturation_ = 0, pca_noise_ = 0;
  // normalization
  bool mirror_ = false, rand_mirror_ = false;
  std::string mean_img_;
  float mean_[4] = {0, 0, 0, 0}, std_[4] = {1, 1, 1, 1};
  float scale_ = 1, max_random_contrast_ = 0, max_random_illumination_ = 0;
  unsigned seed_ = 0;
};

}  // namespace mxplug::io

#endif  // MXPLUG_IO_IMAGE_AUGMENT_H_
