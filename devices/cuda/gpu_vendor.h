// The portability header: the CUDA plugin's sources are written against the CUDA runtime, and the
// HIP plugin (devices/hip) compiles the same files with hipcc and MXPLUG_HIP defined. There this
// header includes HIP's runtime and renames every CUDA runtime name the sources use to its HIP
// twin (as ggml builds its HIP backend), so that a kernel is written once. A source file that
// uses a new runtime name adds it here; a name missing on one side fails that side's build.
//
// Both sides get the vendor's device type (kGpuDevice: kDLCUDA or kDLROCM) and the name users and
// messages give it (kGpuName: "cuda" or "hip"), which the kernels register and report under.
#ifndef MXPLUG_DEVICES_CUDA_GPU_VENDOR_H_
#define MXPLUG_DEVICES_CUDA_GPU_VENDOR_H_

#include <dlpack/dlpack.h>

#if defined(MXPLUG_HIP)

#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>

// Errors
#define cudaError_t hipError_t
#define cudaSuccess hipSuccess
#define cudaErrorNotReady hipErrorNotReady
#define cudaErrorMemoryAllocation hipErrorOutOfMemory
#define cudaErrorPeerAccessAlreadyEnabled hipErrorPeerAccessAlreadyEnabled
#define cudaGetLastError hipGetLastError
#define cudaGetErrorName hipGetErrorName
#define cudaGetErrorString hipGetErrorString
// Devices
#define cudaGetDeviceCount hipGetDeviceCount
#define cudaGetDevice hipGetDevice
#define cudaSetDevice hipSetDevice
#define cudaDeviceProp hipDeviceProp_t
#define cudaGetDeviceProperties hipGetDeviceProperties
#define cudaDeviceAttr hipDeviceAttribute_t
#define cudaDeviceGetAttribute hipDeviceGetAttribute
#define cudaDevAttrComputeCapabilityMajor hipDeviceAttributeComputeCapabilityMajor
#define cudaDevAttrComputeCapabilityMinor hipDeviceAttributeComputeCapabilityMinor
#define cudaDevAttrMultiProcessorCount hipDeviceAttributeMultiprocessorCount
#define cudaDevAttrWarpSize hipDeviceAttributeWarpSize
#define cudaDevAttrMaxThreadsPerBlock hipDeviceAttributeMaxThreadsPerBlock
#define cudaDevAttrMaxSharedMemoryPerBlock hipDeviceAttributeMaxSharedMemoryPerBlock
#define cudaDeviceSynchronize hipDeviceSynchronize
#define cudaMemGetInfo hipMemGetInfo
#define cudaDeviceCanAccessPeer hipDeviceCanAccessPeer
#define cudaDeviceEnablePeerAccess hipDeviceEnablePeerAccess
// Memory
#define cudaMalloc hipMalloc
#define cudaFree hipFree
#define cudaHostAlloc hipHostMalloc
#define cudaHostAllocPortable hipHostMallocPortable
#define cudaFreeHost hipHostFree
#define cudaMemcpy hipMemcpy
#define cudaMemcpyAsync hipMemcpyAsync
#define cudaMemcpyDefault hipMemcpyDefault
#define cudaMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define cudaMemcpyHostToDevice hipMemcpyHostToDevice
#define cudaMemcpyDeviceToHost hipMemcpyDeviceToHost
#define cudaMemset hipMemset
#define cudaMemsetAsync hipMemsetAsync
// Streams and events
#define cudaStream_t hipStream_t
#define cudaStreamCreateWithFlags hipStreamCreateWithFlags
#define cudaStreamNonBlocking hipStreamNonBlocking
#define cudaStreamDestroy hipStreamDestroy
#define cudaStreamSynchronize hipStreamSynchronize
#define cudaStreamWaitEvent hipStreamWaitEvent
#define cudaEvent_t hipEvent_t
#define cudaEventCreateWithFlags hipEventCreateWithFlags
#define cudaEventDisableTiming hipEventDisableTiming
#define cudaEventDestroy hipEventDestroy
#define cudaEventRecord hipEventRecord
#define cudaEventSynchronize hipEventSynchronize
#define cudaEventQuery hipEventQuery

namespace mxplug_cuda {
constexpr DLDeviceType kGpuDevice = kDLROCM;
constexpr const char* kGpuName = "hip";
}  // namespace mxplug_cuda

#else

#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace mxplug_cuda {
constexpr DLDeviceType kGpuDevice = kDLCUDA;
constexpr const char* kGpuName = "cuda";
}  // namespace mxplug_cuda

#endif

#endif  // MXPLUG_DEVICES_CUDA_GPU_VENDOR_H_
