// CSVIter: rows of numbers from a CSV file (raw or gzip-compressed), each reshaped to
// data_shape, with labels from a second file (or zeros); round_batch as MXNet's.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "io/batched_iter.h"
#include "io/iterators.h"
#include "io/read_file.h"
#include "mxplug/error.h"

namespace mxplug::io {
namespace {

// Every row of the file as `width` floats, one after another.
std::vector<float> ParseCSV(const std::string& path, const std::string& argument, int64_t width,
                            const std::string& shape_text, size_t* rows) {
  const std::string text = ReadWholeFile("CSVIter", path);
  std::vector<float> values;
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
      char* end = nullptr;
      const float value = std::strtof(field.c_str(), &end);
      if (end == field.c_str() || std::strspn(end, " \t") != std::strlen(end))
        throw Error("CSVIter: " + argument + " '" + path + "' line " + std::to_string(line_number) + " field " +
                    std::to_string(count + 1) + ": '" + field + "' is not a number", kMXPInvalidArgument);
      values.push_back(value);
      pos = comma + 1;
    }
    if (count != width)
      throw Error("CSVIter: " + argument + " '" + path + "' line " + std::to_string(line_number) + " has " +
                  std::to_string(count) + " values, expected " + std::to_string(width) + " for shape " + shape_text,
                  kMXPInvalidArgument);
    ++*rows;
  }
  return values;
}

class CSVSource : public ExampleSource {
 public:
  CSVSource(std::vector<float> data, int64_t data_width, std::vector<float> label, int64_t label_width)
      : data_(std::move(data)), label_(std::move(label)), data_width_(data_width), label_width_(label_width) {}

  void Fill(const std::vector<uint64_t>& ids, DataBatch* batch) const override {
    auto* data = static_cast<float*>(batch->data[0].data());
    auto* label = static_cast<float*>(batch->label[0].data());
    for (size_t row = 0; row < ids.size(); ++row) {
      std::memcpy(data + row * data_width_, data_.data() + ids[row] * data_width_, data_width_ * sizeof(float));
      if (label_.empty())
        std::fill(label + row * label_width_, label + (row + 1) * label_width_, 0.0f);
      else
        std::memcpy(label + row * label_width_, label_.data() + ids[row] * label_width_, label_width_ * sizeof(float));
    }
  }

 private:
  std::vector<float> data_, label_;  // label_ empty: all zeros
  int64_t data_width_, label_width_;
};

}  // namespace

std::unique_ptr<DataIter> MakeCSVIter(IterArgs& args) {
  const std::string data_csv = args.TakeString("data_csv");
  const TShape data_shape = args.TakeShape("data_shape", TShape());
  if (data_shape.ndim() < 0) throw Error("CSVIter: argument 'data_shape' is required", kMXPInvalidArgument);
  const std::string label_csv = args.TakeString("label_csv", "NULL");
  const TShape label_shape = args.TakeShape("label_shape", TShape{1});
  Batching batching;
  batching.batch_size = args.TakeInt("batch_size", 1);
  batching.last_batch = args.TakeBool("round_batch", true) ? LastBatch::kRoundBatch : LastBatch::kPadFromStart;
  batching.TakeCommon(&args);
  const std::string dtype = args.TakeString("dtype", "float32");
  if (dtype != "float32" && dtype != "None")
    throw Error("CSVIter: argument 'dtype' is '" + dtype + "', only float32 is supported", kMXPInvalidArgument);
  args.CheckAllTaken();

  size_t rows = 0, label_rows = 0;
  std::vector<float> data = ParseCSV(data_csv, "data_csv", data_shape.Size(), data_shape.ToString(), &rows);
  std::vector<float> label;
  if (label_csv != "NULL") {
    label = ParseCSV(label_csv, "label_csv", label_shape.Size(), label_shape.ToString(), &label_rows);
    if (label_rows != rows)
      throw Error("CSVIter: label_csv '" + label_csv + "' has " + std::to_string(label_rows) + " rows but data_csv '" +
                  data_csv + "' has " + std::to_string(rows), kMXPInvalidArgument);
  }
  if (rows == 0) throw Error("CSVIter: data_csv '" + data_csv + "' has no rows", kMXPInvalidArgument);
  const int64_t n = batching.batch_size;
  std::vector<int64_t> batch_data{n}, batch_label{n};
  batch_data.insert(batch_data.end(), data_shape.begin(), data_shape.end());
  if (!(label_shape.ndim() == 1 && label_shape[0] == 1))  // (1,) labels come as (batch,), as in MXNet
    batch_label.insert(batch_label.end(), label_shape.begin(), label_shape.end());
  auto source = std::make_unique<CSVSource>(std::move(data), data_shape.Size(), std::move(label), label_shape.Size());
  return std::make_unique<BatchedIter>("CSVIter", batching, std::move(source), rows,
                                       std::vector<DataShape>{{"data", TShape(batch_data)}},
                                       std::vector<DataShape>{{"softmax_label", TShape(batch_label)}});
}

}  // namespace mxplug::io
