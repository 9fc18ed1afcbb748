// The CPU's BLAS for the matrix-product kernels (matmul.h): OpenBLAS's GEMM, and oneDNN's inner
// product for FullyConnected in float32 where the plugin has oneDNN, so that a network of
// FullyConnected and oneDNN ops runs on one OpenMP thread pool.
#include "blas.h"
#include "matmul.h"
#include "onednn/onednn.h"

namespace {

using mxplug::OpContext;
using mxplug::OpReqType;
using mxplug::TBlob;

struct CpuBlas {
  template <class T>
  static void Gemm(const OpContext&, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a,
                   int lda, const T* b, int ldb, T beta, T* c, int ldc, int64_t batch,
                   int64_t stride_a, int64_t stride_b, int64_t stride_c) {
    if (m == 0 || n == 0) return;
    for (int64_t i = 0; i < batch; ++i)
      mxplug_nn::Gemm(ta, tb, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
                      a + i * stride_a, lda, b + i * stride_b, ldb, beta, c + i * stride_c, ldc);
  }
  template <class T>
  static void AddBias(const OpContext&, T* out, const T* bias, int64_t m, int64_t n) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) out[i * n + j] += bias[j];
  }
  template <class T>
  static void SumRows(const OpContext&, const T* og, T* db, int64_t m, int64_t n, OpReqType req) {
    for (int64_t j = 0; j < n; ++j) {
      T sum = 0;
      for (int64_t i = 0; i < m; ++i) sum += og[i * n + j];
      mxplug::Assign(db[j], req, sum);
    }
  }
  static bool FusedLinearForward(const OpContext& ctx, const mxplug_nn::LinearShape& s,
                                 const TBlob& data, const TBlob& weight, const TBlob* bias,
                                 const TBlob& out, OpReqType req) {
    return mxplug_nn::onednn::InnerProductForward(ctx, s, data, weight, bias, out, req);
  }
  static bool FusedLinearBackward(const OpContext& ctx, const mxplug_nn::LinearShape& s,
                                  const TBlob& out_grad, const TBlob& data, const TBlob& weight,
                                  const mxplug_nn::LayerGrads& grads) {
    return mxplug_nn::onednn::InnerProductBackward(ctx, s, out_grad, data, weight, grads);
  }
};

[[maybe_unused]] const bool registered = [] {
  mxplug_nn::RegisterMatMulKernels<CpuBlas>(kDLCPU);
  return true;
}();

}  // namespace
