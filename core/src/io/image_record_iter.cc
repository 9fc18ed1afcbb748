// ImageRecordIter: the images and labels of a RecordIO file of image records (MXNet's IRHeader,
// optional float labels, an encoded JPEG or PNG), decoded, resized, cropped, mirrored and
// normalized into float32 (channel, height, width) batches in RGB order by the prefetcher's
// threads (preprocess_threads of them), at most prefetch_buffer batches ahead.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <utility>

#include "io/batched_iter.h"
#include "io/bytes.h"
#include "io/iterators.h"
#include "mxplug/error.h"
#include "mxplug/image.h"
#include "mxplug/recordio.h"

namespace mxplug::io {
namespace {

// MXNet's IRHeader as struct.pack('IfQQ') lays it out: flag, label, id, id2 (24 bytes).
constexpr size_t kHeaderBytes = 24;

struct Augment {
  int resize = -1;  // shorter edge, -1: as stored
  bool rand_crop = false, rand_mirror = false;
  float mean[4] = {0, 0, 0, 0}, std[4] = {1, 1, 1, 1};
  float scale = 1;
};

class ImageRecordSource : public ExampleSource {
 public:
  ImageRecordSource(std::unique_ptr<RecordReader> reader, std::vector<uint64_t> offsets,
                    TShape shape, int label_width, Augment augment)
      : reader_(std::move(reader)),
        offsets_(std::move(offsets)),
        shape_(std::move(shape)),
        label_width_(label_width),
        augment_(augment) {}

  void Fill(const std::vector<uint64_t>& ids, DataBatch* batch) const override {
    const std::vector<uint64_t> records = ids;  // batch->index becomes the records' IRHeader ids
    std::mt19937 rng(std::random_device{}());
    const size_t image_size = static_cast<size_t>(shape_.Size());
    auto* data = static_cast<float*>(batch->data[0].data());
    auto* label = static_cast<float*>(batch->label[0].data());
    std::string bytes;
    for (size_t row = 0; row < records.size(); ++row) {
      const uint64_t offset = offsets_[records[row]];
      reader_->ReadAt(offset, &bytes);
      const size_t image_begin = Unpack(
          bytes, offset, label + row * static_cast<size_t>(label_width_), &batch->index[row]);
      Image image;
      try {
        image = DecodeImage(bytes.data() + image_begin, bytes.size() - image_begin,
                            static_cast<int>(shape_[0]), ChannelOrder::kRGB);
      } catch (const Error& e) {
        throw Error(Where(offset) + ": " + e.what(), kMXPInvalidArgument);
      }
      Place(image, offset, rng, data + row * image_size);
    }
  }

 private:
  std::string Where(uint64_t offset) const {
    return "ImageRecordIter: the record at offset " + std::to_string(offset) + " of '" +
           reader_->path() + "'";
  }

  // Reads the IRHeader (flag: the number of float labels after it, or 0 for the one in the
  // header) into `label` and `id`; returns where the encoded image starts.
  size_t Unpack(const std::string& bytes, uint64_t offset, float* label, uint64_t* id) const {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    if (bytes.size() < kHeaderBytes)
      throw Error(Where(offset) + " has " + std::to_string(bytes.size()) +
                      " bytes, fewer than the " + std::to_string(kHeaderBytes) +
                      "-byte image record header",
                  kMXPInvalidArgument);
    const uint32_t flag = LittleEndian32(p);
    const size_t labels = flag == 0 ? 1 : flag;
    if (labels != static_cast<size_t>(label_width_))
      throw Error(Where(offset) + " has " + std::to_string(labels) +
                      (labels == 1 ? " label" : " labels") + " but label_width is " +
                      std::to_string(label_width_),
                  kMXPInvalidArgument);
    const size_t image_begin = kHeaderBytes + 4 * size_t{flag};
    if (bytes.size() < image_begin)
      throw Error(Where(offset) + " has " + std::to_string(bytes.size()) +
                      " bytes, fewer than its header and " + std::to_string(flag) +
                      " labels need (" + std::to_string(image_begin) + ")",
                  kMXPInvalidArgument);
    if (flag == 0) label[0] = LittleEndianFloat(p + 4);
    for (size_t i = 0; i < flag; ++i) label[i] = LittleEndianFloat(p + kHeaderBytes + 4 * i);
    *id = LittleEndian64(p + 8);
    return image_begin;
  }

  // Resizes, crops and mirrors `image` as MXNet's default augmenter does and writes it
  // normalized in (channel, height, width) order.
  void Place(Image image, uint64_t offset, std::mt19937& rng, float* out) const {
    const int height = static_cast<int>(shape_[1]), width = static_cast<int>(shape_[2]);
    if (augment_.resize > 0) {
      // The shorter edge becomes `resize`, the other keeps the aspect ratio (rounded down).
      const int r = augment_.resize;
      image =
          image.height > image.width
              ? ResizeImage(image, static_cast<int>(int64_t{r} * image.height / image.width), r)
              : ResizeImage(image, r, static_cast<int>(int64_t{r} * image.width / image.height));
    }
    if (image.height < height || image.width < width)
      throw Error(Where(offset) + " is an image of " + std::to_string(image.height) + "x" +
                      std::to_string(image.width) + (augment_.resize > 0 ? " after resize" : "") +
                      ", smaller than data_shape " + shape_.ToString() +
                      "; resize= scales images up",
                  kMXPInvalidArgument);
    int y = image.height - height, x = image.width - width;
    if (augment_.rand_crop) {
      y = std::uniform_int_distribution<int>(0, y)(rng);
      x = std::uniform_int_distribution<int>(0, x)(rng);
    } else {
      y /= 2;
      x /= 2;
    }
    const bool mirror = augment_.rand_mirror && std::bernoulli_distribution(0.5)(rng);
    const int channels = image.channels;
    const size_t plane = static_cast<size_t>(height) * width;
    for (int c = 0; c < channels; ++c) {
      const float mean = augment_.mean[c], factor = augment_.scale / augment_.std[c];
      for (int i = 0; i < height; ++i) {
        const uint8_t* src =
            image.pixels.data() + (static_cast<size_t>(y + i) * image.width + x) * channels + c;
        float* dst = out + c * plane + static_cast<size_t>(i) * width;
        for (int j = 0; j < width; ++j) {
          const float value =
              (static_cast<float>(src[static_cast<size_t>(j) * channels]) - mean) * factor;
          dst[mirror ? width - 1 - j : j] = value;
        }
      }
    }
  }

  std::unique_ptr<RecordReader> reader_;
  std::vector<uint64_t> offsets_;  // where each record starts, in file order
  TShape shape_;                   // (channels, height, width)
  int label_width_;
  Augment augment_;
};

// The records' offsets from an index file ("key\toffset" lines, as MXIndexedRecordIO writes),
// in file order.
std::vector<uint64_t> ReadIndex(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw Error(
        "ImageRecordIter: cannot open the index file '" + path + "': " + std::strerror(errno),
        kMXPInvalidArgument);
  std::vector<uint64_t> offsets;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const size_t tab = line.find('\t');
    char* end = nullptr;
    const char* text = tab == std::string::npos ? nullptr : line.c_str() + tab + 1;
    const unsigned long long offset = text ? std::strtoull(text, &end, 10) : 0;
    if (!text || end == text || (*end != '\0' && *end != '\r'))
      throw Error("ImageRecordIter: line " + std::to_string(number) + " of the index file '" +
                      path + "' is '" + line + "', expected 'key<TAB>offset'",
                  kMXPInvalidArgument);
    offsets.push_back(offset);
  }
  std::sort(offsets.begin(), offsets.end());
  return offsets;
}

}  // namespace

std::unique_ptr<DataIter> MakeImageRecordIter(IterArgs& args) {
  const std::string path = args.TakeString("path_imgrec");
  const std::string index = args.TakeString("path_imgidx", "");
  const TShape shape = args.TakeShape("data_shape", TShape());
  if (shape.ndim() != 3 || (shape[0] != 1 && shape[0] != 3))
    throw Error("ImageRecordIter: argument 'data_shape' is " +
                    (shape.ndim() < 0 ? "required" : "'" + shape.ToString() + "'") +
                    ", expected (channels, height, width) with 1 or 3 channels",
                kMXPInvalidArgument);
  Batching batching;
  batching.batch_size = args.TakeInt("batch_size", 1);
  const int label_width = args.TakeInt("label_width", 1, 1);
  batching.shuffle = args.TakeBool("shuffle", false);
  batching.seed = args.TakeInt("seed", 0, 0);
  batching.last_batch =
      args.TakeBool("round_batch", true) ? LastBatch::kRoundBatch : LastBatch::kPadFromStart;
  batching.threads = args.TakeInt("preprocess_threads", 4, 1);
  batching.TakeCommon(&args);
  Augment augment;
  augment.resize = args.TakeInt("resize", -1, -1);
  if (augment.resize == 0)
    throw Error("ImageRecordIter: argument 'resize' is 0, expected -1 or a size",
                kMXPInvalidArgument);
  augment.rand_crop = args.TakeBool("rand_crop", false);
  augment.rand_mirror = args.TakeBool("rand_mirror", false);
  const char* channel_names[] = {"r", "g", "b", "a"};
  for (int c = 0; c < 4; ++c) {
    augment.mean[c] = args.TakeFloat(std::string("mean_") + channel_names[c], 0.f);
    augment.std[c] = args.TakeFloat(std::string("std_") + channel_names[c], 1.f);
    if (augment.std[c] == 0.f)
      throw Error(std::string("ImageRecordIter: argument 'std_") + channel_names[c] + "' is 0",
                  kMXPInvalidArgument);
  }
  augment.scale = args.TakeFloat("scale", 1.f);
  const int inter_method = args.TakeInt("inter_method", 1, 0);
  if (inter_method != 1)
    throw Error("ImageRecordIter: argument 'inter_method' is " + std::to_string(inter_method) +
                    ", only 1 (bilinear) is supported",
                kMXPInvalidArgument);
  const std::string dtype = args.TakeString("dtype", "float32");
  if (dtype != "float32" && dtype != "None")
    throw Error("ImageRecordIter: argument 'dtype' is '" + dtype + "', only float32 is supported",
                kMXPInvalidArgument);
  args.Ignore({"verbose", "silent"});
  args.IgnoreTheRest();

  auto reader = std::make_unique<RecordReader>(path);
  std::vector<uint64_t> offsets;
  if (!index.empty()) {
    offsets = ReadIndex(index);
  } else {
    for (uint64_t at = 0; at < reader->size(); at = reader->SkipAt(at)) offsets.push_back(at);
  }
  if (offsets.empty())
    throw Error("ImageRecordIter: '" + path + "' holds no records", kMXPInvalidArgument);
  const int64_t n = batching.batch_size;
  const TShape label_shape = label_width == 1 ? TShape{n} : TShape{n, label_width};
  const size_t num = offsets.size();
  auto source = std::make_unique<ImageRecordSource>(std::move(reader), std::move(offsets), shape,
                                                    label_width, augment);
  return std::make_unique<BatchedIter>(
      "ImageRecordIter", batching, std::move(source), num,
      std::vector<DataShape>{{"data", TShape{n, shape[0], shape[1], shape[2]}}},
      std::vector<DataShape>{{"softmax_label", label_shape}});
}

}  // namespace mxplug::io
