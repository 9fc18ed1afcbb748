#include "mxplug/storage.h"

#include "mxplug/runtime.h"

namespace mxplug {

std::shared_ptr<Storage> Storage::Alloc(size_t bytes, Context ctx) {
  Runtime& rt = Runtime::Get();
  rt.CheckContext(ctx);
  std::shared_ptr<const DeviceEntry> device = rt.GetDevice(ctx.dev_type);
  // A zero-byte tensor still gets a distinct, valid pointer, as NumPy's do.
  void* data = device->Allocate(ctx.dev_id, bytes ? bytes : 1, kAlignment);
  return std::shared_ptr<Storage>(new Storage(std::move(device), ctx, data, bytes));
}

Storage::~Storage() { device_->Free(ctx_.dev_id, data_); }

}  // namespace mxplug
