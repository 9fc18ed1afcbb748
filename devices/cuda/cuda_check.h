// Turning a CUDA (or HIP: gpu_vendor.h) runtime error into an exception that says which call
// failed on which device, for the backend and the kernels alike. The SDK's trampolines turn the
// exception into a status whose text the host shows with the op and the device.
#ifndef MXPLUG_DEVICES_CUDA_CUDA_CHECK_H_
#define MXPLUG_DEVICES_CUDA_CUDA_CHECK_H_

#include <new>
#include <stdexcept>
#include <string>

#include "gpu_vendor.h"

namespace mxplug_cuda {

/*! \brief "cudaMalloc on cuda(0): out of memory (cudaErrorMemoryAllocation)"; under HIP, "hipMalloc
 * on hip(0): ... (hipErrorOutOfMemory)" (a runtime call named with its CUDA prefix gets HIP's). */
inline std::string ErrorText(cudaError_t err, const std::string& call, int dev_id) {
  std::string text = call;
#if defined(MXPLUG_HIP)
  if (text.rfind("cuda", 0) == 0) text.replace(0, 4, "hip");
#endif
  if (dev_id >= 0) text += std::string(" on ") + kGpuName + "(" + std::to_string(dev_id) + ")";
  const std::string what = cudaGetErrorString(err), name = cudaGetErrorName(err);
  return text + ": " + what + (what == name ? "" : " (" + name + ")");  // HIP's may be the name
}

/*!
 * \brief Throws when `err` is an error: std::bad_alloc for out of memory (so that the host's pool
 * releases its idle blocks and tries again), std::runtime_error otherwise. The runtime's sticky
 * last error is cleared first, so that a later, unrelated call does not report it again.
 */
inline void Check(cudaError_t err, const char* call, int dev_id = -1) {
  if (err == cudaSuccess) return;
  (void)cudaGetLastError();
  if (err == cudaErrorMemoryAllocation) throw std::bad_alloc();
  throw std::runtime_error(ErrorText(err, call, dev_id));
}

}  // namespace mxplug_cuda

#endif  // MXPLUG_DEVICES_CUDA_CUDA_CHECK_H_
