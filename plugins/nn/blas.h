// Typed row-major GEMM on OpenBLAS for the nn plugin's kernels: C = op(A) * op(B) + beta * C.
#ifndef MXPLUG_PLUGINS_NN_BLAS_H_
#define MXPLUG_PLUGINS_NN_BLAS_H_

#include <cblas.h>

#include <stdexcept>
#include <string>

#include "mxplug/plugin.hpp"

namespace mxplug_nn {

inline void Gemm(bool ta, bool tb, int m, int n, int k, const float* a, int lda, const float* b,
                 int ldb, float beta, float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n,
              k, 1.0f, a, lda, b, ldb, beta, c, ldc);
}
inline void Gemm(bool ta, bool tb, int m, int n, int k, const double* a, int lda, const double* b,
                 int ldb, double beta, double* c, int ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n,
              k, 1.0, a, lda, b, ldb, beta, c, ldc);
}

// BLAS computes in float32 or float64: ops built on it say so at the call (in InferType)
// rather than in the kernel.
inline void RequireBlasType(int dtype) {
  if (dtype != kMXPFloat32 && dtype != kMXPFloat64)
    throw std::invalid_argument("data has dtype " + mxplug::DTypeName(dtype) +
                                "; expected float32 or float64");
}

}  // namespace mxplug_nn

#endif  // MXPLUG_PLUGINS_NN_BLAS_H_
