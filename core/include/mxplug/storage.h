/*!
 * \file mxplug/storage.h
 * \brief Storage: one block of memory on a device, allocated and freed by that device's backend
 * plugin (pinned host memory: by the accelerator's host_allocate, Note [Pinned host memory]).
 * Shared by the tensors that view it.
 */
#ifndef MXPLUG_STORAGE_H_
#define MXPLUG_STORAGE_H_

#include <cstddef>
#include <memory>

#include "mxplug/device.h"
#include "mxplug/sdk/context.hpp"

namespace mxplug {

class Storage {
 public:
  /*! \brief Alignment of every block: a cache line, and what SIMD loads want. */
  static constexpr size_t kAlignment = 64;

  /*! \brief Allocates `bytes` on ctx. \throws Error when ctx has no device or memory runs out. */
  static std::shared_ptr<Storage> Alloc(size_t bytes, Context ctx);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Context ctx() const { return ctx_; }
  /*! \brief The backend that copies this memory: the CPU's for any host memory. */
  const DeviceEntry& device() const { return *device_; }
  /*!
   * \brief Once the last holder lets go, the block goes straight back to its device instead of
   * into the pool (MXNet's DirectFree): for a block of a size no later allocation is likely to
   * ask for, such as a temp-space block that grew, which would otherwise sit idle in the pool.
   */
  void SkipPoolOnFree() { pooled_ = false; }

 private:
  // Only Alloc makes a Storage (the key), in one allocation with its count (make_shared).
  struct Key {};

 public:
  Storage(Key, const DeviceEntry* device, const DeviceEntry* allocator, bool pinned, Context ctx,
          void* data, size_t bytes)
      : device_(device),
        allocator_(allocator),
        pinned_(pinned),
        ctx_(ctx),
        data_(data),
        bytes_(bytes) {}

 private:
  // Registered backends live as long as the process (Note [No dlclose]): no counted references.
  const DeviceEntry* device_;
  const DeviceEntry* allocator_;  // where the block goes back to
  bool pinned_;                   // from allocator_'s host_allocate
  bool pooled_ = true;            // false: freed to the device (SkipPoolOnFree)
  Context ctx_;
  void* data_;
  size_t bytes_;
};

}  // namespace mxplug

#endif  // MXPLUG_STORAGE_H_
