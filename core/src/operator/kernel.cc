#include "mxplug/kernel.h"

#include "mxplug/error.h"
#include "registry/host_api.h"

namespace mxplug {

Kernel::Kernel(std::shared_ptr<const KernelEntry> entry, const KwArgs& kwargs, Context ctx)
    : entry_(std::move(entry)), ctx_(ctx) {
  std::vector<const char*> keys, values;
  for (const auto& kv : kwargs) {
    keys.push_back(kv.first.c_str());
    values.push_back(kv.second.c_str());
  }
  ThrowIfError(entry_->def.create(entry_->def.user, keys.data(), values.data(), keys.size(),
                                  ctx_.ToDLDevice(), &state_),
               Where("create"));
}

Kernel::~Kernel() {
  if (state_) entry_->def.destroy(entry_->def.user, state_);
}

std::string Kernel::Where(const char* phase) const {
  return entry_->op_name + " " + phase + " on " + ctx_.ToString() + " (kernel from plugin " +
         entry_->plugin + ")";
}

void Kernel::Forward(const MXPKernelArgs& args) const {
  // The context string is built only on failure: this is every op's hot path.
  if (MXPStatus* status = entry_->def.forward(state_, &args))
    ThrowIfError(status, Where("forward"));
}

void Kernel::Backward(const MXPKernelArgs& args) const {
  if (!entry_->def.backward)
    throw Error(entry_->op_name + " has no backward on " + DeviceTypeName(entry_->device_type) +
                    " (kernel from plugin " + entry_->plugin + ")",
                kMXPUnimplemented);
  if (MXPStatus* status = entry_->def.backward(state_, &args))
    ThrowIfError(status, Where("backward"));
}

std::exception_ptr Kernel::Failure(MXPStatus* status, bool backward) const {
  try {
    ThrowIfError(status, Where(backward ? "backward" : "forward"));
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

}  // namespace mxplug
