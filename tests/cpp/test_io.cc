// The data iterators' machinery: the Prefetcher (order, the bound on batches made ahead, errors
// from its threads, restarts) and the core iterators through DataIter::Create (batches, pads,
// round_batch epochs and shards against the rules computed here).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "io/prefetcher.h"
#include "mxplug/error.h"
#include "mxplug/io.h"
#include "mxplug/runtime.h"
#include "test_paths.h"

namespace mxplug {
namespace {

TEST(PrefetcherTest, GivesEveryBatchInOrderFromManyThreads) {
  io::Prefetcher prefetcher(4, 3);
  prefetcher.Start(200, [](size_t b, DataBatch* out) {
    std::this_thread::sleep_for(std::chrono::microseconds((b * 7919) % 300));  // finish out of order
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
    prefetcher.Start(1000, [](size_t, DataBatch*) { std::this_thread::sleep_for(std::chrono::microseconds(50)); });
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
  auto it = DataIter::Create("CSVIter", {{"data_csv", path}, {"data_shape", "(2,)"}, {"batch_size", "3"}});
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
    auto it = DataIter::Create("CSVIter", {{"data_csv", path}, {"data_shape", "(2,)"}, {"batch_size", "1"},
                                           {"num_parts", "3"}, {"part_index", std::to_string(part)}});
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
  EXPECT_EQ(message("JPEGIter", {}), "no data iterator named 'JPEGIter'; there are CSVIter, MNISTIter");
  EXPECT_EQ(message("CSVIter", {{"data_csv", bad}, {"data_shape", "(2,)"}, {"batch_size", "1"}}),
            "CSVIter: data_csv '" + bad + "' line 2 field 2: 'x' is not a number");
  EXPECT_EQ(message("CSVIter", {{"data_csv", good}, {"data_shape", "(3,)"}, {"batch_size", "1"}}),
            "CSVIter: data_csv '" + good + "' line 1 has 2 values, expected 3 for shape (3,)");
  EXPECT_EQ(message("CSVIter", {{"data_csv", good}, {"data_shape", "(2"}, {"batch_size", "1"}}),
            "CSVIter: argument 'data_shape' is '(2', expected a shape such as (3, 28, 28)");
  EXPECT_EQ(message("CSVIter", {{"data_csv", good}, {"data_shape", "(2,)"}, {"batch_size", "1"},
                                {"num_parts", "2"}, {"part_index", "2"}}),
            "CSVIter: part_index 2 is not below num_parts 2");
  EXPECT_EQ(message("MNISTIter", {{"image", test::kScratchDir + "/none"}}),
            "MNISTIter: cannot open '" + test::kScratchDir + "/none': No such file or directory");
}

}  // namespace
}  // namespace mxplug
