// Internal: the distributed stores (docs/distributed.md).
#ifndef MXPLUG_CORE_KVSTORE_DIST_STORE_H_
#define MXPLUG_CORE_KVSTORE_DIST_STORE_H_

#include <memory>
#include <string>

#include "mxplug/kvstore.h"

namespace mxplug {

/*! \brief Whether `type` names a distributed store (MXNet's names). */
bool IsDistStoreType(const std::string& type);
/*! \brief A store of such a type. \throws Error as KVStore::Create. */
std::unique_ptr<KVStore> CreateDistStore(const std::string& type);

}  // namespace mxplug

#endif  // MXPLUG_CORE_KVSTORE_DIST_STORE_H_
