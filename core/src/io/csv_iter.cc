// CSVIter: rows of numbers from a CSV file (raw or gzip-compressed), each reshaped to
// data_shape, with labels from a second file (or zeros), in float32, int32 or int64 (dtype);
// round_batch as MXNet's.
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "io/batched_iter.h"
#include "io/iterators.h"
#include "io/read_file.h"
#include "mxplug/error.h"

namespace mxplug::io {
namespace {

// A field as T: float32 as strtof reads it; int32 and int64 as integers, exactly (a fractional
// part is dropped, as MXNet's parser drops it). False when the field is not a number.
template <class T>
bool ParseField(const std::string& field, T* value) {
  const char* text = field.c_str();
  char* end = nullptr;
  if constexpr (std::is_floating_point_v<T>) {
    *value = std::strtof(text, &end);
  } else {
    const long long v = std::strtoll(text, &end, 10);
    if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) return false;
    *value = static_cast<T>(v);
    if (end != text && *end == '.') std::strtod(text, &end);  // 1.5 is 1
  }
  return end != text && std::strspn(end, " \t") == std::strlen(end);
}

// Every row of the file as `width` values of T, one after another.
template <class T>
std::vector<T> ParseCSV(const std::string& path, const std::string& argument, int64_t width,
                        const std::string& shape_text, size_t* rows) {
  const std::string text = ReadWholeFile("CSVIter", path);
  std::vector<T> values;
  size_t line_start = 0, line_number = 0;
  *rows = 0;
  while (line_start < text.size()) {
    size_t line_end = text.find('\n', line_start);
    if (line_end == std::string::npos) line_end = text.size();
    std::string line = text.substr(line_start, line_end - line_start);
    ++line_number;
    line_start = line_end + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    int64_t count = 0;
    for (size_t pos = 0; pos <= line.size(); ++count) {
      size_t comma = line.find(',', pos);
      if (comma == std::string::npos) comma = line.size();
      const std::string field = line.substr(pos, comma - pos);
      T value{};
      if (!ParseField(field, &value))
        throw Error("CSVIter: " + argument + " '" + path + "' line " + std::to_string(line_number) +
                        " field " + std::to_string(count + 1) + ": '" + field + "' is not " +
                        (std::is_floating_point_v<T>
                             ? "a number"
                             : std::string("an ") + (sizeof(T) == 4 ? "int32" : "int64")),
                    kMXPInvalidArgument);
      values.push_back(value);
      pos = comma + 1;
    }
    if (count != width)
      throw Error("CSVIter: " + argument + " '" + path + "' line " + std::to_string(line_number) +
                      " has " + std::to_string(count) + " values, expected " +
                      std::to_string(width) + " for shape " + shape_text,
                  kMXPInvalidArgument);
    ++*rows;
  }
  return values;
}

template <class T>
class CSVSource : public ExampleSource {
 public:
  CSVSource(std::vector<T> data, int64_t data_width, std::vector<T> label, int64_t label_width)
      : data_(std::move(data)),
        label_(std::move(label)),
        data_width_(data_width),
        label_width_(label_width) {}

  void Fill(const std::vector<uint64_t>& ids, uint64_t /*serial*/,
            DataBatch* batch) const override {
    auto* data = static_cast<T*>(batch->data[0].data());
    auto* label = static_cast<T*>(batch->label[0].data());
    for (size_t row = 0; row < ids.size(); ++row) {
      std::memcpy(data + row * data_width_, data_.data() + ids[row] * data_width_,
                  data_width_ * sizeof(T));
      if (label_.empty())
        std::fill(label + row * label_width_, label + (row + 1) * label_width_, T(0));
      else
        std::memcpy(label + row * label_width_, label_.data() + ids[row] * label_width_,
                    label_width_ * sizeof(T));
    }
  }

 private:
  std::vector<T> data_, label_;  // label_ empty: all zeros
  int64_t data_width_, label_width_;
};

struct CSVFiles {
  std::string data_csv, label_csv;
  TShape data_shape, label_shape;
};

// The files parsed as T, as the source of the iterator; *rows gets their number of rows.
template <class T>
std::unique_ptr<ExampleSource> ReadCSV(const CSVFiles& f, size_t* rows) {
  size_t label_rows = 0;
  std::vector<T> data =
      ParseCSV<T>(f.data_csv, "data_csv", f.data_shape.Size(), f.data_shape.ToString(), rows);
  std::vector<T> label;
  if (f.label_csv != "NULL") {
    label = ParseCSV<T>(f.label_csv, "label_csv", f.label_shape.Size(), f.label_shape.ToString(),
                        &label_rows);
    if (label_rows != *rows)
      throw Error("CSVIter: label_csv '" + f.label_csv + "' has " + std::to_string(label_rows) +
                      " rows but data_csv '" + f.data_csv + "' has " + std::to_string(*rows),
                  kMXPInvalidArgument);
  }
  if (*rows == 0)
    throw Error("CSVIter: data_csv '" + f.data_csv + "' has no rows", kMXPInvalidArgument);
  return std::make_unique<CSVSource<T>>(std::move(data), f.data_shape.Size(), std::move(label),
                                        f.label_shape.Size());
}

}  // namespace

std::unique_ptr<DataIter> MakeCSVIter(IterArgs& args) {
  CSVFiles files;
  files.data_csv = args.TakeString("data_csv");
  files.data_shape = args.TakeShape("data_shape", TShape());
  if (files.data_shape.ndim() < 0)
    throw Error("CSVIter: argument 'data_shape' is required", kMXPInvalidArgument);
  files.label_csv = args.TakeString("label_csv", "NULL");
  files.label_shape = args.TakeShape("label_shape", TShape{1});
  Batching batching;
  batching.batch_size = args.TakeInt("batch_size", 1);
  batching.last_batch =
      args.TakeBool("round_batch", true) ? LastBatch::kRoundBatch : LastBatch::kPadFromStart;
  batching.TakeCommon(&args);
  // The data's and the labels' type, as MXNet's CSVIter has them: float32, int32 or int64.
  const std::string dtype_text = args.TakeString("dtype", "float32");
  const int dtype = dtype_text == "int32"   ? kMXPInt32
                    : dtype_text == "int64" ? kMXPInt64
                                            : kMXPFloat32;
  if (dtype == kMXPFloat32 && dtype_text != "float32" && dtype_text != "None")
    throw Error(
        "CSVIter: argument 'dtype' is '" + dtype_text + "', expected float32, int32 or int64",
        kMXPInvalidArgument);
  args.IgnoreTheRest();

  size_t rows = 0;
  std::unique_ptr<ExampleSource> source = dtype == kMXPInt32   ? ReadCSV<int32_t>(files, &rows)
                                          : dtype == kMXPInt64 ? ReadCSV<int64_t>(files, &rows)
                                                               : ReadCSV<float>(files, &rows);
  const int64_t n = batching.batch_size;
  std::vector<int64_t> batch_data{n}, batch_label{n};
  batch_data.insert(batch_data.end(), files.data_shape.begin(), files.data_shape.end());
  const TShape& label_shape = files.label_shape;
  if (!(label_shape.ndim() == 1 &&
        label_shape[0] == 1))  // (1,) labels come as (batch,), as in MXNet
    batch_label.insert(batch_label.end(), label_shape.begin(), label_shape.end());
  return std::make_unique<BatchedIter>(
      "CSVIter", batching, std::move(source), rows,
      std::vector<DataShape>{{"data", TShape(batch_data), dtype}},
      std::vector<DataShape>{{"softmax_label", TShape(batch_label), dtype}});
}

}  // namespace mxplug::io
