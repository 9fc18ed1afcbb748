// The data iterators' machinery: the Prefetcher (order, the bound on batches made ahead, errors
// from its threads, restarts) and the core iterators through DataIter::Create (batches, pads,
// round_batch epochs and shards against the rules computed here).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "io/prefetcher.h"
#include "mxplug/error.h"
#include "mxplug/image.h"
#include "mxplug/io.h"
#include "mxplug/recordio.h"
#include "mxplug/runtime.h"
#include "test_paths.h"

namespace mxplug {
namespace {

TEST(PrefetcherTest, GivesEveryBatchInOrderFromManyThreads) {
  io::Prefetcher prefetcher(4, 3);
  prefetcher.Start(200, [](size_t b, DataBatch* out) {
    std::this_thread::sleep_for(
        std::chrono::microseconds((b * 7919) % 300));  // finish out of order
    out->pad = static_cast<int>(b);
  });
  DataBatch batch;
  for (int b = 0; b < 200; ++b) {
    ASSERT_TRUE(prefetcher.Next(&batch));
    EXPECT_EQ(batch.pad, b);
  }
  EXPECT_FALSE(prefetcher.Next(&batch));
}

TEST(PrefetcherTest, MakesAtMostCapacityBatchesAheadOfTheCaller) {
  constexpr int kCapacity = 3;
  std::atomic<int> started{0}, taken{0}, most_ahead{0};
  io::Prefetcher prefetcher(4, kCapacity);
  prefetcher.Start(40, [&](size_t, DataBatch*) {
    const int ahead = ++started - taken.load();
    int seen = most_ahead.load();
    while (ahead > seen && !most_ahead.compare_exchange_weak(seen, ahead)) {
    }
  });
  DataBatch batch;
  while (prefetcher.Next(&batch)) {
    ++taken;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));  // a slow caller
  }
  EXPECT_EQ(started.load(), 40);
  // Unbounded, the threads would start all 40 at once. One more than the capacity can be seen
  // between Next returning and `taken` counting it.
  EXPECT_LE(most_ahead.load(), kCapacity + 1);
  EXPECT_GE(most_ahead.load(), 2);  // it did read ahead
}

TEST(PrefetcherTest, AThreadsErrorReachesTheCallerAndEndsTheEpoch) {
  io::Prefetcher prefetcher(2, 4);
  prefetcher.Start(10, [](size_t b, DataBatch* out) {
    if (b == 5) throw Error("images.rec: truncated record at offset 4096");
    out->pad = static_cast<int>(b);
  });
  DataBatch batch;
  for (int b = 0; b < 5; ++b) ASSERT_TRUE(prefetcher.Next(&batch));
  try {
    prefetcher.Next(&batch);
    FAIL() << "expected the error of batch 5";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "images.rec: truncated record at offset 4096");
  }
  EXPECT_FALSE(prefetcher.Next(&batch));
  // A new epoch starts cleanly.
  prefetcher.Start(2, [](size_t b, DataBatch* out) { out->pad = static_cast<int>(b) + 100; });
  ASSERT_TRUE(prefetcher.Next(&batch));
  EXPECT_EQ(batch.pad, 100);
}

TEST(PrefetcherTest, RestartsAndStopsMidEpoch) {
  for (int round = 0; round < 20; ++round) {
    io::Prefetcher prefetcher(3, 2);
    prefetcher.Start(1000, [](size_t, DataBatch*) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    });
    DataBatch batch;
    ASSERT_TRUE(prefetcher.Next(&batch));
    prefetcher.Start(3, [](size_t b, DataBatch* out) { out->pad = static_cast<int>(b); });
    for (int b = 0; b < 3; ++b) {
      ASSERT_TRUE(prefetcher.Next(&batch));
      EXPECT_EQ(batch.pad, b);
    }
    prefetcher.Start(1000, [](size_t, DataBatch*) {});
  }  // destroyed with an epoch running
}

std::string WriteFile(const std::string& name, const std::string& text) {
  std::filesystem::create_directories(test::kScratchDir);
  const std::string path = test::kScratchDir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// n rows "i,i+0.5": row i is example i.
std::string Rows(int n) {
  std::string text;
  for (int i = 0; i < n; ++i) text += std::to_string(i) + "," + std::to_string(i) + ".5\n";
  return text;
}

std::vector<float> FirstColumn(const NDArray& data) {
  std::vector<float> values(static_cast<size_t>(data.size()));
  data.SyncCopyToCPU(values.data(), data.bytes());
  std::vector<float> column;
  for (size_t i = 0; i < values.size(); i += 2) column.push_back(values[i]);
  return column;
}

class DataIterTest : public ::testing::Test {
 protected:
  void SetUp() override { Runtime::Get().EnsureDefaultPluginsLoaded(); }  // the CPU backend
};

TEST_F(DataIterTest, RoundBatchContinuesTheStreamAcrossEpochs) {
  const std::string path = WriteFile("ten.csv", Rows(10));
  auto it = DataIter::Create("CSVIter",
                             {{"data_csv", path}, {"data_shape", "(2,)"}, {"batch_size", "3"}});
  ASSERT_EQ(it->DataShapes()[0].shape, TShape({3, 2}));
  ASSERT_EQ(it->LabelShapes()[0].shape, TShape({3}));
  // The examples form one circular stream cut into batches of 3; an epoch ends at the batch
  // that passes the end of the data, and the next starts where that batch stopped.
  int position = 0;
  for (int epoch = 0; epoch < 4; ++epoch) {
    while (it->Next()) {
      std::vector<float> want;
      for (int i = 0; i < 3; ++i) want.push_back(static_cast<float>((position + i) % 10));
      EXPECT_EQ(FirstColumn(it->Value().data[0]), want) << "epoch " << epoch;
      EXPECT_EQ(it->Value().pad, std::max(0, position + 3 - 10));
      position += 3;
    }
    ASSERT_GE(position, 10);
    position -= 10;
    it->BeforeFirst();
  }
}

TEST_F(DataIterTest, ShardsAreContiguousSlices) {
  const std::string path = WriteFile("eleven.csv", Rows(11));
  std::vector<float> seen;
  for (int part = 0; part < 3; ++part) {
    auto it = DataIter::Create("CSVIter", {{"data_csv", path},
                                           {"data_shape", "(2,)"},
                                           {"batch_size", "1"},
                                           {"num_parts", "3"},
                                           {"part_index", std::to_string(part)}});
    const int begin = 11 * part / 3, end = 11 * (part + 1) / 3;
    int count = 0;
    while (it->Next()) {
      EXPECT_EQ(FirstColumn(it->Value().data[0])[0], static_cast<float>(begin + count));
      EXPECT_EQ(it->Value().index, std::vector<uint64_t>{static_cast<uint64_t>(begin + count)});
      ++count;
    }
    EXPECT_EQ(count, end - begin);
  }
}

TEST_F(DataIterTest, ErrorsNameTheIteratorArgumentAndFile) {
  const std::string good = WriteFile("good.csv", Rows(4));
  const std::string bad = WriteFile("bad.csv", "1,2\n3,x\n");
  auto message = [](const std::string& name, std::map<std::string, std::string> kwargs) {
    try {
      DataIter::Create(name, kwargs);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(
      message("JPEGIter", {}),
      "no data iterator named 'JPEGIter'; there are CSVIter, ImageDetRecordIter, ImageRecordIter, "
      "ImageRecordIter_v1, ImageRecordInt8Iter, ImageRecordUInt8Iter, ImageRecordUInt8Iter_v1, "
      "MNISTIter");
  EXPECT_EQ(message("CSVIter", {{"data_csv", bad}, {"data_shape", "(2,)"}, {"batch_size", "1"}}),
            "CSVIter: data_csv '" + bad + "' line 2 field 2: 'x' is not a number");
  EXPECT_EQ(message("CSVIter", {{"data_csv", good}, {"data_shape", "(3,)"}, {"batch_size", "1"}}),
            "CSVIter: data_csv '" + good + "' line 1 has 2 values, expected 3 for shape (3,)");
  EXPECT_EQ(message("CSVIter", {{"data_csv", good}, {"data_shape", "(2"}, {"batch_size", "1"}}),
            "CSVIter: argument 'data_shape' is '(2', expected a shape such as (3, 28, 28)");
  EXPECT_EQ(message("CSVIter", {{"data_csv", good},
                                {"data_shape", "(2,)"},
                                {"batch_size", "1"},
                                {"num_parts", "2"},
                                {"part_index", "2"}}),
            "CSVIter: part_index 2 is not below num_parts 2");
  EXPECT_EQ(message("MNISTIter", {{"image", test::kScratchDir + "/none"}}),
            "MNISTIter: cannot open '" + test::kScratchDir + "/none': No such file or directory");
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(RecordIOTest, SplitsARecordWhereTheMagicIsAlignedAndReadsItBack) {
  const std::string magic("\x0a\x23\xd7\xce", 4);  // 0xced7230a, little-endian
  const std::string record =
      std::string("ab\0\0", 4) + magic + "cd" + magic.substr(0, 2);  // 2nd copy unaligned
  const std::string path = test::kScratchDir + "/split.rec";
  std::filesystem::create_directories(test::kScratchDir);
  {
    RecordWriter writer(path);
    writer.Write(record.data(), record.size());
    writer.Write("xyz", 3);
    EXPECT_EQ(writer.Tell(), 8u + 4 + 8 + 4 + 8 + 4);
  }
  // Part 1 (flag 1, 4 bytes), part 2 (flag 3, the 4 bytes after the magic), then "xyz" padded.
  const std::string want = magic + std::string("\x04\0\0\x20", 4) + std::string("ab\0\0", 4) +
                           magic + std::string("\x04\0\0\x60", 4) + "cd" + magic.substr(0, 2) +
                           magic + std::string("\x03\0\0\0", 4) + std::string("xyz\0", 4);
  EXPECT_EQ(ReadBytes(path), want);
  RecordReader reader(path);
  std::string got;
  ASSERT_TRUE(reader.Next(&got));
  EXPECT_EQ(got, record);
  ASSERT_TRUE(reader.Next(&got));
  EXPECT_EQ(got, "xyz");
  EXPECT_FALSE(reader.Next(&got));
  EXPECT_EQ(reader.SkipAt(0), 24u);
}

// Pixel c of (y, x) in image i of the ImageRecordIter test: a pattern each image has its own.
uint8_t Pixel(int i, int y, int x, int c) {
  return static_cast<uint8_t>(i * 29 + y * 7 + x * 3 + c * 50);
}

TEST_F(DataIterTest, ImageRecordIterDecodesInManyThreads) {
  const std::string path = test::kScratchDir + "/images.rec";
  std::filesystem::create_directories(test::kScratchDir);
  constexpr int kImages = 9, kSize = 6;
  {
    RecordWriter writer(path);
    for (int i = 0; i < kImages; ++i) {
      Image image;
      image.height = image.width = kSize;
      image.channels = 3;
      for (int y = 0; y < kSize; ++y)
        for (int x = 0; x < kSize; ++x)
          for (int c = 0; c < 3; ++c) image.pixels.push_back(Pixel(i, y, x, c));
      std::string record(24, '\0');  // MXNet's IRHeader: flag 0, the label, the id
      const float label = static_cast<float>(i);
      const uint64_t id = 1000 + static_cast<uint64_t>(i);
      std::memcpy(record.data() + 4, &label, 4);
      std::memcpy(record.data() + 8, &id, 8);
      record += EncodeImage(image, ".png", 6, ChannelOrder::kRGB);  // lossless
      writer.Write(record.data(), record.size());
    }
  }
  auto it = DataIter::Create("ImageRecordIter", {{"path_imgrec", path},
                                                 {"data_shape", "(3, 4, 4)"},
                                                 {"batch_size", "2"},
                                                 {"preprocess_threads", "3"},
                                                 {"prefetch_buffer", "2"},
                                                 {"round_batch", "False"}});
  for (int epoch = 0; epoch < 3; ++epoch) {
    int seen = 0;
    while (it->Next()) {
      const DataBatch& batch = it->Value();
      std::vector<float> data(static_cast<size_t>(batch.data[0].size())), label(2);
      batch.data[0].SyncCopyToCPU(data.data(), data.size() * sizeof(float));
      batch.label[0].SyncCopyToCPU(label.data(), label.size() * sizeof(float));
      for (int row = 0; row < 2 - batch.pad; ++row, ++seen) {
        EXPECT_EQ(label[static_cast<size_t>(row)], static_cast<float>(seen));
        EXPECT_EQ(batch.index[static_cast<size_t>(row)], 1000u + static_cast<uint64_t>(seen));
        for (int c = 0; c < 3; ++c)
          for (int y = 0; y < 4; ++y)
            for (int x = 0; x < 4; ++x)  // the centre crop: rows and columns 1..4
              ASSERT_EQ(data[static_cast<size_t>(((row * 3 + c) * 4 + y) * 4 + x)],
                        Pixel(seen, y + 1, x + 1, c));
      }
    }
    EXPECT_EQ(seen, kImages);
    it->BeforeFirst();
  }
}

}  // namespace
}  // namespace mxplug
