// ImageRecordIter: the images and labels of a RecordIO file of image records (MXNet's IRHeader,
// optional float labels, an encoded JPEG or PNG), decoded, resized, cropped, mirrored and
// normalized into float32 (channel, height, width) batches in RGB order by the prefetcher's
// threads (preprocess_threads of them), at most prefetch_buffer batches ahead. With dtype uint8
// or int8 (MXNet's ImageRecordUInt8Iter and ImageRecordInt8Iter) the batches hold the augmented
// pixels themselves, not normalized.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <utility>

#include "io/batched_iter.h"
#include "io/bytes.h"
#include "io/image_augment.h"
#include "io/iterators.h"
#include "mxplug/error.h"
#include "mxplug/image.h"
#include "mxplug/ndarray_file.h"
#include "mxplug/recordio.h"

namespace mxplug::io {
namespace {

// MXNet's IRHeader as struct.pack('IfQQ') lays it out: flag, label, id, id2 (24 bytes).
constexpr size_t kHeaderBytes = 24;

class ImageRecordSource : public ExampleSource {
 public:
  ImageRecordSource(std::unique_ptr<RecordReader> reader, std::vector<uint64_t> offsets,
                    TShape shape, int label_width, int dtype, ImageAugmenter augmenter)
      : reader_(std::move(reader)),
        offsets_(std::move(offsets)),
        shape_(std::move(shape)),
        label_width_(label_width),
        dtype_(dtype),
        augmenter_(std::move(augmenter)) {}

  void Fill(const std::vector<uint64_t>& ids, uint64_t serial, DataBatch* batch) const override {
    const std::vector<uint64_t> records = ids;  // batch->index becomes the records' IRHeader ids
    std::seed_seq seeds{augmenter_.seed(), static_cast<unsigned>(serial >> 32),
                        static_cast<unsigned>(serial)};
    std::mt19937 rng(seeds);
    const size_t image_size = static_cast<size_t>(shape_.Size());
    auto* data = static_cast<char*>(batch->data[0].data());
    auto* label = static_cast<float*>(batch->label[0].data());
    for (size_t row = 0; row < records.size(); ++row) {
      const uint64_t offset = offsets_[records[row]];
      const Image image = Augmented(offset, rng, label + row * static_cast<size_t>(label_width_),
                                    &batch->index[row]);
      if (dtype_ == kMXPFloat32)
        augmenter_.Normalize(image, rng, mean_image_.empty() ? nullptr : mean_image_.data(),
                             reinterpret_cast<float*>(data) + row * image_size);
      else
        augmenter_.Pixels(image, rng, dtype_, data + row * image_size);  // one-byte pixels
    }
  }

  /*! \brief mean_img: the file's mean image when it exists, else the mean of every record's
   * row, saved there first (Note [MXNet's augmenter, observed]). */
  void UseMeanImage(const std::string& path) {
    const std::vector<int64_t> dims(shape_.begin(), shape_.end());
    const size_t size = static_cast<size_t>(shape_.Size());
    std::error_code missing;
    if (!std::filesystem::exists(path, missing)) {
      std::fprintf(stderr,
                   "[mxplug] ImageRecordIter: cannot find the mean image '%s': creating it "
                   "from the %zu records\n",
                   path.c_str(), offsets_.size());
      std::vector<float> sum(size, 0.f);  // in float, then times 1 / n, as MXNet's bytes show
      std::vector<float> row(size), label(static_cast<size_t>(label_width_));
      std::seed_seq seeds{augmenter_.seed(), 0xffffffffu};
      std::mt19937 rng(seeds);
      uint64_t id = 0;
      for (uint64_t offset : offsets_) {
        augmenter_.Normalize(Augmented(offset, rng, label.data(), &id), rng, nullptr, row.data());
        for (size_t i = 0; i < size; ++i) sum[i] += row[i];
      }
      const float share = 1.f / static_cast<float>(offsets_.size());
      for (float& v : sum) v *= share;
      NDArray mean(TShape(dims), Context::CPU(), kMXPFloat32);
      mean.SyncCopyFromCPU(sum.data(), size * sizeof(float));
      SaveNDArrayFile(path, NDArrayFile{{mean}, {"mean_img"}});
    }
    const NDArrayFile file = LoadNDArrayFile(path);
    if (file.arrays.size() != 1 || file.arrays[0].shape() != TShape(dims) ||
        file.arrays[0].dtype() != kMXPFloat32)
      throw Error(
          "ImageRecordIter: the mean image '" + path + "' holds " +
              std::to_string(file.arrays.size()) + " arrays" +
              (file.arrays.empty() ? ""
                                   : ", the first of shape " + file.arrays[0].shape().ToString()) +
              "; expected one float32 array of data_shape " + shape_.ToString(),
          kMXPInvalidArgument);
    mean_image_.resize(size);
    file.arrays[0].SyncCopyToCPU(mean_image_.data(), size * sizeof(float));
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

  // One record's labels, id and augmented image.
  Image Augmented(uint64_t offset, std::mt19937& rng, float* label, uint64_t* id) const {
    std::string bytes;
    reader_->ReadAt(offset, &bytes);
    const size_t image_begin = Unpack(bytes, offset, label, id);
    Image image;
    try {
      image = DecodeImage(bytes.data() + image_begin, bytes.size() - image_begin,
                          static_cast<int>(shape_[0]), ChannelOrder::kRGB);
    } catch (const Error& e) {
      throw Error(Where(offset) + ": " + e.what(), kMXPInvalidArgument);
    }
    return augmenter_.Augment(std::move(image), rng, Where(offset));
  }

  std::unique_ptr<RecordReader> reader_;
  std::vector<uint64_t> offsets_;  // where each record starts, in file order
  TShape shape_;                   // (channels, height, width)
  int label_width_;
  int dtype_;  // of the data: float32, uint8 or int8
  ImageAugmenter augmenter_;
  std::vector<float> mean_image_;  // (channel, height, width), or empty
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

std::unique_ptr<DataIter> MakeImageRecordIter(IterArgs& args, int default_dtype) {
  const std::string path = args.TakeString("path_imgrec");
  const std::string index = args.TakeString("path_imgidx", "");
  const TShape shape = args.TakeShape("data_shape", TShape());
  if (shape.ndim() != 3 || (shape[0] != 1 && shape[0] != 3))
    throw Error("ImageRecordIter: argument 'data_shape' is " +
                    (shape.ndim() < 0 ? "required" : "'" + shape.ToString() + "'") +
                    ", expected (channels, height, width) with 1 or 3 channels",
                kMXPInvalidArgument);
  Batching batching;
  batching.TakeRecordIterArgs(&args);
  const int label_width = args.TakeInt("label_width", 1, 1);
  ImageAugmenter augmenter(&args, shape);
  const std::string dtype_name = args.TakeString("dtype", DTypeName(default_dtype));
  const int dtype = dtype_name == "None"      ? default_dtype
                    : dtype_name == "float32" ? kMXPFloat32
                    : dtype_name == "uint8"   ? kMXPUint8
                    : dtype_name == "int8"    ? kMXPInt8
                                              : -1;
  if (dtype < 0)
    throw Error("ImageRecordIter: argument 'dtype' is '" + dtype_name +
                    "', expected float32, uint8 or int8",
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
  // Pixels are not normalized: no mean image is read or made (MXNet's uint8 and int8 too).
  const std::string mean_image = dtype == kMXPFloat32 ? augmenter.mean_image_path() : "";
  auto source = std::make_unique<ImageRecordSource>(std::move(reader), std::move(offsets), shape,
                                                    label_width, dtype, std::move(augmenter));
  if (!mean_image.empty()) source->UseMeanImage(mean_image);
  return std::make_unique<BatchedIter>(
      "ImageRecordIter", batching, std::move(source), num,
      std::vector<DataShape>{{"data", TShape{n, shape[0], shape[1], shape[2]}, dtype}},
      std::vector<DataShape>{{"softmax_label", label_shape}});
}

}  // namespace mxplug::io
