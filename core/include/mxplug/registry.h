/*!
 * \file mxplug/registry.h
 * \brief Registry<Entry>: the one name-to-entry table used for ops, kernels, devices and plugins.
 * Reads are concurrent; writes happen only when the runtime commits a plugin.
 */
#ifndef MXPLUG_REGISTRY_H_
#define MXPLUG_REGISTRY_H_

#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "mxplug/error.h"

namespace mxplug {

template <typename Entry>
class Registry {
 public:
  using Ptr = std::shared_ptr<const Entry>;

  /*! \brief The entry called `name`, or nullptr. */
  Ptr Find(const std::string& name) const {
    std::shared_lock lock(mu_);
    auto it = entries_.find(name);
    return it == entries_.end() ? nullptr : it->second;
  }
  bool Contains(const std::string& name) const { return Find(name) != nullptr; }
  /*! \brief The first entry, by name, for which pred(entry) holds, or nullptr; copies no list. */
  template <typename Pred>
  Ptr FindIf(Pred&& pred) const {
    std::shared_lock lock(mu_);
    for (const auto& kv : entries_)
      if (pred(*kv.second)) return kv.second;
    return nullptr;
  }
  /*! \brief Every entry, sorted by name. */
  std::vector<Ptr> List() const {
    std::shared_lock lock(mu_);
    std::vector<Ptr> out;
    out.reserve(entries_.size());
    for (const auto& kv : entries_) out.push_back(kv.second);
    return out;
  }
  std::vector<std::string> Names() const {
    std::shared_lock lock(mu_);
    std::vector<std::string> out;
    for (const auto& kv : entries_) out.push_back(kv.first);
    return out;
  }
  size_t Size() const {
    std::shared_lock lock(mu_);
    return entries_.size();
  }
  /*! \brief Adds an entry. \throws Error when the name is taken (callers check first). */
  void Insert(const std::string& name, Ptr entry) {
    std::unique_lock lock(mu_);
    if (!entries_.emplace(name, std::move(entry)).second)
      throw Error("registry: '" + name + "' is already registered", kMXPAlreadyExists);
  }

 private:
  mutable std::shared_mutex mu_;
  std::map<std::string, Ptr> entries_;
};

}  // namespace mxplug

#endif  // MXPLUG_REGISTRY_H_
