// The CPU kernels of the linear-algebra ops (linalg.h), on OpenBLAS's BLAS and LAPACK
// (lapack.h). Forward and backward follow MXNet 1.9.1's formulas (see its la_op notes and
// arXiv:1710.08717 for the derivations), so that results and gradients match it: e.g. potrf and
// potri read only the lower triangle and return a symmetric potri, syevd flips each eigenvector
// so that its largest entry is positive, det is sign * exp(sum log|diag(U)|) from the LU, and
// det's and slogdet's gradients are zero for a singular matrix. A matrix LAPACK cannot factor
// (not positive definite, singular) raises when the kernel runs, as MXNet's does.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "lapack.h"
#include "linalg.h"

namespace {

using mxplug::OpContext;
using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;
using mxplug_linalg::lapack::Gemm;
using mxplug_linalg::lapack::Mat;
namespace la = mxplug_linalg::lapack;

// ---- matrices in tensors ----

/*! \brief `count` matrices of rows x cols in a tensor; with mid > 1 (gemm's rows at an axis
 * before the last two), matrix i is column block i % mid of outer block i / mid. */
struct Stack {
  int64_t count = 0, rows = 0, cols = 0, mid = 1;
  template <class T>
  Mat<T> At(T* base, int64_t i) const {
    const int64_t offset = (i / mid) * rows * mid * cols + (i % mid) * cols;
    return {base + offset, static_cast<int>(rows), static_cast<int>(cols),
            static_cast<int>(std::max<int64_t>(mid * cols, 1))};
  }
};
Stack Matrices(const TShape& s) {
  const int nd = s.ndim();
  return {s.ProdShape(0, nd - 2), s[nd - 2], s[nd - 1], 1};
}
Stack Matrices(const TShape& s, int axis) {
  const int nd = s.ndim(), ax = mxplug_linalg::RowAxis(axis, s);
  const int64_t mid = s.ProdShape(ax + 1, nd - 1);
  return {s.ProdShape(0, ax) * mid, s[ax], s[nd - 1], mid};
}
/*! \brief Scratch for one n x m matrix. */
template <class T>
struct Scratch {
  std::vector<T> data;
  Mat<T> m;
  Scratch(int rows, int cols)
      : data(static_cast<size_t>(rows) * cols), m{data.data(), rows, cols, std::max(cols, 1)} {}
};

template <class T>
void Copy(const Mat<T>& dst, const Mat<T>& src) {
  for (int r = 0; r < dst.rows; ++r)
    for (int c = 0; c < dst.cols; ++c) dst(r, c) = src(r, c);
}
/*! \brief Zeros the strict upper triangle (keep_lower) or the strict lower one. */
template <class T>
void KeepTriangle(const Mat<T>& m, bool keep_lower) {
  for (int r = 0; r < m.rows; ++r)
    for (int c = 0; c < m.cols; ++c)
      if (keep_lower ? c > r : c < r) m(r, c) = T(0);
}
/*! \brief Copies the lower triangle onto the upper one (a symmetric matrix from its lower). */
template <class T>
void MirrorLower(const Mat<T>& m) {
  for (int r = 0; r < m.rows; ++r)
    for (int c = r + 1; c < m.cols; ++c) m(r, c) = m(c, r);
}

[[noreturn]] void Fail(const std::string& what, int64_t matrix, int info) {
  throw std::runtime_error(what + " (matrix " + std::to_string(matrix) +
                           " of the batch; LAPACK info " + std::to_string(info) + ")");
}

// ---- one call: what a kernel reads and where it writes ----

/*! \brief A kernel call's tensors; `dst` is where it writes its outputs (forward) or the input
 * gradients (backward): the tensor itself, or scratch that is added in (kAddTo) or dropped
 * (kNullOp) once the kernel is done. */
template <class T>
struct Call {
  const std::vector<TBlob>& in;
  const std::vector<TBlob>& out;
  const std::vector<TBlob>* out_grad;
  const std::vector<TBlob>* in_grad;
  std::vector<T*> dst;
  // Shapes are taken from the gradients in backward, where an input or output that backward does
  // not read comes without its data.
  const TShape& Shape(int i) const { return in_grad ? (*in_grad)[i].shape_ : in[i].shape_; }
  const TShape& OutShape(int i) const { return out_grad ? (*out_grad)[i].shape_ : out[i].shape_; }
  T* In(int i) const { return in[i].dptr<T>(); }
  T* Out(int i) const { return out[i].dptr<T>(); }
  T* OutGrad(int i) const { return (*out_grad)[i].dptr<T>(); }
};

/*! \brief Runs `compute(dst)` writing each of `targets` as its request says. */
template <class T, class Compute>
void WriteAs(const std::vector<TBlob>& targets, const std::vector<OpReqType>& req,
             Compute compute) {
  std::vector<std::vector<T>> scratch(targets.size());
  std::vector<T*> dst(targets.size());
  for (size_t i = 0; i < targets.size(); ++i) {
    if (req[i] == mxplug::kWriteTo || req[i] == mxplug::kWriteInplace) {
      dst[i] = targets[i].dptr<T>();
    } else {
      scratch[i].assign(static_cast<size_t>(std::max<int64_t>(targets[i].Size(), 0)), T(0));
      dst[i] = scratch[i].data();
    }
  }
  compute(dst);
  for (size_t i = 0; i < targets.size(); ++i)
    if (req[i] == mxplug::kAddTo) {
      T* d = targets[i].dptr<T>();
      for (size_t j = 0; j < scratch[i].size(); ++j) d[j] += scratch[i][j];
    }
}

// ---- gemm, gemm2 ----

template <class P, class T>
void ProductForward(const P& p, const Call<T>& c, T beta) {
  const Stack sa = Matrices(c.Shape(0), p.axis), sb = Matrices(c.Shape(1), p.axis),
              sd = Matrices(c.OutShape(0), p.axis);
  for (int64_t i = 0; i < sd.count; ++i)
    Gemm(sa.At(c.In(0), i), p.transpose_a, sb.At(c.In(1), i), p.transpose_b, T(p.alpha), beta,
         sd.At(c.dst[0], i));
}
template <class P, class T>
void ProductBackward(const P& p, const Call<T>& c) {
  const bool ta = p.transpose_a, tb = p.transpose_b;
  const T alpha(p.alpha);
  const Stack sa = Matrices(c.Shape(0), p.axis), sb = Matrices(c.Shape(1), p.axis),
              sd = Matrices(c.OutShape(0), p.axis);
  for (int64_t i = 0; i < sd.count; ++i) {
    const Mat<T> a = sa.At(c.In(0), i), b = sb.At(c.In(1), i), dd = sd.At(c.OutGrad(0), i);
    const Mat<T> da = sa.At(c.dst[0], i), db = sb.At(c.dst[1], i);
    ta ? Gemm(b, tb, dd, true, alpha, T(0), da) : Gemm(dd, false, b, !tb, alpha, T(0), da);
    tb ? Gemm(dd, true, a, ta, alpha, T(0), db) : Gemm(a, !ta, dd, false, alpha, T(0), db);
  }
}

template <class T>
void Forward(mxplug_linalg::Gemm, const mxplug_linalg::GemmParam& p, const Call<T>& c) {
  std::copy(c.In(2), c.In(2) + c.Shape(2).Size(), c.dst[0]);  // D = C, then D = alpha AB + beta D
  ProductForward(p, c, T(p.beta));
}
template <class T>
void Backward(mxplug_linalg::Gemm, const mxplug_linalg::GemmParam& p, const Call<T>& c) {
  ProductBackward(p, c);
  const T* dd = c.OutGrad(0);
  for (int64_t j = 0; j < c.Shape(2).Size(); ++j) c.dst[2][j] = T(p.beta) * dd[j];
}
template <class T>
void Forward(mxplug_linalg::Gemm2, const mxplug_linalg::Gemm2Param& p, const Call<T>& c) {
  ProductForward(p, c, T(0));
}
template <class T>
void Backward(mxplug_linalg::Gemm2, const mxplug_linalg::Gemm2Param& p, const Call<T>& c) {
  ProductBackward(p, c);
}

// ---- potrf, potri, inverse ----

/*! \brief For each matrix of input 0: copies it to output 0, factors it there with
 * `factor(m)` (LAPACK's info: > 0 means the matrix failed, as `what` says), then `finish(m)`. */
template <class T, class Factor, class Finish>
void FactorEach(const Call<T>& c, Factor factor, const char* what, Finish finish) {
  const Stack s = Matrices(c.Shape(0));
  for (int64_t i = 0; i < s.count; ++i) {
    const Mat<T> m = s.At(c.dst[0], i);
    Copy(m, s.At(c.In(0), i));
    if (const int info = m.rows ? factor(m) : 0) Fail(what, i, info);
    finish(m);
  }
}

template <class T>
void Forward(mxplug_linalg::Potrf, const mxplug_linalg::NoParam&, const Call<T>& c) {
  FactorEach(
      c, [](const Mat<T>& m) { return la::Potrf(m.rows, m.p); },
      "the Cholesky factorization failed: the input matrix is not symmetric positive definite",
      [](const Mat<T>& m) { KeepTriangle(m, true); });
}
template <class T>
void Backward(mxplug_linalg::Potrf, const mxplug_linalg::NoParam&, const Call<T>& c) {
  // dA = 1/2 L^-T sym(L^T dL) L^-1, sym() copying the lower triangle onto the upper.
  const Stack s = Matrices(c.Shape(0));
  for (int64_t i = 0; i < s.count; ++i) {
    const Mat<T> l = s.At(c.Out(0), i), w = s.At(c.dst[0], i);
    Copy(w, s.At(c.OutGrad(0), i));
    la::Trmm(l, true, true, false, T(1), w);
    MirrorLower(w);
    la::Trsm(l, true, true, false, T(1), w);
    la::Trsm(l, true, false, true, T(0.5), w);
  }
}

template <class T>
void Forward(mxplug_linalg::Potri, const mxplug_linalg::NoParam&, const Call<T>& c) {
  FactorEach(
      c, [](const Mat<T>& m) { return la::Potri(m.rows, m.p); },
      "the triangular factor is singular (a zero on its diagonal)",
      [](const Mat<T>& m) { MirrorLower(m); });
}
template <class T>
void Backward(mxplug_linalg::Potri, const mxplug_linalg::NoParam&, const Call<T>& c) {
  // With A = potri(L): dL = -tril(A (dA + dA^T) L^-T); dA need not be symmetric.
  const Stack s = Matrices(c.Shape(0));
  for (int64_t i = 0; i < s.count; ++i) {
    const Mat<T> l = s.At(c.In(0), i), a = s.At(c.Out(0), i), da = s.At(c.OutGrad(0), i);
    const Mat<T> w = s.At(c.dst[0], i);
    Gemm(a, false, da, false, T(1), T(0), w);
    Gemm(a, false, da, true, T(1), T(1), w);
    la::Trsm(l, true, true, true, T(-1), w);
    KeepTriangle(w, true);
  }
}

/*! \brief a^-1 in place from its LU; returns LAPACK's info (> 0: singular). */
template <class T>
int InvertInPlace(const Mat<T>& a) {
  if (a.rows == 0) return 0;
  std::vector<int> pivots(static_cast<size_t>(a.rows));
  const int info = la::Getrf(a.rows, a.p, pivots.data());
  return info ? info : la::Getri(a.rows, a.p, pivots.data());
}

template <class T>
void Forward(mxplug_linalg::Inverse, const mxplug_linalg::NoParam&, const Call<T>& c) {
  FactorEach(
      c, [](const Mat<T>& m) { return InvertInPlace(m); },
      "the matrix is singular (not invertible)", [](const Mat<T>&) {});
}
template <class T>
void Backward(mxplug_linalg::Inverse, const mxplug_linalg::NoParam&, const Call<T>& c) {
  // With B = A^-1: dA = -B^T dB B^T.
  const Stack s = Matrices(c.Shape(0));
  Scratch<T> tmp(static_cast<int>(s.rows), static_cast<int>(s.cols));
  for (int64_t i = 0; i < s.count; ++i) {
    const Mat<T> b = s.At(c.Out(0), i);
    Gemm(s.At(c.OutGrad(0), i), false, b, true, T(1), T(0), tmp.m);
    Gemm(b, true, tmp.m, false, T(-1), T(0), s.At(c.dst[0], i));
  }
}

// ---- trmm, trsm ----

template <bool kTrsm, class T>
void Forward(mxplug_linalg::TriangularOp<kTrsm>, const mxplug_linalg::TriangularParam& p,
             const Call<T>& c) {
  const Stack sa = Matrices(c.Shape(0)), sb = Matrices(c.Shape(1));
  for (int64_t i = 0; i < sb.count; ++i) {
    const Mat<T> a = sa.At(c.In(0), i), out = sb.At(c.dst[0], i);
    Copy(out, sb.At(c.In(1), i));
    la::Triangular<kTrsm>(a, p.lower, p.transpose, p.rightside, T(p.alpha), out);
  }
}
/*! \brief The gradient of the triangular A from x (dC or dB, of B's shape) and y (B or C):
 * scale x y^T when op(A) multiplies from the left, scale y^T x from the right, transposed when A
 * is; restricted to A's triangle. */
template <class T>
void TriangleGradient(const mxplug_linalg::TriangularParam& p, const Mat<T>& x, const Mat<T>& y,
                      T scale, const Mat<T>& da) {
  const bool t = p.transpose;
  if (p.rightside == t)
    Gemm(x, t, y, !t, scale, T(0), da);
  else
    Gemm(y, !t, x, t, scale, T(0), da);
  KeepTriangle(da, p.lower);
}
template <class T>
void Backward(mxplug_linalg::Trmm, const mxplug_linalg::TriangularParam& p, const Call<T>& c) {
  // dA = alpha times dC and B, multiplied on the side A was; dB = alpha op(A)^T dC.
  const Stack sa = Matrices(c.Shape(0)), sb = Matrices(c.Shape(1));
  for (int64_t i = 0; i < sb.count; ++i) {
    const Mat<T> dc = sb.At(c.OutGrad(0), i), db = sb.At(c.dst[1], i);
    TriangleGradient(p, dc, sb.At(c.In(1), i), T(p.alpha), sa.At(c.dst[0], i));
    Copy(db, dc);
    la::Trmm(sa.At(c.In(0), i), p.lower, !p.transpose, p.rightside, T(p.alpha), db);
  }
}
template <class T>
void Backward(mxplug_linalg::Trsm, const mxplug_linalg::TriangularParam& p, const Call<T>& c) {
  // dB = alpha op(A)^-T dC (on B's side); dA = -1/alpha times dB and C = out, multiplied on
  // the side A was.
  const Stack sa = Matrices(c.Shape(0)), sb = Matrices(c.Shape(1));
  for (int64_t i = 0; i < sb.count; ++i) {
    const Mat<T> db = sb.At(c.dst[1], i);
    Copy(db, sb.At(c.OutGrad(0), i));
    la::Trsm(sa.At(c.In(0), i), p.lower, !p.transpose, p.rightside, T(p.alpha), db);
    TriangleGradient(p, db, sb.At(c.Out(0), i), T(-1.0 / p.alpha), sa.At(c.dst[0], i));
  }
}

// ---- sumlogdiag, det, slogdet ----

template <class T>
void Forward(mxplug_linalg::SumLogDiag, const mxplug_linalg::NoParam&, const Call<T>& c) {
  const Stack s = Matrices(c.Shape(0));
  for (int64_t i = 0; i < s.count; ++i) {
    const Mat<T> a = s.At(c.In(0), i);
    T sum(0);
    for (int j = 0; j < a.rows; ++j) sum += std::log(a(j, j));
    c.dst[0][i] = sum;
  }
}
template <class T>
void Backward(mxplug_linalg::SumLogDiag, const mxplug_linalg::NoParam&, const Call<T>& c) {
  const Stack s = Matrices(c.Shape(0));
  for (int64_t i = 0; i < s.count; ++i) {
    const Mat<T> a = s.At(c.In(0), i), da = s.At(c.dst[0], i);
    for (int r = 0; r < a.rows; ++r)
      for (int col = 0; col < a.cols; ++col)
        da(r, col) = r == col ? c.OutGrad(0)[i] / a(r, r) : T(0);
  }
}

/*! \brief sign(det a) and log|det a| from a's LU (MXNet's way, so that det is computed as
 * sign * exp(log|det|) like its). */
template <class T>
void SignLogDet(const Mat<T>& a, T* sign, T* logdet) {
  Scratch<T> lu(a.rows, a.cols);
  Copy(lu.m, a);
  std::vector<int> pivots(static_cast<size_t>(a.rows));
  if (a.rows) la::Getrf(a.rows, lu.data.data(), pivots.data());  // info > 0: a zero on U's diagonal
  int swaps = 0;
  T s(1), sum(0);
  for (int j = 0; j < a.rows; ++j) {
    swaps += pivots[j] != j + 1;
    const T d = lu.m(j, j);
    s *= T((T(0) < d) - (d < T(0)));
    sum += std::log(std::abs(d));
  }
  *sign = (swaps % 2 ? T(-1) : T(1)) * s;
  *logdet = sum;
}
/*! \brief grad(a) = scale * a^-T, or zero when `singular`. */
template <class T>
void ScaledInverseTranspose(const Mat<T>& a, T scale, bool singular, const Mat<T>& grad) {
  Scratch<T> inv(a.rows, a.cols);
  Copy(inv.m, a);
  if (singular || InvertInPlace(inv.m)) scale = T(0);
  for (int r = 0; r < a.rows; ++r)
    for (int col = 0; col < a.cols; ++col)
      grad(r, col) = scale == T(0) ? T(0) : scale * inv.m(col, r);
}

template <class T>
void Forward(mxplug_linalg::Det, const mxplug_linalg::NoParam&, const Call<T>& c) {
  const Stack s = Matrices(c.Shape(0));
  for (int64_t i = 0; i < s.count; ++i) {
    T sign, logdet;
    SignLogDet(s.At(c.In(0), i), &sign, &logdet);
    c.dst[0][i] = sign * std::exp(logdet);
  }
}
template <class T>
void Backward(mxplug_linalg::Det, const mxplug_linalg::NoParam&, const Call<T>& c) {
  // Jacobi's formula: d det(A) / dA = det(A) A^-T; nothing flows back through a singular A.
  const Stack s = Matrices(c.Shape(0));
  for (int64_t i = 0; i < s.count; ++i) {
    const T det = c.Out(0)[i];
    ScaledInverseTranspose(s.At(c.In(0), i), c.OutGrad(0)[i] * det, det == T(0), s.At(c.dst[0], i));
  }
}
template <class T>
void Forward(mxplug_linalg::SlogDet, const mxplug_linalg::NoParam&, const Call<T>& c) {
  const Stack s = Matrices(c.Shape(0));
  for (int64_t i = 0; i < s.count; ++i) SignLogDet(s.At(c.In(0), i), &c.dst[0][i], &c.dst[1][i]);
}
template <class T>
void Backward(mxplug_linalg::SlogDet, const mxplug_linalg::NoParam&, const Call<T>& c) {
  const Stack s = Matrices(c.Shape(0));
  for (int64_t i = 0; i < s.count; ++i) {
    const T logdet = c.Out(1)[i];
    ScaledInverseTranspose(s.At(c.In(0), i), c.OutGrad(1)[i],
                           logdet == -std::numeric_limits<T>::infinity(), s.At(c.dst[0], i));
  }
}

// ---- extractdiag, makediag, extracttrian, maketrian ----

/*! \brief Visits each entry e of the offset diagonal (or triangle) of n x n matrices with its
 * place (r, c); the triangle's entries are numbered row by row in the lower triangle, and in the
 * transposed coordinates for an upper one (MXNet's order). */
template <class Visit>
void EachDiagEntry(int64_t n, int k, Visit visit) {
  for (int64_t e = 0; e < n - std::abs(k); ++e) visit(e, e + std::max(-k, 0), e + std::max(k, 0));
}
template <class Visit>
void EachTrianEntry(int64_t n, int k, bool lower, Visit visit) {
  const bool upper = k > 0 || (k == 0 && !lower);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t col = 0; col < n; ++col) {
      int64_t i = upper ? col : r, j = upper ? r : col;
      i -= std::abs(k);
      if (i >= j && j >= 0) visit(i * (i + 1) / 2 + j, r, col);
    }
}

/*! \brief Moves entries between stacks of vectors (len each) and of n x n matrices: to the
 * vectors (`to_vector`) or to the matrices, which are zeroed first. */
template <class T, class Each>
void Gather(const T* from, T* to, int64_t count, int64_t n, int64_t len, bool to_vector,
            Each each) {
  for (int64_t i = 0; i < count; ++i) {
    const int64_t mat = i * n * n, vec = i * len;
    if (!to_vector) std::fill(to + mat, to + mat + n * n, T(0));
    each([&](int64_t e, int64_t r, int64_t col) {
      if (to_vector)
        to[vec + e] = from[mat + r * n + col];
      else
        to[mat + r * n + col] = from[vec + e];
    });
  }
}

/*! \brief Forward moves the entries from the input to the output, backward from the output's
 * gradient to the input's; extract* moves matrices to vectors, make* vectors to matrices. */
template <bool kExtract, bool kTriangle, class T>
void MoveEntries(const typename mxplug_linalg::MovesEntries<kExtract, kTriangle>::Param& p,
                 const Call<T>& c, bool forward) {
  const TShape& matrices = kExtract ? c.Shape(0) : c.OutShape(0);
  const TShape& vectors = kExtract ? c.OutShape(0) : c.Shape(0);
  const int64_t n = matrices[matrices.ndim() - 1], len = vectors[vectors.ndim() - 1];
  const int64_t count = len ? vectors.Size() / len : 0;
  Gather(forward ? c.In(0) : c.OutGrad(0), c.dst[0], count, n, len, kExtract == forward,
         [&](auto visit) {
           if constexpr (kTriangle)
             EachTrianEntry(n, p.offset, p.lower, visit);
           else
             EachDiagEntry(n, p.offset, visit);
         });
}
template <bool kExtract, bool kTriangle, class T>
void Forward(mxplug_linalg::MovesEntries<kExtract, kTriangle>,
             const typename mxplug_linalg::MovesEntries<kExtract, kTriangle>::Param& p,
             const Call<T>& c) {
  MoveEntries<kExtract, kTriangle>(p, c, true);
}
template <bool kExtract, bool kTriangle, class T>
void Backward(mxplug_linalg::MovesEntries<kExtract, kTriangle>,
              const typename mxplug_linalg::MovesEntries<kExtract, kTriangle>::Param& p,
              const Call<T>& c) {
  MoveEntries<kExtract, kTriangle>(p, c, false);
}

// ---- syrk ----

template <class T>
void Forward(mxplug_linalg::Syrk, const mxplug_linalg::SyrkParam& p, const Call<T>& c) {
  const Stack sa = Matrices(c.Shape(0)), so = Matrices(c.OutShape(0));
  for (int64_t i = 0; i < sa.count; ++i) {
    const Mat<T> out = so.At(c.dst[0], i);
    if (out.rows == 0) continue;
    la::Syrk(sa.At(c.In(0), i), p.transpose, T(p.alpha), out);
    MirrorLower(out);
  }
}
template <class T>
void Backward(mxplug_linalg::Syrk, const mxplug_linalg::SyrkParam& p, const Call<T>& c) {
  // dA = alpha (dB + dB^T) A, or alpha A (dB + dB^T) when transposed.
  const Stack sa = Matrices(c.Shape(0)), so = Matrices(c.OutShape(0));
  const T alpha(p.alpha);
  for (int64_t i = 0; i < sa.count; ++i) {
    const Mat<T> a = sa.At(c.In(0), i), db = so.At(c.OutGrad(0), i), da = sa.At(c.dst[0], i);
    if (p.transpose) {
      Gemm(a, false, db, false, alpha, T(0), da);
      Gemm(a, false, db, true, alpha, T(1), da);
    } else {
      Gemm(db, false, a, false, alpha, T(0), da);
      Gemm(db, true, a, false, alpha, T(1), da);
    }
  }
}

// ---- gelqf, syevd ----

template <class T>
void Forward(mxplug_linalg::Gelqf, const mxplug_linalg::NoParam&, const Call<T>& c) {
  const Stack sq = Matrices(c.Shape(0)), sl = Matrices(c.OutShape(1));
  for (int64_t i = 0; i < sq.count; ++i) {
    const Mat<T> q = sq.At(c.dst[0], i), l = sl.At(c.dst[1], i);
    Copy(q, sq.At(c.In(0), i));
    std::fill(l.p, l.p + static_cast<int64_t>(l.rows) * l.cols, T(0));
    if (q.rows == 0) continue;
    const int info = la::Gelqf(q.rows, q.cols, q.p, [&] {
      for (int r = 0; r < l.rows; ++r)
        for (int col = 0; col <= r; ++col) l(r, col) = q(r, col);
    });
    if (info) Fail("the LQ factorization failed", i, info);
  }
}
template <class T>
void Backward(mxplug_linalg::Gelqf, const mxplug_linalg::NoParam&, const Call<T>& c) {
  // dA = L^-T (dQ + sym(M) Q) with M = L^T dL - dQ Q^T, sym() copying the lower triangle up.
  const Stack sq = Matrices(c.Shape(0)), sl = Matrices(c.OutShape(1));
  Scratch<T> m(static_cast<int>(sl.rows), static_cast<int>(sl.cols));
  for (int64_t i = 0; i < sq.count; ++i) {
    const Mat<T> q = sq.At(c.Out(0), i), l = sl.At(c.Out(1), i), dq = sq.At(c.OutGrad(0), i);
    const Mat<T> da = sq.At(c.dst[0], i);
    if (q.rows == 0) continue;
    Copy(m.m, sl.At(c.OutGrad(1), i));
    la::Trmm(l, true, true, false, T(1), m.m);
    Gemm(dq, false, q, true, T(-1), T(1), m.m);
    MirrorLower(m.m);
    Copy(da, dq);
    Gemm(m.m, false, q, false, T(1), T(1), da);
    la::Trsm(l, true, true, false, T(1), da);
  }
}

template <class T>
void Forward(mxplug_linalg::Syevd, const mxplug_linalg::NoParam&, const Call<T>& c) {
  const Stack s = Matrices(c.Shape(0));
  const int64_t n = s.rows;
  for (int64_t i = 0; i < s.count; ++i) {
    const Mat<T> u = s.At(c.dst[0], i);
    Copy(u, s.At(c.In(0), i));
    if (n == 0) continue;
    if (const int info = la::Syevd(u.rows, u.p, c.dst[1] + i * n))
      Fail("the symmetric eigendecomposition did not converge", i, info);
    for (int r = 0; r < u.rows; ++r) {  // the largest entry (the first of equals) positive
      int at = 0;
      for (int col = 1; col < u.cols; ++col)
        if (std::abs(u(r, col)) > std::abs(u(r, at))) at = col;
      if (u(r, at) < T(0))
        for (int col = 0; col < u.cols; ++col) u(r, col) = -u(r, col);
    }
  }
}
template <class T>
void Backward(mxplug_linalg::Syevd, const mxplug_linalg::NoParam&, const Call<T>& c) {
  // dA = U^T Y U with X = dU U^T, Y_ij = Y_ji = (X_ij - X_ji) / (2 max(L_i - L_j, eps)) for
  // i > j and Y_ii = dL_i (eps keeps equal eigenvalues finite, as MXNet's).
  const T eps = sizeof(T) == 4 ? T(1e-30) : T(1e-100);
  const Stack s = Matrices(c.Shape(0));
  const int n = static_cast<int>(s.rows);
  Scratch<T> x(n, n), y(n, n);
  for (int64_t i = 0; i < s.count; ++i) {
    const Mat<T> u = s.At(c.Out(0), i), da = s.At(c.dst[0], i);
    const T *lam = c.Out(1) + i * n, *dlam = c.OutGrad(1) + i * n;
    Gemm(s.At(c.OutGrad(0), i), false, u, true, T(1), T(0), x.m);
    for (int r = 0; r < n; ++r) {
      for (int col = 0; col < r; ++col)
        y.m(r, col) = y.m(col, r) =
            (x.m(r, col) - x.m(col, r)) / (T(2) * std::max(lam[r] - lam[col], eps));
      y.m(r, r) = dlam[r];
    }
    Gemm(u, true, y.m, false, T(1), T(0), x.m);
    Gemm(x.m, false, u, false, T(1), T(0), da);
  }
}

// ---- the kernel of each op ----

template <class Def>
class CpuKernel : public mxplug::Operator {
 public:
  CpuKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }
  void Forward(const OpContext&, const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
               const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
    mxplug::RealTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      WriteAs<T>(out, req, [&](const std::vector<T*>& dst) {
        ::Forward(Def{}, p_, Call<T>{in, out, nullptr, nullptr, dst});
      });
    });
  }
  void Backward(const OpContext&, const std::vector<TBlob>& out_grad, const std::vector<TBlob>& in,
                const std::vector<TBlob>& out, const std::vector<OpReqType>& req,
                const std::vector<TBlob>& in_grad, const std::vector<TBlob>&) override {
    mxplug::RealTypeSwitch(in_grad[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      WriteAs<T>(in_grad, req, [&](const std::vector<T*>& dst) {
        ::Backward(Def{}, p_, Call<T>{in, out, &out_grad, &in_grad, dst});
      });
    });
  }

 private:
  typename Def::Param p_;
};

}  // namespace

namespace mxplug_linalg {

void RegisterCpuKernels() {
  ForEachOp([](const std::string& name, auto def, const char*) {
    mxplug::sdk::RegisterKernel<CpuKernel<decltype(def)>>(name.c_str(), kDLCPU);
  });
}

}  // namespace mxplug_linalg
