// The project's own GEMM, for devices without a vendor BLAS (HIP on Debian 12 has no rocBLAS or
// hipBLAS) and, on CUDA, in place of cuBLAS when MXPLUG_CUDA_PORTABLE_KERNELS=1, so that the
// kernel HIP runs is the one checked on every NVIDIA GPU the project is lent.
//
// Note [Portable GEMM]: row-major C = op(A) op(B) + beta C for `batch` matrices at fixed strides.
// A block of 16 x 16 threads computes a 64 x 64 tile of C, marching along k in steps of 16: each
// step the block stages a 64 x 16 slice of op(A) and a 16 x 64 slice of op(B) in shared memory,
// read from global memory along whichever axis is contiguous (so loads coalesce for either
// transpose), and each thread accumulates a 4 x 4 set of outputs spaced 16 apart (so threads of a
// row of the block read different shared-memory banks). Accumulation is in ComputeType<T> (float
// for float16), in the same order on every run. Edges are handled by bounds checks on the loads
// (zeros past the end) and the stores. Blocks walk the tiles and batches with grid strides, so
// any size runs within the grid limits.
#ifndef MXPLUG_DEVICES_CUDA_KERNELS_PORTABLE_GEMM_CUH_
#define MXPLUG_DEVICES_CUDA_KERNELS_PORTABLE_GEMM_CUH_

#include <algorithm>
#include <cstdint>
#include <string>

#include "launch.cuh"

namespace mxplug_cuda {

namespace portable_gemm {
constexpr int kTile = 64;                                // rows and columns of C per block
constexpr int kStep = 16;                                // k per shared-memory stage
constexpr int kSide = 16;                                // threads per side of the block
constexpr int kPer = kTile / kSide;                      // outputs per thread along each axis
constexpr int kLoads = kTile * kStep / (kSide * kSide);  // elements each thread stages per operand
}  // namespace portable_gemm

/*! \brief The operands of one GEMM call (Note [Portable GEMM]); passed to the kernel by value. */
template <class T>
struct GemmArgs {
  bool ta, tb;
  int64_t m, n, k;
  const T* a;
  int64_t lda, stride_a;
  const T* b;
  int64_t ldb, stride_b;
  mxplug::ComputeType<T> beta;
  T* c;
  int64_t ldc, stride_c;
  int64_t batch;
};

template <class T>
__global__ void __launch_bounds__(portable_gemm::kSide* portable_gemm::kSide)
    PortableGemmKernel(GemmArgs<T> g) {
  using namespace portable_gemm;
  using Acc = mxplug::ComputeType<T>;
  __shared__ Acc as[kStep][kTile + 1];  // as[kk][r] = op(A)(row0 + r, k0 + kk)
  __shared__ Acc bs[kStep][kTile + 1];  // bs[kk][c] = op(B)(k0 + kk, col0 + c)
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kSide + tx;
  const int64_t tiles_m = (g.m + kTile - 1) / kTile, tiles_n = (g.n + kTile - 1) / kTile;
  for (int64_t z = blockIdx.z; z < g.batch; z += gridDim.z) {
    const T* a = g.a + z * g.stride_a;
    const T* b = g.b + z * g.stride_b;
    T* c = g.c + z * g.stride_c;
    for (int64_t tm = blockIdx.y; tm < tiles_m; tm += gridDim.y) {
      for (int64_t tn = blockIdx.x; tn < tiles_n; tn += gridDim.x) {
        const int64_t row0 = tm * kTile, col0 = tn * kTile;
        Acc acc[kPer][kPer] = {};
        for (int64_t k0 = 0; k0 < g.k; k0 += kStep) {
          for (int l = 0; l < kLoads; ++l) {
            const int e = tid + l * kSide * kSide;
            // op(A)(r, kk): contiguous along kk unless A is transposed.
            const int ar = g.ta ? e % kTile : e / kStep, ak = g.ta ? e / kTile : e % kStep;
            const int64_t gr = row0 + ar, gk = k0 + ak;
            as[ak][ar] = gr < g.m && gk < g.k
                             ? static_cast<Acc>(g.ta ? a[gk * g.lda + gr] : a[gr * g.lda + gk])
                             : Acc(0);
            // op(B)(kk, c): contiguous along c unless B is transposed.
            const int bk = g.tb ? e % kStep : e / kTile, bc = g.tb ? e / kStep : e % kTile;
            const int64_t hk = k0 + bk, hc = col0 + bc;
            bs[bk][bc] = hk < g.k && hc < g.n
                             ? static_cast<Acc>(g.tb ? b[hc * g.ldb + hk] : b[hk * g.ldb + hc])
                             : Acc(0);
          }
          __syncthreads();
#pragma unroll
          for (int kk = 0; kk < kStep; ++kk) {
            Acc ra[kPer], rb[kPer];
#pragma unroll
            for (int i = 0; i < kPer; ++i)
              ra[i] = as[kk][ty + i * kSide], rb[i] = bs[kk][tx + i * kSide];
#pragma unroll
            for (int i = 0; i < kPer; ++i)
#pragma unroll
              for (int j = 0; j < kPer; ++j) acc[i][j] += ra[i] * rb[j];
          }
          __syncthreads();
        }
        for (int i = 0; i < kPer; ++i) {
          const int64_t r = row0 + ty + i * kSide;
          if (r >= g.m) continue;
          for (int j = 0; j < kPer; ++j) {
            const int64_t col = col0 + tx + j * kSide;
            if (col >= g.n) continue;
            T* out = &c[r * g.ldc + col];
            // beta == 0 never reads C, which may hold anything (NaN included), as BLAS specifies.
            const Acc prior = g.beta == Acc(0) ? Acc(0) : g.beta * static_cast<Acc>(*out);
            *out = static_cast<T>(acc[i][j] + prior);
          }
        }
      }
    }
  }
}

/*! \brief Runs the portable GEMM (Note [Portable GEMM]) on `stream`. */
template <class T>
void PortableGemm(cudaStream_t stream, const GemmArgs<T>& g) {
  using namespace portable_gemm;
  if (g.m == 0 || g.n == 0 || g.batch == 0) return;
  const int64_t tiles_m = (g.m + kTile - 1) / kTile, tiles_n = (g.n + kTile - 1) / kTile;
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>(tiles_n, 1 << 30)),
                  static_cast<unsigned>(std::min<int64_t>(tiles_m, 65535)),
                  static_cast<unsigned>(std::min<int64_t>(g.batch, 65535)));
  PortableGemmKernel<T><<<grid, dim3(kSide, kSide), 0, stream>>>(g);
  Check(cudaGetLastError(),
        ("launching the portable GEMM of (" + std::to_string(g.m) + " x " + std::to_string(g.k) +
         ") by (" + std::to_string(g.k) + " x " + std::to_string(g.n) + ")")
            .c_str());
}

}  // namespace mxplug_cuda

#endif  // MXPLUG_DEVICES_CUDA_KERNELS_PORTABLE_GEMM_CUH_
