// Note [The 'nccl' store]
// MXNet's KVStoreNCCL, over whichever device backend has collectives among its devices (the CUDA
// plugin's, through NCCL; the core knows no NCCL). As MXNet's:
// - init keeps each value on the host;
// - a push of one value for a key uses that value as it is; a push of several sums them with one
//   collective_reduce into a merge buffer on the root device, which is the device of the first
//   value of the first push of several values; the updater then runs there, the stored value
//   moving to that device (without an updater the sum is copied into the stored value, which
//   moves there too: MXNet makes the merge buffer the stored value);
// - a pull to several arrays broadcasts the stored value from the root device with one
//   collective_broadcast, once a push has fixed the devices; before that, and to one array, it
//   copies;
// - every push or pull of several arrays must cover that same set of devices, one array each
//   (MXNet: "NCCL KVStore supports only single set of devices").
// Every check runs before any work is pushed, so a refused call changes nothing. The collectives
// run in a host function of the engine, which runs after the work that wrote their inputs has
// completed (Note [Event completion]); they are complete when it returns, as MXNet's are after its
// stream synchronisation.
#include "kvstore/collective_store.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "kvstore/merging_store.h"
#include "mxplug/engine.h"
#include "mxplug/error.h"
#include "mxplug/runtime.h"

namespace mxplug {

namespace {

// The devices a collective runs over: one backend, distinct device ids, sorted.
struct DeviceSet {
  int32_t dev_type = kDLCPU;
  std::vector<int32_t> ids;
  bool operator==(const DeviceSet& o) const { return dev_type == o.dev_type && ids == o.ids; }
  std::string ToString() const {
    std::string text;
    for (int32_t id : ids) text += (text.empty() ? "" : ", ") + Context{dev_type, id}.ToString();
    return text;
  }
};

std::string BackendsWithCollectives() {
  std::string names;
  for (const auto& d : Runtime::Get().devices().List())
    if (d->HasCollectives()) names += (names.empty() ? "" : ", ") + d->name;
  return names;
}

class CollectiveStore : public MergingStore {
 public:
  explicit CollectiveStore(const std::string& type) : MergingStore(type, false) {}

  void Push(const std::vector<std::string>& keys, const std::vector<NDArray>& values,
            int priority) override {
    CheckSizes("push", keys.size(), values.size());
    for (size_t i = 0; i < keys.size(); ++i) CheckValue("push", keys[i], values[i]);
    const Grouped grouped = GroupByKey(keys, values);
    // The first push of several values fixes the devices and the root (its first value's).
    std::optional<DeviceSet> devices = devices_;
    Context root = root_;
    for (const auto& [key, vals] : grouped) {
      if (vals.size() < 2) continue;
      const DeviceSet set = SetOf("push", key, vals);
      if (!devices) {
        devices = set;
        root = vals[0].ctx();
      }
      CheckSame("push", key, set, *devices);
    }
    if (devices && !devices_) {
      backend_ = Runtime::Get().GetDevice(devices->dev_type);
      devices_ = devices;
      root_ = root;
    }
    for (const auto& [key, vals] : grouped) {
      Entry& entry = this->entry(key);
      Apply(key, &entry, vals.size() == 1 ? vals[0] : Reduce(&entry, vals, priority));
    }
  }

  void Pull(const std::vector<std::string>& keys, const std::vector<NDArray>& outs,
            int priority) override {
    CheckSizes("pull", keys.size(), outs.size());
    for (size_t i = 0; i < keys.size(); ++i) CheckValue("pull", keys[i], outs[i]);
    for (size_t i = 0; i < keys.size(); ++i)
      outs[i].CheckWritable("pull: the output for key '" + keys[i] + "'");
    const Grouped grouped = GroupByKey(keys, outs);
    if (devices_)
      for (const auto& [key, dsts] : grouped)
        if (dsts.size() > 1) CheckSame("pull", key, SetOf("pull", key, dsts), *devices_);
    for (const auto& [key, dsts] : grouped) {
      const NDArray& stored = entry(key).stored;
      if (dsts.size() == 1 || !devices_ || !(stored.ctx() == root_)) {
        for (const NDArray& out : dsts) NDArray::Copy(stored, out);
        continue;
      }
      Broadcast(stored, dsts, priority);
    }
  }

 protected:
  // The stored value moves to the merged value's device (MXNet's, for its updater), so that a
  // pull broadcasts it from there.
  void Apply(const std::string& key, Entry* entry, const NDArray& merged) override {
    if (entry->stored.ctx().IsHost() && !merged.ctx().IsHost())
      entry->stored = entry->stored.CopyTo(merged.ctx());
    MergingStore::Apply(key, entry, merged);
  }

 private:
  // The devices of a push's or pull's arrays for one key, checked: on one backend that has
  // collectives, one array per device.
  DeviceSet SetOf(const char* call, const std::string& key, const std::vector<NDArray>& arrays) {
    DeviceSet set;
    set.dev_type = arrays[0].ctx().dev_type;
    for (const NDArray& a : arrays) {
      const Context ctx = a.ctx();
      std::shared_ptr<const DeviceEntry> backend;
      if (!ctx.IsHost()) backend = Runtime::Get().GetDevice(ctx.dev_type);
      if (!backend || !backend->HasCollectives())
        throw Error(std::string("kvstore '") + type() + "' " + call + ": key '" + key +
                        "' has an array on " + ctx.ToString() + "; this store sums and " +
                        "broadcasts over devices whose backend has collectives (" +
                        BackendsWithCollectives() + "), one array on each",
                    kMXPInvalidArgument);
      if (ctx.dev_type != set.dev_type)
        throw Error(std::string("kvstore '") + type() + "' " + call + ": key '" + key +
                        "' has arrays on " + arrays[0].ctx().ToString() + " and " + ctx.ToString() +
                        "; one collective runs on the devices of one backend",
                    kMXPInvalidArgument);
      if (std::find(set.ids.begin(), set.ids.end(), ctx.dev_id) != set.ids.end())
        throw Error(std::string("kvstore '") + type() + "' " + call + ": key '" + key +
                        "' has two arrays on " + ctx.ToString() + "; one array per device",
                    kMXPInvalidArgument);
      set.ids.push_back(ctx.dev_id);
    }
    std::sort(set.ids.begin(), set.ids.end());
    return set;
  }

  void CheckSame(const char* call, const std::string& key, const DeviceSet& set,
                 const DeviceSet& devices) const {
    if (!(set == devices))
      throw Error(std::string("kvstore '") + type() + "' " + call + ": key '" + key +
                      "' has arrays on " + set.ToString() + ", but this store runs over " +
                      devices.ToString() +
                      " (the devices of its first push of several values), and only over "
                      "those, as MXNet's",
                  kMXPInvalidArgument);
  }

  static size_t IndexOn(const std::vector<NDArray>& arrays, const Context& ctx) {
    for (size_t i = 0; i < arrays.size(); ++i)
      if (arrays[i].ctx() == ctx) return i;
    throw Error("kvstore: no array on " + ctx.ToString(), kMXPInternal);  // checked before
  }

  NDArray Reduce(Entry* entry, const std::vector<NDArray>& values, int priority) {
    const NDArray& like = values[0];
    if (entry->sum.is_none() || !(entry->sum.ctx() == root_))
      entry->sum = NDArray(like.shape(), root_, like.dtype());
    std::vector<VarHandle> reads;
    for (const NDArray& v : values) reads.push_back(v.var());
    const int32_t root = static_cast<int32_t>(IndexOn(values, root_));
    Engine::Get()->PushSync(
        [backend = backend_, values, sum = entry->sum, root](RunContext) {
          std::vector<DLTensor> tensors;
          for (const NDArray& v : values) tensors.push_back(v.ToDLTensor());
          std::vector<const DLTensor*> inputs;
          for (const DLTensor& t : tensors) inputs.push_back(&t);
          DLTensor out = sum.ToDLTensor();
          backend->CollectiveReduce(inputs, &out, root);
        },
        Context::CPU(), reads, {entry->sum.var()}, FnProperty::kCPUPrioritized, priority,
        "kvstore reduce");
    return entry->sum;
  }

  // The stored value (on the root device) to every out: the root's by a copy, the others by one
  // broadcast.
  void Broadcast(const NDArray& stored, const std::vector<NDArray>& outs, int priority) {
    const size_t root = IndexOn(outs, root_);
    NDArray::Copy(stored, outs[root]);
    std::vector<VarHandle> writes;
    for (size_t i = 0; i < outs.size(); ++i)
      if (i != root) writes.push_back(outs[i].var());
    Engine::Get()->PushSync(
        [backend = backend_, stored, outs, root](RunContext) {
          std::vector<DLTensor> tensors;
          for (size_t i = 0; i < outs.size(); ++i)
            tensors.push_back(i == root ? stored.ToDLTensor() : outs[i].ToDLTensor());
          std::vector<DLTensor*> buffers;
          for (DLTensor& t : tensors) buffers.push_back(&t);
          backend->CollectiveBroadcast(buffers, static_cast<int32_t>(root));
        },
        Context::CPU(), {stored.var()}, writes, FnProperty::kCPUPrioritized, priority,
        "kvstore broadcast");
  }

  std::optional<DeviceSet> devices_;  // fixed by the first push of several values
  Context root_;
  std::shared_ptr<const DeviceEntry> backend_;
};

}  // namespace

std::unique_ptr<KVStore> CreateCollectiveStore(const std::string& type) {
  if (BackendsWithCollectives().empty()) {
    std::string loaded;
    for (const auto& d : Runtime::Get().devices().List())
      loaded += (loaded.empty() ? "" : ", ") + d->name;
    throw Error("kvstore '" + type +
                    "' sums over the GPUs of this process with their backend's collectives, "
                    "and no loaded device backend has them (the CUDA plugin built with NCCL "
                    "does); loaded: " +
                    loaded,
                kMXPFailedPrecondition);
  }
  return std::make_unique<CollectiveStore>(type);
}

}  // namespace mxplug
