// The single-process stores, "local" and "device" (MXNet's KVStoreLocal with CommCPU and
// CommDevice), which 'nccl' and the distributed ones extend (merging_store.h), and KVStore::Create.
#include "mxplug/kvstore.h"

#include <algorithm>
#include <utility>

#include "kvstore/collective_store.h"
#include "kvstore/dist_store.h"
#include "kvstore/merging_store.h"
#include "mxplug/error.h"

namespace mxplug {

MergingStore::MergingStore(std::string type, bool sum_on_device)
    : type_(std::move(type)), sum_on_device_(sum_on_device) {}

void MergingStore::Init(const std::vector<std::string>& keys, const std::vector<NDArray>& values) {
  CheckSizes("init", keys.size(), values.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    if (values[i].is_none())
      throw Error("kvstore init: the value of key '" + keys[i] + "' is a none array",
                  kMXPInvalidArgument);
    if (store_.count(keys[i]) ||
        std::find(keys.begin(), keys.begin() + i, keys[i]) != keys.begin() + i)
      throw Error("kvstore init: key '" + keys[i] + "' is already initialised",
                  kMXPInvalidArgument);
  }
  std::vector<Entry*> entries;
  for (size_t i = 0; i < keys.size(); ++i) {
    const Context where = sum_on_device_ ? values[i].ctx() : Context::CPU();
    Entry& entry = store_[keys[i]];
    entry.stored = values[i].CopyTo(where);
    entries.push_back(&entry);
  }
  InitStored(keys, entries);
}

void MergingStore::Push(const std::vector<std::string>& keys, const std::vector<NDArray>& values,
                        int) {
  CheckSizes("push", keys.size(), values.size());
  for (size_t i = 0; i < keys.size(); ++i) CheckValue("push", keys[i], values[i]);
  for (auto& [key, vals] : GroupByKey(keys, values)) {
    Entry& entry = store_.at(key);
    Apply(key, &entry, Sum(&entry, vals));
  }
}

MergingStore::Grouped MergingStore::GroupByKey(const std::vector<std::string>& keys,
                                               const std::vector<NDArray>& values) {
  Grouped grouped;
  for (size_t i = 0; i < keys.size(); ++i) {
    auto it = std::find_if(grouped.begin(), grouped.end(),
                           [&](const auto& g) { return g.first == keys[i]; });
    if (it == grouped.end())
      grouped.emplace_back(keys[i], std::vector<NDArray>{values[i]});
    else
      it->second.push_back(values[i]);
  }
  return grouped;
}

void MergingStore::Apply(const std::string& key, Entry* entry, const NDArray& merged) {
  if (updater_) {
    // The updater works where the sum is (a weight on the GPU for 'device').
    if (!(entry->stored.ctx() == merged.ctx())) entry->stored = entry->stored.CopyTo(merged.ctx());
    updater_(key, merged, &entry->stored);
  } else {
    NDArray::Copy(merged, entry->stored);
  }
}

void MergingStore::Pull(const std::vector<std::string>& keys, const std::vector<NDArray>& outs,
                        int) {
  CheckSizes("pull", keys.size(), outs.size());
  for (size_t i = 0; i < keys.size(); ++i) CheckValue("pull", keys[i], outs[i]);
  for (size_t i = 0; i < keys.size(); ++i)
    outs[i].CheckWritable("pull: the output for key '" + keys[i] + "'");
  for (size_t i = 0; i < keys.size(); ++i) NDArray::Copy(store_.at(keys[i]).stored, outs[i]);
}

void MergingStore::CheckSizes(const char* call, size_t keys, size_t values) {
  if (keys != values)
    throw Error(std::string("kvstore ") + call + ": " + std::to_string(keys) + " keys but " +
                    std::to_string(values) + " values",
                kMXPInvalidArgument);
}

void MergingStore::CheckValue(const char* call, const std::string& key,
                              const NDArray& value) const {
  auto it = store_.find(key);
  if (it == store_.end())
    throw Error(std::string("kvstore ") + call + ": key '" + key + "' has not been initialised",
                kMXPInvalidArgument);
  if (value.is_none())
    throw Error(
        std::string("kvstore ") + call + ": the array for key '" + key + "' is a none array",
        kMXPInvalidArgument);
  const NDArray& stored = it->second.stored;
  if (value.shape() != stored.shape() || value.dtype() != stored.dtype())
    throw Error(std::string("kvstore ") + call + ": key '" + key + "' holds " + stored.Describe() +
                    ", the array given is " + value.Describe(),
                kMXPInvalidArgument);
}

// The sum of a key's values, on the CPU ('local') or the first value's device ('device'). One
// value already there is used as it is.
NDArray MergingStore::Sum(Entry* entry, const std::vector<NDArray>& values) {
  const Context where = sum_on_device_ ? values[0].ctx() : Context::CPU();
  if (values.size() == 1 && values[0].ctx() == where) return values[0];
  const NDArray& like = values[0];
  if (entry->sum.is_none() || !(entry->sum.ctx() == where))
    entry->sum = NDArray(like.shape(), where, like.dtype());
  if (!copy_) copy_ = ImperativeOp::Copy("kvstore push: summing the values of a key");
  entry->incoming.resize(std::max(entry->incoming.size(), values.size()));
  for (size_t i = 0; i < values.size(); ++i) {
    NDArray source = values[i];
    if (!(source.ctx() == where)) {  // bring it over first: '_copy' runs on one context
      NDArray& staged = entry->incoming[i];
      if (staged.is_none() || !(staged.ctx() == where))
        staged = NDArray(like.shape(), where, like.dtype());
      NDArray::Copy(source, staged);
      source = staged;
    }
    std::vector<NDArray> out{entry->sum};
    copy_->Invoke({source}, &out, false, {i == 0 ? kWriteTo : kAddTo});
  }
  return entry->sum;
}

std::unique_ptr<KVStore> KVStore::Create(const std::string& type) {
  // MXNet's other names of the same two stores are accepted.
  if (type == "local" || type == "local_update_cpu" || type == "local_allreduce_cpu")
    return std::make_unique<MergingStore>(type, false);
  if (type == "device" || type == "local_allreduce_device")
    return std::make_unique<MergingStore>(type, true);
  if (type == "nccl") return CreateCollectiveStore(type);
  if (IsDistStoreType(type)) return CreateDistStore(type);
  throw Error(
      "kvstore: unknown type '" + type +
          "'; the types are 'local' and 'device' (also "
          "'local_update_cpu', 'local_allreduce_cpu', 'local_allreduce_device'), 'nccl', and "
          "the distributed 'dist_sync', 'dist_device_sync' (also 'dist', 'dist_sync_device') and "
          "'dist_async'",
      kMXPInvalidArgument);
}

}  // namespace mxplug
