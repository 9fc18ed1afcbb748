// The MPI communication backend ("mpi"): abi/comm.h over Open MPI's C API, for host memory.
//
// Everything with a peer is non-blocking (MPI_I*), so that the host polls `test` under its
// deadline (Note [Deadlines are the host's] in abi/comm.h). The calls that must block (joining,
// splitting) first meet their peers in an MPI_Ibarrier polled under the deadline, so the blocking
// MPI call that follows finds every peer present.
//
// Note [Ring allreduce]
// Open MPI's non-blocking allreduce (libnbc) is slow on large buffers: 125 ms for 100 MB between
// two processes on this project's 2-core machine, against 52 ms for the blocking MPI_Allreduce.
// Buffers from kRingBytes up are therefore reduced by a ring of point-to-point messages (as
// Baidu's and Horovod's): the buffer in `size` segments, size-1 steps in which each process sends
// one segment to the next process and adds the one it receives from the previous one, then
// size-1 steps passing the finished segments on; 28 ms for the same 100 MB. Each allreduce has
// its own tag (the communicator's count of collectives started, the same on every process since
// all start them in the same order), so several may be in flight.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "mxplug/plugin.hpp"

namespace {

constexpr uint64_t kRingBytes = 64 << 10;

std::string MpiError(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, length);
}

void Check(int code, const std::string& what) {
  if (code != MPI_SUCCESS) throw std::runtime_error(what + ": " + MpiError(code));
}

int ToInt(uint64_t n, const char* what) {
  if (n > static_cast<uint64_t>(INT_MAX))
    throw std::invalid_argument(std::string(what) + " of " + std::to_string(n) +
                                " elements: MPI counts stop at 2^31-1 (split the array)");
  return static_cast<int>(n);
}

struct Comm {
  MPI_Comm comm = MPI_COMM_NULL;  // collectives and the host's messages
  MPI_Comm ring = MPI_COMM_NULL;  // the ring allreduce's messages, apart from the host's tags
  int rank = 0, size = 1;
  int collectives = 0;  // started so far: the tag of the next ring allreduce

  // The ring allreduces' receive buffers, kept for the next ones: a new buffer is new memory
  // from the system, whose page faults cost more than the transfer (100 MB between two
  // processes: 60 ms per allreduce with a new 50 MB buffer each time, against 23 ms reused).
  std::vector<char> TakeScratch(size_t bytes) {
    std::lock_guard<std::mutex> lock(scratch_mu);
    for (auto it = scratch.begin(); it != scratch.end(); ++it)
      if (it->size() >= bytes) {
        std::vector<char> found = std::move(*it);
        scratch.erase(it);
        return found;
      }
    return std::vector<char>(bytes);
  }
  void GiveScratch(std::vector<char> buffer) {
    std::lock_guard<std::mutex> lock(scratch_mu);
    if (!buffer.empty() && scratch.size() < 4) scratch.push_back(std::move(buffer));
  }
  std::mutex scratch_mu;
  std::vector<std::vector<char>> scratch;
};

Comm* Of(MXPComm* c) { return reinterpret_cast<Comm*>(c); }

// Polls an MPI request to completion under a deadline (for the calls that must block).
void WaitFor(MPI_Request* request, int64_t timeout_ms, const std::string& what) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto sleep = std::chrono::microseconds(50);
  for (;;) {
    int done = 0;
    Check(MPI_Test(request, &done, MPI_STATUS_IGNORE), what);
    if (done) return;
    const auto elapsed =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    if (elapsed.count() >= timeout_ms) {
      // A collective's request cannot be cancelled or freed (MPI 3.1, 5.12): it is left behind
      // for the job's end, which the missed deadline brings.
      throw mxplug::CommTimeout(what + ": not every process arrived within " +
                                std::to_string(timeout_ms) + " ms");
    }
    std::this_thread::sleep_for(sleep);
    sleep = std::min(sleep * 2, std::chrono::microseconds(1000));
  }
}

// A communicator with its ring twin, every peer having arrived (the caller polled a barrier).
Comm* MakeComm(MPI_Comm comm) {
  auto* c = new Comm();
  c->comm = comm;
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  Check(MPI_Comm_rank(comm, &c->rank), "MPI_Comm_rank");
  Check(MPI_Comm_size(comm, &c->size), "MPI_Comm_size");
  Check(MPI_Comm_dup(comm, &c->ring), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(c->ring, MPI_ERRORS_RETURN);
  return c;
}

MPI_Datatype TypeOf(const DLDataType& t) {
  if (t.lanes != 1) throw std::invalid_argument("allreduce: vector dtypes are not supported");
  switch (t.code) {
    case kDLFloat:
      if (t.bits == 32) return MPI_FLOAT;
      if (t.bits == 64) return MPI_DOUBLE;
      break;
    case kDLInt:
      if (t.bits == 8) return MPI_INT8_T;
      if (t.bits == 32) return MPI_INT32_T;
      if (t.bits == 64) return MPI_INT64_T;
      break;
    case kDLUInt:
      if (t.bits == 8) return MPI_UINT8_T;
      break;
  }
  throw std::invalid_argument(
      "the MPI backend reduces float32, float64, int8, int32, int64 and "
      "uint8 arrays, not dtype code " +
      std::to_string(t.code) + " with " + std::to_string(t.bits) + " bits");
}

uint64_t Elements(const DLTensor& t) {
  uint64_t n = 1;
  for (int i = 0; i < t.ndim; ++i) n *= static_cast<uint64_t>(t.shape[i]);
  return n;
}

void* Data(const DLTensor& t) { return static_cast<char*>(t.data) + t.byte_offset; }

template <typename T>
void Combine(T* into, const T* from, size_t n, MXPCommReduceOp op) {
  switch (op) {
    case kMXPCommSum:
      for (size_t i = 0; i < n; ++i) into[i] += from[i];
      break;
    case kMXPCommMax:
      for (size_t i = 0; i < n; ++i) into[i] = std::max(into[i], from[i]);
      break;
    case kMXPCommMin:
      for (size_t i = 0; i < n; ++i) into[i] = std::min(into[i], from[i]);
      break;
  }
}

void Combine(MPI_Datatype type, void* into, const void* from, size_t n, MXPCommReduceOp op) {
  if (type == MPI_FLOAT)
    return Combine(static_cast<float*>(into), static_cast<const float*>(from), n, op);
  if (type == MPI_DOUBLE)
    return Combine(static_cast<double*>(into), static_cast<const double*>(from), n, op);
  if (type == MPI_INT8_T)
    return Combine(static_cast<int8_t*>(into), static_cast<const int8_t*>(from), n, op);
  if (type == MPI_INT32_T)
    return Combine(static_cast<int32_t*>(into), static_cast<const int32_t*>(from), n, op);
  if (type == MPI_INT64_T)
    return Combine(static_cast<int64_t*>(into), static_cast<const int64_t*>(from), n, op);
  return Combine(static_cast<uint8_t*>(into), static_cast<const uint8_t*>(from), n, op);
}

MPI_Op OpOf(MXPCommReduceOp op) {
  switch (op) {
    case kMXPCommSum:
      return MPI_SUM;
    case kMXPCommMax:
      return MPI_MAX;
    case kMXPCommMin:
      return MPI_MIN;
  }
  throw std::invalid_argument("allreduce: unknown reduction " + std::to_string(op));
}

// ---- Requests ----

// How an abandoned operation is let go of: a receive is cancelled; a send is freed and completes
// or dies with the job; a collective's request may be neither cancelled nor freed (MPI 3.1, 5.12),
// so it is left behind (abandoning one means the job is ending).
enum class Kind { kReceive, kSend, kCollective };

void Drop(MPI_Request* request, Kind kind) {
  if (*request == MPI_REQUEST_NULL) return;
  if (kind == Kind::kReceive) {
    MPI_Cancel(request);
    MPI_Wait(request, MPI_STATUS_IGNORE);
  } else if (kind == Kind::kSend) {
    MPI_Request_free(request);
  }
}

struct Request {
  virtual ~Request() = default;
  virtual bool Test(MXPCommMessageInfo* info) = 0;
  virtual void Cancel() = 0;
};

// What a received or probed message's status says of it.
void Describe(const MPI_Status& status, MXPCommMessageInfo* info) {
  int bytes = 0;
  MPI_Get_count(&status, MPI_BYTE, &bytes);
  info->source = status.MPI_SOURCE;
  info->tag = status.MPI_TAG;
  info->bytes = static_cast<uint64_t>(bytes);
}

int SourceOf(int source) { return source == MXP_COMM_ANY_SOURCE ? MPI_ANY_SOURCE : source; }
int TagOf(int tag) { return tag == MXP_COMM_ANY_TAG ? MPI_ANY_TAG : tag; }

// One MPI request (a collective of Open MPI's, a send or a receive).
struct Single : Request {
  MPI_Request request = MPI_REQUEST_NULL;
  std::string what;
  Kind kind = Kind::kCollective;

  bool Test(MXPCommMessageInfo* info) override {
    int done = 0;
    MPI_Status status;
    Check(MPI_Test(&request, &done, &status), what);
    if (done && kind == Kind::kReceive && info) Describe(status, info);
    return done != 0;
  }
  void Cancel() override { Drop(&request, kind); }
};

// Note [Ring allreduce].
struct Ring : Request {
  Comm* comm;
  MPI_Datatype type;
  MXPCommReduceOp op;
  char* data;
  size_t elem, count, segment;  // element bytes, elements, elements per segment
  int tag;
  int step = 0;                // 0 .. 2(size-1)
  std::vector<char> incoming;  // Comm::TakeScratch's, given back at the end
  MPI_Request pending[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};

  ~Ring() override { comm->GiveScratch(std::move(incoming)); }

  // Segment i: [first, first + length) elements.
  size_t First(int i) const { return std::min(count, static_cast<size_t>(i) * segment); }
  size_t Length(int i) const { return std::min(count, First(i) + segment) - First(i); }
  int Mod(int i) const { return ((i % comm->size) + comm->size) % comm->size; }

  void Post() {
    const int p = comm->size, r = comm->rank;
    const int next = Mod(r + 1), previous = Mod(r - 1);
    const bool scatter = step < p - 1;
    const int s = scatter ? step : step - (p - 1);
    const int send = scatter ? Mod(r - s) : Mod(r + 1 - s);
    const int receive = scatter ? Mod(r - s - 1) : Mod(r - s);
    void* into = scatter ? incoming.data() : data + First(receive) * elem;
    Check(MPI_Irecv(into, ToInt(Length(receive), "allreduce"), type, previous, tag, comm->ring,
                    &pending[0]),
          "allreduce: MPI_Irecv");
    Check(MPI_Isend(data + First(send) * elem, ToInt(Length(send), "allreduce"), type, next, tag,
                    comm->ring, &pending[1]),
          "allreduce: MPI_Isend");
  }

  bool Test(MXPCommMessageInfo*) override {
    const int p = comm->size;
    while (step < 2 * (p - 1)) {
      int done = 0;
      Check(MPI_Testall(2, pending, &done, MPI_STATUSES_IGNORE), "allreduce");
      if (!done) return false;
      if (step < p - 1) {
        const int receive = Mod(comm->rank - step - 1);
        Combine(type, data + First(receive) * elem, incoming.data(), Length(receive), op);
      }
      if (++step < 2 * (p - 1)) Post();
    }
    return true;
  }
  void Cancel() override {
    Drop(&pending[0], Kind::kReceive);
    Drop(&pending[1], Kind::kSend);
  }
};

MXPCommRequest* Handle(Request* r) { return reinterpret_cast<MXPCommRequest*>(r); }

// Starts one MPI request: `start(&request)` returns MPI's code.
template <typename Start>
MXPCommRequest* StartSingle(const char* what, Kind kind, Start start) {
  auto r = std::make_unique<Single>();
  r->what = what;
  r->kind = kind;
  Check(start(&r->request), what);
  return Handle(r.release());
}

// ---- The backend ----

class MpiBackend : public mxplug::CommBackend {
 public:
  bool Available(std::string* reason) override {
    // mpirun (ORTE or PRRTE) and srun's PMIx give every process its rank in the environment.
    for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK"})
      if (std::getenv(v)) return true;
    *reason =
        "this process was not started by mpirun (start jobs with tools/launch.py, installed as "
        "mxplug-launch)";
    return false;
  }

  MXPComm* Init(const MXPCommBootstrap*, int64_t timeout_ms) override {
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (finalized)
      throw std::runtime_error("MPI was finalized in this process; it cannot join again");
    if (!initialized) {
      int provided = 0;
      Check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
      if (provided < MPI_THREAD_SERIALIZED)
        throw std::runtime_error("this MPI gives thread level " + std::to_string(provided) +
                                 "; the kvstore calls it from its own thread (needs "
                                 "MPI_THREAD_SERIALIZED or more)");
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Request arrived;
    Check(MPI_Ibarrier(MPI_COMM_WORLD, &arrived), "joining: MPI_Ibarrier");
    WaitFor(&arrived, timeout_ms, "joining the job");
    MPI_Comm world;
    Check(MPI_Comm_dup(MPI_COMM_WORLD, &world), "MPI_Comm_dup");
    return reinterpret_cast<MXPComm*>(MakeComm(world));
  }

  int Rank(MXPComm* c) override { return Of(c)->rank; }
  int Size(MXPComm* c) override { return Of(c)->size; }

  MXPComm* Split(MXPComm* c, int color, int key, int64_t timeout_ms) override {
    MPI_Request arrived;
    Check(MPI_Ibarrier(Of(c)->comm, &arrived), "split: MPI_Ibarrier");
    WaitFor(&arrived, timeout_ms, "split");
    MPI_Comm out;
    Check(MPI_Comm_split(Of(c)->comm, color < 0 ? MPI_UNDEFINED : color, key, &out),
          "MPI_Comm_split");
    if (out == MPI_COMM_NULL) return nullptr;
    MPI_Request settled;  // every member has its new communicator before the ring twin is made
    Check(MPI_Ibarrier(out, &settled), "split: MPI_Ibarrier");
    WaitFor(&settled, timeout_ms, "split");
    return reinterpret_cast<MXPComm*>(MakeComm(out));
  }

  void Free(MXPComm* c) override {
    Comm* comm = Of(c);
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) {
      MPI_Comm_free(&comm->ring);
      MPI_Comm_free(&comm->comm);
    }
    delete comm;
  }

  MXPCommRequest* Allreduce(MXPComm* c, DLTensor* buffer, MXPCommReduceOp op, void*) override {
    Comm* comm = Of(c);
    const MPI_Datatype type = TypeOf(buffer->dtype);
    const uint64_t count = Elements(*buffer);
    const size_t elem = buffer->dtype.bits / 8;
    const int tag = comm->collectives++ % 32768;  // MPI_TAG_UB is at least 32767
    if (count * elem < kRingBytes || comm->size == 1) {
      const int n = ToInt(count, "allreduce");
      return StartSingle("allreduce (MPI_Iallreduce)", Kind::kCollective, [&](MPI_Request* r) {
        return MPI_Iallreduce(MPI_IN_PLACE, Data(*buffer), n, type, OpOf(op), comm->comm, r);
      });
    }
    auto* r = new Ring();
    r->comm = comm;
    r->type = type;
    r->op = op;
    r->data = static_cast<char*>(Data(*buffer));
    r->elem = elem;
    r->count = count;
    r->segment = (count + comm->size - 1) / comm->size;
    r->tag = tag;
    r->incoming = comm->TakeScratch(r->segment * elem);
    try {
      r->Post();
    } catch (...) {
      r->Cancel();
      delete r;
      throw;
    }
    return Handle(r);
  }

  MXPCommRequest* Broadcast(MXPComm* c, DLTensor* buffer, int root, void*) override {
    Comm* comm = Of(c);
    ++comm->collectives;
    const int bytes = ToInt(
        Elements(*buffer) * ((buffer->dtype.bits * buffer->dtype.lanes + 7) / 8), "broadcast");
    return StartSingle("broadcast (MPI_Ibcast)", Kind::kCollective, [&](MPI_Request* r) {
      return MPI_Ibcast(Data(*buffer), bytes, MPI_BYTE, root, comm->comm, r);
    });
  }

  MXPCommRequest* Barrier(MXPComm* c) override {
    return StartSingle("barrier (MPI_Ibarrier)", Kind::kCollective,
                       [&](MPI_Request* r) { return MPI_Ibarrier(Of(c)->comm, r); });
  }

  MXPCommRequest* Send(MXPComm* c, const void* data, uint64_t bytes, int dest, int tag) override {
    const int n = ToInt(bytes, "send");
    return StartSingle("send (MPI_Isend)", Kind::kSend, [&](MPI_Request* r) {
      return MPI_Isend(data, n, MPI_BYTE, dest, tag, Of(c)->comm, r);
    });
  }

  MXPCommRequest* Recv(MXPComm* c, void* data, uint64_t bytes, int source, int tag) override {
    const int n = ToInt(bytes, "receive");
    return StartSingle("receive (MPI_Irecv)", Kind::kReceive, [&](MPI_Request* r) {
      return MPI_Irecv(data, n, MPI_BYTE, SourceOf(source), TagOf(tag), Of(c)->comm, r);
    });
  }

  bool Probe(MXPComm* c, int source, int tag, MXPCommMessageInfo* info) override {
    int found = 0;
    MPI_Status status;
    Check(MPI_Iprobe(SourceOf(source), TagOf(tag), Of(c)->comm, &found, &status),
          "probe (MPI_Iprobe)");
    if (found) Describe(status, info);
    return found != 0;
  }

  bool Test(MXPCommRequest* handle, MXPCommMessageInfo* info) override {
    auto* r = reinterpret_cast<Request*>(handle);
    bool done = false;
    try {
      done = r->Test(info);
    } catch (...) {
      r->Cancel();
      delete r;
      throw;
    }
    if (done) delete r;
    return done;
  }

  void Cancel(MXPCommRequest* handle) override {
    auto* r = reinterpret_cast<Request*>(handle);
    r->Cancel();
    delete r;
  }

  [[noreturn]] void Abort(MXPComm* c, int exit_code) override {
    MPI_Abort(c ? Of(c)->comm : MPI_COMM_WORLD, exit_code);
    std::_Exit(exit_code);
  }

  void Finalize() override {
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized) Check(MPI_Finalize(), "MPI_Finalize");
  }
};

}  // namespace

MXPLUG_PLUGIN("mpi", MXPLUG_PLUGIN_VERSION, "mxplug")
MXPLUG_REGISTER_COMM(mpi, MpiBackend);
