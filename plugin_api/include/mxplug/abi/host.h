/*!
 * \file mxplug/abi/host.h
 * \brief The services the host hands a plugin at init: statuses, logging, registration, shapes
 * and resources. A plugin has no other way into the host, so it links nothing of the host.
 *
 * Threading: mxplug_init and register_all run on one loader thread under the host's registry
 * lock; they must not call back into the loader. Kernels must be reentrant across streams.
 */
#ifndef MXPLUG_ABI_HOST_H_
#define MXPLUG_ABI_HOST_H_

#include "mxplug/abi/base.h"
#include "mxplug/abi/comm.h"
#include "mxplug/abi/device.h"
#include "mxplug/abi/op.h"
#include "mxplug/abi/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief Opaque handle that collects one plugin's registrations until the host commits them. */
typedef struct MXPRegistrar MXPRegistrar;

/*!
 * \brief The host's function table. The members up to and including `host_version` are frozen
 * across major versions, so that a plugin of another major can be told why it is refused.
 * \since 1.0
 */
typedef struct MXPHostApi {
  size_t struct_size;
  MXPExtension* ext;
  int32_t abi_major;
  int32_t abi_minor;
  const char* host_version; /*!< the host's release, "0.1.0" */

  /*! \brief New status (code is MXPStatusCode; message is copied). Never returns NULL. */
  MXPStatus* (*status_new)(int32_t code, const char* message);
  void (*status_free)(MXPStatus* status);
  int32_t (*status_code)(const MXPStatus* status);
  /*! \brief Borrowed; valid until the status is freed. */
  const char* (*status_message)(const MXPStatus* status);

  /*! \brief Logs a line; `source` names the plugin or op. */
  void (*log)(int32_t level, const char* source, const char* message);

  /*! \brief Registration, only from inside MXPPluginApi::register_all. Defs are copied. */
  MXPStatus* (*register_op)(MXPRegistrar* registrar, const MXPOpDef* def);
  MXPStatus* (*register_kernel)(MXPRegistrar* registrar, const MXPKernelDef* def);
  MXPStatus* (*register_device)(MXPRegistrar* registrar, const MXPDeviceDef* def);

  /*! \brief Shape slots (see MXPShapeSlots). `dims` from shape_get is borrowed until the next
   * shape_set on that slot; shape_set copies. */
  size_t (*shape_count)(const MXPShapeSlots* slots);
  MXPStatus* (*shape_get)(const MXPShapeSlots* slots, size_t index, int32_t* ndim,
                          const int64_t** dims);
  MXPStatus* (*shape_set)(MXPShapeSlots* slots, size_t index, int32_t ndim, const int64_t* dims);

  /*!
   * \brief Scratch memory from a kMXPResourceTempSpace resource, on the kernel's device, valid
   * until the kernel's work has completed (on an asynchronous device: the work it queued on its
   * stream; the host orders the block's next user after it, Note [Completion] in abi/device.h).
   * \param[out] ptr borrowed.
   */
  MXPStatus* (*temp_space)(const MXPResource* resource, size_t bytes, void** ptr);
  /*!
   * \brief Reserves `blocks` counters of the device's Philox4x32-10 stream from a
   * kMXPResourceRandom resource: the kernel draws block i (4 x 32 random bits) as
   * philox(key, counter + i) for i < blocks. Calls are ordered by the engine (the resource is a
   * variable that sampling ops mutate), so the same seed gives the same numbers on every engine.
   * \since 1.1
   */
  MXPStatus* (*random_philox)(const MXPResource* resource, uint64_t blocks, uint64_t* key,
                              uint64_t* counter);
  /*!
   * \brief From inside register_all: calls `visit(user, def)` for each kernel that the plugins
   * loaded before this one registered for `device_type`, so that a backend can run another
   * device's kernels (a device whose memory the host can address, a test device). `def` is
   * borrowed for the call; its functions and `user` stay valid for the life of the process (no
   * plugin is ever unloaded). A status returned by `visit` stops the walk and is returned.
   * \since 1.2
   */
  MXPStatus* (*visit_kernels)(MXPRegistrar* registrar, int32_t device_type, void* user,
                              MXPStatus* (*visit)(void* user, const MXPKernelDef* def));
  /*!
   * \brief Registers a communication backend (abi/comm.h), only from inside register_all. The
   * def is copied; `memory_types` too.
   * \since 1.3
   */
  MXPStatus* (*register_comm)(MXPRegistrar* registrar, const MXPCommDef* def);
} MXPHostApi;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // MXPLUG_ABI_HOST_H_
