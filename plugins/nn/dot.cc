// dot and batch_dot (MXNet's parameters transpose_a, transpose_b) on OpenBLAS GEMM.
// dot views lhs as a matrix of (prod(shape[:-1]), shape[-1]) (or (shape[0], prod(shape[1:]))
// when transposed) and rhs as (shape[0], prod(shape[1:])) (or (prod(shape[:-1]), shape[-1])).
#include <stdexcept>
#include <string>

#include "blas.h"
#include "mxplug/plugin.hpp"

namespace {

using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;
using mxplug_nn::Gemm;

struct DotParam : mxplug::Parameter<DotParam> {
  bool transpose_a, transpose_b;
  std::string forward_stype;
  MXPLUG_DECLARE_PARAMETER(DotParam) {
    MXPLUG_DECLARE_FIELD(transpose_a).set_default(false).describe("Transpose the first input first.");
    MXPLUG_DECLARE_FIELD(transpose_b).set_default(false).describe("Transpose the second input first.");
    MXPLUG_DECLARE_FIELD(forward_stype).set_default("None").describe("Accepted for compatibility: dense only.");
  }
};
MXPLUG_REGISTER_PARAMETER(DotParam);

// A tensor as a row-major matrix split after axis `split` (rows = prod(shape[:split])).
struct Matrix {
  int64_t rows, cols;
};
Matrix AsMatrix(const TShape& s, int split) {
  return {s.ProdShape(0, split), s.ProdShape(split, s.ndim())};
}

// C[m,n] = op(A)[m,k] op(B)[k,n] for one matrix pair, with its gradients; `batch` pairs at once.
struct MatMul {
  bool ta, tb;
  Matrix a, b;  // A and B as stored
  int64_t batch = 1;
  int64_t M() const { return ta ? a.cols : a.rows; }
  int64_t K() const { return ta ? a.rows : a.cols; }
  int64_t N() const { return tb ? b.rows : b.cols; }

  template <class T>
  void Forward(const T* A, const T* B, T* C, OpReqType req) const {
    const T beta = req == mxplug::kAddTo ? T(1) : T(0);
    for (int64_t i = 0; i < batch; ++i)
      Gemm(ta, tb, int(M()), int(N()), int(K()), A + i * a.rows * a.cols, int(a.cols), B + i * b.rows * b.cols,
           int(b.cols), beta, C + i * M() * N(), int(N()));
  }
  // d op(A) = G op(B)^T and d op(B) = op(A)^T G, transposed back where A or B was.
  template <class T>
  void Backward(const T* G, const T* A, const T* B, T* dA, OpReqType ra, T* dB, OpReqType rb) const {
    const int m = int(M()), n = int(N()), k = int(K());
    for (int64_t i = 0; i < batch; ++i) {
      const T* g = G + i * M() * N();
      const T* ai = A + i * a.rows * a.cols;
      const T* bi = B + i * b.rows * b.cols;
      if (ra != mxplug::kNullOp) {
        T* d = dA + i * a.rows * a.cols;
        const T beta = ra == mxplug::kAddTo ? T(1) : T(0);
        if (!ta) Gemm(false, !tb, m, k, n, g, n, bi, int(b.cols), beta, d, int(a.cols));
        else Gemm(tb, true, k, m, n, bi, int(b.cols), g, n, beta, d, int(a.cols));
      }
      if (rb != mxplug::kNullOp) {
        T* d = dB + i * b.rows * b.cols;
        const T beta = rb == mxplug::kAddTo ? T(1) : T(0);
        if (!tb) Gemm(!ta, false, k, n, m, ai, int(a.cols), g, n, beta, d, int(b.cols));
        else Gemm(true, ta, n, k, m, g, n, ai, int(a.cols), beta, d, int(b.cols));
      }
    }
  }
};

// The matrix product that dot (or batch_dot, kBatch) of lhs l and rhs r computes.
template <bool kBatch>
MatMul Plan(const DotParam& p, const TShape& l, const TShape& r) {
MatMul mm{p.transpose_a, p.transpose_b, {}, {}};
  if (kBatch) {
    if (l.ndim() != 3 || r.ndim() != 3 || l[0] != r[0])
      throw std::invalid_argument("batch_dot needs lhs and rhs of 3 dimensions with the same batch "
                                  "size, got " + l.ToString() + " and " + r.ToString());
    mm.batch = l[0];
    mm.a = {l[1], l[2]}, mm.b = {r[1], r[2]};
  } else {
    if (l.ndim() < 1 || r.ndim() < 1)
      throw std::invalid_argument("dot needs inputs of at least one dimension");
    mm.a = AsMatrix(l, mm.ta ? 1 : l.ndim() - 1);
    mm.b = AsMatrix(r, mm.tb ? r.ndim() - 1 : 1);
    if (l.ndim() == 1) mm.a = mm.ta ? Matrix{l[0], 1} : Matrix{1, l[0]};
    if (r.ndim() == 1) mm.b = mm.tb ? Matrix{1, r[0]} : Matrix{r[0], 1};
  }
  if (mm.K() != (mm.tb ? mm.b.cols : mm.b.rows))
    throw std::invalid_argument("lhs of shape " + l.ToString() + " and rhs of shape " + r.ToString() +
                                " do not share the reduction axis (transpose_a=" +
                                (mm.ta ? "True" : "False") + ", transpose_b=" + (mm.tb ? "True" : "False") + ")");
  return mm;
}

template <bool kBatch>
class DotProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {"lhs", "rhs"}; }

  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out, std::vector<TShape>*) const override {
    const TShape& l = (*in)[0];
    const TShape& r = (*in)[1];
    if (l.ndim() < 0 || r.ndim() < 0) return false;
    const MatMul mm = Plan<kBatch>(param_, l, r);
    std::vector<int64_t> d;
    if (kBatch) {
      d = {mm.batch, mm.M(), mm.N()};
    } else {
      if (l.ndim() > 1) {
        if (mm.ta) d.insert(d.end(), l.begin() + 1, l.end());
        else d.insert(d.end(), l.begin(), l.end() - 1);
      }
      if (r.ndim() > 1) {
        if (mm.tb) d.insert(d.end(), r.begin(), r.end() - 1);
        else d.insert(d.end(), r.begin() + 1, r.end());
      }
      if (d.empty()) d.push_back(1);
    }
    (*out)[0] = TShape(d);
    return l.IsKnown() && r.IsKnown();
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>* aux) const override {
    if (!OperatorProperty::InferType(in, out, aux)) return false;
    if ((*in)[0] != kMXPFloat32 && (*in)[0] != kMXPFloat64)
      throw std::invalid_argument("lhs has dtype " + mxplug::DTypeName((*in)[0]) + "; expected float32 or float64");
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>&) const override {
    return {og[0], in[0], in[1]};
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    struct Kernel : mxplug::Operator {
      DotParam p;
      void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
        if (req[0] == mxplug::kNullOp) return;
        const MatMul mm = Plan<kBatch>(p, in[0].shape_, in[1].shape_);
        mxplug::RealTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
          using T = decltype(zero);
          mm.Forward(in[0].dptr<T>(), in[1].dptr<T>(), out[0].dptr<T>(), req[0]);
        });
      }
      void Backward(const mxplug::OpContext&, const std::vector<TBlob>& og, const std::vector<TBlob>& in,
                    const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& ig, const std::vector<TBlob>&) override {
        const MatMul mm = Plan<kBatch>(p, in[0].shape_, in[1].shape_);
        mxplug::RealTypeSwitch(og[0].type_flag_, "", [&](auto zero) {
          using T = decltype(zero);
          mm.Backward(og[0].dptr<T>(), in[0].dptr<T>(), in[1].dptr<T>(),
                      req[0] != mxplug::kNullOp ? ig[0].dptr<T>() : nullptr, req[0],
                      req[1] != mxplug::kNullOp ? ig[1].dptr<T>() : nullptr, req[1]);
        });
      }
    };
    auto* k = new Kernel();
    k->p = param_;
    return k;
  }

 private:
  DotParam param_;
};

[[maybe_unused]] const bool registered = [] {
  mxplug::RegisterOpProperty<DotProp<false>>("dot")
      .describe("Dot product of two arrays (the matrix product for 2-D arrays).")
      .add_argument("lhs", "NDArray-or-Symbol", "The first input.")
      .add_argument("rhs", "NDArray-or-Symbol", "The second input.")
      .add_arguments(DotParam::Fields()).add_kernel(kDLCPU);
  mxplug::RegisterOpProperty<DotProp<true>>("batch_dot")
      .describe("Batched matrix product of (B, M, K) and (B, K, N) arrays.")
      .add_argument("lhs", "NDArray-or-Symbol", "The first input.")
      .add_argument("rhs", "NDArray-or-Symbol", "The second input.")
      .add_arguments(DotParam::Fields()).add_kernel(kDLCPU);
  return true;
}();

}  // namespace
