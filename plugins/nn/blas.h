// Typed row-major GEMM on OpenBLAS for the nn plugin's kernels: C = op(A) * op(B) + beta * C; and
// CpuBlas, the CPU's BLAS policy of the matrix-product and convolution kernels (matmul.h,
// convolution.h): OpenBLAS's GEMM, and oneDNN's inner product for FullyConnected in float32 where
// the plugin has oneDNN, so that a network of FullyConnected and oneDNN ops runs on one OpenMP
// thread pool.
#ifndef MXPLUG_PLUGINS_NN_BLAS_H_
#define MXPLUG_PLUGINS_NN_BLAS_H_

#include <cblas.h>

#include <vector>

#include "matmul.h"  // RequireBlasType
#include "mxplug/plugin.hpp"
#include "onednn/onednn.h"

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

#if MXPLUG_HAVE_HALF
// float16: OpenBLAS has no float16 GEMM here, so the operands are widened to float32 (the span a
// matrix occupies at its leading dimension), multiplied by sgemm and C rounded back once (MXNet's
// CPU has no float16 products at all; its GPU accumulates them in float32 too).
inline std::vector<float> Widened(const mxplug::half_t* x, size_t n) {
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(x[i]);
  return out;
}
inline void Gemm(bool ta, bool tb, int m, int n, int k, const mxplug::half_t* a, int lda,
                 const mxplug::half_t* b, int ldb, float beta, mxplug::half_t* c, int ldc) {
  if (m == 0 || n == 0) return;
  const std::vector<float> a32 = Widened(a, size_t(ta ? k : m) * lda);
  const std::vector<float> b32 = Widened(b, size_t(tb ? n : k) * ldb);
  const size_t span = size_t(m - 1) * ldc + n;
  std::vector<float> c32 = beta == 0.f ? std::vector<float>(span) : Widened(c, span);
  Gemm(ta, tb, m, n, k, a32.data(), lda, b32.data(), ldb, beta, c32.data(), ldc);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      c[size_t(i) * ldc + j] = static_cast<mxplug::half_t>(c32[size_t(i) * ldc + j]);
}
#endif

struct CpuBlas {
  template <class T>
  static void Gemm(const mxplug::OpContext&, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                   const T* a, int lda, const T* b, int ldb, mxplug::ComputeType<T> beta, T* c,
                   int ldc, int64_t batch, int64_t stride_a, int64_t stride_b, int64_t stride_c) {
    if (m == 0 || n == 0) return;
    for (int64_t i = 0; i < batch; ++i)
      mxplug_nn::Gemm(ta, tb, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
                      a + i * stride_a, lda, b + i * stride_b, ldb, beta, c + i * stride_c, ldc);
  }
  template <class T>
  static void AddBias(const mxplug::OpContext&, T* out, const T* bias, int64_t m, int64_t n) {
    using C = mxplug::ComputeType<T>;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        out[i * n + j] = static_cast<T>(C(out[i * n + j]) + C(bias[j]));
  }
  template <class T>
  static void SumRows(const mxplug::OpContext&, const T* og, T* db, int64_t m, int64_t n,
                      mxplug::OpReqType req) {
    for (int64_t j = 0; j < n; ++j) {
      mxplug::ComputeType<T> sum = 0;
      for (int64_t i = 0; i < m; ++i) sum += og[i * n + j];
      mxplug::StoreAs(db[j], req, sum);
    }
  }
  static bool FusedLinearForward(const mxplug::OpContext& ctx, const mxplug_nn::LinearShape& s,
                                 const mxplug::TBlob& data, const mxplug::TBlob& weight,
                                 const mxplug::TBlob* bias, const mxplug::TBlob& out,
                                 mxplug::OpReqType req) {
    return mxplug_nn::onednn::InnerProductForward(ctx, s, data, weight, bias, out, req);
  }
  static bool FusedLinearBackward(const mxplug::OpContext& ctx, const mxplug_nn::LinearShape& s,
                                  const mxplug::TBlob& out_grad, const mxplug::TBlob& data,
                                  const mxplug::TBlob& weight, const mxplug_nn::LayerGrads& grads) {
    return mxplug_nn::onednn::InnerProductBackward(ctx, s, out_grad, data, weight, grads);
  }
};

}  // namespace mxplug_nn

#endif  // MXPLUG_PLUGINS_NN_BLAS_H_
