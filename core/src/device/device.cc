#include "mxplug/device.h"

#include "mxplug/error.h"
#include "registry/host_api.h"

namespace mxplug {

namespace {
std::string Where(const DeviceEntry& d, const std::string& what) {
  return "device '" + d.name + "' (plugin " + d.plugin + ") " + what;
}
}  // namespace

int32_t DeviceEntry::Count(std::string* reason) const {
  int32_t count = 0;
  const char* why = nullptr;
  ThrowIfError(def.device_count(def.user, &count, &why), Where(*this, "device_count"));
  if (reason) *reason = count == 0 ? detail::Str(why) : "";
  return count;
}

std::string DeviceEntry::Describe(int32_t device_id) const {
  const char* text = nullptr;
  ThrowIfError(def.describe(def.user, device_id, &text), Where(*this, "describe"));
  return detail::Str(text);
}

void* DeviceEntry::Allocate(int32_t device_id, size_t bytes, size_t alignment) const {
  void* ptr = nullptr;
  ThrowIfError(def.allocate(def.user, device_id, bytes, alignment, &ptr),
               Where(*this, "allocating " + std::to_string(bytes) + " bytes"));
  return ptr;
}

void DeviceEntry::Free(int32_t device_id, void* ptr) const { def.free(def.user, device_id, ptr); }

void DeviceEntry::Copy(Context dst_ctx, void* dst, Context src_ctx, const void* src, size_t bytes,
                       void* stream) const {
  ThrowIfError(def.copy(def.user, dst_ctx.ToDLDevice(), dst, src_ctx.ToDLDevice(), src, bytes, stream),
               Where(*this, "copying " + src_ctx.ToString() + " -> " + dst_ctx.ToString()));
}

void DeviceEntry::Synchronize(int32_t device_id) const {
  ThrowIfError(def.synchronize(def.user, device_id), Where(*this, "synchronize"));
}

}  // namespace mxplug
