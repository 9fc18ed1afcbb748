/*!
 * \file mxplug/abi/device.h
 * \brief Device backends across the boundary: one MXPDeviceDef per DLPack device type.
 *
 * A backend on a machine without its hardware loads, reports zero devices with a reason, and
 * never aborts the process. Streams and events are opaque handles owned by the backend and
 * released through the same table.
 *
 * Note [Native streams] (1.2): for kDLCUDA and kDLROCM a stream handle *is* the
 * runtime's stream (cudaStream_t, hipStream_t) and an event handle its event (cudaEvent_t,
 * hipEvent_t), so that kernels hand it to cuBLAS or cuDNN and the host hands it to DLPack's
 * `__dlpack__(stream=)`. Other device types keep opaque handles.
 *
 * Note [Completion] (1.2): work a kernel or a copy queues on a stream may still run after the call
 * returns. The host never frees or reuses memory, or lets the CPU or another stream touch it,
 * before that work is done (docs/engine.md); a backend needs no bookkeeping of its own for it.
 * The host's threaded engine (Note [Event completion] there) records an event on the stream after
 * each engine function, makes other streams wait for it with stream_wait_event, and waits for it
 * on the host with event_synchronize or event_query, so these must keep CUDA's meanings:
 * stream_wait_event waits for the recording made before the call (recording the event again later
 * changes nothing for it); an event may be recorded again once complete; a stream may wait for an
 * event of another device of the same backend; and a fault of work queued before the recording is
 * reported by event_synchronize and event_query of it. A kernel must not leave queued work that
 * reads host memory it frees on return (CUDA stages pageable host memory in cudaMemcpyAsync, so
 * copies from it are safe).
 */
#ifndef MXPLUG_ABI_DEVICE_H_
#define MXPLUG_ABI_DEVICE_H_

#include "mxplug/abi/base.h"
#include "mxplug/abi/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/*!
 * \brief What a device is, for users and for kernels choosing launch shapes. The host sets
 * `struct_size` (how much room it gave) and zeroes the rest; a backend writes what it knows and
 * leaves a field it does not know at 0.
 * \since 1.2
 */
typedef struct MXPDeviceAttributes {
  size_t struct_size;
  MXPExtension* ext;
  int32_t compute_capability_major; /*!< CUDA's major.minor; a GPU architecture's on ROCm */
  int32_t compute_capability_minor;
  int32_t multiprocessor_count; /*!< streaming multiprocessors / compute units */
  int32_t warp_size;            /*!< threads per warp or wavefront */
  int32_t max_threads_per_block;
  int32_t reserved;                 /*!< padding, 0 */
  uint64_t total_memory;            /*!< bytes */
  uint64_t shared_memory_per_block; /*!< bytes */
} MXPDeviceAttributes;

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
  MXPStatus* (*allocate)(void* user, int32_t device_id, size_t bytes, size_t alignment, void** ptr);
  void (*free)(void* user, int32_t device_id, void* ptr);
  /*!
   * \brief Copies `bytes` between two devices of which at least one is of this type and the other
   * is of this type or kDLCPU (any host memory, pinned memory from host_allocate included). With a
   * NULL stream the copy is complete on return; with a stream it is ordered on that stream.
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

  /*!
   * \brief Sets `bytes` bytes at `ptr` (memory of this device) to the byte `value`; with a NULL
   * stream complete on return, with a stream ordered on it.
   * \since 1.2
   */
  MXPStatus* (*memset)(void* user, int32_t device_id, void* ptr, int32_t value, size_t bytes,
                       void* stream);
  /*! \brief Free and total memory of a device, in bytes (MXNet's gpu_memory_info). \since 1.2 */
  MXPStatus* (*memory_info)(void* user, int32_t device_id, uint64_t* free_bytes,
                            uint64_t* total_bytes);
  /*!
   * \brief Page-locked host memory that copies to and from `device_id` use at full speed (MXNet's
   * cpu_pinned), aligned to at least 64 bytes. \param[out] ptr new; release with host_free.
   * \since 1.2
   */
  MXPStatus* (*host_allocate)(void* user, int32_t device_id, size_t bytes, void** ptr);
  void (*host_free)(void* user, int32_t device_id, void* ptr);
  /*!
   * \brief Without blocking: `*complete` = 1 when the work recorded by `event` has completed
   * (or the event was never recorded), else 0.
   * \since 1.2
   */
  MXPStatus* (*event_query)(void* user, int32_t device_id, void* event, int32_t* complete);
  /*! \brief Fills `out` (see MXPDeviceAttributes). \since 1.2 */
  MXPStatus* (*attributes)(void* user, int32_t device_id, MXPDeviceAttributes* out);
  /*!
   * \brief Binds the calling host thread to `device_id` (cudaSetDevice) before it queues work for
   * it: each engine worker calls it once, when it starts; the naive engine calls it on the
   * pushing thread before each function it runs for the device. Calls that complete on return
   * (copies with a NULL stream, allocation) may come from threads that never called it.
   * \since 1.2
   */
  MXPStatus* (*thread_start)(void* user, int32_t device_id);

  /*!
   * \brief Collectives among devices of this backend in this process (NCCL's single-process use;
   * MXNet's 'nccl' kvstore). Each takes `count` compact tensors of one dtype and size, each on a
   * different device of this type. They are complete on return: the host calls them from a host
   * function after the work that wrote their inputs has completed, and reads their outputs from
   * any stream afterwards. `collective_reduce` writes the sum of every inputs[i] into `output`,
   * which lies on inputs[root]'s device; `collective_broadcast` copies buffers[root] into every
   * other buffer. The host checks all of this before the call (a root among the buffers, one
   * buffer per device, one dtype and size, the output on the root's device). NULL (both, or
   * neither) when the backend has none.
   * \since 1.4
   */
  MXPStatus* (*collective_reduce)(void* user, int32_t count, const DLTensor* const* inputs,
                                  DLTensor* output, int32_t root);
  MXPStatus* (*collective_broadcast)(void* user, int32_t count, DLTensor* const* buffers,
                                     int32_t root);
} MXPDeviceDef;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // MXPLUG_ABI_DEVICE_H_
