/*!
 * \file mxplug/kernel.h
 * \brief A registered kernel (one op on one device type) and Kernel, one instance of it.
 */
#ifndef MXPLUG_KERNEL_H_
#define MXPLUG_KERNEL_H_

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>

#include "mxplug/abi/op.h"
#include "mxplug/sdk/context.hpp"
#include "mxplug/sdk/parameter.hpp"

namespace mxplug {

struct KernelEntry {
  std::string op_name;
  int32_t device_type = kDLCPU;
  std::string plugin;
  std::string plugin_path;
  MXPKernelDef def{};

  /*! \brief The registry key, "FullyConnected@cpu". */
  static std::string Key(const std::string& op, int32_t device_type) {
    return op + "@" + DeviceTypeName(device_type);
  }
  std::string Key() const { return Key(op_name, device_type); }
  bool has_backward() const { return def.backward != nullptr; }
  /*! \brief Forward and backward end through MXPKernelArgs::on_complete (ABI 1.5). */
  bool asynchronous() const {
    return def.struct_size >= MXP_STRUCT_SIZE(MXPKernelDef, asynchronous) && def.asynchronous;
  }
};

/*! \brief A kernel instance for fixed kwargs and a device. */
class Kernel {
 public:
  Kernel(std::shared_ptr<const KernelEntry> entry, const KwArgs& kwargs, Context ctx);
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  void Forward(const MXPKernelArgs& args) const;
  void Backward(const MXPKernelArgs& args) const;
  const KernelEntry& entry() const { return *entry_; }
  /*! \brief The error of a failed call, as Forward and Backward throw it: for the status an
   * asynchronous kernel ends with. */
  std::exception_ptr Failure(MXPStatus* status, bool backward) const;

  /*!
   * \brief Whether small calls of this kernel may run on the thread that pushes them (Note
   * [Inline functions]): only once kQuickRunsToInline of them have run quickly on a worker, so
   * that a kernel that hangs or takes long never blocks its caller, as MXNet's calls never do.
   */
  bool RunsInline() const {
    return quick_runs_.load(std::memory_order_relaxed) >= kQuickRunsToInline;
  }
  /*! \brief Counts a small call that took `seconds` on a worker toward RunsInline. */
  void NoteSmallRun(double seconds) const {
    if (seconds <= kQuickRunSeconds) quick_runs_.fetch_add(1, std::memory_order_relaxed);
  }

 private:
  static constexpr int kQuickRunsToInline = 4;
  static constexpr double kQuickRunSeconds = 50e-6;
  std::string Where(const char* phase) const;

  std::shared_ptr<const KernelEntry> entry_;
  Context ctx_;
  void* state_ = nullptr;
  mutable std::atomic<int> quick_runs_{0};
};

}  // namespace mxplug

#endif  // MXPLUG_KERNEL_H_
