// Definitions of the linear-algebra ops, MXNet 1.9.1's _linalg_* family (mx.nd.linalg and
// mx.sym.linalg): their parameters, shapes, dtypes and what their backward reads. Each op works
// on the trailing two axes of its inputs (a stack of matrices; gemm and gemm2 may take the rows
// from another axis) in float32 or float64. Registered by linalg.cc; the CPU kernels, on
// OpenBLAS's BLAS and LAPACK, are in linalg_cpu.cc.
#ifndef MXPLUG_PLUGINS_LINALG_LINALG_H_
#define MXPLUG_PLUGINS_LINALG_LINALG_H_

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "mxplug/plugin.hpp"

namespace mxplug_linalg {

using mxplug::TShape;

// ---- parameters (MXNet's names and defaults) ----

struct NoParam : mxplug::Parameter<NoParam> {
  MXPLUG_DECLARE_PARAMETER(NoParam) {}
};

struct GemmParam : mxplug::Parameter<GemmParam> {
  bool transpose_a, transpose_b;
  double alpha, beta;
  int axis;
  MXPLUG_DECLARE_PARAMETER(GemmParam) {
    MXPLUG_DECLARE_FIELD(transpose_a)
        .set_default(false)
        .describe("Multiply with transposed of first input (A).");
    MXPLUG_DECLARE_FIELD(transpose_b)
        .set_default(false)
        .describe("Multiply with transposed of second input (B).");
    MXPLUG_DECLARE_FIELD(alpha).set_default(1.0).describe("Scalar factor multiplied with A*B.");
    MXPLUG_DECLARE_FIELD(beta).set_default(1.0).describe("Scalar factor multiplied with C.");
    MXPLUG_DECLARE_FIELD(axis).set_default(-2).describe("Axis corresponding to the matrix rows.");
  }
};

struct Gemm2Param : mxplug::Parameter<Gemm2Param> {
  bool transpose_a, transpose_b;
  double alpha;
  int axis;
  MXPLUG_DECLARE_PARAMETER(Gemm2Param) {
    MXPLUG_DECLARE_FIELD(transpose_a)
        .set_default(false)
        .describe("Multiply with transposed of first input (A).");
    MXPLUG_DECLARE_FIELD(transpose_b)
        .set_default(false)
        .describe("Multiply with transposed of second input (B).");
    MXPLUG_DECLARE_FIELD(alpha).set_default(1.0).describe("Scalar factor multiplied with A*B.");
    MXPLUG_DECLARE_FIELD(axis).set_default(-2).describe(
        "Axis corresponding to the matrix row indices.");
  }
};

// trmm and trsm: op(A) B or B op(A) with A triangular.
struct TriangularParam : mxplug::Parameter<TriangularParam> {
  bool transpose, rightside, lower;
  double alpha;
  MXPLUG_DECLARE_PARAMETER(TriangularParam) {
    MXPLUG_DECLARE_FIELD(transpose).set_default(false).describe(
        "Use transposed of the triangular matrix");
    MXPLUG_DECLARE_FIELD(rightside).set_default(false).describe(
        "Multiply triangular matrix from the right to non-triangular one.");
    MXPLUG_DECLARE_FIELD(lower).set_default(true).describe(
        "True if the triangular matrix is lower triangular, false if it is upper triangular.");
    MXPLUG_DECLARE_FIELD(alpha).set_default(1.0).describe(
        "Scalar factor to be applied to the result.");
  }
};

struct SyrkParam : mxplug::Parameter<SyrkParam> {
  bool transpose;
  double alpha;
  MXPLUG_DECLARE_PARAMETER(SyrkParam) {
    MXPLUG_DECLARE_FIELD(transpose).set_default(false).describe("Use transpose of input matrix.");
    MXPLUG_DECLARE_FIELD(alpha).set_default(1.0).describe(
        "Scalar factor to be applied to the result.");
  }
};

struct DiagParam : mxplug::Parameter<DiagParam> {
  int offset;
  MXPLUG_DECLARE_PARAMETER(DiagParam) {
    MXPLUG_DECLARE_FIELD(offset).set_default(0).describe(
        "Offset of the diagonal versus the main diagonal. 0 corresponds to the main diagonal, a "
        "negative/positive value to diagonals below/above the main diagonal.");
  }
};

struct TrianParam : mxplug::Parameter<TrianParam> {
  int offset;
  bool lower;
  MXPLUG_DECLARE_PARAMETER(TrianParam) {
    MXPLUG_DECLARE_FIELD(offset).set_default(0).describe(
        "Offset of the diagonal versus the main diagonal. 0 corresponds to the main diagonal, a "
        "negative/positive value to diagonals below/above the main diagonal.");
    MXPLUG_DECLARE_FIELD(lower).set_default(true).describe(
        "Refer to the lower triangular matrix if lower=true, refer to the upper otherwise. Only "
        "relevant when offset=0");
  }
};

// ---- shapes ----

/*! \brief The leading (batch) axes of `s` without its last `k`; () when there are none. */
inline std::vector<int64_t> Leading(const TShape& s, int k) {
  return std::vector<int64_t>(s.begin(), s.end() - k);
}
/*! \brief The shape of one number per matrix: the batch axes, or (1,) for a single matrix
 * (MXNet's sumlogdiag, det and slogdet). */
inline TShape PerMatrix(const TShape& s) {
  std::vector<int64_t> d = Leading(s, 2);
  if (d.empty()) d.push_back(1);
  return TShape(d);
}
inline void RequireMatrices(const TShape& s, const char* arg, int min_ndim = 2) {
  if (s.ndim() < min_ndim)
    throw std::invalid_argument("input " + std::string(arg) + " must have at least " +
                                std::to_string(min_ndim) + " dimension" +
                                (min_ndim > 1 ? "s" : "") + ", got shape " + s.ToString());
}
inline void RequireSquare(const TShape& s, const char* arg) {
  RequireMatrices(s, arg);
  if (s[s.ndim() - 1] != s[s.ndim() - 2])
    throw std::invalid_argument("input " + std::string(arg) +
                                " must be a stack of square matrices, got shape " + s.ToString());
}
inline void RequireSameBatch(const TShape& a, const TShape& b, const char* an, const char* bn) {
  if (a.ndim() != b.ndim() || Leading(a, 2) != Leading(b, 2))
    throw std::invalid_argument("inputs " + std::string(an) + " and " + bn +
                                " must have the same number of dimensions and the same leading "
                                "(batch) dimensions, got " +
                                a.ToString() + " and " + b.ToString());
}
/*! \brief Sets `*slot` to `shape` when unknown, and otherwise checks that they agree. */
inline void Assign(TShape* slot, const TShape& shape, const char* what) {
  TShape merged = *slot;
  if (!mxplug::MergeShape(&merged, shape))
    throw std::invalid_argument(std::string(what) + " has shape " + slot->ToString() +
                                ", expected " + shape.ToString());
  *slot = merged;
}

/*! \brief gemm's and gemm2's row axis (`axis`, counted from the end when negative), checked. */
inline int RowAxis(int axis, const TShape& s) {
  const int nd = s.ndim();
  const int a = axis < 0 ? axis + nd : axis;
  if (a < 0 || a >= nd - 1)
    throw std::invalid_argument("axis " + std::to_string(axis) + " cannot hold the rows of " +
                                std::to_string(nd) +
                                "-dimensional inputs (the columns are the "
                                "last axis)");
  return a;
}

/*! \brief The shape of op(A) op(B) for gemm and gemm2 (rows at `axis`, columns last). */
inline TShape ProductShape(const TShape& a, const TShape& b, bool ta, bool tb, int axis) {
  RequireMatrices(a, "A");
  if (a.ndim() != b.ndim())
    throw std::invalid_argument("A and B must have the same number of dimensions, got " +
                                a.ToString() + " and " + b.ToString());
  const int nd = a.ndim(), ax = RowAxis(axis, a);
  for (int i = 0; i < nd - 1; ++i)
    if (i != ax && a[i] != b[i])
      throw std::invalid_argument("A and B must agree on every axis but the matrix ones, got " +
                                  a.ToString() + " and " + b.ToString());
  const int64_t ka = ta ? a[ax] : a[nd - 1], kb = tb ? b[nd - 1] : b[ax];
  if (ka != kb)
    throw std::invalid_argument(
        "incompatible matrix dimensions for multiplication: A " + a.ToString() + " and B " +
        b.ToString() + " (transpose_a=" + (ta ? "True" : "False") +
        ", transpose_b=" + (tb ? "True" : "False") + ", axis=" + std::to_string(axis) + ")");
  std::vector<int64_t> d(a.begin(), a.end());
  d[ax] = ta ? a[nd - 1] : a[ax];
  d[nd - 1] = tb ? b[ax] : b[nd - 1];
  return TShape(d);
}

/*! \brief The side of the square matrices that a triangle of `m` entries fills, or -1. */
inline int64_t TriangleSide(int64_t m) {
  int64_t n = 0;
  while (n * (n + 1) / 2 < m) ++n;
  return n * (n + 1) / 2 == m ? n : -1;
}

// ---- the ops ----
// Each op below is a Def of LinalgProp: its parameter type, inputs, outputs, shape rule and the
// tensors its backward reads (the ids given in MXNet's order: out_grad, in_data, out_data).

using Ids = std::vector<int>;

/*! \brief An op of one input, A, and kOutputs outputs. */
template <int kOutputs>
struct OfA {
  static std::vector<std::string> Inputs() { return {"A"}; }
  static int NumOutputs() { return kOutputs; }
};

struct Gemm {
  using Param = GemmParam;
  static std::vector<std::string> Inputs() { return {"A", "B", "C"}; }
  static int NumOutputs() { return 1; }
  static void Shape(const Param& p, std::vector<TShape>* in, std::vector<TShape>* out) {
    const TShape s = ProductShape((*in)[0], (*in)[1], p.transpose_a, p.transpose_b, p.axis);
    Assign(&(*in)[2], s, "C");
    (*out)[0] = s;
  }
  static Ids Reads(const Ids& og, const Ids& in, const Ids&) { return {og[0], in[0], in[1]}; }
};

struct Gemm2 {
  using Param = Gemm2Param;
  static std::vector<std::string> Inputs() { return {"A", "B"}; }
  static int NumOutputs() { return 1; }
  static void Shape(const Param& p, std::vector<TShape>* in, std::vector<TShape>* out) {
    (*out)[0] = ProductShape((*in)[0], (*in)[1], p.transpose_a, p.transpose_b, p.axis);
  }
  static Ids Reads(const Ids& og, const Ids& in, const Ids&) { return {og[0], in[0], in[1]}; }
};

/*! \brief Ops from a stack of square matrices to one of the same shape. */
template <bool kReadsInput, bool kReadsOutput>
struct SquareToSquare : OfA<1> {
  using Param = NoParam;
  static void Shape(const Param&, std::vector<TShape>* in, std::vector<TShape>* out) {
    RequireSquare((*in)[0], "A");
    (*out)[0] = (*in)[0];
  }
  static Ids Reads(const Ids& og, const Ids& in, const Ids& out) {
    Ids r{og[0]};
    if (kReadsInput) r.push_back(in[0]);
    if (kReadsOutput) r.push_back(out[0]);
    return r;
  }
};
struct Potrf : SquareToSquare<false, true> {};  // L = potrf(A): A = L L^T
struct Potri : SquareToSquare<true, true> {};   // potri(L) = (L L^T)^-1
struct Inverse : SquareToSquare<false, true> {};

/*! \brief trmm and trsm: out = alpha op(A) B, or B op(A) on the right side. */
template <bool kTrsm>
struct TriangularOp {
  using Param = TriangularParam;
  static std::vector<std::string> Inputs() { return {"A", "B"}; }
  static int NumOutputs() { return 1; }
  static void Shape(const Param& p, std::vector<TShape>* in, std::vector<TShape>* out) {
    const TShape &a = (*in)[0], &b = (*in)[1];
    RequireSquare(a, "A");
    RequireSameBatch(a, b, "A", "B");
    const int nd = b.ndim();
    if (a[nd - 1] != (p.rightside ? b[nd - 1] : b[nd - 2]))
      throw std::invalid_argument(std::string("the triangular matrices A ") + a.ToString() +
                                  " do not fit B " + b.ToString() + " on the " +
                                  (p.rightside ? "right (B's columns)" : "left (B's rows)"));
    (*out)[0] = b;
  }
  // trmm's backward reads A and B; trsm's reads A and its output.
  static Ids Reads(const Ids& og, const Ids& in, const Ids& out) {
    return {og[0], in[0], kTrsm ? out[0] : in[1]};
  }
};
using Trmm = TriangularOp<false>;
using Trsm = TriangularOp<true>;

/*! \brief sumlogdiag, det: one number per square matrix. */
template <bool kReadsOutput>
struct PerMatrixNumber : OfA<1> {
  using Param = NoParam;
  static void Shape(const Param&, std::vector<TShape>* in, std::vector<TShape>* out) {
    RequireSquare((*in)[0], "A");
    (*out)[0] = PerMatrix((*in)[0]);
  }
  static Ids Reads(const Ids& og, const Ids& in, const Ids& out) {
    if (kReadsOutput) return {og[0], in[0], out[0]};
    return {og[0], in[0]};
  }
};
struct SumLogDiag : PerMatrixNumber<false> {};
struct Det : PerMatrixNumber<true> {};

struct SlogDet : OfA<2> {  // (sign, log|det|); only log|det| has a gradient
  using Param = NoParam;
  static void Shape(const Param&, std::vector<TShape>* in, std::vector<TShape>* out) {
    RequireSquare((*in)[0], "A");
    (*out)[0] = (*out)[1] = PerMatrix((*in)[0]);
  }
  static Ids Reads(const Ids& og, const Ids& in, const Ids& out) { return {og[1], in[0], out[1]}; }
};

/*! \brief The offset diagonal (or triangle) of square matrices as a vector, and back. */
inline int64_t DiagSide(const TShape& a, int offset) {
  RequireSquare(a, "A");
  const int64_t n = a[a.ndim() - 1] - std::abs(offset);
  if (n <= 0)
    throw std::invalid_argument("offset " + std::to_string(offset) +
                                " leaves no diagonal in matrices of shape " + a.ToString());
  return n;
}

/*! \brief The four ops that move entries between square matrices and vectors:
 * extractdiag/extracttrian (kExtract: matrices to vectors) and makediag/maketrian, along the
 * offset diagonal or (kTriangle) the triangle at offset. Backward moves the output's gradient
 * back, so it reads only that. */
template <bool kExtract, bool kTriangle>
struct MovesEntries : OfA<1> {
  using Param = std::conditional_t<kTriangle, TrianParam, DiagParam>;
  static void Shape(const Param& p, std::vector<TShape>* in, std::vector<TShape>* out) {
    const TShape& a = (*in)[0];
    const int64_t offset = std::abs(p.offset);
    std::vector<int64_t> d;
    if (kExtract) {
      const int64_t n = DiagSide(a, p.offset);
      d = Leading(a, 2);
      d.push_back(kTriangle ? n * (n + 1) / 2 : n);
    } else {
      RequireMatrices(a, "A", 1);
      const int64_t m = a[a.ndim() - 1], side = kTriangle ? TriangleSide(m) : m;
      if (side <= 0)
        throw std::invalid_argument("the last axis of A (" + std::to_string(m) +
                                    ") is not the size of a triangle n(n+1)/2, got shape " +
                                    a.ToString());
      d = Leading(a, 1);
      d.push_back(side + offset), d.push_back(side + offset);
    }
    (*out)[0] = TShape(d);
  }
  static Ids Reads(const Ids& og, const Ids&, const Ids&) { return {og[0]}; }
};
using ExtractDiag = MovesEntries<true, false>;
using MakeDiag = MovesEntries<false, false>;
using ExtractTrian = MovesEntries<true, true>;
using MakeTrian = MovesEntries<false, true>;

struct Syrk : OfA<1> {  // alpha A A^T, or alpha A^T A when transposed
  using Param = SyrkParam;
  static void Shape(const Param& p, std::vector<TShape>* in, std::vector<TShape>* out) {
    const TShape& a = (*in)[0];
    RequireMatrices(a, "A");
    std::vector<int64_t> d = Leading(a, 2);
    const int64_t n = p.transpose ? a[a.ndim() - 1] : a[a.ndim() - 2];
    d.push_back(n), d.push_back(n);
    (*out)[0] = TShape(d);
  }
  static Ids Reads(const Ids& og, const Ids& in, const Ids&) { return {og[0], in[0]}; }
};

struct Gelqf : OfA<2> {  // A = L Q: outputs Q (rows orthonormal) and L (lower triangular)
  using Param = NoParam;
  static void Shape(const Param&, std::vector<TShape>* in, std::vector<TShape>* out) {
    const TShape& a = (*in)[0];
    RequireMatrices(a, "A");
    const int nd = a.ndim();
    if (a[nd - 2] > a[nd - 1])
      throw std::invalid_argument(
          "gelqf needs matrices with no more rows than columns, got shape " + a.ToString());
    std::vector<int64_t> l = Leading(a, 1);
    l.push_back(a[nd - 2]);
    (*out)[0] = a;
    (*out)[1] = TShape(l);
  }
  static Ids Reads(const Ids& og, const Ids&, const Ids& out) {
    return {og[0], og[1], out[0], out[1]};
  }
};

struct Syevd : OfA<2> {  // U A = diag(L) U: outputs U (eigenvectors as rows) and L (ascending)
  using Param = NoParam;
  static void Shape(const Param&, std::vector<TShape>* in, std::vector<TShape>* out) {
    const TShape& a = (*in)[0];
    RequireSquare(a, "A");
    (*out)[0] = a;
    (*out)[1] = TShape(Leading(a, 1));
  }
  static Ids Reads(const Ids& og, const Ids&, const Ids& out) {
    return {og[0], og[1], out[0], out[1]};
  }
};

/*! \brief The property of a linear-algebra op described by Def (above). */
template <class Def>
class LinalgProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return Def::Inputs(); }
  std::vector<std::string> ListOutputs() const override {
    if (Def::NumOutputs() == 1) return {"output"};
    return {"output0", "output1"};
  }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    // The first two inputs decide every shape (gemm's C follows from A and B).
    for (size_t i = 0; i < in->size() && i < 2; ++i)
      if (!(*in)[i].IsKnown()) return false;
    Def::Shape(param_, in, out);
    return true;
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out,
                 std::vector<int>* aux) const override {
    if (!OperatorProperty::InferType(in, out, aux)) return false;
    if ((*in)[0] != kMXPFloat32 && (*in)[0] != kMXPFloat64)
      throw std::invalid_argument("A has dtype " + mxplug::DTypeName((*in)[0]) +
                                  "; the linalg operators support float32 and float64 only");
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>& out) const override {
    return Def::Reads(og, in, out);
  }

 private:
  typename Def::Param param_;
};

/*!
 * \brief Calls fn(name, Def{}, doc) for each op under each of its MXNet names: _linalg_<x> and
 * the alias linalg_<x> (syevd has no alias in MXNet).
 */
template <class Fn>
void ForEachOp(Fn fn) {
  const auto both = [&](const std::string& x, auto def, const char* doc) {
    fn("_linalg_" + x, def, doc);
    fn("linalg_" + x, def, doc);
  };
  both("gemm", Gemm{},
       "General matrix multiplication and accumulation: out = alpha * op(A) * op(B) + beta * C, "
       "for each matrix of a stack (rows at `axis`, columns on the last axis).");
  both("gemm2", Gemm2{},
       "General matrix multiplication: out = alpha * op(A) * op(B), for each matrix of a stack "
       "(rows at `axis`, columns on the last axis).");
  both("potrf", Potrf{},
       "Cholesky factorization of symmetric positive-definite matrices: the lower triangular L "
       "with A = L * L^T (only A's lower triangle is read).");
  both("potri", Potri{},
       "Inverse of B = A * A^T from its Cholesky factor A (lower triangular): out = B^-1.");
  both("trmm", Trmm{},
       "Multiplication with a triangular matrix: out = alpha * op(A) * B, or alpha * B * op(A) "
       "with rightside.");
  both("trsm", Trsm{},
       "Solves triangular systems: out = alpha * op(A)^-1 * B, or alpha * B * op(A)^-1 with "
       "rightside.");
  both("sumlogdiag", SumLogDiag{}, "Sum of the logarithms of the diagonal of square matrices.");
  both("extractdiag", ExtractDiag{}, "The diagonal (at offset) of square matrices, as vectors.");
  both("makediag", MakeDiag{}, "Square matrices with the input vectors as diagonal (at offset).");
  both("extracttrian", ExtractTrian{},
       "The lower (or upper) triangle at offset of square matrices, as vectors (row by row of "
       "the lower triangle; column by column of an upper one).");
  both("maketrian", MakeTrian{},
       "Square matrices whose lower (or upper) triangle at offset holds the input vectors; the "
       "inverse of extracttrian.");
  both("syrk", Syrk{}, "Rank-k update: out = alpha * A * A^T, or alpha * A^T * A with transpose.");
  both("gelqf", Gelqf{},
       "LQ factorization A = L * Q of matrices with no more rows than columns: outputs Q "
       "(orthonormal rows) and L (lower triangular).");
  fn(std::string("_linalg_syevd"), Syevd{},
     "Eigendecomposition of symmetric matrices: U * A = diag(L) * U, outputs U (orthonormal, "
     "eigenvectors as rows, each with its largest entry positive) and L (ascending).");
  both("inverse", Inverse{}, "Inverse of square matrices.");
  both("det", Det{}, "Determinant of square matrices.");
  both("slogdet", SlogDet{},
       "Sign and natural logarithm of the absolute value of the determinant of square matrices.");
}

/*! \brief Registers the ops' CPU kernels (linalg_cpu.cc). */
void RegisterCpuKernels();

}  // namespace mxplug_linalg

#endif  // MXPLUG_PLUGINS_LINALG_LINALG_H_
