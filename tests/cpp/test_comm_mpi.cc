// The MPI communication backend through the core's Communicator, run by ctest as
// `mpirun -n 3 mxplug_comm_test`: every rank runs every test, and each checks its own results
// against values it computes alone (what each rank contributed is a function of its rank).
#include <gtest/gtest.h>

#include <cstdlib>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "mxplug/comm.h"
#include "mxplug/error.h"
#include "mxplug/runtime.h"
#include "test_paths.h"

namespace mxplug {
namespace {

std::shared_ptr<const CommEntry> Mpi() {
  Runtime& rt = Runtime::Get();
  rt.EnsureDefaultPluginsLoaded();
  auto entry = rt.comms().Find("mpi");
  if (!entry) throw Error("the mpi plugin is not loaded");
  return entry;
}

std::shared_ptr<Communicator> World() { return Mpi()->World(Deadline::After(30)); }

// A 1-d tensor over v; `shape` holds its length and must live as long as the tensor.
template <typename T>
DLTensor Tensor(std::vector<T>& v, DLDataType type, int64_t* shape) {
  DLTensor t{};
  t.data = v.data();
  t.device = {kDLCPU, 0};
  t.ndim = 1;
  *shape = static_cast<int64_t>(v.size());
  t.shape = shape;
  t.dtype = type;
  return t;
}

constexpr DLDataType kF32{kDLFloat, 32, 1};
constexpr DLDataType kI64{kDLInt, 64, 1};

TEST(CommMpi, TheWorldIsEveryProcessOfTheJob) {
  auto world = World();
  EXPECT_EQ(world->size(), std::atoi(std::getenv("OMPI_COMM_WORLD_SIZE")));
  EXPECT_EQ(world->rank(), std::atoi(std::getenv("OMPI_COMM_WORLD_RANK")));
  EXPECT_EQ(World().get(), world.get()) << "joining twice gives the same communicator";
  std::string reason;
  EXPECT_TRUE(Mpi()->Available(&reason)) << reason;
  EXPECT_TRUE(Mpi()->Serves(kDLCPU));
  EXPECT_FALSE(Mpi()->Serves(kDLCUDA));
}

// Sizes on both sides of the ring threshold (64 KiB), counts that do not divide by the size.
TEST(CommMpi, AllreduceSumsWhatEveryRankGave) {
  auto world = World();
  const int p = world->size();
  for (size_t n : {size_t{1}, size_t{1000}, size_t{16385}, size_t{100003}, size_t{1} << 20}) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>((i % 97) * (world->rank() + 1));
    int64_t n_v;
    DLTensor t = Tensor(v, kF32, &n_v);
    world->Allreduce(&t, kMXPCommSum, "allreduce test", Deadline::After(30));
    const float ranks = p * (p + 1) / 2.0f;  // sum of (rank + 1): exact in float32 for these sizes
    for (size_t i = 0; i < n; ++i)
      ASSERT_EQ(v[i], static_cast<float>(i % 97) * ranks) << "n=" << n << " i=" << i;
  }
}

TEST(CommMpi, AllreduceMaxAndMinOfInt64) {
  auto world = World();
  const int p = world->size(), r = world->rank();
  for (size_t n : {size_t{10}, size_t{50000}}) {
    std::vector<int64_t> hi(n), lo(n);
    for (size_t i = 0; i < n; ++i)
      hi[i] = lo[i] = (int64_t{1} << 40) * ((r + static_cast<int>(i)) % p) - 7;
    int64_t n_hi, n_lo;
    DLTensor th = Tensor(hi, kI64, &n_hi);
    world->Allreduce(&th, kMXPCommMax, "max", Deadline::After(30));
    DLTensor tl = Tensor(lo, kI64, &n_lo);
    world->Allreduce(&tl, kMXPCommMin, "min", Deadline::After(30));
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(hi[i], (int64_t{1} << 40) * (p - 1) - 7);
      ASSERT_EQ(lo[i], -7);
    }
  }
}

TEST(CommMpi, SeveralAllreducesInFlightCompleteInAnyOrder) {
  auto world = World();
  const int p = world->size();
  std::vector<std::vector<float>> buffers;
  for (size_t n : {size_t{300000}, size_t{10}, size_t{200000}, size_t{7}, size_t{100000}})
    buffers.emplace_back(n, static_cast<float>(world->rank() + 1));
  std::vector<int64_t> shapes(buffers.size());
  std::vector<DLTensor> tensors(buffers.size());
  std::vector<CommRequest> requests;
  for (size_t i = 0; i < buffers.size(); ++i) {
    tensors[i] = Tensor(buffers[i], kF32, &shapes[i]);
    requests.push_back(world->StartAllreduce(&tensors[i], kMXPCommSum, "in flight"));
  }
  for (size_t i = requests.size(); i-- > 0;) requests[i].Wait(Deadline::After(30));
  for (auto& b : buffers)
    for (float x : b) ASSERT_EQ(x, p * (p + 1) / 2.0f);
}

TEST(CommMpi, BroadcastGivesTheRootsValue) {
  auto world = World();
  const int root = world->size() - 1;
  std::vector<int64_t> v(1000, world->rank() == root ? 42 : -1);
  int64_t n_v;
  DLTensor t = Tensor(v, kI64, &n_v);
  world->Broadcast(&t, root, "broadcast test", Deadline::After(30));
  for (int64_t x : v) ASSERT_EQ(x, 42);
}

TEST(CommMpi, SplitGroupsByColorAndRanksByKey) {
  auto world = World();
  const int p = world->size(), r = world->rank();
  auto part = world->Split(r % 2, -r, Deadline::After(30));  // a negative key reverses the order
  ASSERT_TRUE(part);
  const int members = (p + 1 - r % 2) / 2;
  EXPECT_EQ(part->size(), members);
  EXPECT_EQ(part->rank(), members - 1 - r / 2);
  std::vector<float> v(100000, static_cast<float>(r));
  int64_t n_v;
  DLTensor t = Tensor(v, kF32, &n_v);
  part->Allreduce(&t, kMXPCommSum, "allreduce in a part", Deadline::After(30));
  float expected = 0;
  for (int q = r % 2; q < p; q += 2) expected += static_cast<float>(q);
  EXPECT_EQ(v[0], expected);
  EXPECT_EQ(v.back(), expected);
}

TEST(CommMpi, MessagesArriveWithSourceTagAndSize) {
  auto world = World();
  const int p = world->size(), r = world->rank();
  std::vector<int32_t> out(5 + r, r);
  CommRequest sent = world->StartSend(out.data(), out.size() * 4, (r + 1) % p, 100 + r, "send");
  MXPCommMessageInfo info{};
  info.struct_size = sizeof info;
  const Deadline deadline = Deadline::After(30);
  while (!world->Probe(MXP_COMM_ANY_SOURCE, MXP_COMM_ANY_TAG, &info)) {
    ASSERT_FALSE(deadline.Passed()) << "no message arrived";
    std::this_thread::yield();
  }
  const int from = (r + p - 1) % p;
  EXPECT_EQ(info.source, from);
  EXPECT_EQ(info.tag, 100 + from);
  EXPECT_EQ(info.bytes, static_cast<uint64_t>(5 + from) * 4);
  std::vector<int32_t> in(64, -1);
  MXPCommMessageInfo got{};
  got.struct_size = sizeof got;
  world->StartRecv(in.data(), in.size() * 4, MXP_COMM_ANY_SOURCE, MXP_COMM_ANY_TAG, "recv")
      .Wait(deadline, &got);
  EXPECT_EQ(got.source, from);
  EXPECT_EQ(got.bytes, info.bytes);
  for (int i = 0; i < 5 + from; ++i) EXPECT_EQ(in[i], from);
  EXPECT_EQ(in[5 + from], -1) << "nothing past the message was written";
  sent.Wait(deadline);
}

TEST(CommMpi, AWaitEndsAtItsDeadlineNamingTheOperation) {
  auto world = World();
  const int late = world->size() - 1;
  if (world->rank() == late) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    world->Barrier("the late rank's barrier", Deadline::After(30));
    return;
  }
  CommRequest barrier = world->StartBarrier("barrier before the late rank");
  const Deadline deadline = Deadline::After(0.3);
  try {
    barrier.Wait(deadline);
    FAIL() << "the barrier completed without the late rank";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kMXPDeadlineExceeded);
    EXPECT_NE(std::string(e.what()).find("barrier before the late rank: no answer after 0.3 s"),
              std::string::npos)
        << e.what();
    EXPECT_LT(deadline.Elapsed(), 1.0) << "the wait overran its deadline";
  }
  barrier.Wait(Deadline::After(30));  // the request outlives the error: the late rank completes it
}

TEST(CommMpi, ADtypeMpiCannotSumIsRefusedByName) {
  auto world = World();
  std::vector<uint16_t> v(8);
  int64_t n_v;
  DLTensor t = Tensor(v, DLDataType{kDLFloat, 16, 1}, &n_v);
  try {
    world->StartAllreduce(&t, kMXPCommSum, "float16 allreduce");
    FAIL() << "float16 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kMXPInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("float32, float64"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mxplug

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int code = RUN_ALL_TESTS();
  mxplug::Mpi()->Finalize();
  return code;
}
