// Binary arithmetic in three forms sharing one functor per operation (MXNet's names):
// elemwise_<op> (same shapes), broadcast_<op> (NumPy broadcasting), and _<op>_scalar /
// _r<op>_scalar (an array and a scalar parameter, on either side).
#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "elementwise.h"
#include "mxplug/plugin.hpp"

namespace {

using mxplug::Assign;
using mxplug::ComputeType;
using mxplug::OpReqType;
using mxplug_tensor::InputDoc;
using mxplug_tensor::IsNan;
using mxplug_tensor::NoParam;
using mxplug_tensor::ScalarParam;
using mxplug_tensor::TBlob;
using mxplug_tensor::TShape;

// Each functor: F(a, b) the value, DA / DB the partial derivatives given a, b and y = F(a, b).
// kLogical: the result is 0 or 1 and has no gradient.
struct Add {
  template <class C>
  static C F(C a, C b) {
    return a + b;
  }
  template <class C>
  static C DA(C, C, C) {
    return C(1);
  }
  template <class C>
  static C DB(C, C, C) {
    return C(1);
  }
  static constexpr bool kReadsInputs = false, kLogical = false;
};
struct Sub {
  template <class C>
  static C F(C a, C b) {
    return a - b;
  }
  template <class C>
  static C DA(C, C, C) {
    return C(1);
  }
  template <class C>
  static C DB(C, C, C) {
    return C(-1);
  }
  static constexpr bool kReadsInputs = false, kLogical = false;
};
struct Mul {
  template <class C>
  static C F(C a, C b) {
    return a * b;
  }
  template <class C>
  static C DA(C, C b, C) {
    return b;
  }
  template <class C>
  static C DB(C a, C, C) {
    return a;
  }
  static constexpr bool kReadsInputs = true, kLogical = false;
};
// The most negative integer divided by -1 overflows, and x86 traps on it (SIGFPE): such a
// quotient wraps round to itself and the remainder is 0, as NumPy gives.
template <class C>
C NegateWrapping(C a) {
  return static_cast<C>(std::make_unsigned_t<C>(0) - static_cast<std::make_unsigned_t<C>>(a));
}

struct Div {
  template <class C>
  static C F(C a, C b) {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return C(0);
      if constexpr (std::is_signed_v<C>)
        if (b == C(-1)) return NegateWrapping(a);
      return C(a / b);
    } else {
      return a / b;
    }
  }
  template <class C>
  static C DA(C, C b, C) {
    return C(1) / b;
  }
  template <class C>
  static C DB(C a, C b, C) {
    return -a / (b * b);
  }
  static constexpr bool kReadsInputs = true, kLogical = false;
};
// Python's modulo (the result takes the divisor's sign), as MXNet's mod; 0 for a zero divisor.
struct Mod {
  template <class C>
  static C F(C a, C b) {
    if (b == C(0)) return C(0);
    if constexpr (std::is_integral_v<C>) {
      if constexpr (std::is_signed_v<C>)
        if (b == C(-1)) return C(0);
      C r = static_cast<C>(a % b);
      return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<C>(r + b) : r;
    } else {
      C r = std::fmod(a, b);
      return (r != C(0) && ((r < C(0)) != (b < C(0)))) ? r + b : r;
    }
  }
  template <class C>
  static C DA(C, C, C) {
    return C(1);
  }
  template <class C>
  static C DB(C a, C b, C) {
    if constexpr (std::is_integral_v<C>)
      return C(0);
    else
      return b == C(0) ? C(0) : -std::floor(a / b);
  }
  static constexpr bool kReadsInputs = true, kLogical = false;
};
struct Power {
  template <class C>
  static C F(C a, C b) {
    return static_cast<C>(std::pow(a, b));
  }
  template <class C>
  static C DA(C a, C b, C) {
    return static_cast<C>(b * std::pow(a, b - C(1)));
  }
  template <class C>
  static C DB(C a, C, C y) {
    return static_cast<C>(y * std::log(a));
  }
  static constexpr bool kReadsInputs = true, kLogical = false;
};
// A NaN on either side gives NaN, as MXNet 1.9.1 and NumPy's maximum and minimum.
struct Maximum {
  template <class C>
  static C F(C a, C b) {
    return IsNan(a) || a >= b ? a : b;
  }
  template <class C>
  static C DA(C a, C b, C) {
    return a >= b ? C(1) : C(0);
  }
  template <class C>
  static C DB(C a, C b, C) {
    return a >= b ? C(0) : C(1);
  }
  static constexpr bool kReadsInputs = true, kLogical = false;
};
struct Minimum {
  template <class C>
  static C F(C a, C b) {
    return IsNan(a) || a <= b ? a : b;
  }
  template <class C>
  static C DA(C a, C b, C) {
    return a <= b ? C(1) : C(0);
  }
  template <class C>
  static C DB(C a, C b, C) {
    return a <= b ? C(0) : C(1);
  }
  static constexpr bool kReadsInputs = true, kLogical = false;
};
struct Hypot {
  template <class C>
  static C F(C a, C b) {
    return static_cast<C>(std::hypot(a, b));
  }
  template <class C>
  static C DA(C a, C, C y) {
    return y == C(0) ? C(0) : a / y;
  }
  template <class C>
  static C DB(C, C b, C y) {
    return y == C(0) ? C(0) : b / y;
  }
  static constexpr bool kReadsInputs = true, kLogical = false;
};
#define MXPLUG_LOGICAL_FUNCTOR(Name, expr)                       \
  struct Name {                                                  \
    template <class C>                                           \
    static C F(C a, C b) {                                       \
      return (expr) ? C(1) : C(0);                               \
    }                                                            \
    template <class C>                                           \
    static C DA(C, C, C) {                                       \
      return C(0);                                               \
    }                                                            \
    template <class C>                                           \
    static C DB(C, C, C) {                                       \
      return C(0);                                               \
    }                                                            \
    static constexpr bool kReadsInputs = false, kLogical = true; \
  };
MXPLUG_LOGICAL_FUNCTOR(Equal, a == b)
MXPLUG_LOGICAL_FUNCTOR(NotEqual, a != b)
MXPLUG_LOGICAL_FUNCTOR(Greater, a > b)
MXPLUG_LOGICAL_FUNCTOR(GreaterEqual, a >= b)
MXPLUG_LOGICAL_FUNCTOR(Lesser, a < b)
MXPLUG_LOGICAL_FUNCTOR(LesserEqual, a <= b)
MXPLUG_LOGICAL_FUNCTOR(LogicalAnd, a != C(0) && b != C(0))
MXPLUG_LOGICAL_FUNCTOR(LogicalOr, a != C(0) || b != C(0))
MXPLUG_LOGICAL_FUNCTOR(LogicalXor, (a != C(0)) != (b != C(0)))
#undef MXPLUG_LOGICAL_FUNCTOR

// ---- Two arrays, broadcasting (the same-shape ops are the special case sa == sb == 1) ----

template <class Op>
class BinaryKernel : public mxplug::Operator {
 public:
  void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const TShape& os = out[0].shape_;
    mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      using C = ComputeType<T>;
      const T* a = in[0].dptr<T>();
      const T* b = in[1].dptr<T>();
      T* o = out[0].dptr<T>();
      if (in[0].shape_ == os && in[1].shape_ == os) {
        const int64_t n = out[0].Size();
        for (int64_t i = 0; i < n; ++i) Assign(o[i], req[0], T(Op::F(C(a[i]), C(b[i]))));
        return;
      }
      mxplug_tensor::ForEachBroadcast(os, mxplug_tensor::BroadcastStrides(in[0].shape_, os),
                                      mxplug_tensor::BroadcastStrides(in[1].shape_, os),
                                      [&](int64_t io, int64_t ia, int64_t ib) {
                                        Assign(o[io], req[0], T(Op::F(C(a[ia]), C(b[ib]))));
                                      });
    });
  }

  // Each input's gradient sums the output gradient over the axes it was broadcast along.
  void Backward(const mxplug::OpContext&, const std::vector<TBlob>& out_grad,
                const std::vector<TBlob>& in_data, const std::vector<TBlob>& out_data,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& in_grad,
                const std::vector<TBlob>&) override {
    const TShape& os = out_grad[0].shape_;
    mxplug::TypeSwitch(out_grad[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      using C = ComputeType<T>;
      const T* og = out_grad[0].dptr<T>();
      const T* a = Op::kReadsInputs ? in_data[0].dptr<T>() : nullptr;
      const T* b = Op::kReadsInputs ? in_data[1].dptr<T>() : nullptr;
      const T* y = Op::kReadsInputs ? out_data[0].dptr<T>() : nullptr;
      T* ga = req[0] != mxplug::kNullOp ? in_grad[0].dptr<T>() : nullptr;
      T* gb = req[1] != mxplug::kNullOp ? in_grad[1].dptr<T>() : nullptr;
      const bool same = in_grad[0].shape_ == os && in_grad[1].shape_ == os;
      if (same) {
        const int64_t n = out_grad[0].Size();
        for (int64_t i = 0; i < n; ++i) {
          const C g = C(og[i]);  // read first: ga may share og's memory
          const C av = a ? C(a[i]) : C(0), bv = b ? C(b[i]) : C(0), yv = y ? C(y[i]) : C(0);
          if (gb) Assign(gb[i], req[1], T(g * Op::DB(av, bv, yv)));
          if (ga) Assign(ga[i], req[0], T(g * Op::DA(av, bv, yv)));
        }
        return;
      }
      // Accumulate in the compute type, then write with the request.
      std::vector<C> acc_a(ga ? in_grad[0].Size() : 0), acc_b(gb ? in_grad[1].Size() : 0);
      mxplug_tensor::ForEachBroadcast(os, mxplug_tensor::BroadcastStrides(in_grad[0].shape_, os),
                                      mxplug_tensor::BroadcastStrides(in_grad[1].shape_, os),
                                      [&](int64_t io, int64_t ia, int64_t ib) {
                                        const C g = C(og[io]);
                                        const C av = a ? C(a[ia]) : C(0), bv = b ? C(b[ib]) : C(0),
                                                yv = y ? C(y[io]) : C(0);
                                        if (ga) acc_a[ia] += g * Op::DA(av, bv, yv);
                                        if (gb) acc_b[ib] += g * Op::DB(av, bv, yv);
                                      });
      for (size_t i = 0; i < acc_a.size(); ++i) Assign(ga[i], req[0], T(acc_a[i]));
      for (size_t i = 0; i < acc_b.size(); ++i) Assign(gb[i], req[1], T(acc_b[i]));
    });
  }
};

template <class Op, bool kBroadcast>
class BinaryProp : public mxplug_tensor::ElementwiseProp {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {"lhs", "rhs"}; }

  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    TShape& lhs = (*in)[0];
    TShape& rhs = (*in)[1];
    if (kBroadcast) {
      if (lhs.ndim() < 0 || rhs.ndim() < 0) return false;
      (*out)[0] = mxplug_tensor::BroadcastShape(lhs, rhs);
      return lhs.IsKnown() && rhs.IsKnown();
    }
    if (lhs.ndim() >= 0 && rhs.ndim() >= 0 && lhs != rhs)
      throw std::invalid_argument("lhs has shape " + lhs.ToString() + " but rhs has shape " +
                                  rhs.ToString() + "; they must be equal (use broadcast " +
                                  "ops for broadcasting)");
    const TShape& known = lhs.ndim() >= 0 ? lhs : rhs.ndim() >= 0 ? rhs : (*out)[0];
    if (known.ndim() < 0) return false;
    lhs = rhs = (*out)[0] = known;
    return known.IsKnown();
  }

  // Broadcasting outputs differ in shape from the inputs: no in-place there.
  std::vector<std::pair<int, int>> ForwardInplaceOption(
      const std::vector<int>& in_data, const std::vector<int>& out_data) const override {
    if (kBroadcast) return {};
    return mxplug_tensor::ElementwiseProp::ForwardInplaceOption(in_data, out_data);
  }
  std::vector<std::pair<int, int>> BackwardInplaceOption(
      const std::vector<int>& out_grad, const std::vector<int>& in_data,
      const std::vector<int>& out_data, const std::vector<int>& in_grad) const override {
    if (kBroadcast) return {};
    return mxplug_tensor::ElementwiseProp::BackwardInplaceOption(out_grad, in_data, out_data,
                                                                 in_grad);
  }

  std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad,
                                             const std::vector<int>& in_data,
                                             const std::vector<int>& out_data) const override {
    if (!Op::kReadsInputs) return {out_grad[0]};
    return {out_grad[0], in_data[0], in_data[1], out_data[0]};
  }

  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    return new BinaryKernel<Op>();
  }

 private:
  NoParam param_;
};

// ---- An array and a scalar ----

template <class Op, bool kReversed>
class ScalarKernel : public mxplug::Operator {
 public:
  explicit ScalarKernel(const ScalarParam& p) : scalar_(p.scalar) {}

  void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    const double s = scalar_;
    mxplug_tensor::MapForward<ComputeType>(in[0], out[0], req[0], [s](auto x) {
      using C = decltype(x);
      return kReversed ? Op::F(C(s), x) : Op::F(x, C(s));
    });
  }

  void Backward(const mxplug::OpContext&, const std::vector<TBlob>& out_grad,
                const std::vector<TBlob>& in_data, const std::vector<TBlob>& out_data,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& in_grad,
                const std::vector<TBlob>&) override {
    const double s = scalar_;
    mxplug_tensor::MapBackward<ComputeType>(
        out_grad[0], Op::kReadsInputs ? &in_data[0] : nullptr,
        Op::kReadsInputs ? &out_data[0] : nullptr, in_grad[0], req[0], [s](auto x, auto y) {
          using C = decltype(x);
          return kReversed ? Op::DB(C(s), x, y) : Op::DA(x, C(s), y);
        });
  }

 private:
  double scalar_;
};

template <class Op, bool kReversed>
class ScalarProp : public mxplug_tensor::UnaryShapeProp<ScalarParam> {
 public:
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad,
                                             const std::vector<int>& in_data,
                                             const std::vector<int>& out_data) const override {
    if (!Op::kReadsInputs) return {out_grad[0]};
    return {out_grad[0], in_data[0], out_data[0]};
  }
  // Backward reads x and y, so the gradient may not overwrite them; only out_grad in place.
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    return new ScalarKernel<Op, kReversed>(param_);
  }
};

const std::initializer_list<InputDoc> kBinaryInputs{{"lhs", "first input"},
                                                    {"rhs", "second input"}};
const std::initializer_list<InputDoc> kScalarInputs{{"data", "source input"}};

// Registers the same-shape form under each of MXNet's names for it (elemwise_add, _add, _plus,
// _Plus...), broadcast_<name>, _<scalar>_scalar and, when given, the reversed scalar form.
template <class Op>
void RegisterFamily(const std::string& name, const std::string& scalar, const std::string& what,
                    std::initializer_list<const char*> same_shape_names,
                    const char* reversed_scalar = nullptr) {
  using mxplug_tensor::Register;
  // The registration copies names and docs, so temporaries do.
  for (const char* same : same_shape_names)
    Register<BinaryProp<Op, false>>(
        same, (what + " of two arrays of the same shape, element-wise.").c_str(), kBinaryInputs);
  Register<BinaryProp<Op, true>>(
      ("broadcast_" + name).c_str(),
      (what + " of two arrays, element-wise, with NumPy broadcasting.").c_str(), kBinaryInputs);
  Register<ScalarProp<Op, false>>(("_" + scalar + "_scalar").c_str(),
                                  (what + " of an array and a scalar (array first).").c_str(),
                                  kScalarInputs, ScalarParam::Fields());
  if (reversed_scalar)
    Register<ScalarProp<Op, true>>(reversed_scalar,
                                   (what + " of a scalar and an array (scalar first).").c_str(),
                                   kScalarInputs, ScalarParam::Fields());
}

[[maybe_unused]] const bool registered = [] {
  RegisterFamily<Add>("add", "plus", "Sum", {"elemwise_add", "_add", "_plus", "_Plus"});
  RegisterFamily<Sub>("sub", "minus", "Difference", {"elemwise_sub", "_sub", "_minus", "_Minus"},
                      "_rminus_scalar");
  RegisterFamily<Mul>("mul", "mul", "Product", {"elemwise_mul", "_mul", "_Mul"});
  RegisterFamily<Div>("div", "div", "Quotient", {"elemwise_div", "_div", "_Div"}, "_rdiv_scalar");
  RegisterFamily<Mod>("mod", "mod", "Remainder (Python's sign rule)", {"_mod", "_Mod"},
                      "_rmod_scalar");
  RegisterFamily<Power>("power", "power", "Power", {"_power", "_Power"}, "_rpower_scalar");
  RegisterFamily<Maximum>("maximum", "maximum", "Maximum", {"_maximum", "_Maximum"});
  RegisterFamily<Minimum>("minimum", "minimum", "Minimum", {"_minimum", "_Minimum"});
  RegisterFamily<Hypot>("hypot", "hypot", "Hypotenuse sqrt(a^2 + b^2)", {"_hypot", "_Hypot"});
  RegisterFamily<Equal>("equal", "equal", "Equality test (1 or 0)", {"_equal", "_Equal"});
  RegisterFamily<NotEqual>("not_equal", "not_equal", "Inequality test (1 or 0)",
                           {"_not_equal", "_Not_Equal"});
  RegisterFamily<Greater>("greater", "greater", "Greater-than test (1 or 0)",
                          {"_greater", "_Greater"});
  RegisterFamily<GreaterEqual>("greater_equal", "greater_equal", "Greater-or-equal test (1 or 0)",
                               {"_greater_equal", "_Greater_Equal"});
  RegisterFamily<Lesser>("lesser", "lesser", "Less-than test (1 or 0)", {"_lesser", "_Lesser"});
  RegisterFamily<LesserEqual>("lesser_equal", "lesser_equal", "Less-or-equal test (1 or 0)",
                              {"_lesser_equal", "_Lesser_Equal"});
  RegisterFamily<LogicalAnd>("logical_and", "logical_and", "Logical and (1 or 0)",
                             {"_logical_and", "_Logical_And"});
  RegisterFamily<LogicalOr>("logical_or", "logical_or", "Logical or (1 or 0)",
                            {"_logical_or", "_Logical_Or"});
  RegisterFamily<LogicalXor>("logical_xor", "logical_xor", "Logical exclusive or (1 or 0)",
                             {"_logical_xor", "_Logical_Xor"});
  // MXNet's other names for the same operations.
  mxplug_tensor::Register<BinaryProp<Add, true>>("broadcast_plus", "Same as broadcast_add.",
                                                 kBinaryInputs);
  mxplug_tensor::Register<BinaryProp<Sub, true>>("broadcast_minus", "Same as broadcast_sub.",
                                                 kBinaryInputs);
  return true;
}();

}  // namespace
