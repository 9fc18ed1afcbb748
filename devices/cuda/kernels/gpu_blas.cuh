// The GPU's BLAS policies of the kernels written once in their definition headers (the matrix
// products of plugins/nn/matmul.h, the convolutions of plugins/nn/convolution.h): cuBLAS
// (VendorBlas), or the project's portable GEMM (PortableBlas, portable_gemm.cuh) under HIP and on
// CUDA with MXPLUG_CUDA_PORTABLE_KERNELS=1 (WithBlas picks).
//
// Note [cuBLAS handles]: a cuBLAS handle belongs to the device that was current when it was made,
// and its calls are queued on the stream set on it. Each engine worker has its own stream and
// runs one function at a time, so a handle per (device, stream), made on first use and kept for
// the plugin's life, is never used by two threads at once and never needs a lock around its calls;
// only the cache itself is locked. The handles use cuBLAS's default math mode: float32 GEMMs stay
// in float32 (no TF32), as MXNet 1.x and PyTorch do by default.
#ifndef MXPLUG_DEVICES_CUDA_KERNELS_GPU_BLAS_CUH_
#define MXPLUG_DEVICES_CUDA_KERNELS_GPU_BLAS_CUH_

#if !defined(MXPLUG_HIP)
#include <cublas_v2.h>
#endif

#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "launch.cuh"
#include "nn/matmul.h"  // LinearShape, LayerGrads
#include "portable_gemm.cuh"
#include "reduce.cuh"
#include "tensor/reduce.h"

namespace mxplug_cuda {

#if !defined(MXPLUG_HIP)
inline void CheckBlas(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  if (status == CUBLAS_STATUS_ALLOC_FAILED) throw std::bad_alloc();
  throw std::runtime_error(std::string(call) + ": " + cublasGetStatusName(status) + " (" +
                           cublasGetStatusString(status) + ")");
}

/*! \brief The handle of the current device for `stream` (Note [cuBLAS handles]). */
inline cublasHandle_t HandleFor(cudaStream_t stream) {
  static std::mutex mutex;
  static std::map<std::pair<int, cudaStream_t>, cublasHandle_t> handles;
  int device = 0;
  Check(cudaGetDevice(&device), "cudaGetDevice");
  std::lock_guard<std::mutex> lock(mutex);
  cublasHandle_t& h = handles[{device, stream}];
  if (!h) {
    cublasHandle_t made = nullptr;
    CheckBlas(cublasCreate(&made),
              ("cublasCreate on cuda(" + std::to_string(device) + ")").c_str());
    CheckBlas(cublasSetStream(made, stream), "cublasSetStream");
    h = made;
  }
  return h;
}

// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: the same call with the
// operands swapped, and m and n swapped.
inline cublasStatus_t GemmStridedBatched(cublasHandle_t h, cublasOperation_t ta,
                                         cublasOperation_t tb, int m, int n, int k,
                                         const float* alpha, const float* a, int lda, long long sa,
                                         const float* b, int ldb, long long sb, const float* beta,
                                         float* c, int ldc, long long sc, int batch) {
  return cublasSgemmStridedBatched(h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc,
                                   sc, batch);
}
inline cublasStatus_t GemmStridedBatched(cublasHandle_t h, cublasOperation_t ta,
                                         cublasOperation_t tb, int m, int n, int k,
                                         const double* alpha, const double* a, int lda,
                                         long long sa, const double* b, int ldb, long long sb,
                                         const double* beta, double* c, int ldc, long long sc,
                                         int batch) {
  return cublasDgemmStridedBatched(h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc,
                                   sc, batch);
}

// float16: cuBLAS's mixed-precision GEMM, float16 in and out, accumulating in float32 (MXNet's
// GPU float16 products do the same; tensor cores where the GPU has them).
inline cublasStatus_t GemmStridedBatched(cublasHandle_t h, cublasOperation_t ta,
                                         cublasOperation_t tb, int m, int n, int k,
                                         const float* alpha, const __half* a, int lda, long long sa,
                                         const __half* b, int ldb, long long sb, const float* beta,
                                         __half* c, int ldc, long long sc, int batch) {
  return cublasGemmStridedBatchedEx(h, ta, tb, m, n, k, alpha, a, CUDA_R_16F, lda, sa, b,
                                    CUDA_R_16F, ldb, sb, beta, c, CUDA_R_16F, ldc, sc, batch,
                                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

#endif

template <class T>
struct AddBiasElements {
  T* out;
  const T* bias;
  int64_t n;
  __device__ void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    out[i] = static_cast<T>(static_cast<C>(out[i]) + static_cast<C>(bias[i % n]));
  }
};

/*! \brief What both BLASes share: the bias and its gradient (one pass each), and no fused paths
 * (cuBLASLt's bias epilogues are for a later issue). `Gemm` is each BLAS's own. */
struct GpuBlasCommon {
  template <class T>
  static void AddBias(const mxplug::OpContext& ctx, T* out, const T* bias, int64_t m, int64_t n) {
    ForEach(m * n, StreamOf(ctx), AddBiasElements<T>{out, bias, n});
  }
  template <class T>
  static void SumRows(const mxplug::OpContext& ctx, const T* og, T* db, int64_t m, int64_t n,
                      mxplug::OpReqType req) {
    using Sum = mxplug_tensor::Reducer<mxplug_tensor::ReduceKind::kSum>;
    ReduceEach<Sum>(MakeReduceIndex(mxplug::TShape{m, n}, {true, false}), mxplug::ComputeType<T>(0),
                    StreamOf(ctx), LoadElement<T>{og}, StoreReduced<T>{db, req});
  }
  static bool FusedLinearForward(const mxplug::OpContext&, const mxplug_nn::LinearShape&,
                                 const mxplug::TBlob&, const mxplug::TBlob&, const mxplug::TBlob*,
                                 const mxplug::TBlob&, mxplug::OpReqType) {
    return false;
  }
  static bool FusedLinearBackward(const mxplug::OpContext&, const mxplug_nn::LinearShape&,
                                  const mxplug::TBlob&, const mxplug::TBlob&, const mxplug::TBlob&,
                                  const mxplug_nn::LayerGrads&) {
    return false;
  }
};

/*! \brief The project's GEMM (Note [Portable GEMM]). */
struct PortableBlas : GpuBlasCommon {
  template <class T>
  static void Gemm(const mxplug::OpContext& ctx, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                   const T* a, int lda, const T* b, int ldb, mxplug::ComputeType<T> beta, T* c,
                   int ldc, int64_t batch, int64_t stride_a, int64_t stride_b, int64_t stride_c) {
    PortableGemm(StreamOf(ctx), GemmArgs<T>{ta, tb, m, n, k, a, lda, stride_a, b, ldb, stride_b,
                                            beta, c, ldc, stride_c, batch});
  }
};

#if !defined(MXPLUG_HIP)
/*! \brief cuBLAS (Note [cuBLAS handles]). */
struct VendorBlas : GpuBlasCommon {
  template <class T>
  static void Gemm(const mxplug::OpContext& ctx, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                   const T* a, int lda, const T* b, int ldb, mxplug::ComputeType<T> beta, T* c,
                   int ldc, int64_t batch, int64_t stride_a, int64_t stride_b, int64_t stride_c) {
    if (m == 0 || n == 0 || batch == 0) return;
    const mxplug::ComputeType<T> one = 1;
    const auto op = [](bool t) { return t ? CUBLAS_OP_T : CUBLAS_OP_N; };
    CheckBlas(
        GemmStridedBatched(HandleFor(StreamOf(ctx)), op(tb), op(ta), static_cast<int>(n),
                           static_cast<int>(m), static_cast<int>(k), &one, b, ldb, stride_b, a, lda,
                           stride_a, &beta, c, ldc, stride_c, static_cast<int>(batch)),
        ("a GEMM of (" + std::to_string(m) + " x " + std::to_string(k) + ") by (" +
         std::to_string(k) + " x " + std::to_string(n) + ")")
            .c_str());
  }
};
#endif

/*! \brief Calls f(PortableBlas{}) or f(VendorBlas{}) as UsePortableKernels() says. */
template <class F>
void WithBlas(F&& f) {
#if defined(MXPLUG_HIP)
  f(PortableBlas{});
#else
  if (UsePortableKernels())
    f(PortableBlas{});
  else
    f(VendorBlas{});
#endif
}

}  // namespace mxplug_cuda

#endif  // MXPLUG_DEVICES_CUDA_KERNELS_GPU_BLAS_CUH_
