// The definitions of the unary elementwise ops (MXNet's names): each op's math as a functor
// with its derivative, written once for the kernels of every device (MXPLUG_XINLINE), the
// maps that kernels run (UnaryMap, ClipMap, HardSigmoidMap), the properties, and the list that
// registers them. unary.cc registers the definitions; the kernels of each device register from the
// same list (elementwise_kernels.h).
#ifndef MXPLUG_PLUGINS_TENSOR_UNARY_H_
#define MXPLUG_PLUGINS_TENSOR_UNARY_H_

#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "elementwise.h"
#include "mxplug/plugin.hpp"

namespace mxplug_tensor {

// F(x) the value; D(x, y) = dy/dx given x and y = F(x). kUses says what D reads.
enum Uses { kNone = 0, kX = 1, kY = 2 };

template <class C>
MXPLUG_XINLINE C Sign(C x) {
  return x > C(0) ? C(1) : x < C(0) ? C(-1) : C(0);
}

/*! \brief The inverse error function: Giles' single-precision approximation ("Approximating the
 * erfinv function", 2010), then two Newton steps on erf, which bring it to the type's precision.
 * +-1 give +-inf, |x| > 1 and NaN give NaN. */
template <class C>
MXPLUG_XINLINE C ErfInv(C x) {
  const double y = static_cast<double>(x);
  if (!(y >= -1.0 && y <= 1.0)) return static_cast<C>(NAN);
  if (y == 1.0 || y == -1.0) return static_cast<C>(y * INFINITY);
  double w = -std::log((1.0 - y) * (1.0 + y)), p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = std::sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  double r = p * y;
  for (int step = 0; step < 2; ++step)  // erf'(r) = 2 / sqrt(pi) exp(-r^2)
    r -= (std::erf(r) - y) / (1.12837916709551257390 * std::exp(-r * r));
  return static_cast<C>(r);
}

#define MXPLUG_UNARY(Name, uses, f, d)    \
  struct Name {                           \
    template <class C>                    \
    MXPLUG_XINLINE static C F(C x) {      \
      return static_cast<C>(f);           \
    }                                     \
    template <class C>                    \
    MXPLUG_XINLINE static C D(C x, C y) { \
      (void)x, (void)y;                   \
      return static_cast<C>(d);           \
    }                                     \
    static constexpr int kUses = uses;    \
  };
MXPLUG_UNARY(Negative, kNone, -x, -1)
MXPLUG_UNARY(Abs, kX, x < C(0) ? C(-x) : x, Sign(x))
MXPLUG_UNARY(SignOp, kNone, Sign(x), 0)
MXPLUG_UNARY(Exp, kY, std::exp(x), y)
MXPLUG_UNARY(Log, kX, std::log(x), C(1) / x)
MXPLUG_UNARY(Log2, kX, std::log2(x), C(1) / (x * C(0.69314718055994530942)))
MXPLUG_UNARY(Log10, kX, std::log10(x), C(1) / (x * C(2.30258509299404568402)))
MXPLUG_UNARY(Log1p, kX, std::log1p(x), C(1) / (C(1) + x))
MXPLUG_UNARY(Expm1, kY, std::expm1(x), y + C(1))
MXPLUG_UNARY(Sqrt, kY, std::sqrt(x), C(0.5) / y)
MXPLUG_UNARY(Rsqrt, kX, C(1) / std::sqrt(x), C(-0.5) / (x * std::sqrt(x)))
MXPLUG_UNARY(Cbrt, kY, std::cbrt(x), C(1) / (C(3) * y * y))
MXPLUG_UNARY(Square, kX, x* x, C(2) * x)
MXPLUG_UNARY(Reciprocal, kX, C(1) / x, C(-1) / (x * x))
MXPLUG_UNARY(Sin, kX, std::sin(x), std::cos(x))
MXPLUG_UNARY(Cos, kX, std::cos(x), -std::sin(x))
MXPLUG_UNARY(Tan, kY, std::tan(x), C(1) + y * y)
MXPLUG_UNARY(Arcsin, kX, std::asin(x), C(1) / std::sqrt(C(1) - x * x))
MXPLUG_UNARY(Arccos, kX, std::acos(x), C(-1) / std::sqrt(C(1) - x * x))
MXPLUG_UNARY(Arctan, kX, std::atan(x), C(1) / (C(1) + x * x))
MXPLUG_UNARY(Arcsinh, kX, std::asinh(x), C(1) / std::sqrt(x * x + C(1)))
MXPLUG_UNARY(Arccosh, kX, std::acosh(x), C(1) / std::sqrt(x * x - C(1)))
MXPLUG_UNARY(Arctanh, kX, std::atanh(x), C(1) / (C(1) - x * x))
MXPLUG_UNARY(Degrees, kNone, x* C(57.2957795130823208768), C(57.2957795130823208768))
MXPLUG_UNARY(Radians, kNone, x* C(0.01745329251994329577), C(0.01745329251994329577))
MXPLUG_UNARY(Rcbrt, kX, C(1) / std::cbrt(x), C(-1) / (C(3) * x * std::cbrt(x)))
MXPLUG_UNARY(LogicalNot, kNone, x == C(0) ? C(1) : C(0), 0)
MXPLUG_UNARY(Sinh, kX, std::sinh(x), std::cosh(x))
MXPLUG_UNARY(Cosh, kX, std::cosh(x), std::sinh(x))
MXPLUG_UNARY(Tanh, kY, std::tanh(x), C(1) - y * y)
MXPLUG_UNARY(Sigmoid, kY, C(1) / (C(1) + std::exp(-x)), y*(C(1) - y))
MXPLUG_UNARY(Relu, kX, !(x <= C(0)) ? x : C(0),  // NaN stays NaN, as MXNet
             x > C(0) ? C(1) : C(0))
MXPLUG_UNARY(Softsign, kX, x / (C(1) + (x < C(0) ? C(-x) : x)),
             C(1) / ((C(1) + (x < C(0) ? C(-x) : x)) * (C(1) + (x < C(0) ? C(-x) : x))))
MXPLUG_UNARY(Round, kNone, std::round(x), 0)
MXPLUG_UNARY(Rint, kNone, std::nearbyint(x), 0)
MXPLUG_UNARY(Floor, kNone, std::floor(x), 0)
MXPLUG_UNARY(Ceil, kNone, std::ceil(x), 0)
MXPLUG_UNARY(Trunc, kNone, std::trunc(x), 0)
MXPLUG_UNARY(Identity, kNone, x, 1)
MXPLUG_UNARY(Erf, kX, std::erf(x), C(1.12837916709551257390) * std::exp(-x * x))
MXPLUG_UNARY(Erfinv, kY, ErfInv(x), C(0.88622692545275801365) * std::exp(y * y))
MXPLUG_UNARY(Gamma, kX, std::tgamma(x), 0)
MXPLUG_UNARY(Gammaln, kX, std::lgamma(x), 0)
#undef MXPLUG_UNARY

// Integer arrays go through the same functors in double where the math needs it.
template <class T>
using MathType = std::conditional_t<std::is_integral_v<T>, double, mxplug::ComputeType<T>>;

template <class Op, bool kNoGrad = false>
class UnaryProp : public UnaryShapeProp<NoParam> {
 public:
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad,
                                             const std::vector<int>& in_data,
                                             const std::vector<int>& out_data) const override {
    // Without a gradient (BlockGrad, stop_gradient) backward writes zeros and reads nothing, so
    // an output of such an op needs no head gradient, as in MXNet.
    if (kNoGrad) return {};
    std::vector<int> deps{out_grad[0]};
    if (Op::kUses & kX) deps.push_back(in_data[0]);
    if (Op::kUses & kY) deps.push_back(out_data[0]);
    return deps;
  }
  // Backward may overwrite the output gradient only when it reads neither x nor y there.
  std::vector<std::pair<int, int>> BackwardInplaceOption(
      const std::vector<int>& out_grad, const std::vector<int>&, const std::vector<int>&,
      const std::vector<int>& in_grad) const override {
    if (kNoGrad) return {};
    return {{out_grad[0], in_grad[0]}};
  }
};

// The map (elementwise.h) of a unary op: Op's value, and its derivative times g.
template <class Op, bool kNoGrad>
struct UnaryMap {
  template <class T>
  using Compute = MathType<T>;
  static constexpr bool kReadsGrad = !kNoGrad;  // kNoGrad: the gradient is 0, read from nothing
  static constexpr bool kReadsX = !kNoGrad && (Op::kUses & kX);
  static constexpr bool kReadsY = !kNoGrad && (Op::kUses & kY);
  explicit UnaryMap(const mxplug::KwArgs&) {}
  template <class C>
  MXPLUG_XINLINE C operator()(C x) const {
    return Op::F(x);
  }
  template <class C>
  MXPLUG_XINLINE C Grad(C g, C x, C y) const {
    return kNoGrad ? C(0) : g * Op::D(x, y);
  }
};

// clip(data, a_min, a_max); the gradient passes where a_min < x < a_max.
struct ClipParam : mxplug::Parameter<ClipParam> {
  float a_min, a_max;
  MXPLUG_DECLARE_PARAMETER(ClipParam) {
    MXPLUG_DECLARE_FIELD(a_min).describe("Minimum value");
    MXPLUG_DECLARE_FIELD(a_max).describe("Maximum value");
  }
};

// hard_sigmoid(data, alpha, beta) = clip(alpha x + beta, 0, 1); the gradient is alpha where
// 0 < alpha x + beta < 1.
struct HardSigmoidParam : mxplug::Parameter<HardSigmoidParam> {
  float alpha, beta;
  MXPLUG_DECLARE_PARAMETER(HardSigmoidParam) {
    MXPLUG_DECLARE_FIELD(alpha).set_default(0.2f).describe("slope of hard sigmoid");
    MXPLUG_DECLARE_FIELD(beta).set_default(0.5f).describe("bias of hard sigmoid.");
  }
};

// A map with two float parameters (clip, hard_sigmoid): read from the kwargs when its kernel is
// made, and carried to the device by value (the parameter struct itself is not device data).
template <class Param, float Param::*kFirst, float Param::*kSecond>
struct TwoFloatMap {
  template <class T>
  using Compute = MathType<T>;
  static constexpr bool kReadsX = true, kReadsY = false;
  float first, second;
  explicit TwoFloatMap(const mxplug::KwArgs& kwargs) {
    Param p;
    p.Init(kwargs);
    first = p.*kFirst, second = p.*kSecond;
  }
};

// clip's map: the gradient is selected, not multiplied, so a NaN or infinite output gradient
// outside (a_min, a_max) still gives 0, as MXNet's clip.
struct ClipMap : TwoFloatMap<ClipParam, &ClipParam::a_min, &ClipParam::a_max> {
  using TwoFloatMap::TwoFloatMap;
  template <class C>
  MXPLUG_XINLINE C operator()(C x) const {                           // first: a_min, second: a_max
    return x < C(first) ? C(first) : x > C(second) ? C(second) : x;  // NaN stays NaN
  }
  template <class C>
  MXPLUG_XINLINE C Grad(C g, C x, C) const {
    return x > C(first) && x < C(second) ? g : C(0);
  }
};

struct HardSigmoidMap
    : TwoFloatMap<HardSigmoidParam, &HardSigmoidParam::alpha, &HardSigmoidParam::beta> {
  using TwoFloatMap::TwoFloatMap;
  template <class C>
  MXPLUG_XINLINE C operator()(C x) const {  // first: alpha, second: beta
    const C z = C(first) * x + C(second);
    return z < C(0) ? C(0) : z > C(1) ? C(1) : z;
  }
  template <class C>
  MXPLUG_XINLINE C Grad(C g, C x, C) const {
    const C z = C(first) * x + C(second);
    return z > C(0) && z < C(1) ? g * C(first) : C(0);
  }
};

// The maps with parameters (clip, hard_sigmoid): their gradient reads the input.
template <class Param>
class ParamMapProp : public UnaryShapeProp<Param> {
 public:
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad,
                                             const std::vector<int>& in_data,
                                             const std::vector<int>&) const override {
    return {out_grad[0], in_data[0]};
  }
};

class ClipProp : public ParamMapProp<ClipParam> {
 public:
  void Init(const mxplug::KwArgs& kwargs) override {
    param_.Init(kwargs);
    if (param_.a_min > param_.a_max)
      throw std::invalid_argument("a_min (" + std::to_string(param_.a_min) +
                                  ") must not exceed a_max (" + std::to_string(param_.a_max) + ")");
  }
};

// Calls visit.template Unary<Functor, kNoGrad>(name, doc) for every unary op but clip: the one
// list that the definitions and each device's kernels register from.
template <class Visitor>
void ForEachUnaryOp(Visitor&& visit) {
  visit.template Unary<Negative, false>("negative", "Numerical negative, element-wise.");
  visit.template Unary<Abs, false>("abs", "Absolute value, element-wise.");
  visit.template Unary<SignOp, false>("sign", "Sign (-1, 0 or 1), element-wise.");
  visit.template Unary<Exp, false>("exp", "Exponential, element-wise.");
  visit.template Unary<Log, false>("log", "Natural logarithm, element-wise.");
  visit.template Unary<Log2, false>("log2", "Base-2 logarithm, element-wise.");
  visit.template Unary<Log10, false>("log10", "Base-10 logarithm, element-wise.");
  visit.template Unary<Log1p, false>("log1p", "log(1 + x), element-wise.");
  visit.template Unary<Expm1, false>("expm1", "exp(x) - 1, element-wise.");
  visit.template Unary<Sqrt, false>("sqrt", "Square root, element-wise.");
  visit.template Unary<Rsqrt, false>("rsqrt", "Inverse square root, element-wise.");
  visit.template Unary<Cbrt, false>("cbrt", "Cube root, element-wise.");
  visit.template Unary<Square, false>("square", "Square, element-wise.");
  visit.template Unary<Reciprocal, false>("reciprocal", "Reciprocal 1/x, element-wise.");
  visit.template Unary<Sin, false>("sin", "Sine, element-wise.");
  visit.template Unary<Cos, false>("cos", "Cosine, element-wise.");
  visit.template Unary<Tan, false>("tan", "Tangent, element-wise.");
  visit.template Unary<Arcsin, false>("arcsin", "Inverse sine, element-wise.");
  visit.template Unary<Arccos, false>("arccos", "Inverse cosine, element-wise.");
  visit.template Unary<Arctan, false>("arctan", "Inverse tangent, element-wise.");
  visit.template Unary<Arcsinh, false>("arcsinh", "Inverse hyperbolic sine, element-wise.");
  visit.template Unary<Arccosh, false>("arccosh", "Inverse hyperbolic cosine, element-wise.");
  visit.template Unary<Arctanh, false>("arctanh", "Inverse hyperbolic tangent, element-wise.");
  visit.template Unary<Degrees, false>("degrees", "Radians to degrees, element-wise.");
  visit.template Unary<Radians, false>("radians", "Degrees to radians, element-wise.");
  visit.template Unary<Rcbrt, false>("rcbrt", "Inverse cube root 1/cbrt(x), element-wise.");
  visit.template Unary<LogicalNot, false>("logical_not",
                                          "1 where x is 0, else 0 (x's dtype), element-wise.");
  visit.template Unary<Sinh, false>("sinh", "Hyperbolic sine, element-wise.");
  visit.template Unary<Cosh, false>("cosh", "Hyperbolic cosine, element-wise.");
  visit.template Unary<Tanh, false>("tanh", "Hyperbolic tangent, element-wise.");
  visit.template Unary<Sigmoid, false>("sigmoid",
                                       "Logistic sigmoid 1 / (1 + exp(-x)), element-wise.");
  visit.template Unary<Relu, false>("relu", "Rectified linear unit max(x, 0), element-wise.");
  visit.template Unary<Softsign, false>("softsign", "x / (1 + |x|), element-wise.");
  visit.template Unary<Erf, false>("erf", "Gauss error function, element-wise.");
  visit.template Unary<Erfinv, false>("erfinv", "Inverse Gauss error function, element-wise.");
  visit.template Unary<Round, false>("round", "Round half away from zero, element-wise.");
  visit.template Unary<Rint, false>("rint", "Round half to even, element-wise.");
  visit.template Unary<Floor, false>("floor", "Floor, element-wise.");
  visit.template Unary<Ceil, false>("ceil", "Ceiling, element-wise.");
  visit.template Unary<Trunc, false>("trunc", "Truncation toward zero, element-wise.");
  visit.template Unary<Trunc, false>("fix", "Round toward zero, element-wise.");
  visit.template Unary<Gamma, true>("gamma", "Gamma function, element-wise (no gradient).");
  visit.template Unary<Gammaln, true>(
      "gammaln", "Log of the absolute gamma function, element-wise (no gradient).");
  visit.template Unary<Identity, false>("_copy", "Returns a copy of the input.");
  visit.template Unary<Identity, false>("identity", "Returns a copy of the input.");
  visit.template Unary<Identity, false>("_copyto", "Copies the input (into the array out).");
  visit.template Unary<Identity, true>("BlockGrad",
                                       "Passes the input through; stops the gradient.");
  visit.template Unary<Identity, true>("stop_gradient", "Same as BlockGrad.");
}

}  // namespace mxplug_tensor

#endif  // MXPLUG_PLUGINS_TENSOR_UNARY_H_
