/*!
 * \file mxplug/abi/device.h
 * \brief Device backends across the boundary: one MXPDeviceDef per DLPack device type.
 *
 * A backend on a machine without its hardware loads, reports zero devices with a reason, and
 * never aborts the process. Streams and events are opaque handles owned by the backend and
 * released through the same table.
 */
#ifndef MXPLUG_ABI_DEVICE_H_
#define MXPLUG_ABI_DEVICE_H_

#include "mxplug/abi/base.h"
#include "mxplug/abi/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief A device backend. Every function receives `user` first. \since 1.0 */
typedef struct MXPDeviceDef {
  size_t struct_size;
  MXPExtension* ext;
  const char* name;    /*!< "cpu", "cuda", "hip": the name users write (mx.gpu -> "cuda") */
  int32_t device_type; /*!< DLDeviceType: kDLCPU, kDLCUDA, kDLROCM, ... */
  void* user;

  /*!
   * \brief Number of usable devices. When it is zero, `reason` says why (borrowed, static).
   */
  MXPStatus* (*device_count)(void* user, int32_t* count, const char** reason);
  /*! \brief One line describing a device, e.g. its model and memory (borrowed, static). */
  MXPStatus* (*describe)(void* user, int32_t device_id, const char** text);
  /*! \brief Allocates `bytes` aligned to `alignment` (a power of two). \param[out] ptr new. */
  MXPStatus* (*allocate)(void* user, int32_t device_id, size_t bytes, size_t alignment,
                         void** ptr);
  void (*free)(void* user, int32_t device_id, void* ptr);
  /*!
   * \brief Copies `bytes` between two devices of which at least one is of this type and the other
   * is of this type or kDLCPU. With a NULL stream the copy is complete on return; with a stream it
   * is ordered on that stream.
   */
  MXPStatus* (*copy)(void* user, DLDevice dst_device, void* dst, DLDevice src_device,
                     const void* src, size_t bytes, void* stream);
  MXPStatus* (*stream_create)(void* user, int32_t device_id, void** stream);
  void (*stream_destroy)(void* user, int32_t device_id, void* stream);
  MXPStatus* (*stream_synchronize)(void* user, int32_t device_id, void* stream);
  MXPStatus* (*event_create)(void* user, int32_t device_id, void** event);
  void (*event_destroy)(void* user, int32_t device_id, void* event);
  /*! \brief Records `event` when the work queued so far on `stream` completes. */
  MXPStatus* (*event_record)(void* user, int32_t device_id, void* event, void* stream);
  /*! \brief Makes later work on `stream` wait for `event`. */
  MXPStatus* (*stream_wait_event)(void* user, int32_t device_id, void* stream, void* event);
  MXPStatus* (*event_synchronize)(void* user, int32_t device_id, void* event);
  /*! \brief Waits for all work on a device. */
  MXPStatus* (*synchronize)(void* user, int32_t device_id);
} MXPDeviceDef;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // MXPLUG_ABI_DEVICE_H_
