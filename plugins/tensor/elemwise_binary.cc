// elemwise_add, elemwise_sub, elemwise_mul, elemwise_div: same-shape binary ops (MXNet's names,
// arguments lhs and rhs). Broadcasting forms are separate ops (broadcast_add, ...).
#include <stdexcept>
#include <string>

#include "elementwise.h"
#include "mxplug/plugin.hpp"

namespace {

using mxplug::Assign;
using mxplug::TBlob;

struct NoParam : mxplug::Parameter<NoParam> {
  MXPLUG_DECLARE_PARAMETER(NoParam) {}
};

enum class Binary { kAdd, kSub, kMul, kDiv };

template <Binary K>
class BinaryOp : public mxplug::Operator {
 public:
  void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in,
               const std::vector<mxplug::OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    mxplug::RealTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      const T* a = in[0].dptr<T>();
      const T* b = in[1].dptr<T>();
      T* o = out[0].dptr<T>();
      const int64_t n = out[0].Size();
      for (int64_t i = 0; i < n; ++i) {
        T v;
        if constexpr (K == Binary::kAdd) v = a[i] + b[i];
        else if constexpr (K == Binary::kSub) v = a[i] - b[i];
        else if constexpr (K == Binary::kMul) v = a[i] * b[i];
        else v = a[i] / b[i];
        Assign(o[i], req[0], v);
      }
    });
  }

  void Backward(const mxplug::OpContext&, const std::vector<TBlob>& out_grad,
                const std::vector<TBlob>& in_data, const std::vector<TBlob>&,
                const std::vector<mxplug::OpReqType>& req, const std::vector<TBlob>& in_grad,
                const std::vector<TBlob>&) override {
    mxplug::RealTypeSwitch(out_grad[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      const T* og = out_grad[0].dptr<T>();
      T* ga = in_grad[0].dptr<T>();
      T* gb = in_grad[1].dptr<T>();
      const int64_t n = out_grad[0].Size();
      // add and sub read no inputs (see DeclareBackwardDependency), so in_data may be absent.
      const T* a = K == Binary::kMul || K == Binary::kDiv ? in_data[0].dptr<T>() : nullptr;
      const T* b = K == Binary::kMul || K == Binary::kDiv ? in_data[1].dptr<T>() : nullptr;
      for (int64_t i = 0; i < n; ++i) {
        const T g = og[i];  // read first: ga may share og's memory (BackwardInplaceOption)
        T da, db;
        if constexpr (K == Binary::kAdd) da = g, db = g;
        else if constexpr (K == Binary::kSub) da = g, db = -g;
        else if constexpr (K == Binary::kMul) da = g * b[i], db = g * a[i];
        else da = g / b[i], db = -g * a[i] / (b[i] * b[i]);
        Assign(gb[i], req[1], db);
        Assign(ga[i], req[0], da);
      }
    });
  }
};

template <Binary K>
class BinaryProp : public mxplug_tensor::ElementwiseProp {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {"lhs", "rhs"}; }

  bool InferShape(std::vector<mxplug::TShape>* in, std::vector<mxplug::TShape>* out,
                  std::vector<mxplug::TShape>*) const override {
    mxplug::TShape& lhs = (*in)[0];
    mxplug::TShape& rhs = (*in)[1];
    if (lhs.ndim() >= 0 && rhs.ndim() >= 0 && lhs != rhs)
      throw std::invalid_argument("lhs has shape " + lhs.ToString() + " but rhs has shape " +
                                  rhs.ToString() + "; they must be equal (use broadcast ops " +
                                  "for broadcasting)");
    const mxplug::TShape& known = lhs.ndim() >= 0 ? lhs : rhs.ndim() >= 0 ? rhs : (*out)[0];
    if (known.ndim() < 0) return false;
    lhs = rhs = (*out)[0] = known;
    return known.IsKnown();
  }

  std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad,
                                             const std::vector<int>& in_data,
                                             const std::vector<int>&) const override {
    if (K == Binary::kAdd || K == Binary::kSub) return {out_grad[0]};
    return {out_grad[0], in_data[0], in_data[1]};
  }

  mxplug::Operator* CreateOperator(mxplug::Context) const override { return new BinaryOp<K>(); }

 private:
  NoParam param_;
};

}  // namespace

using mxplug_tensor::RegisterElementwise;
static const std::initializer_list<mxplug_tensor::InputDoc> kBinaryInputs{{"lhs", "first input"},
                                                                          {"rhs", "second input"}};
static auto& elemwise_add = RegisterElementwise<BinaryProp<Binary::kAdd>>(
    "elemwise_add", "Adds arguments element-wise: lhs + rhs. Both must have the same shape.", kBinaryInputs);
static auto& elemwise_sub = RegisterElementwise<BinaryProp<Binary::kSub>>(
    "elemwise_sub", "Subtracts arguments element-wise: lhs - rhs. Both must have the same shape.", kBinaryInputs);
static auto& elemwise_mul = RegisterElementwise<BinaryProp<Binary::kMul>>(
    "elemwise_mul", "Multiplies arguments element-wise: lhs * rhs. Both must have the same shape.", kBinaryInputs);
static auto& elemwise_div = RegisterElementwise<BinaryProp<Binary::kDiv>>(
    "elemwise_div", "Divides arguments element-wise: lhs / rhs. Both must have the same shape.", kBinaryInputs);
