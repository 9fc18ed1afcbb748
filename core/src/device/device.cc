#include "mxplug/device.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "mxplug/error.h"
#include "registry/host_api.h"

namespace mxplug {

namespace {
std::string Where(const DeviceEntry& d, const std::string& what) {
  return "device '" + d.name + "' (plugin " + d.plugin + ") " + what;
}
// "ext_dev(1)": the device a call is about.
std::string Named(const DeviceEntry& d, int32_t device_id) {
  return Context{d.device_type, device_id}.ToString();
}
// A new stream or event from the backend's `make`.
void* NewHandle(const DeviceEntry& d, MXPStatus* (*make)(void*, int32_t, void**), int32_t device_id,
                const char* kind) {
  void* handle = nullptr;
  ThrowIfError(make(d.def.user, device_id, &handle), [&] {
    return Where(d, std::string("creating ") + kind + " on " + Named(d, device_id));
  });
  return handle;
}
}  // namespace

int32_t DeviceEntry::Count(std::string* reason) const {
  int32_t count = 0;
  const char* why = nullptr;
  ThrowIfError(def.device_count(def.user, &count, &why),
               [&] { return Where(*this, "device_count"); });
  if (reason) *reason = count == 0 ? detail::Str(why) : "";
  return count;
}

std::string DeviceEntry::Describe(int32_t device_id) const {
  const char* text = nullptr;
  ThrowIfError(def.describe(def.user, device_id, &text), [&] { return Where(*this, "describe"); });
  return detail::Str(text);
}

void* DeviceEntry::Allocate(int32_t device_id, size_t bytes, size_t alignment) const {
  void* ptr = nullptr;
  ThrowIfError(def.allocate(def.user, device_id, bytes, alignment, &ptr), [&] {
    return Where(*this,
                 "allocating " + std::to_string(bytes) + " bytes on " + Named(*this, device_id));
  });
  return ptr;
}

void DeviceEntry::Free(int32_t device_id, void* ptr) const { def.free(def.user, device_id, ptr); }

// Backends see any host memory, pinned included, as kDLCPU (abi/device.h: a copy's other side is
// the backend's own type or kDLCPU); CUDA's and HIP's copies tell pinned memory apart themselves.
void DeviceEntry::Copy(Context dst_ctx, void* dst, Context src_ctx, const void* src, size_t bytes,
                       void* stream) const {
  ThrowIfError(
      def.copy(def.user, dst_ctx.Compute().ToDLDevice(), dst, src_ctx.Compute().ToDLDevice(), src,
               bytes, stream),
      [&] { return Where(*this, "copying " + src_ctx.ToString() + " -> " + dst_ctx.ToString()); });
}

void DeviceEntry::Synchronize(int32_t device_id) const {
  ThrowIfError(def.synchronize(def.user, device_id), [&] { return Where(*this, "synchronize"); });
}

void* DeviceEntry::CreateStream(int32_t device_id) const {
  return NewHandle(*this, def.stream_create, device_id, "a stream");
}

void DeviceEntry::DestroyStream(int32_t device_id, void* stream) const {
  def.stream_destroy(def.user, device_id, stream);
}

void DeviceEntry::SynchronizeStream(int32_t device_id, void* stream) const {
  ThrowIfError(def.stream_synchronize(def.user, device_id, stream), [&] {
    return Where(*this, "synchronizing a stream of " + Named(*this, device_id));
  });
}

void* DeviceEntry::CreateEvent(int32_t device_id) const {
  return NewHandle(*this, def.event_create, device_id, "an event");
}

void DeviceEntry::DestroyEvent(int32_t device_id, void* event) const {
  def.event_destroy(def.user, device_id, event);
}

void DeviceEntry::RecordEvent(int32_t device_id, void* event, void* stream) const {
  ThrowIfError(def.event_record(def.user, device_id, event, stream),
               [&] { return Where(*this, "recording an event on " + Named(*this, device_id)); });
}

void DeviceEntry::WaitEvent(int32_t device_id, void* stream, void* event) const {
  ThrowIfError(def.stream_wait_event(def.user, device_id, stream, event), [&] {
    return Where(*this, "making a stream of " + Named(*this, device_id) + " wait for an event");
  });
}

void DeviceEntry::SynchronizeEvent(int32_t device_id, void* event) const {
  ThrowIfError(def.event_synchronize(def.user, device_id, event),
               [&] { return Where(*this, "waiting for an event of " + Named(*this, device_id)); });
}

// The 1.2 functions. A 1.1 backend's table was zero-filled past its struct_size when it was
// registered (CopyDef), so an absent function reads as null here.

void DeviceEntry::Memset(int32_t device_id, void* ptr, int value, size_t bytes,
                         void* stream) const {
  const std::string what =
      "setting " + std::to_string(bytes) + " bytes of " + Named(*this, device_id);
  if (def.memset) {
    ThrowIfError(def.memset(def.user, device_id, ptr, value, bytes, stream),
                 [&] { return Where(*this, what); });
    return;
  }
  if (!bytes) return;
  // The host buffer lives only during this call, so the copy must be complete on return.
  if (stream) SynchronizeStream(device_id, stream);
  std::vector<unsigned char> host(bytes, static_cast<unsigned char>(value));
  const Context dev{device_type, device_id};
  Copy(dev, ptr, Context::CPU(), host.data(), bytes, nullptr);
}

std::pair<uint64_t, uint64_t> DeviceEntry::MemoryInfo(int32_t device_id) const {
  if (!def.memory_info)
    throw Error(Where(*this, "does not report its memory (its plugin predates ABI 1.2 or " +
                                 std::string("does not implement memory_info)")),
                kMXPUnimplemented);
  uint64_t free_bytes = 0, total_bytes = 0;
  ThrowIfError(def.memory_info(def.user, device_id, &free_bytes, &total_bytes), [&] {
    return Where(*this, "reading the memory size of " + Named(*this, device_id));
  });
  return {free_bytes, total_bytes};
}

void* DeviceEntry::HostAllocate(int32_t device_id, size_t bytes) const {
  void* ptr = nullptr;
  if (def.host_allocate) {
    ThrowIfError(def.host_allocate(def.user, device_id, bytes, &ptr), [&] {
      return Where(*this, "allocating " + std::to_string(bytes) +
                              " bytes of pinned host memory for " + Named(*this, device_id));
    });
    return ptr;
  }
  constexpr size_t kAlign = 64;
  ptr = std::aligned_alloc(kAlign, bytes ? (bytes + kAlign - 1) / kAlign * kAlign : kAlign);
  if (!ptr)
    throw Error(Where(*this, "allocating " + std::to_string(bytes) + " bytes of host memory for " +
                                 Named(*this, device_id) + ": out of memory"),
                kMXPResourceExhausted);
  return ptr;
}

void DeviceEntry::HostFree(int32_t device_id, void* ptr) const {
  if (def.host_allocate)
    def.host_free(def.user, device_id, ptr);
  else
    std::free(ptr);
}

bool DeviceEntry::QueryEvent(int32_t device_id, void* event) const {
  if (!def.event_query) {
    SynchronizeEvent(device_id, event);
    return true;
  }
  int32_t complete = 0;
  ThrowIfError(def.event_query(def.user, device_id, event, &complete),
               [&] { return Where(*this, "querying an event of " + Named(*this, device_id)); });
  return complete != 0;
}

MXPDeviceAttributes DeviceEntry::Attributes(int32_t device_id) const {
  MXPDeviceAttributes out{};
  out.struct_size = sizeof out;
  if (def.attributes)
    ThrowIfError(def.attributes(def.user, device_id, &out), [&] {
      return Where(*this, "reading the attributes of " + Named(*this, device_id));
    });
  out.struct_size = sizeof out;
  return out;
}

void DeviceEntry::StartThread(int32_t device_id) const {
  if (def.thread_start)
    ThrowIfError(def.thread_start(def.user, device_id),
                 [&] { return Where(*this, "binding a thread to " + Named(*this, device_id)); });
}

namespace {
// "cuda(0), cuda(1)": the devices of a collective's tensors.
template <typename T>
std::string DevicesOf(const DeviceEntry& d, const std::vector<T*>& tensors) {
  std::string text;
  for (const DLTensor* t : tensors)
    text += (text.empty() ? "" : ", ") + Named(d, t->device.device_id);
  return text;
}
int64_t ElementsOf(const DLTensor& t) {
  int64_t n = 1;
  for (int i = 0; i < t.ndim; ++i) n *= t.shape[i];
  return n;
}
bool SameKind(const DLTensor& a, const DLTensor& b) {
  return ElementsOf(a) == ElementsOf(b) && a.dtype.code == b.dtype.code &&
         a.dtype.bits == b.dtype.bits && a.dtype.lanes == b.dtype.lanes;
}
// The collectives' contract (abi/device.h), checked here once so that backends need not: the
// backend has them, a root among the buffers, one buffer per device of this backend, all of one
// dtype and size. `what` names the call.
template <typename T>
void CheckGroup(const DeviceEntry& d, const std::string& what, const std::vector<T*>& tensors,
                int32_t root) {
  if (!d.HasCollectives())
    throw Error(Where(d, "has no collectives among its devices (" + what +
                             "): its plugin predates ABI 1.4 or was built without them"),
                kMXPUnimplemented);
  auto refuse = [&](const std::string& why) {
    throw Error(Where(d, what + ": " + why), kMXPInvalidArgument);
  };
  if (root < 0 || root >= static_cast<int32_t>(tensors.size()))
    refuse("root " + std::to_string(root) + " is not one of the " + std::to_string(tensors.size()) +
           " buffers");
  for (size_t i = 0; i < tensors.size(); ++i) {
    const DLTensor& t = *tensors[i];
    if (t.device.device_type != d.device_type)
      refuse("buffer " + std::to_string(i) + " is not on a device of this backend");
    for (size_t j = 0; j < i; ++j)
      if (tensors[j]->device.device_id == t.device.device_id)
        refuse("two buffers on " + Named(d, t.device.device_id) + "; expected one per device");
    if (!SameKind(t, *tensors[0]))
      refuse("buffer " + std::to_string(i) + " differs from buffer 0 in dtype or size");
  }
}
}  // namespace

void DeviceEntry::CollectiveReduce(const std::vector<const DLTensor*>& inputs, DLTensor* output,
                                   int32_t root) const {
  const std::string what = "summing over " + DevicesOf(*this, inputs) + " into " +
                           Named(*this, output->device.device_id);
  CheckGroup(*this, what, inputs, root);
  if (output->device.device_type != device_type ||
      output->device.device_id != inputs[root]->device.device_id || !SameKind(*output, *inputs[0]))
    throw Error(Where(*this, what + ": the output is not on the root's device (" +
                                 Named(*this, inputs[root]->device.device_id) +
                                 ") or not of the inputs' dtype and size"),
                kMXPInvalidArgument);
  ThrowIfError(def.collective_reduce(def.user, static_cast<int32_t>(inputs.size()), inputs.data(),
                                     output, root),
               [&] { return Where(*this, what); });
}

void DeviceEntry::CollectiveBroadcast(const std::vector<DLTensor*>& buffers, int32_t root) const {
  const std::string what = "broadcasting over " + DevicesOf(*this, buffers);
  CheckGroup(*this, what, buffers, root);
  ThrowIfError(def.collective_broadcast(def.user, static_cast<int32_t>(buffers.size()),
                                        buffers.data(), root),
               [&] {
                 return Where(*this,
                              what + " from " + Named(*this, buffers[root]->device.device_id));
               });
}

}  // namespace mxplug
