// Typed row-major GEMM on OpenBLAS for the nn plugin's kernels: C = op(A) * op(B) + beta * C.
#ifndef MXPLUG_PLUGINS_NN_BLAS_H_
#define MXPLUG_PLUGINS_NN_BLAS_H_

#include <cblas.h>

#include "matmul.h"  // RequireBlasType
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

}  // namespace mxplug_nn

#endif  // MXPLUG_PLUGINS_NN_BLAS_H_
