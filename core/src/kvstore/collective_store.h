// Internal: MXNet's 'nccl' store, which sums over the devices of one process with their backend's
// collectives (abi/device.h, collective_reduce and collective_broadcast; NCCL in the CUDA plugin).
#ifndef MXPLUG_CORE_KVSTORE_COLLECTIVE_STORE_H_
#define MXPLUG_CORE_KVSTORE_COLLECTIVE_STORE_H_

#include <memory>
#include <string>

#include "mxplug/kvstore.h"

namespace mxplug {

/*! \brief A 'nccl' store. \throws Error when no loaded device backend has collectives. */
std::unique_ptr<KVStore> CreateCollectiveStore(const std::string& type);

}  // namespace mxplug

#endif  // MXPLUG_CORE_KVSTORE_COLLECTIVE_STORE_H_
