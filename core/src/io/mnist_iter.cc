// MNISTIter: the images and labels of MNIST's IDX files (raw or gzip-compressed), pixels scaled
// by 1/256 as MXNet does, labels as float32; only full batches. Without shuffle the whole set is
// kept as float32, as MXNet keeps it, and batches are views of it (Note [Batches as views]);
// with shuffle the file's bytes are kept and each batch is converted from them.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "io/batched_iter.h"
#include "io/bytes.h"
#include "io/iterators.h"
#include "io/read_file.h"
#include "mxplug/error.h"

namespace mxplug::io {
namespace {

constexpr uint32_t kImageMagic = 0x00000803;
constexpr uint32_t kLabelMagic = 0x00000801;

uint32_t BigEndian32(const std::string& bytes, size_t offset) {
  return io::BigEndian32(reinterpret_cast<const unsigned char*>(bytes.data()) + offset);
}

// Reads an IDX file's header (magic and `dims` sizes) and checks that its body is complete.
std::vector<uint32_t> ReadIdx(const std::string& bytes, const std::string& path, uint32_t magic,
                              int dims, const char* what) {
  const size_t header = 4 * static_cast<size_t>(dims + 1);
  if (bytes.size() < header)
    throw Error("MNISTIter: '" + path + "' ends at offset " + std::to_string(bytes.size()) +
                    ", inside the " + std::to_string(header) + "-byte IDX header of " + what,
                kMXPInvalidArgument);
  if (BigEndian32(bytes, 0) != magic)
    throw Error("MNISTIter: '" + path + "' is not an IDX file of " + what + ": magic " +
                    Hex32(BigEndian32(bytes, 0)) + " at offset 0, expected " + Hex32(magic),
                kMXPInvalidArgument);
  std::vector<uint32_t> sizes;
  uint64_t body = 1;
  for (int i = 0; i < dims; ++i) {
    sizes.push_back(BigEndian32(bytes, 4 * static_cast<size_t>(i + 1)));
    body *= sizes.back();
  }
  if (bytes.size() - header < body)
    throw Error("MNISTIter: '" + path + "' is truncated: " + std::to_string(sizes[0]) + " " + what +
                    " need " + std::to_string(header + body) + " bytes, the file ends at offset " +
                    std::to_string(bytes.size()),
                kMXPInvalidArgument);
  return sizes;
}

// Writes n pixels scaled by 1/256. The fixed 16-wide inner loop is there so that GCC vectorizes
// it at -O2 (its cheap cost model refuses a loop that needs a remainder): about 12 us for a batch
// of 128 images against 64 us for the plain loop, and 4x less memory read than copying images
// kept as float32.
void ScalePixels(const unsigned char* __restrict src, float* __restrict dst, size_t n) {
  constexpr size_t kBlock = 16;
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock)
    for (size_t j = 0; j < kBlock; ++j)
      dst[i + j] = static_cast<float>(src[i + j]) * (1.0f / 256.0f);
  for (; i < n; ++i) dst[i] = static_cast<float>(src[i]) * (1.0f / 256.0f);
}

class MNISTSource : public ExampleSource {
 public:
  /*! \brief `images` and `labels`: the files' bytes; `as_arrays`: convert them all now and hand
   * out views (for an iterator without shuffle). */
  MNISTSource(std::string images, std::string labels, int64_t count, size_t pixels, bool as_arrays,
              const std::string& image_path, const std::string& label_path)
      : images_(std::move(images)), labels_(std::move(labels)), pixels_(pixels) {
    if (!as_arrays) return;
    all_images_ = NDArray(TShape{count, static_cast<int64_t>(pixels)}, Context::CPU(), kMXPFloat32);
    all_labels_ = NDArray(TShape{count}, Context::CPU(), kMXPFloat32);
    ScalePixels(ImageBytes(), static_cast<float*>(all_images_.data()),
                static_cast<size_t>(count) * pixels);
    auto* label_values = static_cast<float*>(all_labels_.data());
    for (int64_t i = 0; i < count; ++i) label_values[i] = static_cast<float>(LabelBytes()[i]);
    all_images_.SetReadOnly("MNISTIter's data set ('" + image_path + "')");
    all_labels_.SetReadOnly("MNISTIter's labels ('" + label_path + "')");
    // The arrays hold it all now (move-assigned, so the buffers are freed).
    images_ = std::string();
    labels_ = std::string();
  }

  void Fill(const std::vector<uint64_t>& ids, uint64_t /*serial*/,
            DataBatch* batch) const override {
    auto* pixels = static_cast<float*>(batch->data[0].data());
    auto* labels = static_cast<float*>(batch->label[0].data());
    for (size_t row = 0; row < ids.size(); ++row) {
      float* dst = pixels + row * pixels_;
      if (HasViews()) {
        std::memcpy(dst, static_cast<const float*>(all_images_.data()) + ids[row] * pixels_,
                    pixels_ * sizeof(float));
        labels[row] = static_cast<const float*>(all_labels_.data())[ids[row]];
      } else {
        ScalePixels(ImageBytes() + ids[row] * pixels_, dst, pixels_);
        labels[row] = static_cast<float>(LabelBytes()[ids[row]]);
      }
    }
  }

  bool HasViews() const override { return !all_images_.is_none(); }

  void View(uint64_t first, const std::vector<DataShape>& data, const std::vector<DataShape>& label,
            DataBatch* batch) const override {
    const auto begin = static_cast<int64_t>(first), end = begin + label[0].shape[0];
    batch->data = {all_images_.Slice(begin, end).Reshape(data[0].shape)};
    batch->label = {all_labels_.Slice(begin, end)};
  }

 private:
  const unsigned char* ImageBytes() const {
    return reinterpret_cast<const unsigned char*>(images_.data()) + 16;
  }
  const unsigned char* LabelBytes() const {
    return reinterpret_cast<const unsigned char*>(labels_.data()) + 8;
  }

  std::string images_, labels_;  // the files' bytes, while batches are converted from them
  size_t pixels_;
  NDArray all_images_, all_labels_;  // the whole set as float32, for views
};

}  // namespace

std::unique_ptr<DataIter> MakeMNISTIter(IterArgs& args) {
  const std::string image = args.TakeString("image", "./train-images-idx3-ubyte");
  const std::string label = args.TakeString("label", "./train-labels-idx1-ubyte");
  Batching batching;
  batching.batch_size = args.TakeInt("batch_size", 128, 1);
  batching.shuffle = args.TakeBool("shuffle", true);
  batching.seed = args.TakeInt("seed", 0, 0);
  const bool flat = args.TakeBool("flat", false);
  batching.TakeCommon(&args);
  args.Ignore({"silent"});
  args.IgnoreTheRest();

  std::string images = ReadWholeFile("MNISTIter", image);
  std::string labels = ReadWholeFile("MNISTIter", label);
  const std::vector<uint32_t> image_sizes = ReadIdx(images, image, kImageMagic, 3, "images");
  const std::vector<uint32_t> label_sizes = ReadIdx(labels, label, kLabelMagic, 1, "labels");
  if (image_sizes[0] != label_sizes[0])
    throw Error("MNISTIter: '" + image + "' has " + std::to_string(image_sizes[0]) +
                    " images but '" + label + "' has " + std::to_string(label_sizes[0]) + " labels",
                kMXPInvalidArgument);
  const int64_t n = batching.batch_size, rows = image_sizes[1], cols = image_sizes[2];
  const TShape data_shape = flat ? TShape{n, rows * cols} : TShape{n, 1, rows, cols};
  auto source = std::make_unique<MNISTSource>(std::move(images), std::move(labels), image_sizes[0],
                                              static_cast<size_t>(rows * cols), !batching.shuffle,
                                              image, label);
  return std::make_unique<BatchedIter>("MNISTIter", batching, std::move(source), image_sizes[0],
                                       std::vector<DataShape>{{"data", data_shape}},
                                       std::vector<DataShape>{{"softmax_label", TShape{n}}});
}

}  // namespace mxplug::io
