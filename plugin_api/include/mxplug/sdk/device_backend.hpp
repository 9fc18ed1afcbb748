/*!
 * \file mxplug/sdk/device_backend.hpp
 * \brief Base class of a device backend plugin (register with MXPLUG_REGISTER_DEVICE). A device
 * whose work runs inline on the calling thread, as the CPU's, keeps the stream and event defaults.
 *
 * The functions of ABI 1.2 (Memset to StartThread) are optional: the registration publishes one
 * only when the backend class overrides it, and the host has a fallback for each that is absent
 * (abi/device.h), so a backend overrides only what its device does better than the fallback. The
 * collectives of ABI 1.4 are published when both are overridden; without them the host has none
 * (kvstore 'nccl' says so).
 */
#ifndef MXPLUG_SDK_DEVICE_BACKEND_HPP_
#define MXPLUG_SDK_DEVICE_BACKEND_HPP_

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "mxplug/abi/device.h"

namespace mxplug {

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  /*! \brief Usable devices; when none, set `reason` to say why (no driver, no hardware...). */
  virtual int DeviceCount(std::string* reason) = 0;
  /*! \brief One line about a device: model, memory. */
  virtual std::string Describe(int dev_id) { return "device " + std::to_string(dev_id); }
  /*! \throws std::bad_alloc when out of memory. */
  virtual void* Allocate(int dev_id, size_t bytes, size_t alignment) = 0;
  virtual void Free(int dev_id, void* ptr) = 0;
  /*! \brief Copies between this device type and itself or the CPU (see MXPDeviceDef::copy). */
  virtual void Copy(DLDevice dst_device, void* dst, DLDevice src_device, const void* src,
                    size_t bytes, void* stream) = 0;

  virtual void* CreateStream(int dev_id) { return (void)dev_id, nullptr; }
  virtual void DestroyStream(int dev_id, void* stream) { (void)dev_id, (void)stream; }
  virtual void SynchronizeStream(int dev_id, void* stream) { (void)dev_id, (void)stream; }
  virtual void* CreateEvent(int dev_id) { return (void)dev_id, nullptr; }
  virtual void DestroyEvent(int dev_id, void* event) { (void)dev_id, (void)event; }
  virtual void RecordEvent(int dev_id, void* event, void* stream) {
    (void)dev_id, (void)event, (void)stream;
  }
  virtual void WaitEvent(int dev_id, void* stream, void* event) {
    (void)dev_id, (void)stream, (void)event;
  }
  virtual void SynchronizeEvent(int dev_id, void* event) { (void)dev_id, (void)event; }
  virtual void Synchronize(int dev_id) { (void)dev_id; }

  // ---- Optional (ABI 1.2): published only when overridden; never called otherwise. ----
  /*! \brief Sets bytes to `value`, ordered on `stream` (null: complete on return). Fallback:
   * a host buffer copied over. */
  virtual void Memset(int dev_id, void* ptr, int value, size_t bytes, void* stream) {
    (void)dev_id, (void)ptr, (void)value, (void)bytes, (void)stream;
    throw std::logic_error("DeviceBackend::Memset is not overridden");
  }
  /*! \brief Free and total bytes. Fallback: the host reports that the device does not say. */
  virtual void MemoryInfo(int dev_id, uint64_t* free_bytes, uint64_t* total_bytes) {
    (void)dev_id, (void)free_bytes, (void)total_bytes;
    throw std::logic_error("DeviceBackend::MemoryInfo is not overridden");
  }
  /*! \brief Page-locked host memory for fast copies. Fallback: ordinary host memory. */
  virtual void* HostAllocate(int dev_id, size_t bytes) {
    (void)dev_id, (void)bytes;
    throw std::logic_error("DeviceBackend::HostAllocate is not overridden");
  }
  virtual void HostFree(int dev_id, void* ptr) { (void)dev_id, (void)ptr; }
  /*! \brief True when the event's work has completed; never blocks. Fallback: SynchronizeEvent,
   * then true. */
  virtual bool QueryEvent(int dev_id, void* event) {
    (void)dev_id, (void)event;
    throw std::logic_error("DeviceBackend::QueryEvent is not overridden");
  }
  /*! \brief Fills what is known of `out` (zeroed by the caller). Fallback: all unknown. */
  virtual void Attributes(int dev_id, MXPDeviceAttributes* out) { (void)dev_id, (void)out; }
  /*! \brief Binds the calling thread to the device (each engine worker once, when it starts; see
   * thread_start in abi/device.h). */
  virtual void StartThread(int dev_id) { (void)dev_id; }

  // ---- Optional (ABI 1.4): published only when both are overridden. ----
  /*! \brief Writes the sum of `count` inputs, each on another device of this type, into
   * `output` on inputs[root]'s device; complete on return (see collective_reduce in
   * abi/device.h). Without it, MXNet's 'nccl' kvstore cannot sum over this backend's devices. */
  virtual void CollectiveReduce(int count, const DLTensor* const* inputs, DLTensor* output,
                                int root) {
    (void)count, (void)inputs, (void)output, (void)root;
    throw std::logic_error("DeviceBackend::CollectiveReduce is not overridden");
  }
  /*! \brief Copies buffers[root] into the other `count - 1` buffers; complete on return. */
  virtual void CollectiveBroadcast(int count, DLTensor* const* buffers, int root) {
    (void)count, (void)buffers, (void)root;
    throw std::logic_error("DeviceBackend::CollectiveBroadcast is not overridden");
  }
};

}  // namespace mxplug

#endif  // MXPLUG_SDK_DEVICE_BACKEND_HPP_
