// _plus_scalar, _minus_scalar, _rminus_scalar, _mul_scalar, _div_scalar, _rdiv_scalar: an array
// and a scalar (MXNet's names and parameters: scalar, is_int).
#include <string>

#include "elementwise.h"
#include "mxplug/plugin.hpp"

namespace {

using mxplug::Assign;
using mxplug::TBlob;

struct ScalarParam : mxplug::Parameter<ScalarParam> {
  double scalar;
  bool is_int;
  MXPLUG_DECLARE_PARAMETER(ScalarParam) {
    MXPLUG_DECLARE_FIELD(scalar).set_default(1.0).describe("Scalar input value");
    MXPLUG_DECLARE_FIELD(is_int).set_default(true).describe(
        "Indicate whether scalar input is int type");
  }
};
MXPLUG_REGISTER_PARAMETER(ScalarParam);

enum class Scalar { kPlus, kMinus, kRMinus, kMul, kDiv, kRDiv };

template <Scalar K>
class ScalarOp : public mxplug::Operator {
 public:
  explicit ScalarOp(const ScalarParam& p) : param_(p) {}

  void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in,
               const std::vector<mxplug::OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    mxplug::RealTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      const T s = static_cast<T>(param_.scalar);
      const T* x = in[0].dptr<T>();
      T* o = out[0].dptr<T>();
      const int64_t n = out[0].Size();
      for (int64_t i = 0; i < n; ++i) {
        T v;
        if constexpr (K == Scalar::kPlus) v = x[i] + s;
        else if constexpr (K == Scalar::kMinus) v = x[i] - s;
        else if constexpr (K == Scalar::kRMinus) v = s - x[i];
        else if constexpr (K == Scalar::kMul) v = x[i] * s;
        else if constexpr (K == Scalar::kDiv) v = x[i] / s;
        else v = s / x[i];
        Assign(o[i], req[0], v);
      }
    });
  }

  void Backward(const mxplug::OpContext&, const std::vector<TBlob>& out_grad,
                const std::vector<TBlob>& in_data, const std::vector<TBlob>&,
                const std::vector<mxplug::OpReqType>& req, const std::vector<TBlob>& in_grad,
                const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    mxplug::RealTypeSwitch(out_grad[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      const T s = static_cast<T>(param_.scalar);
      const T* og = out_grad[0].dptr<T>();
      const T* x = K == Scalar::kRDiv ? in_data[0].dptr<T>() : nullptr;
      T* g = in_grad[0].dptr<T>();
      const int64_t n = out_grad[0].Size();
      for (int64_t i = 0; i < n; ++i) {
        T v;
        if constexpr (K == Scalar::kPlus || K == Scalar::kMinus) v = og[i];
        else if constexpr (K == Scalar::kRMinus) v = -og[i];
        else if constexpr (K == Scalar::kMul) v = og[i] * s;
        else if constexpr (K == Scalar::kDiv) v = og[i] / s;
        else v = -og[i] * s / (x[i] * x[i]);
        Assign(g[i], req[0], v);
      }
    });
  }

 private:
  ScalarParam param_;
};

template <Scalar K>
class ScalarProp : public mxplug_tensor::ElementwiseProp {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }

  bool InferShape(std::vector<mxplug::TShape>* in, std::vector<mxplug::TShape>* out,
                  std::vector<mxplug::TShape>*) const override {
    if ((*in)[0].ndim() < 0) (*in)[0] = (*out)[0];
    (*out)[0] = (*in)[0];
    return (*in)[0].IsKnown();
  }

  std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad,
                                             const std::vector<int>& in_data,
                                             const std::vector<int>&) const override {
    if (K == Scalar::kRDiv) return {out_grad[0], in_data[0]};
    return {out_grad[0]};
  }

  mxplug::Operator* CreateOperator(mxplug::Context) const override { return new ScalarOp<K>(param_); }

 private:
  ScalarParam param_;
};

}  // namespace

// Every scalar op has the same input and parameters; only its kind and doc differ.
template <Scalar K>
mxplug::OpRegistration& RegisterScalar(const char* name, const char* doc) {
  return mxplug_tensor::RegisterElementwise<ScalarProp<K>>(name, doc, {{"data", "source input"}},
                                                           ScalarParam::Fields());
}

static auto& plus_scalar =
    RegisterScalar<Scalar::kPlus>("_plus_scalar", "Adds a scalar to every element: data + scalar.");
static auto& minus_scalar = RegisterScalar<Scalar::kMinus>(
    "_minus_scalar", "Subtracts a scalar from every element: data - scalar.");
static auto& rminus_scalar = RegisterScalar<Scalar::kRMinus>(
    "_rminus_scalar", "Subtracts every element from a scalar: scalar - data.");
static auto& mul_scalar =
    RegisterScalar<Scalar::kMul>("_mul_scalar", "Multiplies every element by a scalar: data * scalar.");
static auto& div_scalar =
    RegisterScalar<Scalar::kDiv>("_div_scalar", "Divides every element by a scalar: data / scalar.");
static auto& rdiv_scalar =
    RegisterScalar<Scalar::kRDiv>("_rdiv_scalar", "Divides a scalar by every element: scalar / data.");
