// Unary elementwise math (MXNet's names), each a functor with its derivative, plus clip.
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "elementwise.h"
#include "mxplug/plugin.hpp"

namespace {

using mxplug::Assign;
using mxplug::ComputeType;
using mxplug::OpReqType;
using mxplug_tensor::NoParam;
using mxplug_tensor::TBlob;
using mxplug_tensor::TShape;

// F(x) the value; D(x, y) = dy/dx given x and y = F(x). kUses says what D reads.
enum Uses { kNone = 0, kX = 1, kY = 2 };

template <class C> C Sign(C x) { return x > C(0) ? C(1) : x < C(0) ? C(-1) : C(0); }

#define MXPLUG_UNARY(Name, uses, f, d)                                   \
  struct Name {                                                          \
    template <class C> static C F(C x) { return static_cast<C>(f); }     \
    template <class C> static C D(C x, C y) { (void)x, (void)y; return static_cast<C>(d); } \
    static constexpr int kUses = uses;                                   \
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
MXPLUG_UNARY(Square, kX, x * x, C(2) * x)
MXPLUG_UNARY(Reciprocal, kX, C(1) / x, C(-1) / (x * x))
MXPLUG_UNARY(Sin, kX, std::sin(x), std::cos(x))
MXPLUG_UNARY(Cos, kX, std::cos(x), -std::sin(x))
MXPLUG_UNARY(Tan, kY, std::tan(x), C(1) + y * y)
MXPLUG_UNARY(Arcsin, kX, std::asin(x), C(1) / std::sqrt(C(1) - x * x))
MXPLUG_UNARY(Arccos, kX, std::acos(x), C(-1) / std::sqrt(C(1) - x * x))
MXPLUG_UNARY(Arctan, kX, std::atan(x), C(1) / (C(1) + x * x))
MXPLUG_UNARY(Sinh, kX, std::sinh(x), std::cosh(x))
MXPLUG_UNARY(Cosh, kX, std::cosh(x), std::sinh(x))
MXPLUG_UNARY(Tanh, kY, std::tanh(x), C(1) - y * y)
MXPLUG_UNARY(Sigmoid, kY, C(1) / (C(1) + std::exp(-x)), y * (C(1) - y))
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
MXPLUG_UNARY(Gamma, kX, std::tgamma(x), 0)
MXPLUG_UNARY(Gammaln, kX, std::lgamma(x), 0)
#undef MXPLUG_UNARY

// Integer arrays go through the same functors in double where the math needs it.
template <class T>
using MathType = std::conditional_t<std::is_integral_v<T>, double, ComputeType<T>>;

template <class Op, bool kNoGrad>
class UnaryKernel : public mxplug::Operator {
 public:
  void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    mxplug_tensor::MapForward<MathType>(in[0], out[0], req[0], [](auto x) { return Op::F(x); });
  }

  void Backward(const mxplug::OpContext&, const std::vector<TBlob>& out_grad,
                const std::vector<TBlob>& in_data, const std::vector<TBlob>& out_data,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& in_grad,
                const std::vector<TBlob>&) override {
    mxplug_tensor::MapBackward<MathType>(
        out_grad[0], (Op::kUses & kX) ? &in_data[0] : nullptr, (Op::kUses & kY) ? &out_data[0] : nullptr,
        in_grad[0], req[0], [](auto x, auto y) {
          using C = decltype(x);
          return kNoGrad ? C(0) : Op::D(x, y);
        });
  }
};

template <class Op, bool kNoGrad = false>
class UnaryProp : public mxplug_tensor::UnaryShapeProp<NoParam> {
 public:
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad,
                                             const std::vector<int>& in_data,
                                             const std::vector<int>& out_data) const override {
    std::vector<int> deps{out_grad[0]};
    if (!kNoGrad && (Op::kUses & kX)) deps.push_back(in_data[0]);
    if (!kNoGrad && (Op::kUses & kY)) deps.push_back(out_data[0]);
    return deps;
  }
  // Backward may overwrite the output gradient only when it reads neither x nor y there.
  std::vector<std::pair<int, int>> BackwardInplaceOption(
      const std::vector<int>& out_grad, const std::vector<int>&, const std::vector<int>&,
      const std::vector<int>& in_grad) const override {
    return {{out_grad[0], in_grad[0]}};
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    return new UnaryKernel<Op, kNoGrad>();
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
MXPLUG_REGISTER_PARAMETER(ClipParam);

class ClipKernel : public mxplug::Operator {
 public:
  explicit ClipKernel(const ClipParam& p) : p_(p) {}
  void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      using C = MathType<T>;
      const T* x = in[0].dptr<T>();
      T* o = out[0].dptr<T>();
      for (int64_t i = 0; i < out[0].Size(); ++i)
        Assign(o[i], req[0], static_cast<T>(std::min(std::max(C(x[i]), C(p_.a_min)), C(p_.a_max))));
    });
  }
  void Backward(const mxplug::OpContext&, const std::vector<TBlob>& out_grad,
                const std::vector<TBlob>& in_data, const std::vector<TBlob>&,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& in_grad,
                const std::vector<TBlob>&) override {
    mxplug::TypeSwitch(out_grad[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      using C = MathType<T>;
      const T* og = out_grad[0].dptr<T>();
      const T* x = in_data[0].dptr<T>();
      T* g = in_grad[0].dptr<T>();
      for (int64_t i = 0; i < out_grad[0].Size(); ++i) {
        const bool inside = C(x[i]) > C(p_.a_min) && C(x[i]) < C(p_.a_max);
        Assign(g[i], req[0], inside ? og[i] : T(0));
      }
    });
  }

 private:
  ClipParam p_;
};

class ClipProp : public mxplug_tensor::UnaryShapeProp<ClipParam> {
 public:
  void Init(const mxplug::KwArgs& kwargs) override {
    param_.Init(kwargs);
    if (param_.a_min > param_.a_max)
      throw std::invalid_argument("a_min (" + std::to_string(param_.a_min) +
                                  ") must not exceed a_max (" + std::to_string(param_.a_max) + ")");
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad,
                                             const std::vector<int>& in_data,
                                             const std::vector<int>&) const override {
    return {out_grad[0], in_data[0]};
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override { return new ClipKernel(param_); }
};

const std::initializer_list<mxplug_tensor::InputDoc> kData{{"data", "The input array."}};

template <class Op, bool kNoGrad = false>
void Unary(const char* name, const char* doc) {
  mxplug_tensor::Register<UnaryProp<Op, kNoGrad>>(name, doc, kData);
}

[[maybe_unused]] const bool registered = [] {
  Unary<Negative>("negative", "Numerical negative, element-wise.");
  Unary<Abs>("abs", "Absolute value, element-wise.");
  Unary<SignOp>("sign", "Sign (-1, 0 or 1), element-wise.");
  Unary<Exp>("exp", "Exponential, element-wise.");
  Unary<Log>("log", "Natural logarithm, element-wise.");
  Unary<Log2>("log2", "Base-2 logarithm, element-wise.");
  Unary<Log10>("log10", "Base-10 logarithm, element-wise.");
  Unary<Log1p>("log1p", "log(1 + x), element-wise.");
  Unary<Expm1>("expm1", "exp(x) - 1, element-wise.");
  Unary<Sqrt>("sqrt", "Square root, element-wise.");
  Unary<Rsqrt>("rsqrt", "Inverse square root, element-wise.");
  Unary<Cbrt>("cbrt", "Cube root, element-wise.");
  Unary<Square>("square", "Square, element-wise.");
  Unary<Reciprocal>("reciprocal", "Reciprocal 1/x, element-wise.");
  Unary<Sin>("sin", "Sine, element-wise.");
  Unary<Cos>("cos", "Cosine, element-wise.");
  Unary<Tan>("tan", "Tangent, element-wise.");
  Unary<Arcsin>("arcsin", "Inverse sine, element-wise.");
  Unary<Arccos>("arccos", "Inverse cosine, element-wise.");
  Unary<Arctan>("arctan", "Inverse tangent, element-wise.");
  Unary<Sinh>("sinh", "Hyperbolic sine, element-wise.");
  Unary<Cosh>("cosh", "Hyperbolic cosine, element-wise.");
  Unary<Tanh>("tanh", "Hyperbolic tangent, element-wise.");
  Unary<Sigmoid>("sigmoid", "Logistic sigmoid 1 / (1 + exp(-x)), element-wise.");
  Unary<Relu>("relu", "Rectified linear unit max(x, 0), element-wise.");
  Unary<Softsign>("softsign", "x / (1 + |x|), element-wise.");
  Unary<Erf>("erf", "Gauss error function, element-wise.");
  Unary<Round>("round", "Round half away from zero, element-wise.");
  Unary<Rint>("rint", "Round half to even, element-wise.");
  Unary<Floor>("floor", "Floor, element-wise.");
  Unary<Ceil>("ceil", "Ceiling, element-wise.");
  Unary<Trunc>("trunc", "Truncation toward zero, element-wise.");
  Unary<Trunc>("fix", "Round toward zero, element-wise.");
  Unary<Gamma, true>("gamma", "Gamma function, element-wise (no gradient).");
  Unary<Gammaln, true>("gammaln", "Log of the absolute gamma function, element-wise (no gradient).");
  Unary<Identity>("_copy", "Returns a copy of the input.");
  Unary<Identity>("identity", "Returns a copy of the input.");
  Unary<Identity, true>("BlockGrad", "Passes the input through; stops the gradient.");
  Unary<Identity, true>("stop_gradient", "Same as BlockGrad.");
  mxplug_tensor::Register<ClipProp>("clip", "Clips values to [a_min, a_max], element-wise.", kData,
                                    ClipParam::Fields());
  return true;
}();

}  // namespace
