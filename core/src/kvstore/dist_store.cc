// The distributed stores and the server loop (docs/distributed.md).
//
// Note [dist_sync is an allreduce]
// MXNet's dist_sync sends every worker's sum of a key to the servers, which wait for all
// num_workers pushes, add them, run the updater once and answer the pulls with the result. Here
// the workers add their sums among themselves (an allreduce through the communication backend)
// and each runs the same updater on its own copy of the weights: the same arithmetic on the same
// inputs, so every worker holds what MXNet's servers would (within the order of the float32
// additions), without the round trip through a server. Servers of such a job only wait for the
// workers to finish.
//
// Note [dist_async on servers]
// As MXNet's: the keys live on the servers. A worker's push sends its sum there and returns; the
// server applies it at once, with the updater made from the optimizer set_optimizer pickled to
// the servers (without one, a push replaces the value), not waiting for other workers; a pull asks
// for the value the servers hold. A key of MXNET_KVSTORE_BIGARRAY_BOUND elements or more (default
// 1e6) is split in near-equal parts over all servers; a smaller one lives whole on server
// (id * 9973) % servers, its id being its place in init order (MXNet's rules). A request is a
// header message (kTagRequest) followed, for init and push, by the part's bytes (kTagData): MPI
// keeps one sender's messages in order, so a server reads a request's bytes right after its
// header. A pull is answered by one kTagReply message per part, whose receives the worker posts
// before it asks. Requests are not acknowledged, except where order across workers matters: worker
// 0's init waits for each server's empty reply before the workers meet at a barrier (no worker
// pulls a key before its server holds it), a barrier first waits for each server to answer a
// flush (it has served every earlier request of this worker), and commands are answered once the
// controller has run (a set_optimizer is in place before any later push of any worker).
#include "kvstore/dist_store.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <unordered_map>

#include "kvstore/dist_job.h"
#include "kvstore/merging_store.h"
#include "mxplug/error.h"

namespace mxplug {

namespace {

// DLTensor views keep their shape here: the tensor must not outlive the array it describes.
struct HostView {
  explicit HostView(const NDArray& a) : array(a), tensor(array.ToDLTensor()) {}
  NDArray array;
  DLTensor tensor;
};

// A request's header (Note [dist_async on servers]); the key's name follows it in the message.
struct RequestHead {
  int32_t op;  // RequestOp
  int32_t dtype;
  int32_t store;   // which dist_async store of the workers: they make them in the same order
  int32_t key;     // the key's place in that store's init order
  int64_t offset;  // the part's first element in the key's flattened value
  int64_t count;   // its elements
};
enum RequestOp : int32_t { kOpInit = 1, kOpPush = 2, kOpPull = 3, kOpFlush = 4 };

std::string EncodeRequest(const RequestHead& head, const std::string& key) {
  std::string message(sizeof head, '\0');
  std::memcpy(message.data(), &head, sizeof head);
  return message + key;
}

// A worker's messages to the servers in one operation, started together and waited for together
// under one deadline.
class Exchange {
 public:
  explicit Exchange(const DistJob& job) : job_(job), deadline_(job.NewDeadline()) {}

  void Send(const void* data, size_t bytes, int server, int tag, const std::string& what) {
    pending_.push_back(job_.world().StartSend(data, bytes, server, tag, what));
  }
  // A request's header (kept here until its send completes).
  void Request(int server, const RequestHead& head, const std::string& key,
               const std::string& what) {
    heads_.push_back(EncodeRequest(head, key));
    Send(heads_.back().data(), heads_.back().size(), server, kTagRequest, what);
  }
  // A server's answer: a pull's bytes, or an empty acknowledgement.
  void Receive(void* data, size_t bytes, int server, const std::string& what) {
    pending_.push_back(job_.world().StartRecv(data, bytes, server, kTagReply, what));
  }
  void Wait() {
    for (CommRequest& r : pending_) r.Wait(deadline_);
  }

 private:
  const DistJob& job_;
  Deadline deadline_;
  std::deque<std::string> heads_;  // a deque: its strings never move while sends read them
  std::vector<CommRequest> pending_;
};

// What both kinds of distributed store share: the job, barriers, commands, the check of init.
class DistStore : public MergingStore {
 public:
  DistStore(const std::string& type, DistJob& job, bool sum_on_device)
      : MergingStore(type, sum_on_device), job_(job) {}

  int rank() const override { return job_.rank(); }
  int num_workers() const override { return job_.num_workers(); }

  void Barrier() override {
    job_.Run([this] { job_.workers().Barrier("kvstore barrier", job_.NewDeadline()); });
  }

  void SendCommandToServers(int head, const std::string& body) override {
    std::string message(sizeof(int32_t), '\0');
    const int32_t h = head;
    std::memcpy(message.data(), &h, sizeof h);
    message += body;
    // Each server answers once its controller has run (MXNet waits for that too): a worker's
    // set_optimizer reaches the servers before the pushes of any worker that follow.
    job_.Run([this, head, message] {
      Exchange exchange(job_);
      for (int server : job_.server_ranks()) {
        const std::string what = "sending command " + std::to_string(head) + " to server process " +
                                 std::to_string(server);
        exchange.Receive(nullptr, 0, server, what);
        exchange.Send(message.data(), message.size(), server, kTagCommand, what);
      }
      exchange.Wait();
    });
  }

 protected:
  // Every worker must init the same keys, in the same order, with arrays of the same size: else
  // the collectives (or the servers' keys) would pair different keys. Values and their negations
  // under a max find any difference: first of the number of keys (lists of different lengths
  // cannot be reduced together), then of each key's hash and size.
  void CheckSameKeys(const std::vector<std::string>& keys, const std::vector<Entry*>& entries) {
    const std::string what = "kvstore init: comparing the keys of the workers";
    const int64_t n = static_cast<int64_t>(keys.size());
    std::vector<int64_t> count{n, -n}, each;
    for (size_t i = 0; i < keys.size(); ++i) {
      const int64_t hash = static_cast<int64_t>(std::hash<std::string>()(keys[i]) >> 1);
      const int64_t bytes = static_cast<int64_t>(entries[i]->stored.bytes());
      each.insert(each.end(), {hash, -hash, bytes, -bytes});
    }
    job_.Run([&] {
      AllreduceMax(job_.workers(), &count, what, job_.NewDeadline());
      if (count[0] == -count[1]) AllreduceMax(job_.workers(), &each, what, job_.NewDeadline());
    });
    if (count[0] != -count[1])
      throw Error("kvstore init: this worker initialises " + std::to_string(n) +
                      " keys in one call, another worker a different number (from " +
                      std::to_string(-count[1]) + " to " + std::to_string(count[0]) +
                      "); every worker must init the same keys (" + job_.Who() + ")",
                  kMXPInvalidArgument);
    for (size_t i = 0; i < keys.size(); ++i) {
      const int64_t* m = &each[4 * i];
      if (m[0] != -m[1])
        throw Error("kvstore init: key '" + keys[i] +
                        "' is not the key other workers initialise at that place; every "
                        "worker must init the same keys in the same order (" +
                        job_.Who() + ")",
                    kMXPInvalidArgument);
      if (m[2] != -m[3])
        throw Error("kvstore init: key '" + keys[i] + "' is " + entries[i]->stored.Describe() +
                        " here (" + std::to_string(entries[i]->stored.bytes()) +
                        " bytes), while another worker's has between " + std::to_string(-m[3]) +
                        " and " + std::to_string(m[2]) + " bytes (" + job_.Who() + ")",
                    kMXPInvalidArgument);
    }
  }

  DistJob& job_;
};

class DistSyncStore : public DistStore {
 public:
  DistSyncStore(const std::string& type, DistJob& job)
      : DistStore(type, job, type.find("device") != std::string::npos) {}

 protected:
  // MXNet: rank 0 pushes its values, every worker waits at a barrier, then all pull: every
  // worker starts from rank 0's values. Here rank 0's stored copies are broadcast, after a check
  // that every worker initialises the same keys with arrays of the same size.
  void InitStored(const std::vector<std::string>& keys, std::vector<Entry*>& entries) override {
    CheckSameKeys(keys, entries);
    for (size_t i = 0; i < keys.size(); ++i) {
      const NDArray& stored = entries[i]->stored;  // on a device for dist_device_sync
      NDArray host = stored.ctx().IsHost() ? stored : stored.CopyTo(Context::CPU());
      job_.Push(
          [this, view = std::make_shared<HostView>(host), key = keys[i]] {
            job_.workers().Broadcast(&view->tensor, 0,
                                     "kvstore init: taking worker 0's value of key '" + key + "'",
                                     job_.NewDeadline());
          },
          {}, {host.var()}, "kvstore init broadcast");
      if (!(host.ctx() == stored.ctx())) NDArray::Copy(host, stored);
    }
    for (Entry* entry : entries)
      entry->stored.WaitToRead();  // MXNet's init returns after a barrier
  }

  // Note [dist_sync is an allreduce].
  void Apply(const std::string& key, Entry* entry, const NDArray& merged) override {
    // Without an updater the sum is the stored value: summed there, one copy less (100 MB: 8 ms).
    const bool in_place = !has_updater() && merged.ctx().IsHost() && entry->stored.ctx().IsHost();
    if (entry->host.is_none() && !in_place)
      entry->host = NDArray(merged.shape(), Context::CPU(), merged.dtype());
    NDArray host = in_place ? entry->stored : entry->host;
    NDArray::Copy(merged, host);
    job_.Push(
        [this, view = std::make_shared<HostView>(host), key] {
          job_.workers().Allreduce(&view->tensor, kMXPCommSum,
                                   "kvstore push: summing key '" + key + "' over the workers",
                                   job_.NewDeadline());
        },
        {}, {host.var()}, "kvstore allreduce");
    if (in_place) return;
    if (merged.ctx() == host.ctx()) return MergingStore::Apply(key, entry, host);
    // dist_device_sync: the updater works on the device the values were merged on.
    if (entry->on_device.is_none() || !(entry->on_device.ctx() == merged.ctx()))
      entry->on_device = NDArray(merged.shape(), merged.ctx(), merged.dtype());
    NDArray::Copy(host, entry->on_device);
    MergingStore::Apply(key, entry, entry->on_device);
  }
};

// The part of a key one server holds (server: its rank in the world).
struct Part {
  int server;
  int64_t offset, count;
};

// MXNET_KVSTORE_BIGARRAY_BOUND: keys of this many elements or more are split over the servers.
int64_t BigArrayBound() {
  const char* text = std::getenv("MXNET_KVSTORE_BIGARRAY_BOUND");
  if (!text || !*text) return 1000 * 1000;
  char* end = nullptr;
  const long long bound = std::strtoll(text, &end, 10);
  if (*end != '\0' || bound < 1)
    throw Error(std::string("MXNET_KVSTORE_BIGARRAY_BOUND='") + text +
                    "': expected a number of elements of at least 1",
                kMXPInvalidArgument);
  return bound;
}

// Note [dist_async on servers].
class DistAsyncStore : public DistStore {
 public:
  DistAsyncStore(const std::string& type, DistJob& job)
      : DistStore(type, job, false), store_(stores_made_++), bound_(BigArrayBound()) {
    if (job.num_servers() == 0)
      throw Error("kvstore '" + type +
                      "' keeps its keys on servers and this job has none; start it with "
                      "servers (tools/launch.py -s 1 or more)",
                  kMXPFailedPrecondition);
  }

  // The servers first answer every request this worker sent them, so after the barrier they
  // hold every push made before it by any worker.
  void Barrier() override {
    job_.Run([this] {
      Exchange exchange(job_);
      for (int server : job_.server_ranks()) {
        const std::string what =
            "kvstore barrier: waiting for server process " + std::to_string(server);
        exchange.Receive(nullptr, 0, server, what);
        exchange.Request(server, {kOpFlush, 0, store_, 0, 0, 0}, "", what);
      }
      exchange.Wait();
      job_.workers().Barrier("kvstore barrier", job_.NewDeadline());
    });
  }

  void SetUpdater(Updater updater) override {
    if (updater)
      throw Error("kvstore '" + type() +
                      "': the updater runs on the servers; give them an optimizer with "
                      "set_optimizer",
                  kMXPFailedPrecondition);
  }

  void Pull(const std::vector<std::string>& keys, const std::vector<NDArray>& outs, int) override {
    CheckSizes("pull", keys.size(), outs.size());
    for (size_t i = 0; i < keys.size(); ++i) CheckValue("pull", keys[i], outs[i]);
    for (size_t i = 0; i < keys.size(); ++i)
      outs[i].CheckWritable("pull: the output for key '" + keys[i] + "'");
    for (size_t i = 0; i < keys.size(); ++i) {
      if (std::find(keys.begin(), keys.begin() + i, keys[i]) == keys.begin() + i)
        Fetch(keys[i]);  // once per call for a key given several outputs
      NDArray::Copy(entry(keys[i]).host, outs[i]);
    }
  }

 protected:
  void InitStored(const std::vector<std::string>& keys, std::vector<Entry*>& entries) override {
    CheckSameKeys(keys, entries);
    for (const std::string& key : keys) ids_[key] = static_cast<int32_t>(ids_.size());
    if (rank() == 0)
      for (size_t i = 0; i < keys.size(); ++i) Send(kOpInit, keys[i], entries[i]->stored);
    Barrier();
  }

  void Apply(const std::string& key, Entry* entry, const NDArray& merged) override {
    (void)entry;
    Send(kOpPush, key, merged);
  }

 private:
  std::vector<Part> Parts(int32_t id, int64_t size) const {
    const std::vector<int>& servers = job_.server_ranks();
    const int64_t n = static_cast<int64_t>(servers.size());
    if (size < bound_) return {{servers[(int64_t{id} * 9973) % n], 0, size}};
    std::vector<Part> parts;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t begin = std::llround(static_cast<double>(size) / n * i);
      const int64_t end = std::llround(static_cast<double>(size) / n * (i + 1));
      if (end > begin) parts.push_back({servers[i], begin, end - begin});
    }
    return parts;
  }

  // Sends `value`'s parts to their servers (init: and waits for each server's reply).
  void Send(RequestOp op, const std::string& key, const NDArray& value) {
    const int32_t id = ids_.at(key);
    job_.Push(
        [this, op, key, id, value, parts = Parts(id, value.size())] {
          const char* base = static_cast<const char*>(value.data());
          const size_t item = DTypeSize(value.dtype());
          Exchange exchange(job_);
          for (const Part& p : parts) {
            const std::string what = std::string(op == kOpInit ? "kvstore init" : "kvstore push") +
                                     ": sending key '" + key + "' to server process " +
                                     std::to_string(p.server);
            exchange.Request(p.server, {op, value.dtype(), store_, id, p.offset, p.count}, key,
                             what);
            exchange.Send(base + p.offset * item, p.count * item, p.server, kTagData, what);
            if (op == kOpInit) exchange.Receive(nullptr, 0, p.server, what);
          }
          exchange.Wait();
        },
        {value.var()}, {}, op == kOpInit ? "kvstore init on the servers" : "kvstore push");
  }

  // Brings the servers' value of `key` into its host buffer.
  void Fetch(const std::string& key) {
    Entry& e = entry(key);
    if (e.host.is_none()) e.host = NDArray(e.stored.shape(), Context::CPU(), e.stored.dtype());
    const NDArray host = e.host;
    const int32_t id = ids_.at(key);
    job_.Push(
        [this, key, id, host, parts = Parts(id, host.size())] {
          char* base = static_cast<char*>(host.data());
          const size_t item = DTypeSize(host.dtype());
          Exchange exchange(job_);
          for (const Part& p : parts) {  // each answer's receive is posted before its request
            const std::string what = "kvstore pull: asking for key '" + key +
                                     "' from server process " + std::to_string(p.server);
            exchange.Receive(base + p.offset * item, p.count * item, p.server, what);
            exchange.Request(p.server, {kOpPull, host.dtype(), store_, id, p.offset, p.count}, key,
                             what);
          }
          exchange.Wait();
        },
        {}, {host.var()}, "kvstore pull");
  }

  static inline std::atomic<int32_t> stores_made_{0};
  const int32_t store_;
  int64_t bound_;
  std::unordered_map<std::string, int32_t> ids_;  // a key's place in init order
};

// A server's part of the job: its parts of dist_async's keys, and the commands of the workers.
class Server {
 public:
  Server(DistJob& job, KVStore::Controller controller, KVStore::Updater updater)
      : job_(job), controller_(std::move(controller)), updater_(std::move(updater)) {}

  // Serves until every worker has finished, then leaves the job.
  void Run() {
    const Communicator& world = job_.world();
    int finished = 0;
    PollBackoff idle;
    while (finished < job_.num_workers()) {
      MXPCommMessageInfo info{};
      info.struct_size = sizeof info;
      if (!world.Probe(MXP_COMM_ANY_SOURCE, MXP_COMM_ANY_TAG, &info)) {
        idle.Pause();
        continue;
      }
      idle.Reset();
      std::string body(info.bytes, '\0');
      world.StartRecv(body.data(), body.size(), info.source, info.tag, From(info.source))
          .Wait(job_.NewDeadline());
      switch (info.tag) {
        case kTagStop:
          ++finished;
          break;
        case kTagCommand: {
          int32_t head = 0;
          if (body.size() < sizeof head)
            job_.Fail("a command of process " + std::to_string(info.source) + " has no head");
          std::memcpy(&head, body.data(), sizeof head);
          if (controller_) controller_(job_.rank(), head, body.substr(sizeof head));
          Answer(info.source, "command " + std::to_string(head));
          break;
        }
        case kTagRequest:
          Serve(info.source, body);
          break;
        default:
          job_.Fail("a message with unknown tag " + std::to_string(info.tag) + " from process " +
                    std::to_string(info.source));
      }
    }
    job_.Leave(job_.NewDeadline());
  }

 private:
  struct Held {
    NDArray value;     // this server's part of the key
    NDArray received;  // the last push's bytes
  };

  static int64_t Id(const RequestHead& head) {
    return (int64_t{head.store} << 32) | static_cast<uint32_t>(head.key);
  }

  // The empty reply a worker waits for (Note [dist_async on servers]).
  void Answer(int source, const std::string& what) const {
    job_.world()
        .StartSend(nullptr, 0, source, kTagReply,
                   "answering " + what + " of process " + std::to_string(source))
        .Wait(job_.NewDeadline());
  }

  static std::string From(int source) {
    return "receiving a message of process " + std::to_string(source);
  }

  void Serve(int source, const std::string& message) {
    RequestHead head{};
    if (message.size() < sizeof head)
      job_.Fail("a request of process " + std::to_string(source) + " has " +
                std::to_string(message.size()) + " bytes, fewer than its header's " +
                std::to_string(sizeof head));
    std::memcpy(&head, message.data(), sizeof head);
    const std::string key = message.substr(sizeof head);
    const Communicator& world = job_.world();
    const Deadline deadline = job_.NewDeadline();
    const std::string about = "key '" + key + "' of process " + std::to_string(source);
    if (head.op == kOpInit) {
      Held& held = held_[Id(head)];  // a new array: a previous one's pending uses keep theirs
      held.value = NDArray({head.count}, Context::CPU(), head.dtype);
      held.received = NDArray();
      world.StartRecv(held.value.data(), held.value.bytes(), source, kTagData, "receiving " + about)
          .Wait(deadline);
      Answer(source, "the init of key '" + key + "'");
      return;
    }
    if (head.op == kOpFlush) {  // every earlier request of `source` has been served
      Answer(source, "a barrier");
      return;
    }
    auto it = held_.find(Id(head));
    if (it == held_.end() || it->second.value.size() != head.count ||
        it->second.value.dtype() != head.dtype)
      job_.Fail("process " + std::to_string(source) + " sent " + about +
                (it == held_.end() ? ", which no worker initialised on this server"
                                   : ", whose part here has another size or type"));
    Held& held = it->second;
    if (head.op == kOpPush) {
      if (held.received.is_none())
        held.received = NDArray(held.value.shape(), Context::CPU(), held.value.dtype());
      held.received.WaitToWrite();  // the last update may still read it
      world
          .StartRecv(held.received.data(), held.received.bytes(), source, kTagData,
                     "receiving the push of " + about)
          .Wait(deadline);
      if (updater_)
        updater_(key, held.received, &held.value);
      else
        NDArray::Copy(held.received, held.value);
    } else if (head.op == kOpPull) {
      held.value.WaitToRead();
      world
          .StartSend(held.value.data(), held.value.bytes(), source, kTagReply,
                     "answering the pull of " + about)
          .Wait(deadline);
    } else {
      job_.Fail("a request of process " + std::to_string(source) + " has unknown operation " +
                std::to_string(head.op));
    }
  }

  DistJob& job_;
  KVStore::Controller controller_;
  KVStore::Updater updater_;
  std::unordered_map<int64_t, Held> held_;  // by Id(store, key)
};

}  // namespace

bool IsDistStoreType(const std::string& type) {
  return type == "dist" || type == "dist_sync" || type == "dist_device_sync" ||
         type == "dist_sync_device" || type == "dist_async";
}

std::unique_ptr<KVStore> CreateDistStore(const std::string& type) {
  DistJob& job = DistJob::Get(type);
  if (job.role() != DistRole::kWorker)
    throw Error("kvstore '" + type +
                    "': this process is a server (DMLC_ROLE=server); stores are made on workers",
                kMXPFailedPrecondition);
  if (type == "dist_async") return std::make_unique<DistAsyncStore>(type, job);
  return std::make_unique<DistSyncStore>(type, job);
}

void KVStore::RunServer(Controller controller, Updater updater) {
  DistJob& job = DistJob::Get("server");
  if (job.role() != DistRole::kServer)
    throw Error("kvstore server: this process is a worker (DMLC_ROLE is not 'server')",
                kMXPFailedPrecondition);
  Server(job, std::move(controller), std::move(updater)).Run();
}

void KVStore::FinishDistributed() { DistJob::Finish(); }

void KVStore::AbandonDistributed(const std::string& message) { DistJob::Abandon(message); }

}  // namespace mxplug
