// FullyConnected: out = data * weight^T + bias (MXNet's parameters: num_hidden, no_bias, flatten).
// float32 runs on oneDNN (a matmul forward, inner product backward) where the plugin has oneDNN, so
// a network of FullyConnected and oneDNN ops runs on one OpenMP thread pool; float64, and float32
// without oneDNN, run on OpenBLAS's GEMM.
#include <stdexcept>
#include <string>

#include "blas.h"
#include "onednn/onednn.h"
#include "mxplug/plugin.hpp"

namespace {

using mxplug::TBlob;
using mxplug_nn::Gemm;
using mxplug::TShape;

struct FullyConnectedParam : mxplug::Parameter<FullyConnectedParam> {
  int num_hidden;
  bool no_bias;
  bool flatten;
  MXPLUG_DECLARE_PARAMETER(FullyConnectedParam) {
    MXPLUG_DECLARE_FIELD(num_hidden).set_lower_bound(1).describe(
        "Number of hidden nodes of the output.");
    MXPLUG_DECLARE_FIELD(no_bias).set_default(false).describe("Whether to disable bias parameter.");
    MXPLUG_DECLARE_FIELD(flatten).set_default(true).describe(
        "Whether to collapse all but the first axis of the input data tensor.");
  }
};
MXPLUG_REGISTER_PARAMETER(FullyConnectedParam);

class FullyConnectedOp : public mxplug::Operator {
 public:
  explicit FullyConnectedOp(const FullyConnectedParam& p) : param_(p) {}

  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<mxplug::OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const int n = param_.num_hidden;
    const int k = static_cast<int>(in[1].shape_[1]);
    const int m = static_cast<int>(in[0].Size() / k);
    if (mxplug_nn::onednn::InnerProductForward(ctx, OneDnnShape(m, k), in[0], in[1],
                                               param_.no_bias ? nullptr : &in[2], out[0], req[0]))
      return;
    mxplug::RealTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      T* o = out[0].dptr<T>();
      Gemm(false, true, m, n, k, in[0].dptr<T>(), k, in[1].dptr<T>(), k,
           req[0] == mxplug::kAddTo ? T(1) : T(0), o, n);
      if (!param_.no_bias) {
        const T* bias = in[2].dptr<T>();
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < n; ++j) o[static_cast<int64_t>(i) * n + j] += bias[j];
      }
    });
  }

  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& out_grad,
                const std::vector<TBlob>& in_data, const std::vector<TBlob>&,
                const std::vector<mxplug::OpReqType>& req, const std::vector<TBlob>& in_grad,
                const std::vector<TBlob>&) override {
    const int n = param_.num_hidden;
    const int k = static_cast<int>(in_data[1].shape_[1]);
    const int m = static_cast<int>(in_data[0].Size() / k);
    const mxplug_nn::onednn::LayerGrads grads{&in_grad[0], &in_grad[1],
                                              param_.no_bias ? nullptr : &in_grad[2],
                                              req[0],      req[1],
                                              param_.no_bias ? mxplug::kNullOp : req[2]};
    if (mxplug_nn::onednn::InnerProductBackward(ctx, OneDnnShape(m, k), out_grad[0], in_data[0],
                                                in_data[1], grads))
      return;
    mxplug::RealTypeSwitch(out_grad[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      const T* og = out_grad[0].dptr<T>();
      auto beta = [](mxplug::OpReqType r) { return r == mxplug::kAddTo ? T(1) : T(0); };
      if (req[1] != mxplug::kNullOp)  // dW[n,k] = og^T[n,m] * data[m,k]
        Gemm(true, false, n, k, m, og, n, in_data[0].dptr<T>(), k, beta(req[1]),
             in_grad[1].dptr<T>(), k);
      if (req[0] != mxplug::kNullOp)  // ddata[m,k] = og[m,n] * W[n,k]
        Gemm(false, false, m, k, n, og, n, in_data[1].dptr<T>(), k, beta(req[0]),
             in_grad[0].dptr<T>(), k);
      if (!param_.no_bias && req[2] != mxplug::kNullOp) {
        T* db = in_grad[2].dptr<T>();
        for (int j = 0; j < n; ++j) {
          T sum = 0;
          for (int i = 0; i < m; ++i) sum += og[static_cast<int64_t>(i) * n + j];
          mxplug::Assign(db[j], req[2], sum);
        }
      }
    });
  }

 private:
  mxplug_nn::onednn::InnerProductShape OneDnnShape(int m, int k) const {
    return {m, k, param_.num_hidden, !param_.no_bias};
  }

  FullyConnectedParam param_;
};

class FullyConnectedProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }

  std::vector<std::string> ListArguments() const override {
    if (param_.no_bias) return {"data", "weight"};
    return {"data", "weight", "bias"};
  }

  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& data = (*in)[0];
    if (data.ndim() < 0) return false;
    if (data.ndim() == 0)
      throw std::invalid_argument("data must have at least one axis, got shape ()");
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

  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>* aux) const override {
    if (!OperatorProperty::InferType(in, out, aux)) return false;
    mxplug_nn::RequireBlasType((*in)[0]);
    return true;
  }

  // Backward reads the output gradient, the data and the weight, never the output: the output
  // can be freed right after forward (the seeds' example of backward dependency).
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad,
                                             const std::vector<int>& in_data,
                                             const std::vector<int>&) const override {
    return {out_grad[0], in_data[0], in_data[1]};
  }

  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override {
    return mxplug_nn::onednn::Resources();
  }
  std::vector<mxplug::ResourceRequest> BackwardResource(const std::vector<TShape>&) const override {
    return mxplug_nn::onednn::Resources();
  }

  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    return new FullyConnectedOp(param_);
  }

 private:
  FullyConnectedParam param_;
};

}  // namespace

MXPLUG_REGISTER_OP_PROPERTY(FullyConnected, FullyConnectedProp)
    .describe("Applies a linear transformation: Y = XW^T + b. With flatten, the input is "
              "reshaped to (batch, -1) first; without it, the last axis is transformed.")
    .add_argument("data", "NDArray-or-Symbol", "Input data.")
    .add_argument("weight", "NDArray-or-Symbol", "Weight matrix.")
    .add_argument("bias", "NDArray-or-Symbol", "Bias parameter.")
    .add_arguments(FullyConnectedParam::Fields())
    .add_kernel(kDLCPU);


