// Internal: the store every kvstore type builds on (MXNet's KVStoreLocal with CommCPU and
// CommDevice). A push sums a key's values into a merge buffer on one context with copies of
// kAddTo ('_copy', ImperativeOp::Copy), then hands the sum to Apply: the updater, or a copy into
// the stored value (a distributed store first sums it across workers, or sends it to the servers).
// Every step is an engine push, so calls return at once.
#ifndef MXPLUG_CORE_KVSTORE_MERGING_STORE_H_
#define MXPLUG_CORE_KVSTORE_MERGING_STORE_H_

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "mxplug/imperative.h"
#include "mxplug/kvstore.h"

namespace mxplug {

class MergingStore : public KVStore {
 public:
  /*! \brief sum_on_device: merge on the first value's device ('device'), else on the CPU. */
  MergingStore(std::string type, bool sum_on_device);

  const std::string& type() const override { return type_; }
  void Init(const std::vector<std::string>& keys, const std::vector<NDArray>& values) override;
  void Push(const std::vector<std::string>& keys, const std::vector<NDArray>& values,
            int priority) override;
  void Pull(const std::vector<std::string>& keys, const std::vector<NDArray>& outs,
            int priority) override;
  void SetUpdater(Updater updater) override { updater_ = std::move(updater); }

 protected:
  struct Entry {
    NDArray stored;
    NDArray sum;                    // the merge buffer, made at the first push of several values
    std::vector<NDArray> incoming;  // where values from other contexts are copied before summing
    NDArray host;       // a distributed store's staging in host memory: the sum over the
                        // workers, or the value pulled from the servers
    NDArray on_device;  // that sum copied back to the device the values were merged on
  };

  /*! \brief Called by Init after the checks, with the copies stored; a distributed store makes
   * rank 0's values everyone's there. */
  virtual void InitStored(const std::vector<std::string>& keys, std::vector<Entry*>& entries) {
    (void)keys, (void)entries;
  }
  /*! \brief Gives `merged`, this process's sum of a key's pushes, to the updater with the stored
   * value, or without one copies it there. */
  virtual void Apply(const std::string& key, Entry* entry, const NDArray& merged);

  /*! \brief The values of each key, keys in the order of their first appearance. */
  using Grouped = std::vector<std::pair<std::string, std::vector<NDArray>>>;
  static Grouped GroupByKey(const std::vector<std::string>& keys,
                            const std::vector<NDArray>& values);

  bool has_updater() const { return static_cast<bool>(updater_); }
  static void CheckSizes(const char* call, size_t keys, size_t values);
  void CheckValue(const char* call, const std::string& key, const NDArray& value) const;
  Entry& entry(const std::string& key) { return store_.at(key); }

 private:
  NDArray Sum(Entry* entry, const std::vector<NDArray>& values);

  std::string type_;
  bool sum_on_device_;
  std::unordered_map<std::string, Entry> store_;
  Updater updater_;
  std::shared_ptr<const ImperativeOp> copy_;
};

}  // namespace mxplug

#endif  // MXPLUG_CORE_KVSTORE_MERGING_STORE_H_
