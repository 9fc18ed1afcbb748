// NDArray and the imperative path: every operation is an engine push on the arrays' variables;
// results are checked against values computed here, serially.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

#include "mxplug/error.h"
#include "mxplug/imperative.h"
#include "mxplug/ndarray.h"
#include "mxplug/runtime.h"
#include "mxplug/sdk/random.hpp"
#include "test_paths.h"

namespace mxplug {
namespace {

class NDArrayTest : public ::testing::Test {
 protected:
  void SetUp() override { Runtime::Get().EnsureDefaultPluginsLoaded(); }
  static void LoadFaultyOps() {
    static bool loaded = [] {
      PluginRecord rec = Runtime::Get().LoadFile(test::kFaultyDir + "/libtest_faulty_ops.so");
      EXPECT_TRUE(rec.loaded()) << rec.reason;
      return true;
    }();
    (void)loaded;
  }
};

NDArray FromVector(const std::vector<float>& v, const TShape& shape) {
  NDArray a(shape, Context::CPU());
  a.SyncCopyFromCPU(v.data(), v.size() * sizeof(float));
  return a;
}

std::vector<float> ToVector(const NDArray& a) {
  std::vector<float> v(static_cast<size_t>(a.size()));
  a.SyncCopyToCPU(v.data(), v.size() * sizeof(float));
  return v;
}

NDArray Call(const std::string& op, const KwArgs& kwargs, const std::vector<NDArray>& in,
             NDArray out = NDArray()) {
  std::vector<NDArray> outs;
  if (!out.is_none()) outs.push_back(out);
  ImperativeOp::Get(op, kwargs)->Invoke(in, &outs);
  return outs[0];
}

TEST_F(NDArrayTest, OpsRunThroughTheEngine) {
  NDArray a = FromVector({1, 2, 3, 4, 5, 6}, TShape{2, 3});
  NDArray b = FromVector({10, 20, 30, 40, 50, 60}, TShape{2, 3});
  NDArray c = Call("elemwise_add", {}, {a, b});
  EXPECT_EQ(c.shape(), (TShape{2, 3}));
  EXPECT_EQ(ToVector(c), (std::vector<float>{11, 22, 33, 44, 55, 66}));
  NDArray d = Call("_mul_scalar", {{"scalar", "2"}}, {c});
  EXPECT_EQ(ToVector(d), (std::vector<float>{22, 44, 66, 88, 110, 132}));
}

TEST_F(NDArrayTest, AliasesAreSerialized) {
  // b = a; a += 1; b *= 3: both name one variable, so the writes run in push order.
  NDArray a = FromVector({1, 2}, TShape{2});
  NDArray b = a;
  for (int i = 0; i < 100; ++i) {
    Call("_plus_scalar", {{"scalar", "1"}}, {a}, a);
    Call("_mul_scalar", {{"scalar", "3"}}, {b}, b);
  }
  std::vector<double> expect = {1, 2};
  for (int i = 0; i < 100; ++i)
    for (double& x : expect) x = (x + 1) * 3;
  std::vector<float> got = ToVector(b);
  for (size_t i = 0; i < 2; ++i) EXPECT_FLOAT_EQ(got[i], static_cast<float>(expect[i]));
}

TEST_F(NDArrayTest, ViewsShareMemoryAndVariable) {
  NDArray a = FromVector({0, 1, 2, 3, 4, 5}, TShape{3, 2});
  NDArray row = a.At(1);
  EXPECT_EQ(row.shape(), (TShape{2}));
  EXPECT_EQ(ToVector(row), (std::vector<float>{2, 3}));
  Call("_plus_scalar", {{"scalar", "10"}}, {row}, row);
  EXPECT_EQ(ToVector(a), (std::vector<float>{0, 1, 12, 13, 4, 5}));
  NDArray tail = a.Slice(1, 3).Reshape(TShape{4});
  EXPECT_EQ(ToVector(tail), (std::vector<float>{12, 13, 4, 5}));
  EXPECT_THROW(a.Slice(2, 4), Error);
  EXPECT_THROW(a.Reshape(TShape{4}), Error);
}

TEST_F(NDArrayTest, CopyToAndFromCPU) {
  NDArray a = FromVector({1, 2, 3}, TShape{3});
  NDArray b = a.CopyTo(Context::CPU());
  Call("_plus_scalar", {{"scalar", "1"}}, {a}, a);
  EXPECT_EQ(ToVector(b), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(ToVector(a), (std::vector<float>{2, 3, 4}));
  std::vector<float> small(2);
  EXPECT_THROW(a.SyncCopyToCPU(small.data(), 8), Error);
}

// Expects `call` to throw an Error whose message holds every one of `parts`.
template <typename F>
void ExpectErrorNaming(F call, const std::vector<std::string>& parts) {
  try {
    call();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    for (const std::string& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

TEST_F(NDArrayTest, ShapesWhoseSizeOverflowsAreRefusedWherePlacesTurnThemIntoMemory) {
  const int64_t big = int64_t{1} << 62;
  const std::string words = "more elements or bytes than a 64-bit size can count";
  ExpectErrorNaming(
      [&] {
        NDArray(TShape{big, 4}, Context::CPU());
      },
      {"NDArray: shape (4611686018427387904, 4)", words});
  // 2^61 elements fit, their float32 bytes do not.
  ExpectErrorNaming([&] { NDArray(TShape{int64_t{1} << 61}, Context::CPU()); },
                    {"of float32", words});
  float x = 0;
  ExpectErrorNaming(
      [&] {
        NDArray::FromExternal(&x, TShape{big, big}, kMXPFloat32, Context::CPU(), nullptr);
      },
      {"NDArray::FromExternal", words});
  NDArray empty(TShape{0, 4}, Context::CPU());
  // A zero-sized array may take any shape with a zero in it (no element to reach), not one without.
  EXPECT_EQ(empty.Reshape(TShape{0, big, big}).size(), 0);
  ExpectErrorNaming(
      [&] {
        empty.Reshape(TShape{big, big, 0}).View(TShape{big, big}, kMXPFloat32);
      },
      {"NDArray::View", words});
  ExpectErrorNaming([&] { empty.Reshape(TShape{4, big, 4}); }, {"NDArray::Reshape", words});
  EXPECT_TRUE(TShape({big, 1}).SizeFits(1));
  EXPECT_FALSE(TShape({big, 1}).SizeFits(2));  // 2^63 bytes: one past int64's largest
  EXPECT_TRUE(TShape({big, 0}).SizeFits(8));
}

TEST_F(NDArrayTest, ReadOnlyStorageRefusesEveryWriteAndKeepsItsContents) {
  NDArray base = FromVector({1, 2, 3, 4, 5, 6}, TShape{3, 2});
  NDArray view = base.Slice(1, 3).Reshape(TShape{4});
  EXPECT_TRUE(view.writable());
  base.SetReadOnly("the test's data set");
  EXPECT_FALSE(view.writable());  // every view of the storage
  const std::string owner = "the test's data set";
  NDArray other = FromVector({9, 9, 9, 9}, TShape{4});
  ExpectErrorNaming(
      [&] {
        Call("_plus_scalar", {{"scalar", "1"}}, {other}, view);
      },
      {"_plus_scalar: output 'output'", "read-only", owner});
  ExpectErrorNaming([&] { NDArray::Copy(other, view); }, {"NDArray::Copy: the destination", owner});
  std::vector<float> host(4, 0);
  ExpectErrorNaming([&] { view.SyncCopyFromCPU(host.data(), 16); }, {"SyncCopyFromCPU", owner});
  // A gradient written by backward, and an auxiliary state (updated in place by BatchNorm).
  std::vector<NDArray> grads = {view, other};
  ExpectErrorNaming(
      [&] {
        ImperativeOp::Get("elemwise_add", {})->Backward({other}, {other, other}, {other}, &grads);
      },
      {"elemwise_add backward: gradient of 'lhs'", owner});
  NDArray data = FromVector({1, 2, 3, 4}, TShape{2, 2}), gamma = FromVector({1, 1}, TShape{2});
  NDArray beta = FromVector({0, 0}, TShape{2}), var = FromVector({1, 1}, TShape{2});
  NDArray stats = FromVector({0, 0, 0, 0}, TShape{2, 2});
  stats.SetReadOnly(owner);
  std::vector<NDArray> outs;
  ExpectErrorNaming(
      [&] {
        ImperativeOp::Get("BatchNorm", {})
            ->Invoke({data, gamma, beta, stats.At(0), var}, &outs, true);
      },
      {"BatchNorm: auxiliary state 'moving_mean'", owner});
  // Reading is as before, and nothing was written.
  EXPECT_EQ(ToVector(Call("_plus_scalar", {{"scalar", "1"}}, {view})),
            (std::vector<float>{4, 5, 6, 7}));
  EXPECT_EQ(ToVector(base), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(ToVector(stats), (std::vector<float>{0, 0, 0, 0}));
  EXPECT_TRUE(view.CopyTo(Context::CPU()).writable());
}

TEST_F(NDArrayTest, BadCallsRaiseAtTheCallNamingOpAndArgument) {
  NDArray a = FromVector({1, 2, 3}, TShape{3});
  NDArray b = FromVector({1, 2}, TShape{2});
  ExpectErrorNaming([&] { Call("elemwise_add", {}, {a, b}); }, {"elemwise_add", "rhs"});
  EXPECT_THROW(Call("elemwise_add", {}, {a}), Error);
  EXPECT_THROW(Call("FullyConnected", {{"num_hidden", "0"}}, {a, a, a}), Error);
  NDArray wrong_out = FromVector({0, 0}, TShape{2});
  EXPECT_THROW(Call("_plus_scalar", {{"scalar", "1"}}, {a}, wrong_out), Error);
}

TEST_F(NDArrayTest, KernelErrorsSurfaceAtTheNextSyncPointThenClear) {
  LoadFaultyOps();
  NDArray a = FromVector({1, 2, 3}, TShape{3});
  // The call itself succeeds: the kernel runs later, on a worker.
  NDArray bad = Call("test.FailForward", {}, {a});
  NDArray after = Call("_plus_scalar", {{"scalar", "1"}}, {bad});  // reads a failed array: skipped
  try {
    after.WaitToRead();
    FAIL() << "no error at the sync point";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("test.FailForward"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("deliberate failure"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(after.WaitToRead());  // reported once, then cleared
  EXPECT_NO_THROW(bad.WaitToRead());    // everywhere it reached, as in MXNet 1.9.1
  EXPECT_NO_THROW(Engine::Get()->WaitForAll());
}

// Note [Asynchronous kernels]: the kernel returns before its work is done; the engine holds its
// output until the work calls back, and an error it calls back with surfaces as a kernel's does.
TEST_F(NDArrayTest, AsynchronousKernelsEndWhenTheyCallBack) {
  LoadFaultyOps();
  NDArray a = FromVector({1, 2, 3}, TShape{3});
  NDArray doubled = Call("test.AsyncDouble", {}, {a});
  NDArray after = Call("_plus_scalar", {{"scalar", "1"}}, {doubled});  // waits for the callback
  EXPECT_EQ(ToVector(after), (std::vector<float>{3, 5, 7}));
  // Many in flight at once, in a chain: each reads what the one before wrote.
  NDArray x = a;
  for (int i = 0; i < 5; ++i) x = Call("test.AsyncDouble", {}, {x});
  EXPECT_EQ(ToVector(x), (std::vector<float>{32, 64, 96}));

  NDArray bad = Call("test.AsyncDouble", {}, {FromVector({1, -2, 3}, TShape{3})});
  try {
    bad.WaitToRead();
    FAIL() << "no error at the sync point";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("test.AsyncDouble forward"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("negative input at element 1"), std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(Engine::Get()->WaitForAll());
}

TEST_F(NDArrayTest, OutputAliasingAnInputGoesThroughATemporaryUnlessDeclaredInPlace) {
  LoadFaultyOps();
  // test.Reverse writing over its own input in place would read overwritten elements.
  NDArray a = FromVector({1, 2, 3, 4, 5}, TShape{5});
  Call("test.Reverse", {}, {a}, a);
  EXPECT_EQ(ToVector(a), (std::vector<float>{5, 4, 3, 2, 1}));
}

TEST_F(NDArrayTest, ExternalMemoryIsReleasedAfterPendingWork) {
  auto buffer = std::make_shared<std::vector<float>>(std::vector<float>{1, 2, 3});
  std::weak_ptr<std::vector<float>> watch = buffer;
  NDArray out;
  {
    NDArray ext =
        NDArray::FromExternal(buffer->data(), TShape{3}, kMXPFloat32, Context::CPU(), buffer);
    buffer.reset();
    out = Call("_mul_scalar", {{"scalar", "2"}}, {ext});
  }
  EXPECT_EQ(ToVector(out), (std::vector<float>{2, 4, 6}));
  Engine::Get()->WaitForAll();
  EXPECT_TRUE(watch.expired());
}

TEST(Philox, KnownAnswerVectors) {
  // Known-answer tests published with Random123 (kat_vectors, philox4x32 with 10 rounds).
  auto zero = Philox4x32_10(0, 0, 0);
  EXPECT_EQ(zero, (std::array<uint32_t, 4>{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  auto ones = Philox4x32_10(~0ull, ~0ull, ~0ull);
  EXPECT_EQ(ones, (std::array<uint32_t, 4>{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  auto pi = Philox4x32_10(0x299f31d0a4093822ull, 0x85a308d3243f6a88ull, 0x0370734413198a2eull);
  EXPECT_EQ(pi, (std::array<uint32_t, 4>{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

}  // namespace
}  // namespace mxplug

namespace mxplug {
namespace {

// Note [Storage pool]: a freed block serves the next allocation of its size class (an array of
// the same shape here), and a block still in use is never handed out twice.
TEST_F(NDArrayTest, FreedStorageIsReusedForTheSameSizeClass) {
  void* first;
  {
    std::shared_ptr<Storage> a = Storage::Alloc(1 << 20, Context::CPU());
    first = a->data();
    std::memset(first, 1, 1 << 20);
  }
  std::shared_ptr<Storage> b = Storage::Alloc((1 << 20) - 100, Context::CPU());  // same whole pages
  EXPECT_EQ(b->data(), first);
  EXPECT_EQ(b->bytes(), (1u << 20) - 100);
  std::shared_ptr<Storage> c = Storage::Alloc(1 << 20, Context::CPU());
  EXPECT_NE(c->data(), b->data());
  std::shared_ptr<Storage> small = Storage::Alloc(0, Context::CPU());
  EXPECT_NE(small->data(), nullptr);
}

// Every allocation asks the device backend for its device count, from whichever thread allocates
// (the iterators' decode threads, say). Under ThreadSanitizer (tools/test.sh) this catches a
// backend or SDK that writes shared state in that call; everywhere it checks that each thread's
// arrays keep their own values.
TEST_F(NDArrayTest, ArraysAreMadeFromManyThreadsAtOnce) {
  constexpr int kThreads = 8, kArrays = 200;
  std::vector<std::vector<float>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([t, &seen] {
      for (int i = 0; i < kArrays; ++i) {
        const float value = static_cast<float>(t * kArrays + i);
        NDArray a = FromVector({value, value + 0.5f}, TShape{2});
        const std::vector<float> back = ToVector(a);
        seen[t].push_back(back[0] + back[1]);
      }
    });
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(seen[t].size(), static_cast<size_t>(kArrays));
    for (int i = 0; i < kArrays; ++i)
      EXPECT_EQ(seen[t][i], 2.0f * (t * kArrays + i) + 0.5f) << "thread " << t << ", array " << i;
  }
}

}  // namespace
}  // namespace mxplug
