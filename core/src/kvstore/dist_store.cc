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
#include "kvstore/dist_store.h"

#include <cstring>
#include <functional>

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

class DistSyncStore : public MergingStore {
 public:
  DistSyncStore(const std::string& type, DistJob& job)
      : MergingStore(type, type.find("device") != std::string::npos), job_(job) {}

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
    job_.Run([this, head, message] {
      const Deadline deadline = job_.NewDeadline();
      for (int server : job_.server_ranks())
        job_.world()
            .StartSend(message.data(), message.size(), server, kTagCommand,
                       "sending command " + std::to_string(head) + " to server process " +
                           std::to_string(server))
            .Wait(deadline);
    });
  }

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
  NDArray Reduce(const std::string& key, Entry* entry, const NDArray& merged) override {
    if (entry->reduced.is_none())
      entry->reduced = NDArray(merged.shape(), Context::CPU(), merged.dtype());
    NDArray host = entry->reduced;
    NDArray::Copy(merged, host);
    job_.Push(
        [this, view = std::make_shared<HostView>(host), key] {
          job_.workers().Allreduce(&view->tensor, kMXPCommSum,
                                   "kvstore push: summing key '" + key + "' over the workers",
                                   job_.NewDeadline());
        },
        {}, {host.var()}, "kvstore allreduce");
    if (merged.ctx() == host.ctx()) return host;
    // dist_device_sync: the updater works on the device the values were merged on.
    if (entry->on_device.is_none() || !(entry->on_device.ctx() == merged.ctx()))
      entry->on_device = NDArray(merged.shape(), merged.ctx(), merged.dtype());
    NDArray::Copy(host, entry->on_device);
    return entry->on_device;
  }

 private:
  // Every worker must init the same keys, in the same order, with arrays of the same size: else
  // the broadcasts would pair different keys. Values and their negations under a max find any
  // difference: first of the number of keys (lists of different lengths cannot be reduced
  // together), then of each key's hash and size.
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

}  // namespace

bool IsDistStoreType(const std::string& type) {
  return type == "dist" || type == "dist_sync" || type == "dist_device_sync" ||
         type == "dist_sync_device" || type == "dist_async";
}

std::unique_ptr<KVStore> CreateDistStore(const std::string& type) {
  if (type == "dist_async")
    throw Error(
        "kvstore 'dist_async' is not available yet in this release (issue 23); use 'dist_sync'",
        kMXPUnimplemented);
  DistJob& job = DistJob::Get(type);
  if (job.role() != DistRole::kWorker)
    throw Error("kvstore '" + type +
                    "': this process is a server (DMLC_ROLE=server); stores are made on workers",
                kMXPFailedPrecondition);
  return std::make_unique<DistSyncStore>(type, job);
}

void KVStore::RunServer(Controller controller) {
  DistJob& job = DistJob::Get("server");
  if (job.role() != DistRole::kServer)
    throw Error("kvstore server: this process is a worker (DMLC_ROLE is not 'server')",
                kMXPFailedPrecondition);
  const Communicator& world = job.world();
  int finished = 0;
  PollBackoff idle;
  while (finished < job.num_workers()) {
    MXPCommMessageInfo info{};
    info.struct_size = sizeof info;
    if (!world.Probe(MXP_COMM_ANY_SOURCE, MXP_COMM_ANY_TAG, &info)) {
      idle.Pause();
      continue;
    }
    idle.Reset();
    std::string body(info.bytes, '\0');
    const std::string what = "receiving a message of process " + std::to_string(info.source);
    world.StartRecv(body.data(), body.size(), info.source, info.tag, what).Wait(job.NewDeadline());
    switch (info.tag) {
      case kTagStop:
        ++finished;
        break;
      case kTagCommand: {
        int32_t head = 0;
        if (body.size() < sizeof head)
          job.Fail("a command of process " + std::to_string(info.source) + " has no head");
        std::memcpy(&head, body.data(), sizeof head);
        if (controller) controller(job.rank(), head, body.substr(sizeof head));
        break;
      }
      default:
        job.Fail("a message with unknown tag " + std::to_string(info.tag) + " from process " +
                 std::to_string(info.source));
    }
  }
  job.Leave(job.NewDeadline());
}

void KVStore::FinishDistributed() { DistJob::Finish(); }

void KVStore::AbandonDistributed(const std::string& message) { DistJob::Abandon(message); }

}  // namespace mxplug
