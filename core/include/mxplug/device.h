/*!
 * \file mxplug/device.h
 * \brief A registered device backend (from a plugin's MXPDeviceDef) and its calls, with
 * statuses turned into Error exceptions that name the backend and its plugin.
 */
#ifndef MXPLUG_DEVICE_H_
#define MXPLUG_DEVICE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "mxplug/abi/device.h"
#include "mxplug/sdk/context.hpp"

namespace mxplug {

struct DeviceEntry {
  std::string name;  // "cpu"
  int32_t device_type = kDLCPU;
  std::string plugin;
  std::string plugin_path;
  MXPDeviceDef def{};

  /*! \brief Usable devices; when zero, `reason` (if given) says why. */
  int32_t Count(std::string* reason = nullptr) const;
  std::string Describe(int32_t device_id) const;
  void* Allocate(int32_t device_id, size_t bytes, size_t alignment) const;
  void Free(int32_t device_id, void* ptr) const;
  /*! \brief Synchronous copy when stream is null. */
  void Copy(Context dst_ctx, void* dst, Context src_ctx, const void* src, size_t bytes,
            void* stream = nullptr) const;
  void Synchronize(int32_t device_id) const;
};

}  // namespace mxplug

#endif  // MXPLUG_DEVICE_H_
