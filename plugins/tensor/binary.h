// The definitions of binary arithmetic in its three forms (MXNet's names): elemwise_<op> (same
// shapes), broadcast_<op> (NumPy broadcasting), and _<op>_scalar / _r<op>_scalar (an array and a
// scalar parameter, on either side). One functor per operation holds the math for the kernels of
// every device (MXPLUG_XINLINE). binary.cc registers the definitions from ForEachBinaryOp's one
// list; the kernels of each device register from it too (elementwise_kernels.h).
#ifndef MXPLUG_PLUGINS_TENSOR_BINARY_H_
#define MXPLUG_PLUGINS_TENSOR_BINARY_H_

#include <cmath>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "elementwise.h"
#include "mxplug/plugin.hpp"

namespace mxplug_tensor {

// Each functor: F(a, b) the value, DA / DB the partial derivatives given a, b and y = F(a, b).
// kLogical: the result is 0 or 1 and has no gradient.
struct Add {
  template <class C>
  MXPLUG_XINLINE static C F(C a, C b) {
    return a + b;
  }
  template <class C>
  MXPLUG_XINLINE static C DA(C, C, C) {
    return C(1);
  }
  template <class C>
  MXPLUG_XINLINE static C DB(C, C, C) {
    return C(1);
  }
  static constexpr bool kReadsInputs = false, kLogical = false;
};
struct Sub {
  template <class C>
  MXPLUG_XINLINE static C F(C a, C b) {
    return a - b;
  }
  template <class C>
  MXPLUG_XINLINE static C DA(C, C, C) {
    return C(1);
  }
  template <class C>
  MXPLUG_XINLINE static C DB(C, C, C) {
    return C(-1);
  }
  static constexpr bool kReadsInputs = false, kLogical = false;
};
struct Mul {
  template <class C>
  MXPLUG_XINLINE static C F(C a, C b) {
    return a * b;
  }
  template <class C>
  MXPLUG_XINLINE static C DA(C, C b, C) {
    return b;
  }
  template <class C>
  MXPLUG_XINLINE static C DB(C a, C, C) {
    return a;
  }
  static constexpr bool kReadsInputs = true, kLogical = false;
};
// The most negative integer divided by -1 overflows, and x86 traps on it (SIGFPE): such a
// quotient wraps round to itself and the remainder is 0, as NumPy gives.
template <class C>
MXPLUG_XINLINE C NegateWrapping(C a) {
  return static_cast<C>(std::make_unsigned_t<C>(0) - static_cast<std::make_unsigned_t<C>>(a));
}

struct Div {
  template <class C>
  MXPLUG_XINLINE static C F(C a, C b) {
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
  MXPLUG_XINLINE static C DA(C, C b, C) {
    return C(1) / b;
  }
  template <class C>
  MXPLUG_XINLINE static C DB(C a, C b, C) {
    return -a / (b * b);
  }
  static constexpr bool kReadsInputs = true, kLogical = false;
};
// Python's modulo (the result takes the divisor's sign), as MXNet's mod; 0 for a zero divisor.
struct Mod {
  template <class C>
  MXPLUG_XINLINE static C F(C a, C b) {
    if (b == C(0)) return C(0);
    if constexpr (std::is_integral_v<C>) {
      if constexpr (std::is_signed_v<C>)
        if (b == C(-1)) return C(0);
      C r = static_cast<C>(a % b);
      if constexpr (std::is_signed_v<C>)
        return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<C>(r + b) : r;
      else
        return r;
    } else {
      C r = std::fmod(a, b);
      return (r != C(0) && ((r < C(0)) != (b < C(0)))) ? r + b : r;
    }
  }
  template <class C>
  MXPLUG_XINLINE static C DA(C, C, C) {
    return C(1);
  }
  template <class C>
  MXPLUG_XINLINE static C DB(C a, C b, C) {
    if constexpr (std::is_integral_v<C>)
      return C(0);
    else
      return b == C(0) ? C(0) : -std::floor(a / b);
  }
  static constexpr bool kReadsInputs = true, kLogical = false;
};
struct Power {
  template <class C>
  MXPLUG_XINLINE static C F(C a, C b) {
    return static_cast<C>(std::pow(RealOf<C>(a), RealOf<C>(b)));
  }
  template <class C>
  MXPLUG_XINLINE static C DA(C a, C b, C) {
    return static_cast<C>(RealOf<C>(b) * std::pow(RealOf<C>(a), RealOf<C>(b) - 1));
  }
  template <class C>
  MXPLUG_XINLINE static C DB(C a, C, C y) {
    return static_cast<C>(RealOf<C>(y) * std::log(RealOf<C>(a)));
  }
  static constexpr bool kReadsInputs = true, kLogical = false;
};
// A NaN on either side gives NaN, as MXNet 1.9.1 and NumPy's maximum and minimum.
struct Maximum {
  template <class C>
  MXPLUG_XINLINE static C F(C a, C b) {
    return IsNan(a) || a >= b ? a : b;
  }
  template <class C>
  MXPLUG_XINLINE static C DA(C a, C b, C) {
    return a >= b ? C(1) : C(0);
  }
  template <class C>
  MXPLUG_XINLINE static C DB(C a, C b, C) {
    return a >= b ? C(0) : C(1);
  }
  static constexpr bool kReadsInputs = true, kLogical = false;
};
struct Minimum {
  template <class C>
  MXPLUG_XINLINE static C F(C a, C b) {
    return IsNan(a) || a <= b ? a : b;
  }
  template <class C>
  MXPLUG_XINLINE static C DA(C a, C b, C) {
    return a <= b ? C(1) : C(0);
  }
  template <class C>
  MXPLUG_XINLINE static C DB(C a, C b, C) {
    return a <= b ? C(0) : C(1);
  }
  static constexpr bool kReadsInputs = true, kLogical = false;
};
struct Hypot {
  template <class C>
  MXPLUG_XINLINE static C F(C a, C b) {
    return static_cast<C>(std::hypot(RealOf<C>(a), RealOf<C>(b)));
  }
  template <class C>
  MXPLUG_XINLINE static C DA(C a, C, C y) {
    return y == C(0) ? C(0) : a / y;
  }
  template <class C>
  MXPLUG_XINLINE static C DB(C, C b, C y) {
    return y == C(0) ? C(0) : b / y;
  }
  static constexpr bool kReadsInputs = true, kLogical = false;
};
// MXNet's smooth_l1, Fast R-CNN's loss, with the scalar as sigma: 0.5 (sigma x)^2 where
// |x| < 1 / sigma^2, else |x| - 0.5 / sigma^2. Only its array form exists.
struct SmoothL1 {
  template <class C>
  MXPLUG_XINLINE static C F(C x, C sigma) {
    const C s2 = sigma * sigma;
    if (x > C(1) / s2) return x - C(0.5) / s2;
    if (x < C(-1) / s2) return -x - C(0.5) / s2;
    return C(0.5) * x * x * s2;
  }
  template <class C>
  MXPLUG_XINLINE static C DA(C x, C sigma, C) {
    const C s2 = sigma * sigma;
    if (x > C(1) / s2) return C(1);
    if (x < C(-1) / s2) return C(-1);
    return x * s2;
  }
  template <class C>
  MXPLUG_XINLINE static C DB(C, C, C) {
    return C(0);
  }
  static constexpr bool kReadsInputs = true, kLogical = false;
};
#define MXPLUG_LOGICAL_FUNCTOR(Name, expr)                       \
  struct Name {                                                  \
    template <class C>                                           \
    MXPLUG_XINLINE static C F(C a, C b) {                        \
      return (expr) ? C(1) : C(0);                               \
    }                                                            \
    template <class C>                                           \
    MXPLUG_XINLINE static C DA(C, C, C) {                        \
      return C(0);                                               \
    }                                                            \
    template <class C>                                           \
    MXPLUG_XINLINE static C DB(C, C, C) {                        \
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

// ---- Properties ----

template <class Op, bool kBroadcast>
class BinaryProp : public ElementwiseProp {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {"lhs", "rhs"}; }

  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    TShape& lhs = (*in)[0];
    TShape& rhs = (*in)[1];
    if (kBroadcast) {
      if (lhs.ndim() < 0 || rhs.ndim() < 0) return false;
      (*out)[0] = BroadcastShape(lhs, rhs);
      return lhs.IsKnown() && rhs.IsKnown();
    }
    // lhs, rhs and the output are one shape: what each knows of it fills the others (MXNet's
    // legacy inference: lhs (0, 10) and rhs (5, 0) are both (5, 10)).
    TShape known = lhs;
    if (!mxplug::MergeShape(&known, rhs))
      throw std::invalid_argument("lhs has shape " + lhs.ToString() + " but rhs has shape " +
                                  rhs.ToString() + "; they must be equal (use broadcast " +
                                  "ops for broadcasting)");
    if (!mxplug::MergeShape(&known, (*out)[0]))
      throw std::invalid_argument("lhs and rhs have shape " + known.ToString() +
                                  " but the output has shape " + (*out)[0].ToString());
    if (known.ndim() < 0) return false;
    lhs = rhs = (*out)[0] = known;
    return known.IsKnown();
  }

  // Broadcasting outputs differ in shape from the inputs: no in-place there.
  std::vector<std::pair<int, int>> ForwardInplaceOption(
      const std::vector<int>& in_data, const std::vector<int>& out_data) const override {
    if (kBroadcast) return {};
    return ElementwiseProp::ForwardInplaceOption(in_data, out_data);
  }
  std::vector<std::pair<int, int>> BackwardInplaceOption(
      const std::vector<int>& out_grad, const std::vector<int>& in_data,
      const std::vector<int>& out_data, const std::vector<int>& in_grad) const override {
    if (kBroadcast) return {};
    return ElementwiseProp::BackwardInplaceOption(out_grad, in_data, out_data, in_grad);
  }

  std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad,
                                             const std::vector<int>& in_data,
                                             const std::vector<int>& out_data) const override {
    if (!Op::kReadsInputs) return {out_grad[0]};
    return {out_grad[0], in_data[0], in_data[1], out_data[0]};
  }

 private:
  NoParam param_;
};

template <class Op, bool kReversed>
class ScalarProp : public UnaryShapeProp<ScalarParam> {
 public:
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad,
                                             const std::vector<int>& in_data,
                                             const std::vector<int>& out_data) const override {
    if (!Op::kReadsInputs) return {out_grad[0]};
    return {out_grad[0], in_data[0], out_data[0]};
  }
};

// The map (elementwise.h) of an op of an array and a scalar; kReversed: the scalar comes first.
template <class Op, bool kReversed>
struct ScalarMap {
  template <class T>
  using Compute = mxplug::ComputeType<T>;
  static constexpr bool kReadsX = Op::kReadsInputs, kReadsY = Op::kReadsInputs;
  double scalar;
  explicit ScalarMap(const mxplug::KwArgs& kwargs) {
    ScalarParam p;
    p.Init(kwargs);
    scalar = p.scalar;
  }
  template <class C>
  MXPLUG_XINLINE C operator()(C x) const {
    return kReversed ? Op::F(C(scalar), x) : Op::F(x, C(scalar));
  }
  template <class C>
  MXPLUG_XINLINE C Grad(C g, C x, C y) const {
    return g * (kReversed ? Op::DB(C(scalar), x, y) : Op::DA(x, C(scalar), y));
  }
};

// ---- The list ----

inline const std::initializer_list<InputDoc> kBinaryInputs{{"lhs", "first input"},
                                                           {"rhs", "second input"}};
inline const std::initializer_list<InputDoc> kScalarInputs{{"data", "source input"}};

// MXNet's legacy name of a scalar form: not_equal -> _NotEqualScalar (_R...Scalar reversed).
inline std::string LegacyScalarName(const std::string& scalar, bool reversed) {
  std::string camel = reversed ? "_R" : "_";
  bool upper = true;
  for (char c : scalar) {
    if (c == '_') {
      upper = true;
      continue;
    }
    camel += upper ? static_cast<char>(c - 'a' + 'A') : c;
    upper = false;
  }
  return camel + "Scalar";
}

// One operation under each of MXNet's names for it: the same-shape form (elemwise_add, _add,
// _plus, _Plus...), broadcast_<name>, _<scalar>_scalar and, when reversible, _r<scalar>_scalar,
// each scalar form also under its legacy name (_PlusScalar, _RMinusScalar).
template <class Op, class Visitor>
void BinaryFamily(Visitor& visit, const std::string& name, const std::string& scalar,
                  const std::string& what, std::initializer_list<const char*> same_shape_names,
                  bool reversible = false) {
  for (const char* same : same_shape_names)
    visit.template Binary<Op, false>(same,
                                     what + " of two arrays of the same shape, element-wise.");
  visit.template Binary<Op, true>("broadcast_" + name,
                                  what + " of two arrays, element-wise, with NumPy broadcasting.");
  for (const std::string& forward : {"_" + scalar + "_scalar", LegacyScalarName(scalar, false)})
    visit.template Scalar<Op, false>(forward, what + " of an array and a scalar (array first).");
  if (reversible)
    for (const std::string& reversed : {"_r" + scalar + "_scalar", LegacyScalarName(scalar, true)})
      visit.template Scalar<Op, true>(reversed, what + " of a scalar and an array (scalar first).");
}

// Calls visit.template Binary<Functor, kBroadcast>(name, doc) for every op of two arrays and
// visit.template Scalar<Functor, kReversed>(name, doc) for every op of an array and a scalar.
template <class Visitor>
void ForEachBinaryOp(Visitor&& visit) {
  BinaryFamily<Add>(visit, "add", "plus", "Sum", {"elemwise_add", "_add", "_plus", "_Plus"});
  BinaryFamily<Sub>(visit, "sub", "minus", "Difference",
                    {"elemwise_sub", "_sub", "_minus", "_Minus"}, true);
  BinaryFamily<Mul>(visit, "mul", "mul", "Product", {"elemwise_mul", "_mul", "_Mul"});
  BinaryFamily<Div>(visit, "div", "div", "Quotient", {"elemwise_div", "_div", "_Div"}, true);
  BinaryFamily<Mod>(visit, "mod", "mod", "Remainder (Python's sign rule)", {"_mod", "_Mod"}, true);
  BinaryFamily<Power>(visit, "power", "power", "Power", {"_power", "_Power"}, true);
  BinaryFamily<Maximum>(visit, "maximum", "maximum", "Maximum", {"_maximum", "_Maximum"});
  BinaryFamily<Minimum>(visit, "minimum", "minimum", "Minimum", {"_minimum", "_Minimum"});
  BinaryFamily<Hypot>(visit, "hypot", "hypot", "Hypotenuse sqrt(a^2 + b^2)", {"_hypot", "_Hypot"});
  BinaryFamily<Equal>(visit, "equal", "equal", "Equality test (1 or 0)", {"_equal", "_Equal"});
  BinaryFamily<NotEqual>(visit, "not_equal", "not_equal", "Inequality test (1 or 0)",
                         {"_not_equal", "_Not_Equal"});
  BinaryFamily<Greater>(visit, "greater", "greater", "Greater-than test (1 or 0)",
                        {"_greater", "_Greater"});
  BinaryFamily<GreaterEqual>(visit, "greater_equal", "greater_equal",
                             "Greater-or-equal test (1 or 0)",
                             {"_greater_equal", "_Greater_Equal"});
  BinaryFamily<Lesser>(visit, "lesser", "lesser", "Less-than test (1 or 0)",
                       {"_lesser", "_Lesser"});
  BinaryFamily<LesserEqual>(visit, "lesser_equal", "lesser_equal", "Less-or-equal test (1 or 0)",
                            {"_lesser_equal", "_Lesser_Equal"});
  BinaryFamily<LogicalAnd>(visit, "logical_and", "logical_and", "Logical and (1 or 0)",
                           {"_logical_and", "_Logical_And"});
  BinaryFamily<LogicalOr>(visit, "logical_or", "logical_or", "Logical or (1 or 0)",
                          {"_logical_or", "_Logical_Or"});
  BinaryFamily<LogicalXor>(visit, "logical_xor", "logical_xor", "Logical exclusive or (1 or 0)",
                           {"_logical_xor", "_Logical_Xor"});
  visit.template Scalar<SmoothL1, false>(
      "smooth_l1",
      "Smooth L1 loss of an array, element-wise, with scalar as sigma: 0.5 (sigma x)^2 where "
      "|x| < 1 / sigma^2, else |x| - 0.5 / sigma^2.");
  // MXNet's other names for the same operations.
  visit.template Binary<Add, true>("broadcast_plus", "Same as broadcast_add.");
  visit.template Binary<Sub, true>("broadcast_minus", "Same as broadcast_sub.");
}

}  // namespace mxplug_tensor

#endif  // MXPLUG_PLUGINS_TENSOR_BINARY_H_
