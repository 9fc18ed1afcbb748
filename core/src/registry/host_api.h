// Internal: the host's side of the plugin ABI (the MXPHostApi table and the opaque types it
// hands out). Only core/src includes this.
#ifndef MXPLUG_CORE_REGISTRY_HOST_API_H_
#define MXPLUG_CORE_REGISTRY_HOST_API_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "mxplug/comm.h"
#include "mxplug/device.h"
#include "mxplug/kernel.h"
#include "mxplug/op.h"
#include "mxplug/plugin_abi.h"
#include "mxplug/plugin_record.h"
#include "mxplug/runtime.h"
#include "mxplug/sdk/tshape.hpp"

struct MXPStatus {
  int32_t code;
  std::string message;
};

struct MXPShapeSlots {
  std::vector<mxplug::TShape>* shapes;
};

namespace mxplug::detail {

/*! \brief What one plugin registered during register_all, not yet committed. */
struct PendingRegistration {
  const PluginRecord* plugin = nullptr;
  const Runtime* runtime = nullptr;  // the one loading the plugin (visit_kernels reads it)
  std::vector<std::shared_ptr<OpEntry>> ops;
  std::vector<std::shared_ptr<KernelEntry>> kernels;
  std::vector<std::shared_ptr<DeviceEntry>> devices;
  std::vector<std::shared_ptr<CommEntry>> comms;
};

/*! \brief Behind the handle of a kMXPResourceTempSpace resource. */
class TempSpaceProvider {
 public:
  virtual ~TempSpaceProvider() = default;
  virtual void* Get(size_t bytes) = 0;
};

/*! \brief Behind the handle of a kMXPResourceRandom resource: one Philox stream. */
class RandomProvider {
 public:
  virtual ~RandomProvider() = default;
  /*! \brief The stream's key and the first of `blocks` counters, now reserved for the caller. */
  virtual void Reserve(uint64_t blocks, uint64_t* key, uint64_t* counter) = 0;
};

/*! \brief The host table handed to every plugin. */
const MXPHostApi* HostApi();

MXPStatus* NewStatus(int32_t code, const std::string& message);
/*! \brief The message of a status, freeing it. */
std::string TakeMessage(MXPStatus* status);

/*! \brief A copy of a def written by a plugin of any minor version: members past what the
 * plugin wrote are zero, and members the host does not know are ignored. */
template <typename Def>
Def CopyDef(const Def* def) {
  Def out{};
  size_t n = std::min(def->struct_size, sizeof(Def));
  std::memcpy(&out, def, n);
  out.struct_size = n;
  return out;
}

inline std::string Str(const char* s) { return s ? s : ""; }

}  // namespace mxplug::detail

struct MXPRegistrar {
  mxplug::detail::PendingRegistration pending;
};

#endif  // MXPLUG_CORE_REGISTRY_HOST_API_H_
