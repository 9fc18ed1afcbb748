// ImageDetRecordIter: object detection's images and boxes from a RecordIO file of image records,
// as MXNet 1.9.1's. A record's labels (in its IRHeader, or from path_imglist by the record's id)
// are [header_width, object_width, extra header..., then per object id, xmin, ymin, xmax, ymax,
// extra...] with coordinates as fractions of the image. The default detection augmenter
// ("det_aug_default") resizes, recolours, mirrors, pads and crops the image, moving and dropping
// boxes to match, then fits it to data_shape; the rows are normalized ((pixel - mean) / std *
// scale, a std of 0 meaning 1) into float32 (channels, height, width) batches in RGB order. A label
// row is [channels, height, width, n, the n label values, then label_pad_value up to
// label_pad_width + 4], the image's size after augmentation first; label_pad_width defaults to the
// longest label in the file.
//
// Note [MXNet's detection augmenter, observed]: kept, because scripts' settings were tuned on it:
// a crop's overlap and coverage constraints are checked only when all six are set inside (0, 1),
// any crop box passing otherwise; the crop's largest aspect ratio is capped at 1 / scale * scale
// (that is, 1); the final resize of 'shrink' and 'fit' leaves the image at the top left of the
// row (here the rest is 0; MXNet leaves whatever the buffer held). The random choices are drawn
// from a generator seeded by the batch, as ImageRecordIter's, not MXNet's per-thread one, so a
// seeded run repeats but does not draw MXNet's crops.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "io/batched_iter.h"
#include "io/bytes.h"
#include "io/image_augment.h"
#include "io/iterators.h"
#include "mxplug/error.h"
#include "mxplug/image.h"
#include "mxplug/recordio.h"

namespace mxplug::io {
namespace {

constexpr size_t kHeaderBytes = 24;  // MXNet's IRHeader: flag, label, id, id2
constexpr const char* kName = "ImageDetRecordIter";

float Uniform(std::mt19937& rng, float lo, float hi) {
  return lo + (hi - lo) * std::uniform_real_distribution<float>(0.f, 1.f)(rng);
}

/*! \brief A box in fractions of the image: left x, top y, width w, height h. */
struct Box {
  float x = 0, y = 0, w = 0, h = 0;
  float Area() const { return w * h; }
  Box Intersect(const Box& o) const {
    const float left = std::max(x, o.x), top = std::max(y, o.y);
    const float right = std::min(x + w, o.x + o.w), bottom = std::min(y + h, o.y + o.h);
    return right > left && bottom > top ? Box{left, top, right - left, bottom - top} : Box{};
  }
  bool Contains(float px, float py) const { return x <= px && px < x + w && y <= py && py < y + h; }
};

struct DetObject {
  float id, left, top, right, bottom;
  std::vector<float> extra;
  Box AsBox() const { return {left, top, right - left, bottom - top}; }
  /*! \brief The object's coordinates in `box` (clipped to it). */
  DetObject In(const Box& box) const {
    DetObject o = *this;
    o.left = std::max(0.f, (left - box.x) / box.w);
    o.top = std::max(0.f, (top - box.y) / box.h);
    o.right = std::min(1.f, (right - box.x) / box.w);
    o.bottom = std::min(1.f, (bottom - box.y) / box.h);
    return o;
  }
};

/*! \brief A record's label as header and objects; objects of no area are dropped on reading. */
class DetLabel {
 public:
  DetLabel(const std::vector<float>& raw, const std::string& where) {
    auto bad = [&](const std::string& why) {
      return Error(where + ": the detection label " + why +
                       "; expected [header_width >= 2, object_width >= 5, extra header..., "
                       "objects of object_width values (id, xmin, ymin, xmax, ymax, ...)]",
                   kMXPInvalidArgument);
    };
    if (raw.size() < 7) throw bad("has " + std::to_string(raw.size()) + " values, fewer than 7");
    const int header = static_cast<int>(raw[0]);
    width_ = static_cast<int>(raw[1]);
    if (header < 2 || width_ < 5 || static_cast<size_t>(header) > raw.size() ||
        (raw.size() - header) % width_ != 0)
      throw bad("has header_width " + std::to_string(header) + " and object_width " +
                std::to_string(width_) + " for " + std::to_string(raw.size()) + " values");
    header_.assign(raw.begin(), raw.begin() + header);
    for (size_t i = header; i < raw.size(); i += width_) {
      DetObject o{raw[i], raw[i + 1], raw[i + 2], raw[i + 3], raw[i + 4], {}};
      o.extra.assign(raw.begin() + i + 5, raw.begin() + i + width_);
      if (o.right > o.left && o.bottom > o.top) objects_.push_back(std::move(o));
    }
  }

  std::vector<float> ToArray() const {
    std::vector<float> out(header_);
    for (const DetObject& o : objects_) {
      out.insert(out.end(), {o.id, o.left, o.top, o.right, o.bottom});
      out.insert(out.end(), o.extra.begin(), o.extra.end());
    }
    return out;
  }
  void Mirror() {
    for (DetObject& o : objects_) {
      const float left = o.left;
      o.left = 1.f - o.right, o.right = 1.f - left;
    }
  }
  /*! \brief Every object in the coordinates of `box` (a pad: the box holds the whole image). */
  void MoveInto(const Box& box) {
    for (DetObject& o : objects_) o = o.In(box);
  }

  struct CropRule {
    float min_overlap, max_overlap, min_sample_coverage, max_sample_coverage, min_object_coverage,
        max_object_coverage;
    bool emit_by_center;
    float emit_overlap_thresh;
  };
  /*! \brief Crops to `box` when some object meets the rule (Note [MXNet's detection augmenter,
   * observed]) and some object stays: those kept move into the box. */
  bool TryCrop(const Box& box, const CropRule& r) {
    if (objects_.empty()) return true;
    const bool checked = r.min_overlap > 0 && r.max_overlap < 1 && r.min_sample_coverage > 0 &&
                         r.max_sample_coverage < 1 && r.min_object_coverage > 0 &&
                         r.max_object_coverage < 1;
    const bool valid = !checked || std::any_of(objects_.begin(), objects_.end(), [&](auto& o) {
      const Box gt = o.AsBox();
      const float common = box.Intersect(gt).Area();
      const float iou = common > 0 ? common / (box.Area() + gt.Area() - common) : 0.f;
      const float sample = common / box.Area(), object = common / gt.Area();
      return iou >= r.min_overlap && iou <= r.max_overlap && sample >= r.min_sample_coverage &&
             sample <= r.max_sample_coverage && object >= r.min_object_coverage &&
             object <= r.max_object_coverage;
    });
    if (!valid) return false;
    std::vector<DetObject> kept;
    for (const DetObject& o : objects_) {
      const bool keep =
          r.emit_by_center
              ? box.Contains((o.left + o.right) * 0.5f, (o.top + o.bottom) * 0.5f)
              : box.Intersect(o.AsBox()).Area() / o.AsBox().Area() > r.emit_overlap_thresh;
      if (keep) kept.push_back(o.In(box));
    }
    if (kept.empty()) return false;
    objects_ = std::move(kept);
    return true;
  }

 private:
  int width_ = 5;
  std::vector<float> header_;
  std::vector<DetObject> objects_;
};

/*! \brief MXNet's DefaultImageDetAugmenter ("det_aug_default"), with its arguments. */
class DetAugmenter {
 public:
  DetAugmenter(IterArgs* args, const TShape& shape)
      : height_(static_cast<int>(shape[1])), width_(static_cast<int>(shape[2])) {
    resize_ = args->TakeInt("resize", -1, -1);
    inter_method_ = args->TakeInt("inter_method", 1, 0);
    if (inter_method_ > 4 && inter_method_ != 9 && inter_method_ != 10)
      throw Error(std::string(kName) + ": argument 'inter_method' is " +
                      std::to_string(inter_method_) +
                      ", expected 0 (nearest), 1 (bilinear), 2 (bicubic), 3 (area), 4 (Lanczos), "
                      "9 (auto) or 10 (random)",
                  kMXPInvalidArgument);
    const std::string mode = args->TakeString("resize_mode", "force");
    if (mode != "force" && mode != "shrink" && mode != "fit")
      throw Error(std::string(kName) + ": argument 'resize_mode' is '" + mode +
                      "', expected 'force', 'shrink' or 'fit'",
                  kMXPInvalidArgument);
    resize_mode_ = mode;
    rand_crop_prob_ = args->TakeFloat("rand_crop_prob", 0.f);
    samplers_ = args->TakeInt("num_crop_sampler", 1, 0);
    const std::string emit = args->TakeString("crop_emit_mode", "center");
    if (emit != "center" && emit != "overlap")
      throw Error(std::string(kName) + ": argument 'crop_emit_mode' is '" + emit +
                      "', expected 'center' or 'overlap'",
                  kMXPInvalidArgument);
    emit_by_center_ = emit == "center";
    emit_overlap_thresh_ = args->TakeFloat("emit_overlap_thresh", 0.3f);
    // One value per sampler; a single value serves them all.
    auto per_sampler = [&](const char* name, float fallback) {
      std::vector<float> v = args->TakeFloats(name, {fallback});
      if (v.size() == 1 && samplers_ > 1) v.assign(static_cast<size_t>(samplers_), v[0]);
      if (samplers_ > 0 && v.size() != static_cast<size_t>(samplers_))
        throw Error(std::string(kName) + ": argument '" + name + "' has " +
                        std::to_string(v.size()) + " values for num_crop_sampler " +
                        std::to_string(samplers_),
                    kMXPInvalidArgument);
      return v;
    };
    min_scale_ = per_sampler("min_crop_scales", 0.f);
    max_scale_ = per_sampler("max_crop_scales", 1.f);
    min_aspect_ = per_sampler("min_crop_aspect_ratios", 1.f);
    max_aspect_ = per_sampler("max_crop_aspect_ratios", 1.f);
    min_overlap_ = per_sampler("min_crop_overlaps", 0.f);
    max_overlap_ = per_sampler("max_crop_overlaps", 1.f);
    min_sample_ = per_sampler("min_crop_sample_coverages", 0.f);
    max_sample_ = per_sampler("max_crop_sample_coverages", 1.f);
    min_object_ = per_sampler("min_crop_object_coverages", 0.f);
    max_object_ = per_sampler("max_crop_object_coverages", 1.f);
    max_trials_ = per_sampler("max_crop_trials", 25.f);
    for (int i = 0; i < samplers_; ++i)
      if (min_scale_[i] < 0 || max_scale_[i] > 1 || max_scale_[i] <= min_scale_[i] ||
          min_aspect_[i] < 0 || max_aspect_[i] < min_aspect_[i] ||
          max_overlap_[i] < min_overlap_[i] || max_sample_[i] < min_sample_[i] ||
          max_object_[i] < min_object_[i])
        throw Error(std::string(kName) + ": crop sampler " + std::to_string(i) +
                        " needs 0 <= min_crop_scales < max_crop_scales <= 1, 0 <= "
                        "min_crop_aspect_ratios <= max_crop_aspect_ratios, and each other "
                        "min_crop_* <= its max_crop_*",
                    kMXPInvalidArgument);
    rand_pad_prob_ = args->TakeFloat("rand_pad_prob", 0.f);
    max_pad_scale_ = args->TakeFloat("max_pad_scale", 1.f);
    max_hue_ = args->TakeInt("max_random_hue", 0, 0);
    hue_prob_ = args->TakeFloat("random_hue_prob", 0.f);
    max_saturation_ = args->TakeInt("max_random_saturation", 0, 0);
    saturation_prob_ = args->TakeFloat("random_saturation_prob", 0.f);
    max_illumination_ = args->TakeInt("max_random_illumination", 0, 0);
    illumination_prob_ = args->TakeFloat("random_illumination_prob", 0.f);
    max_contrast_ = args->TakeFloat("max_random_contrast", 0.f);
    contrast_prob_ = args->TakeFloat("random_contrast_prob", 0.f);
    rand_mirror_prob_ = args->TakeFloat("rand_mirror_prob", 0.f);
    fill_value_ = args->TakeInt("fill_value", 127, 0);
  }

  /*! \brief The augmented image; `label` becomes its label. */
  Image Augment(Image image, std::vector<float>* label, std::mt19937& rng,
                const std::string& where) const {
    if (resize_ > 0) {  // the shorter edge to `resize`
      const bool tall = image.height > image.width;
      const int h = tall ? resize_ * image.height / image.width : resize_;
      const int w = tall ? resize_ : resize_ * image.width / image.height;
      image = Resized(image, h, w, rng);
    }
    DetLabel det(*label, where);
    Recolour(&image, rng);
    if (rand_mirror_prob_ > 0 && Uniform(rng, 0, 1) < rand_mirror_prob_) {
      det.Mirror();
      image = MirrorImage(image);
    }
    if (rand_pad_prob_ > 0 && max_pad_scale_ > 1 && Uniform(rng, 0, 1) < rand_pad_prob_) {
      const float scale = Uniform(rng, 1.f, max_pad_scale_);
      if (scale >= 1.05f) {  // the image somewhere in a canvas `scale` times its size
        const float x0 = Uniform(rng, 0.f, scale - 1), y0 = Uniform(rng, 0.f, scale - 1);
        det.MoveInto(Box{-x0, -y0, scale, scale});
        image = PadImage(
            image, static_cast<int>(y0 * image.height),
            static_cast<int>((scale - y0 - 1) * image.height), static_cast<int>(x0 * image.width),
            static_cast<int>((scale - x0 - 1) * image.width), static_cast<uint8_t>(fill_value_));
      }
    }
    if (rand_crop_prob_ > 0 && samplers_ > 0 && Uniform(rng, 0, 1) < rand_crop_prob_)
      image = RandomCrop(image, &det, rng);
    image = FitToShape(image, rng);
    *label = det.ToArray();
    return image;
  }

 private:
  Image Resized(const Image& image, int h, int w, std::mt19937& rng) const {
    int interp = inter_method_;
    if (interp == 9)  // cubic to enlarge, area to shrink, else bilinear
      interp = w > image.width && h > image.height   ? 2
               : w < image.width && h < image.height ? 3
                                                     : 1;
    else if (interp == 10)
      interp = std::uniform_int_distribution<int>(0, 4)(rng);
    return ResizeImage(image, std::max(h, 1), std::max(w, 1), static_cast<Interpolation>(interp));
  }

  void Recolour(Image* image, std::mt19937& rng) const {
    if (hue_prob_ <= 0 && saturation_prob_ <= 0 && illumination_prob_ <= 0 && contrast_prob_ <= 0)
      return;
    int h = static_cast<int>(Uniform(rng, -1, 1) * max_hue_);
    int s = static_cast<int>(Uniform(rng, -1, 1) * max_saturation_);
    int l = static_cast<int>(Uniform(rng, -1, 1) * max_illumination_);
    float c = Uniform(rng, -1, 1) * max_contrast_;
    if (Uniform(rng, 0, 1) >= hue_prob_) h = 0;
    if (Uniform(rng, 0, 1) >= saturation_prob_) s = 0;
    if (Uniform(rng, 0, 1) >= illumination_prob_) l = 0;
    if (Uniform(rng, 0, 1) >= contrast_prob_) c = 0;
    if (h != 0 || s != 0 || l != 0) ShiftHls(image, h, l, s);
    if (std::fabs(c) > 1e-3f)
      for (uint8_t& p : image->pixels)
        p = static_cast<uint8_t>(std::clamp<double>(std::nearbyint(p * (c + 1.0f)), 0.0, 255.0));
  }

  Image RandomCrop(const Image& image, DetLabel* det, std::mt19937& rng) const {
    std::vector<int> order(static_cast<size_t>(samplers_));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    const float image_aspect = static_cast<float>(image.width) / image.height;
    for (int i : order) {
      const DetLabel::CropRule rule{min_overlap_[i], max_overlap_[i],     min_sample_[i],
                                    max_sample_[i],  min_object_[i],      max_object_[i],
                                    emit_by_center_, emit_overlap_thresh_};
      for (int t = 0; t < static_cast<int>(max_trials_[i]); ++t) {
        const float scale = Uniform(rng, min_scale_[i], max_scale_[i]) + 1e-12f;
        const float lo = std::max(min_aspect_[i] / image_aspect, scale * scale);
        const float hi = std::min<float>(max_aspect_[i] / image_aspect, 1. / scale * scale);
        const float ratio = std::sqrt(Uniform(rng, lo, hi));
        Box box;
        box.w = std::min(1.f, scale * ratio);
        box.h = std::min(1.f, scale / ratio);
        box.x = Uniform(rng, 0.f, 1 - box.w);
        box.y = Uniform(rng, 0.f, 1 - box.h);
        if (!det->TryCrop(box, rule)) continue;
        const int x = std::clamp(static_cast<int>(box.x * image.width), 0, image.width - 1);
        const int y = std::clamp(static_cast<int>(box.y * image.height), 0, image.height - 1);
        const int w = std::clamp(static_cast<int>(box.w * image.width), 1, image.width - x);
        const int h = std::clamp(static_cast<int>(box.h * image.height), 1, image.height - y);
        return CropImage(image, y, x, h, w);
      }
    }
    return image;  // every sampler failed: the image as it was
  }

  Image FitToShape(const Image& image, std::mt19937& rng) const {
    if (resize_mode_ == "force") return Resized(image, height_, width_, rng);
    const auto h = static_cast<float>(height_), w = static_cast<float>(width_);
    if (resize_mode_ == "shrink" && image.height <= h && image.width <= w) return image;
    const float ratio = std::min(h / image.height, w / image.width);
    return Resized(image, static_cast<int>(ratio * image.height),
                   static_cast<int>(ratio * image.width), rng);
  }

  int height_, width_;
  int resize_, inter_method_;
  std::string resize_mode_;
  float rand_crop_prob_;
  int samplers_;
  bool emit_by_center_;
  float emit_overlap_thresh_;
  std::vector<float> min_scale_, max_scale_, min_aspect_, max_aspect_, min_overlap_, max_overlap_,
      min_sample_, max_sample_, min_object_, max_object_, max_trials_;
  float rand_pad_prob_, max_pad_scale_;
  int max_hue_, max_saturation_, max_illumination_;
  float hue_prob_, saturation_prob_, illumination_prob_, max_contrast_, contrast_prob_;
  float rand_mirror_prob_;
  int fill_value_;
};

/*! \brief path_imglist's labels by image index: "index <TAB> labels... <TAB> path" lines. */
std::unordered_map<uint64_t, std::vector<float>> ReadImageList(const std::string& path,
                                                               int label_width) {
  std::ifstream in(path);
  if (!in)
    throw Error(
        std::string(kName) + ": cannot open the image list '" + path + "': " + std::strerror(errno),
        kMXPInvalidArgument);
  std::unordered_map<uint64_t, std::vector<float>> labels;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::istringstream fields(line);
    std::vector<std::string> tokens;
    for (std::string t; fields >> t;) tokens.push_back(t);
    if (tokens.empty()) continue;
    auto bad = [&](const std::string& expected) {
      return Error(std::string(kName) + ": line " + std::to_string(number) + " of '" + path +
                       "' is '" + line + "'; expected " + expected,
                   kMXPInvalidArgument);
    };
    if (tokens.size() < 3) throw bad("'index<TAB>labels...<TAB>path'");
    std::vector<float> values;
    for (size_t i = 1; i + 1 < tokens.size(); ++i) {
      char* end = nullptr;
      values.push_back(std::strtof(tokens[i].c_str(), &end));
      if (*end != '\0') throw bad("numbers between the index and the path");
    }
    if (label_width > 0 && values.size() != static_cast<size_t>(label_width))
      throw bad(std::to_string(label_width) + " labels (label_width)");
    char* end = nullptr;
    const unsigned long long index = std::strtoull(tokens[0].c_str(), &end, 10);
    if (*end != '\0' || tokens[0][0] == '-') throw bad("a whole-number index first");
    labels[index] = std::move(values);
  }
  return labels;
}

class DetRecordSource : public ExampleSource {
 public:
  struct Normalization {
    float mean[3], inv_std[3], scale;
  };
  DetRecordSource(std::unique_ptr<RecordReader> reader, std::vector<uint64_t> offsets, TShape shape,
                  int label_width, std::unordered_map<uint64_t, std::vector<float>> list,
                  DetAugmenter augmenter, Normalization norm)
      : reader_(std::move(reader)),
        offsets_(std::move(offsets)),
        shape_(std::move(shape)),
        label_width_(label_width),
        list_(std::move(list)),
        augmenter_(std::move(augmenter)),
        norm_(norm) {}

  /*! \brief The longest label of any record (the label padding's default). */
  int LongestLabel() const {
    size_t longest = 0;
    uint64_t id = 0;
    for (uint64_t offset : offsets_) {
      std::string bytes;
      reader_->ReadAt(offset, &bytes);
      longest = std::max(longest, Labels(bytes, offset, &id).size());
    }
    return static_cast<int>(longest);
  }
  void SetLabelRow(int pad_width, float pad_value) {
    row_ = pad_width + 4;
    pad_value_ = pad_value;
  }

  void Fill(const std::vector<uint64_t>& ids, uint64_t serial, DataBatch* batch) const override {
    std::seed_seq seeds{233u, static_cast<unsigned>(serial >> 32), static_cast<unsigned>(serial)};
    std::mt19937 rng(seeds);
    const int C = static_cast<int>(shape_[0]), H = static_cast<int>(shape_[1]),
              W = static_cast<int>(shape_[2]);
    auto* data = static_cast<float*>(batch->data[0].data());
    auto* label = static_cast<float*>(batch->label[0].data());
    for (size_t r = 0; r < ids.size(); ++r) {
      const uint64_t offset = offsets_[ids[r]];
      std::string bytes;
      reader_->ReadAt(offset, &bytes);
      std::vector<float> labels = Labels(bytes, offset, &batch->index[r]);
      const size_t image_begin =
          kHeaderBytes +
          4 * size_t{LittleEndian32(reinterpret_cast<const unsigned char*>(bytes.data()))};
      Image image;
      try {
        image = DecodeImage(bytes.data() + image_begin, bytes.size() - image_begin, C,
                            ChannelOrder::kRGB);
      } catch (const Error& e) {
        throw Error(Where(offset) + ": " + e.what(), kMXPInvalidArgument);
      }
      image = augmenter_.Augment(std::move(image), &labels, rng, Where(offset));
      float* out = data + r * static_cast<size_t>(C) * H * W;
      std::fill(out, out + static_cast<size_t>(C) * H * W, 0.f);
      for (int k = 0; k < C; ++k)
        for (int y = 0; y < std::min(H, image.height); ++y)
          for (int x = 0; x < std::min(W, image.width); ++x)
            out[(static_cast<size_t>(k) * H + y) * W + x] =
                (image.pixels[(static_cast<size_t>(y) * image.width + x) * C + k] - norm_.mean[k]) *
                norm_.inv_std[k] * norm_.scale;
      float* row = label + r * row_;
      std::fill(row, row + row_, pad_value_);
      row[0] = static_cast<float>(image.channels);
      row[1] = static_cast<float>(image.height);
      row[2] = static_cast<float>(image.width);
      row[3] = static_cast<float>(labels.size());
      std::copy(labels.begin(), labels.end(), row + 4);
    }
  }

 private:
  std::string Where(uint64_t offset) const {
    return std::string(kName) + ": the record at offset " + std::to_string(offset) + " of '" +
           reader_->path() + "'";
  }
  // The record's id and its labels: from the image list by id, else its header's.
  std::vector<float> Labels(const std::string& bytes, uint64_t offset, uint64_t* id) const {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    const uint32_t flag = bytes.size() >= kHeaderBytes ? LittleEndian32(p) : 0;
    if (bytes.size() < kHeaderBytes + 4 * size_t{flag})
      throw Error(Where(offset) + " has " + std::to_string(bytes.size()) +
                      " bytes, fewer than its header and labels need",
                  kMXPInvalidArgument);
    *id = LittleEndian64(p + 8);
    std::vector<float> labels;
    if (!list_.empty()) {
      const auto it = list_.find(*id);
      if (it == list_.end())
        throw Error(Where(offset) + " has id " + std::to_string(*id) +
                        ", which the image list does not name",
                    kMXPInvalidArgument);
      labels = it->second;
    } else {
      if (flag == 0)
        throw Error(Where(offset) + " holds no label array: a detection record needs one",
                    kMXPInvalidArgument);
      if (label_width_ > 0 && flag != static_cast<uint32_t>(label_width_))
        throw Error(Where(offset) + " has a " + std::to_string(flag) +
                        "-value label but label_width is " + std::to_string(label_width_),
                    kMXPInvalidArgument);
      for (size_t i = 0; i < flag; ++i)
        labels.push_back(LittleEndianFloat(p + kHeaderBytes + 4 * i));
    }
    return labels;
  }

  std::unique_ptr<RecordReader> reader_;
  std::vector<uint64_t> offsets_;
  TShape shape_;
  int label_width_;
  std::unordered_map<uint64_t, std::vector<float>> list_;
  DetAugmenter augmenter_;
  Normalization norm_;
  size_t row_ = 4;
  float pad_value_ = -1;
};

}  // namespace

std::unique_ptr<DataIter> MakeImageDetRecordIter(IterArgs& args) {
  const std::string path = args.TakeString("path_imgrec", "./data/imgrec.rec");
  const std::string list_path = args.TakeString("path_imglist", "");
  const std::string aug_seq = args.TakeString("aug_seq", "det_aug_default");
  if (aug_seq != "det_aug_default")
    throw Error(std::string(kName) + ": argument 'aug_seq' is '" + aug_seq +
                    "', expected 'det_aug_default' (the detection augmenter)",
                kMXPInvalidArgument);
  const TShape shape = args.TakeShape("data_shape", TShape());
  if (shape.ndim() != 3 || (shape[0] != 1 && shape[0] != 3))
    throw Error(std::string(kName) + ": argument 'data_shape' is " +
                    (shape.ndim() < 0 ? "required" : "'" + shape.ToString() + "'") +
                    ", expected (channels, height, width) with 1 or 3 channels",
                kMXPInvalidArgument);
  const int label_width = args.TakeInt("label_width", -1, -1);
  int pad_width = args.TakeInt("label_pad_width", 0, -1);
  const float pad_value = args.TakeFloat("label_pad_value", -1.f);
  Batching batching;
  batching.TakeRecordIterArgs(&args);
  DetAugmenter augmenter(&args, shape);
  DetRecordSource::Normalization norm{};
  const char* channel[3] = {"r", "g", "b"};
  for (int k = 0; k < 3; ++k) {
    norm.mean[k] = args.TakeFloat(std::string("mean_") + channel[k], 0.f);
    const float std = args.TakeFloat(std::string("std_") + channel[k], 0.f);
    norm.inv_std[k] = std == 0.f ? 1.f : 1.f / std;
  }
  norm.scale = args.TakeFloat("scale", 1.f);
  if (!args.TakeString("mean_img", "").empty())
    throw Error(std::string(kName) +
                    ": argument 'mean_img' is not supported; give the means "
                    "per channel (mean_r, mean_g, mean_b)",
                kMXPInvalidArgument);
  const std::string dtype = args.TakeString("dtype", "None");
  if (dtype != "None" && dtype != "float32")
    throw Error(std::string(kName) + ": argument 'dtype' is '" + dtype + "', expected float32",
                kMXPInvalidArgument);
  args.Ignore({"verbose", "mean_a", "std_a", "shuffle_chunk_size", "shuffle_chunk_seed", "ctx"});
  args.IgnoreTheRest();

  auto reader = std::make_unique<RecordReader>(path);
  std::vector<uint64_t> offsets;
  for (uint64_t at = 0; at < reader->size(); at = reader->SkipAt(at)) offsets.push_back(at);
  if (offsets.empty())
    throw Error(std::string(kName) + ": '" + path + "' holds no records", kMXPInvalidArgument);
  auto list = list_path.empty() ? std::unordered_map<uint64_t, std::vector<float>>()
                                : ReadImageList(list_path, label_width);
  const size_t num = offsets.size();
  auto source =
      std::make_unique<DetRecordSource>(std::move(reader), std::move(offsets), shape, label_width,
                                        std::move(list), std::move(augmenter), norm);
  const int longest = source->LongestLabel();
  if (longest > pad_width) {
    if (pad_width > 0)
      throw Error(std::string(kName) + ": label_pad_width " + std::to_string(pad_width) +
                      " is smaller than the longest label, " + std::to_string(longest) + " values",
                  kMXPInvalidArgument);
    pad_width = longest;
  }
  source->SetLabelRow(pad_width, pad_value);
  const int64_t n = batching.batch_size;
  return std::make_unique<BatchedIter>(
      kName, batching, std::move(source), num,
      std::vector<DataShape>{{"data", TShape{n, shape[0], shape[1], shape[2]}, kMXPFloat32}},
      std::vector<DataShape>{{"softmax_label", TShape{n, int64_t{pad_width} + 4}}});
}

}  // namespace mxplug::io
