/*!
 * \file mxplug/sdk/device_backend.hpp
 * \brief Base class of a device backend plugin (register with MXPLUG_REGISTER_DEVICE). A device
 * whose work runs inline on the calling thread, as the CPU's, keeps the stream and event defaults.
 */
#ifndef MXPLUG_SDK_DEVICE_BACKEND_HPP_
#define MXPLUG_SDK_DEVICE_BACKEND_HPP_

#include <cstddef>
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
};

}  // namespace mxplug

#endif  // MXPLUG_SDK_DEVICE_BACKEND_HPP_
