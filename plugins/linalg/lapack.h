// Typed row-major wrappers of the BLAS-3 and LAPACK routines the linalg kernels use, on
// OpenBLAS (which carries LAPACK; Debian has no LAPACKE header to go with it, so the Fortran
// entry points are declared here). LAPACK is column-major: a row-major n x n buffer is the
// transpose seen column-major, so each wrapper passes the opposite triangle ('U' for the
// row-major lower one) or works on the transpose (geqrf of A^T is the LQ factorization of A).
#ifndef MXPLUG_PLUGINS_LINALG_LAPACK_H_
#define MXPLUG_PLUGINS_LINALG_LAPACK_H_

#include <cblas.h>

#include <cstddef>
#include <vector>

extern "C" {
// Fortran's hidden length of each character argument comes last (gfortran passes size_t).
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, size_t);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t);
void spotri_(const char* uplo, const int* n, float* a, const int* lda, int* info, size_t);
void dpotri_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t);
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work,
             const int* lwork, int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work,
             const int* lwork, int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau,
             float* work, const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau,
             double* work, const int* lwork, int* info);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w,
             float* work, const int* lwork, int* iwork, const int* liwork, int* info, size_t,
             size_t);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w,
             double* work, const int* lwork, int* iwork, const int* liwork, int* info, size_t,
             size_t);
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgetri_(const int* n, float* a, const int* lda, const int* ipiv, float* work, const int* lwork,
             int* info);
void dgetri_(const int* n, double* a, const int* lda, const int* ipiv, double* work,
             const int* lwork, int* info);
}

namespace mxplug_linalg::lapack {

/*! \brief A row-major matrix: rows x cols, rows `ld` elements apart. */
template <class T>
struct Mat {
  T* p;
  int rows, cols, ld;
  T& operator()(int r, int c) const { return p[static_cast<ptrdiff_t>(r) * ld + c]; }
};

inline CBLAS_TRANSPOSE Trans(bool t) { return t ? CblasTrans : CblasNoTrans; }
inline CBLAS_UPLO Uplo(bool lower) { return lower ? CblasLower : CblasUpper; }
inline CBLAS_SIDE Side(bool right) { return right ? CblasRight : CblasLeft; }

// Each wrapper calls the float or the double routine (T is float or double).
template <class T>
constexpr bool kSingle = sizeof(T) == sizeof(float);

/*! \brief z = alpha op(x) op(y) + beta z (nothing for an empty z: BLAS refuses its leading
 * dimension). */
template <class T>
void Gemm(const Mat<T>& x, bool tx, const Mat<T>& y, bool ty, T alpha, T beta, const Mat<T>& z) {
  if (z.rows == 0 || z.cols == 0) return;
  const int k = tx ? x.rows : x.cols;
  if constexpr (kSingle<T>)
    cblas_sgemm(CblasRowMajor, Trans(tx), Trans(ty), z.rows, z.cols, k, alpha, x.p, x.ld, y.p, y.ld,
                beta, z.p, z.ld);
  else
    cblas_dgemm(CblasRowMajor, Trans(tx), Trans(ty), z.rows, z.cols, k, alpha, x.p, x.ld, y.p, y.ld,
                beta, z.p, z.ld);
}
/*! \brief b = alpha op(a) b (kSolve: alpha op(a)^-1 b), or b op(a) on the right; a is triangular
 * (only its triangle is read). */
template <bool kSolve, class T>
void Triangular(const Mat<T>& a, bool lower, bool trans, bool right, T alpha, const Mat<T>& b) {
  const auto call = [&](auto fn) {
    fn(CblasRowMajor, Side(right), Uplo(lower), Trans(trans), CblasNonUnit, b.rows, b.cols, alpha,
       a.p, a.ld, b.p, b.ld);
  };
  if constexpr (kSingle<T>)
    call(kSolve ? cblas_strsm : cblas_strmm);
  else
    call(kSolve ? cblas_dtrsm : cblas_dtrmm);
}
template <class T>
void Trmm(const Mat<T>& a, bool lower, bool trans, bool right, T alpha, const Mat<T>& b) {
  Triangular<false>(a, lower, trans, right, alpha, b);
}
template <class T>
void Trsm(const Mat<T>& a, bool lower, bool trans, bool right, T alpha, const Mat<T>& b) {
  Triangular<true>(a, lower, trans, right, alpha, b);
}
/*! \brief The lower triangle of c = alpha a a^T (or alpha a^T a, trans). */
template <class T>
void Syrk(const Mat<T>& a, bool trans, T alpha, const Mat<T>& c) {
  const int k = trans ? a.rows : a.cols;
  if constexpr (kSingle<T>)
    cblas_ssyrk(CblasRowMajor, CblasLower, Trans(trans), c.rows, k, alpha, a.p, a.ld, 0.f, c.p,
                c.ld);
  else
    cblas_dsyrk(CblasRowMajor, CblasLower, Trans(trans), c.rows, k, alpha, a.p, a.ld, 0.0, c.p,
                c.ld);
}

// The LAPACK calls return LAPACK's info (0: success; > 0: the matrix failed, as documented per
// routine). Each works on a contiguous row-major n x n (or m x n) matrix.

/*! \brief Cholesky: the lower triangle of a becomes L with a = L L^T (the rest is left). */
template <class T>
int Potrf(int n, T* a) {
  int info = 0;
  if constexpr (kSingle<T>)
    spotrf_("U", &n, a, &n, &info, 1);
  else
    dpotrf_("U", &n, a, &n, &info, 1);
  return info;
}
/*! \brief From L in the lower triangle, the lower triangle of (L L^T)^-1. */
template <class T>
int Potri(int n, T* a) {
  int info = 0;
  if constexpr (kSingle<T>)
    spotri_("U", &n, a, &n, &info, 1);
  else
    dpotri_("U", &n, a, &n, &info, 1);
  return info;
}

/*! \brief LQ of the m x n (m <= n) matrix a: a becomes Q (orthonormal rows), and L = the lower
 * triangle of a's first m columns before `q_from_reflectors` runs, in between. */
template <class T, class SaveL>
int Gelqf(int m, int n, T* a, SaveL save_l) {
  std::vector<T> tau(static_cast<size_t>(m) + 1);
  int lwork = -1, info = 0;
  T size = 0;
  auto geqrf = [&](T* work, int* lw) {
    if constexpr (kSingle<T>)
      sgeqrf_(&n, &m, a, &n, tau.data(), work, lw, &info);
    else
      dgeqrf_(&n, &m, a, &n, tau.data(), work, lw, &info);
  };
  auto orgqr = [&](T* work, int* lw) {
    if constexpr (kSingle<T>)
      sorgqr_(&n, &m, &m, a, &n, tau.data(), work, lw, &info);
    else
      dorgqr_(&n, &m, &m, a, &n, tau.data(), work, lw, &info);
  };
  geqrf(&size, &lwork);
  T size2 = 0;
  orgqr(&size2, &lwork);
  lwork = static_cast<int>(size > size2 ? size : size2) + 1;
  std::vector<T> work(static_cast<size_t>(lwork));
  geqrf(work.data(), &lwork);
  if (info != 0) return info;
  save_l();
  orgqr(work.data(), &lwork);
  return info;
}

/*! \brief Eigen-decomposition of the symmetric a (its lower triangle read): a's rows become the
 * eigenvectors, w the eigenvalues in ascending order. */
template <class T>
int Syevd(int n, T* a, T* w) {
  int lwork = -1, liwork = -1, info = 0, isize = 0;
  T size = 0;
  auto call = [&](T* work, int* iwork) {
    if constexpr (kSingle<T>)
      ssyevd_("V", "U", &n, a, &n, w, work, &lwork, iwork, &liwork, &info, 1, 1);
    else
      dsyevd_("V", "U", &n, a, &n, w, work, &lwork, iwork, &liwork, &info, 1, 1);
  };
  call(&size, &isize);
  lwork = static_cast<int>(size) + 1, liwork = isize;
  std::vector<T> work(static_cast<size_t>(lwork));
  std::vector<int> iwork(static_cast<size_t>(liwork > 0 ? liwork : 1));
  call(work.data(), iwork.data());
  return info;
}

/*! \brief LU with partial pivoting of the n x n a (of its transpose, whose determinant and
 * inverse's transpose are a's); ipiv holds n 1-based pivots. */
template <class T>
int Getrf(int n, T* a, int* ipiv) {
  int info = 0;
  if constexpr (kSingle<T>)
    sgetrf_(&n, &n, a, &n, ipiv, &info);
  else
    dgetrf_(&n, &n, a, &n, ipiv, &info);
  return info;
}
/*! \brief The inverse from Getrf's factors. */
template <class T>
int Getri(int n, T* a, const int* ipiv) {
  int lwork = -1, info = 0;
  T size = 0;
  auto call = [&](T* work) {
    if constexpr (kSingle<T>)
      sgetri_(&n, a, &n, ipiv, work, &lwork, &info);
    else
      dgetri_(&n, a, &n, ipiv, work, &lwork, &info);
  };
  call(&size);
  lwork = static_cast<int>(size) + 1;
  std::vector<T> work(static_cast<size_t>(lwork));
  call(work.data());
  return info;
}

}  // namespace mxplug_linalg::lapack

#endif  // MXPLUG_PLUGINS_LINALG_LAPACK_H_
