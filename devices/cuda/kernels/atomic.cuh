// Atomic adds on the device for the element types that have one: where several elements of one
// kernel add into the same place (take's and gather_nd's gradients, scatter_nd's add). The order
// of the adds varies from run to run, as in MXNet's AddTakeGrad.
#ifndef MXPLUG_DEVICES_CUDA_KERNELS_ATOMIC_CUH_
#define MXPLUG_DEVICES_CUDA_KERNELS_ATOMIC_CUH_

#include <cstdint>
#include <type_traits>

#include "launch.cuh"

namespace mxplug_cuda {

__device__ inline void AtomicAdd(float* p, float v) { atomicAdd(p, v); }
__device__ inline void AtomicAdd(double* p, double v) { atomicAdd(p, v); }
#if defined(MXPLUG_HIP)
// HIP 5.2 has no atomicAdd for __half: compare-and-swap the aligned 32-bit word that holds it.
__device__ inline void AtomicAdd(__half* p, __half v) {
  const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
  unsigned int* word = reinterpret_cast<unsigned int*>(addr & ~uintptr_t{3});
  const unsigned shift = (addr & 2) ? 16 : 0;
  unsigned int old = *word, assumed = 0;
  do {
    assumed = old;
    const __half sum =
        __float2half(__half2float(__ushort_as_half(static_cast<unsigned short>(assumed >> shift))) +
                     __half2float(v));
    const unsigned int bits = static_cast<unsigned int>(__half_as_ushort(sum)) << shift;
    old = atomicCAS(word, assumed, (assumed & ~(0xffffu << shift)) | bits);
  } while (old != assumed);
}
#else
__device__ inline void AtomicAdd(__half* p, __half v) { atomicAdd(p, v); }
#endif
__device__ inline void AtomicAdd(int32_t* p, int32_t v) { atomicAdd(p, v); }
__device__ inline void AtomicAdd(int64_t* p, int64_t v) {  // two's complement: the same bits
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}

/*! \brief Whether AtomicAdd takes T (the 8-bit integers have none). */
template <class T>
constexpr bool kHasAtomicAdd = !std::is_same_v<T, int8_t> && !std::is_same_v<T, uint8_t>;

/*! \brief CudaLoop with mxplug::CpuLoop's adds into one place (AddTo, CanAdd): atomic, one
 * thread per element. */
struct CudaAddLoop : CudaLoop {
  template <class T>
  static constexpr bool CanAdd() {
    return kHasAtomicAdd<T>;
  }
  template <class T>
  __host__ __device__ static void AddTo(T* p, T v) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    if constexpr (kHasAtomicAdd<T>) AtomicAdd(p, v);
#else
    (void)p, (void)v;
#endif
  }
};

}  // namespace mxplug_cuda

#endif  // MXPLUG_DEVICES_CUDA_KERNELS_ATOMIC_CUH_
