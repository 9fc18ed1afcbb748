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
#include <utility>
#include <vector>

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

  // Streams and events (handles from the backend; null streams are allowed where abi/device.h
  // says).
  void* CreateStream(int32_t device_id) const;
  void DestroyStream(int32_t device_id, void* stream) const;
  void SynchronizeStream(int32_t device_id, void* stream) const;
  void* CreateEvent(int32_t device_id) const;
  void DestroyEvent(int32_t device_id, void* event) const;
  void RecordEvent(int32_t device_id, void* event, void* stream) const;
  /*! \brief Work queued on `stream` after this call waits for the event's work (not the host). */
  void WaitEvent(int32_t device_id, void* stream, void* event) const;
  void SynchronizeEvent(int32_t device_id, void* event) const;

  // ABI 1.2. Each works with a 1.1 backend too, through the fallback named.
  /*! \brief Sets bytes to `value` (fallback: a host buffer copied over, after the stream). */
  void Memset(int32_t device_id, void* ptr, int value, size_t bytes, void* stream = nullptr) const;
  /*! \brief (free, total) bytes. \throws Error kMXPUnimplemented when the backend does not say. */
  std::pair<uint64_t, uint64_t> MemoryInfo(int32_t device_id) const;
  /*! \brief Page-locked host memory for this device (fallback: ordinary 64-byte aligned memory). */
  void* HostAllocate(int32_t device_id, size_t bytes) const;
  void HostFree(int32_t device_id, void* ptr) const;
  /*! \brief True when the event's work has completed (fallback: waits for it, then true). */
  bool QueryEvent(int32_t device_id, void* event) const;
  /*! \brief What the backend says of the device; fields it does not know are 0. */
  MXPDeviceAttributes Attributes(int32_t device_id) const;
  /*! \brief Binds the calling thread to the device (nothing when the backend has no hook). */
  void StartThread(int32_t device_id) const;

  // ABI 1.4: collectives among this backend's devices in this process (MXNet's 'nccl' kvstore).
  bool HasCollectives() const { return def.collective_reduce != nullptr; }
  /*! \brief The sum of inputs (one per device) into output, on inputs[root]'s device; complete on
   * return. \throws Error kMXPUnimplemented when the backend has no collectives. */
  void CollectiveReduce(const std::vector<const DLTensor*>& inputs, DLTensor* output,
                        int32_t root) const;
  /*! \brief buffers[root] copied into every other buffer (one per device); complete on return. */
  void CollectiveBroadcast(const std::vector<DLTensor*>& buffers, int32_t root) const;
};

}  // namespace mxplug

#endif  // MXPLUG_DEVICE_H_
