/*!
 * \file mxplug/sdk/context.hpp
 * \brief Where data lives and code runs: a DLPack device type and an index (MXNet's Context).
 * Shared by plugins and the core.
 */
#ifndef MXPLUG_SDK_CONTEXT_HPP_
#define MXPLUG_SDK_CONTEXT_HPP_

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>

namespace mxplug {

/*!
 * \brief The name users write for a DLPack device type: "cpu", "cuda", "hip", "cpu_pinned" (MXNet's
 * name for either vendor's pinned host memory), or "dlN".
 */
inline std::string DeviceTypeName(int32_t device_type) {
  switch (device_type) {
    case kDLCPU:
      return "cpu";
    case kDLCUDA:
      return "cuda";
    case kDLROCM:
      return "hip";
    case kDLCUDAHost:  // either vendor's pinned host memory
    case kDLROCMHost:
      return "cpu_pinned";
    case kDLOpenCL:
      return "opencl";
    case kDLVulkan:
      return "vulkan";
    case kDLMetal:
      return "metal";
    case kDLExtDev:
      return "ext_dev";
    default:
      return "dl" + std::to_string(device_type);
  }
}

/*!
 * \brief Whether memory of this device type is host memory that CPU code reads and writes: the
 * CPU's, and an accelerator's page-locked host memory (kDLCUDAHost, kDLROCMHost: MXNet's
 * cpu_pinned), which accelerators copy from and to asynchronously.
 */
inline bool IsHostDeviceType(int32_t device_type) {
  return device_type == kDLCPU || device_type == kDLCUDAHost || device_type == kDLROCMHost;
}

struct Context {
  int32_t dev_type = kDLCPU;  // DLDeviceType
  int32_t dev_id = 0;

  static Context CPU(int32_t id = 0) { return {kDLCPU, id}; }
  /*! \brief Host memory (IsHostDeviceType): CPU kernels and CPU workers serve it. */
  bool IsHost() const { return IsHostDeviceType(dev_type); }
  /*! \brief Pinned host memory (MXNet's cpu_pinned). */
  bool IsHostPinned() const { return IsHost() && dev_type != kDLCPU; }
  /*!
   * \brief Where work on data of this context runs, as MXNet's dev_mask: the CPU for any host
   * memory, else the context itself.
   */
  Context Compute() const { return IsHost() ? CPU(dev_id) : *this; }
  DLDevice ToDLDevice() const { return DLDevice{static_cast<DLDeviceType>(dev_type), dev_id}; }
  /*! \brief "cpu(0)", as MXNet prints contexts. */
  std::string ToString() const {
    return DeviceTypeName(dev_type) + "(" + std::to_string(dev_id) + ")";
  }
  bool operator==(const Context& o) const { return dev_type == o.dev_type && dev_id == o.dev_id; }
  bool operator!=(const Context& o) const { return !(*this == o); }
};

/*!
 * \brief What only the engine knows when a function runs (the seeds: RunContext, as opposed to
 * the Context a function was pushed for): the device and the stream of the worker running it.
 */
struct RunContext {
  Context ctx;
  void* stream = nullptr;  // the device plugin's stream; cast to cudaStream_t on CUDA
  template <typename T>
  T get_stream() const {
    return static_cast<T>(stream);
  }
};

}  // namespace mxplug

#endif  // MXPLUG_SDK_CONTEXT_HPP_
