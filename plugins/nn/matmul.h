// Definitions of the matrix-product ops (MXNet's names and parameters): dot, batch_dot and
// FullyConnected, registered by matmul.cc. Their kernels are written once here over a device's
// BLAS (class B below): matmul_cpu.cc registers them on OpenBLAS (with oneDNN's inner product
// first for FullyConnected in float32), devices/cuda/kernels/matmul.cu on cuBLAS.
#ifndef MXPLUG_PLUGINS_NN_MATMUL_H_
#define MXPLUG_PLUGINS_NN_MATMUL_H_

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "mxplug/plugin.hpp"

namespace mxplug_nn {

using mxplug::OpContext;
using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;

// The products run in float32, float64 and float16 (float16 accumulating in float32, as MXNet's
// GPU kernels do; MXNet's CPU has no float16 products): ops built on them say so at the call (in
// InferType) rather than in the kernel.
inline void RequireBlasType(int dtype, const char* input = "data") {
  if (dtype != kMXPFloat32 && dtype != kMXPFloat64 && dtype != kMXPFloat16)
    throw std::invalid_argument(std::string(input) + " has dtype " + mxplug::DTypeName(dtype) +
                                "; expected float16, float32 or float64");
}

// ---- dot and batch_dot ----

struct DotParam : mxplug::Parameter<DotParam> {
  bool transpose_a, transpose_b;
  std::string forward_stype;
  MXPLUG_DECLARE_PARAMETER(DotParam) {
    MXPLUG_DECLARE_FIELD(transpose_a)
        .set_default(false)
        .describe("Transpose the first input first.");
    MXPLUG_DECLARE_FIELD(transpose_b)
        .set_default(false)
        .describe("Transpose the second input first.");
    MXPLUG_DECLARE_FIELD(forward_stype)
        .set_default("None")
        .describe("Accepted for compatibility: dense only.");
  }
};

/*! \brief A tensor as a row-major matrix. */
struct Matrix {
  int64_t rows, cols;
};
// Split after axis `split` (rows = prod(shape[:split])).
inline Matrix AsMatrix(const TShape& s, int split) {
  return {s.ProdShape(0, split), s.ProdShape(split, s.ndim())};
}

/*!
 * \brief C[m,n] = op(A)[m,k] op(B)[k,n] for `batch` matrix pairs stored one after another, and
 * its gradients, on a device's BLAS B, which provides (row-major, T float, double or half_t, beta
 * in ComputeType<T>, products accumulated in ComputeType<T>)
 *   B::Gemm(ctx, ta, tb, m, n, k, A, lda, B, ldb, beta, C, ldc, batch, stride_a, stride_b,
 * stride_c) C_i = op(A_i) op(B_i) + beta C_i for i < batch, X_i = X + i * stride_x.
 */
struct MatMul {
  bool ta, tb;
  Matrix a, b;  // A and B as stored
  int64_t batch = 1;
  int64_t M() const { return ta ? a.cols : a.rows; }
  int64_t K() const { return ta ? a.rows : a.cols; }
  int64_t N() const { return tb ? b.rows : b.cols; }
  static int Ld(int64_t cols) { return static_cast<int>(std::max<int64_t>(cols, 1)); }

  template <class B, class T>
  void Forward(const OpContext& ctx, const T* A, const T* Bm, T* C, OpReqType req) const {
    if (req == mxplug::kNullOp) return;
    B::Gemm(ctx, ta, tb, M(), N(), K(), A, Ld(a.cols), Bm, Ld(b.cols), Beta<T>(req), C, Ld(N()),
            batch, a.rows * a.cols, b.rows * b.cols, M() * N());
  }
  // d op(A) = G op(B)^T and d op(B) = op(A)^T G, transposed back where A or B was.
  template <class B, class T>
  void Backward(const OpContext& ctx, const T* G, const T* A, const T* Bm, T* dA, OpReqType ra,
                T* dB, OpReqType rb) const {
    const int64_t m = M(), n = N(), k = K(), sa = a.rows * a.cols, sb = b.rows * b.cols, sg = m * n;
    if (ra != mxplug::kNullOp) {
      if (!ta)
        B::Gemm(ctx, false, !tb, m, k, n, G, Ld(n), Bm, Ld(b.cols), Beta<T>(ra), dA, Ld(a.cols),
                batch, sg, sb, sa);
      else
        B::Gemm(ctx, tb, true, k, m, n, Bm, Ld(b.cols), G, Ld(n), Beta<T>(ra), dA, Ld(a.cols),
                batch, sb, sg, sa);
    }
    if (rb != mxplug::kNullOp) {
      if (!tb)
        B::Gemm(ctx, !ta, false, k, n, m, A, Ld(a.cols), G, Ld(n), Beta<T>(rb), dB, Ld(b.cols),
                batch, sa, sg, sb);
      else
        B::Gemm(ctx, true, ta, n, k, m, G, Ld(n), A, Ld(a.cols), Beta<T>(rb), dB, Ld(b.cols), batch,
                sg, sa, sb);
    }
  }
  template <class T>
  static mxplug::ComputeType<T> Beta(OpReqType req) {
    return req == mxplug::kAddTo ? mxplug::ComputeType<T>(1) : mxplug::ComputeType<T>(0);
  }
};

/*! \brief The matrix product that dot (or batch_dot, kBatch) of lhs l and rhs r computes. */
template <bool kBatch>
MatMul PlanDot(const DotParam& p, const TShape& l, const TShape& r) {
  MatMul mm{p.transpose_a, p.transpose_b, {}, {}};
  if (kBatch) {
    if (l.ndim() != 3 || r.ndim() != 3 || l[0] != r[0])
      throw std::invalid_argument(
          "batch_dot needs lhs and rhs of 3 dimensions with the same batch size, got " +
          l.ToString() + " and " + r.ToString());
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
    throw std::invalid_argument(
        "lhs of shape " + l.ToString() + " and rhs of shape " + r.ToString() +
        " do not share the reduction axis (transpose_a=" + (mm.ta ? "True" : "False") +
        ", transpose_b=" + (mm.tb ? "True" : "False") + ")");
  return mm;
}

template <bool kBatch>
class DotProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {"lhs", "rhs"}; }

  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& l = (*in)[0];
    const TShape& r = (*in)[1];
    if (l.ndim() < 0 || r.ndim() < 0) return false;
    const MatMul mm = PlanDot<kBatch>(param_, l, r);
    std::vector<int64_t> d;
    if (kBatch) {
      d = {mm.batch, mm.M(), mm.N()};
    } else {
      if (l.ndim() > 1) {
        if (mm.ta)
          d.insert(d.end(), l.begin() + 1, l.end());
        else
          d.insert(d.end(), l.begin(), l.end() - 1);
      }
      if (r.ndim() > 1) {
        if (mm.tb)
          d.insert(d.end(), r.begin(), r.end() - 1);
        else
          d.insert(d.end(), r.begin() + 1, r.end());
      }
      if (d.empty()) d.push_back(1);
    }
    (*out)[0] = TShape(d);
    return l.IsKnown() && r.IsKnown();
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out,
                 std::vector<int>* aux) const override {
    if (!OperatorProperty::InferType(in, out, aux)) return false;
    RequireBlasType((*in)[0], "lhs");
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>&) const override {
    return {og[0], in[0], in[1]};
  }

 private:
  DotParam param_;
};

template <class B, bool kBatch>
class DotKernel : public mxplug::Operator {
 public:
  DotKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }
  void Forward(const OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    const MatMul mm = PlanDot<kBatch>(p_, in[0].shape_, in[1].shape_);
    mxplug::FloatTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      mm.Forward<B>(ctx, in[0].dptr<T>(), in[1].dptr<T>(), out[0].dptr<T>(), req[0]);
    });
  }
  void Backward(const OpContext& ctx, const std::vector<TBlob>& og, const std::vector<TBlob>& in,
                const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                const std::vector<TBlob>& ig, const std::vector<TBlob>&) override {
    const MatMul mm = PlanDot<kBatch>(p_, in[0].shape_, in[1].shape_);
    mxplug::FloatTypeSwitch(og[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      mm.Backward<B>(ctx, og[0].dptr<T>(), in[0].dptr<T>(), in[1].dptr<T>(),
                     req[0] != mxplug::kNullOp ? ig[0].dptr<T>() : nullptr, req[0],
                     req[1] != mxplug::kNullOp ? ig[1].dptr<T>() : nullptr, req[1]);
    });
  }

 private:
  DotParam p_;
};

// ---- FullyConnected ----

struct FullyConnectedParam : mxplug::Parameter<FullyConnectedParam> {
  int num_hidden;
  bool no_bias;
  bool flatten;
  MXPLUG_DECLARE_PARAMETER(FullyConnectedParam) {
    MXPLUG_DECLARE_FIELD(num_hidden)
        .set_lower_bound(1)
        .describe("Number of hidden nodes of the output.");
    MXPLUG_DECLARE_FIELD(no_bias).set_default(false).describe("Whether to disable bias parameter.");
    MXPLUG_DECLARE_FIELD(flatten).set_default(true).describe(
        "Whether to collapse all but the first axis of the input data tensor.");
  }
};

/*! \brief What FullyConnected and the convolutions share: the arguments data, weight and (unless
 * no_bias) bias; float16, float32 or float64 data; a backward that reads the output gradient, the
 * data and the weight but never the output (so the output can be freed right after forward: the
 * seeds' example of backward dependency); and scratch for a library's kernel (oneDNN's reorders and
 * scratchpad on the CPU). */
class WeightedLayerProp : public mxplug::OperatorProperty {
 public:
  std::vector<std::string> ListArguments() const override {
    if (NoBias()) return {"data", "weight"};
    return {"data", "weight", "bias"};
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out,
                 std::vector<int>* aux) const override {
    if (!OperatorProperty::InferType(in, out, aux)) return false;
    RequireBlasType((*in)[0]);
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad,
                                             const std::vector<int>& in_data,
                                             const std::vector<int>&) const override {
    return {out_grad[0], in_data[0], in_data[1]};
  }
  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override {
    return {mxplug::ResourceRequest::kTempSpace};
  }
  std::vector<mxplug::ResourceRequest> BackwardResource(const std::vector<TShape>&) const override {
    return {mxplug::ResourceRequest::kTempSpace};
  }

 protected:
  virtual bool NoBias() const = 0;
};

class FullyConnectedProp : public WeightedLayerProp {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }

  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    TShape& data = (*in)[0];
    if (data.ndim() < 0) return false;
    if (data.ndim() == 0)
      throw std::invalid_argument("data must have at least one axis, got shape ()");
    // MXNet 1.x infers backward too: a batch size known only from the output (data made by
    // zeros((0, k)), an RNN cell's begin state) comes from there.
    const TShape& given = (*out)[0];
    if (data[0] < 0 && given.ndim() >= 1 && given[0] >= 0) data[0] = given[0];
    const int64_t n = param_.num_hidden;
    int64_t k;
    TShape oshape;
    if (param_.flatten) {
      k = data.ndim() == 1 ? 1 : data.ProdShape(1, data.ndim());
      oshape = TShape{data[0], n};
    } else {
      k = data[data.ndim() - 1];
      std::vector<int64_t> dims(data.begin(), data.end());
      dims.back() = n;
      oshape = TShape(dims);
    }
    mxplug::InferParameterShape(&(*in)[1], TShape{n, k}, "weight", data);
    if (!param_.no_bias) mxplug::InferParameterShape(&(*in)[2], TShape{n}, "bias", data);
    (*out)[0] = oshape;
    return data.IsKnown();
  }

 private:
  bool NoBias() const override { return param_.no_bias; }
  FullyConnectedParam param_;
};

/*! \brief A FullyConnected call's sizes: data (rows, inputs), weight (outputs, inputs). */
struct LinearShape {
  int64_t rows, inputs, outputs;
  bool bias;
};

/*! \brief The data, weight and bias gradients of a FullyConnected or a convolution, each with
 * its request. */
struct LayerGrads {
  const TBlob *data, *weight, *bias;
  OpReqType data_req, weight_req, bias_req;
};

/*!
 * \brief FullyConnected: out = data weight^T + bias, on B's GEMM and two more primitives,
 *   B::AddBias(ctx, out, bias, m, n)          out[i, j] += bias[j]
 *   B::SumRows(ctx, og, db, m, n, req)        db[j] = sum_i og[i, j], written as req says
 * and a device's fused layer where it has one (they return false to leave the call to the GEMMs):
 *   B::FusedLinearForward(ctx, shape, data, weight, bias or nullptr, out, req)
 *   B::FusedLinearBackward(ctx, shape, out_grad, data, weight, grads)
 */
template <class B>
class FullyConnectedKernel : public mxplug::Operator {
 public:
  FullyConnectedKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }

  void Forward(const OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const LinearShape s = Shape(in[1], in[0]);
    if (B::FusedLinearForward(ctx, s, in[0], in[1], p_.no_bias ? nullptr : &in[2], out[0], req[0]))
      return;
    mxplug::FloatTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      T* o = out[0].dptr<T>();
      Plan(s).template Forward<B>(ctx, in[0].dptr<T>(), in[1].dptr<T>(), o, req[0]);
      if (!p_.no_bias) B::AddBias(ctx, o, in[2].dptr<T>(), s.rows, s.outputs);
    });
  }

  void Backward(const OpContext& ctx, const std::vector<TBlob>& out_grad,
                const std::vector<TBlob>& in, const std::vector<TBlob>&,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& in_grad,
                const std::vector<TBlob>&) override {
    const LinearShape s = Shape(in[1], in[0]);
    const OpReqType bias_req = p_.no_bias ? mxplug::kNullOp : req[2];
    const LayerGrads grads{&in_grad[0], &in_grad[1], p_.no_bias ? nullptr : &in_grad[2],
                           req[0],      req[1],      bias_req};
    if (B::FusedLinearBackward(ctx, s, out_grad[0], in[0], in[1], grads)) return;
    mxplug::FloatTypeSwitch(out_grad[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      const T* og = out_grad[0].dptr<T>();
      const auto ptr = [&](int i) {
        return req[i] != mxplug::kNullOp ? in_grad[i].dptr<T>() : nullptr;
      };
      Plan(s).template Backward<B>(ctx, og, in[0].dptr<T>(), in[1].dptr<T>(), ptr(0), req[0],
                                   ptr(1), req[1]);
      if (bias_req != mxplug::kNullOp)
        B::SumRows(ctx, og, in_grad[2].dptr<T>(), s.rows, s.outputs, bias_req);
    });
  }

 private:
  LinearShape Shape(const TBlob& weight, const TBlob& data) const {
    const int64_t k = weight.shape_[1];
    return {k ? data.Size() / k : 0, k, p_.num_hidden, !p_.no_bias};
  }
  // out[m,n] = data[m,k] weight[n,k]^T
  static MatMul Plan(const LinearShape& s) {
    return MatMul{false, true, {s.rows, s.inputs}, {s.outputs, s.inputs}};
  }

  FullyConnectedParam p_;
};

/*! \brief Registers the kernels of dot, batch_dot and FullyConnected on a device whose BLAS is
 * B (their definitions register once, in matmul.cc). */
template <class B>
void RegisterMatMulKernels(DLDeviceType device) {
  mxplug::sdk::RegisterKernel<DotKernel<B, false>>("dot", device);
  mxplug::sdk::RegisterKernel<DotKernel<B, true>>("batch_dot", device);
  mxplug::sdk::RegisterKernel<FullyConnectedKernel<B>>("FullyConnected", device);
}

}  // namespace mxplug_nn

#endif  // MXPLUG_PLUGINS_NN_MATMUL_H_
