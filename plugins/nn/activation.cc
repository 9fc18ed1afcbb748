// Activation (relu, sigmoid, tanh, softrelu, softsign) and LeakyReLU (leaky, elu, selu, gelu,
// prelu with a learned slope per channel), MXNet's parameters.
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "mxplug/plugin.hpp"
#include "onednn/onednn.h"

namespace {

using mxplug::Assign;
using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;

// Same-shape maps over float data: out = f(x); in backward, g * f'(x, y), where x is 0 when the
// op's backward does not keep the input (an absent tensor).
template <class F>
void Map(const TBlob& in, const TBlob& out, OpReqType req, F&& f) {
  if (req == mxplug::kNullOp) return;
  mxplug::RealTypeSwitch(in.type_flag_, "", [&](auto zero) {
    using T = decltype(zero);
    const T* x = in.dptr<T>();
    T* o = out.dptr<T>();
    for (int64_t i = 0; i < out.Size(); ++i) Assign(o[i], req, static_cast<T>(f(double(x[i]))));
  });
}

template <class D>
void MapGrad(const TBlob& og, const TBlob& x, const TBlob& y, const TBlob& g, OpReqType req,
             D&& d) {
  if (req == mxplug::kNullOp) return;
  mxplug::RealTypeSwitch(og.type_flag_, "", [&](auto zero) {
    using T = decltype(zero);
    const T* gp = og.dptr<T>();
    const T* xp = x.dptr<T>();
    const T* yp = y.dptr<T>();
    T* o = g.dptr<T>();
    for (int64_t i = 0; i < g.Size(); ++i)
      Assign(o[i], req, static_cast<T>(double(gp[i]) * d(xp ? double(xp[i]) : 0.0, double(yp[i]))));
  });
}

enum Act { kRelu, kSigmoid, kTanh, kSoftrelu, kSoftsign };

struct ActivationParam : mxplug::Parameter<ActivationParam> {
  int act_type;
  MXPLUG_DECLARE_PARAMETER(ActivationParam) {
    MXPLUG_DECLARE_FIELD(act_type)
        .add_enum("relu", kRelu)
        .add_enum("sigmoid", kSigmoid)
        .add_enum("tanh", kTanh)
        .add_enum("softrelu", kSoftrelu)
        .add_enum("softsign", kSoftsign)
        .describe("Activation function to be applied.");
  }
};
MXPLUG_REGISTER_PARAMETER(ActivationParam);

double ActF(int t, double x) {
  switch (t) {
    case kRelu:
      return !(x <= 0) ? x : 0;  // NaN stays NaN, as MXNet and oneDNN
    case kSigmoid:
      return 1 / (1 + std::exp(-x));
    case kTanh:
      return std::tanh(x);
    case kSoftrelu:
      return x > 20 ? x : std::log1p(std::exp(x));  // softplus, overflow-safe
    default:
      return x / (1 + std::abs(x));
  }
}
// The derivative from the output alone, except softsign's: 1 - |y| loses precision as |x| grows,
// so softsign keeps its input (as MXNet does) and the others let the input's memory go.
double ActD(int t, double x, double y) {
  switch (t) {
    case kRelu:
      return y > 0 ? 1 : 0;
    case kSigmoid:
      return y * (1 - y);
    case kTanh:
      return 1 - y * y;
    case kSoftrelu:
      return -std::expm1(-y);  // y = log(1 + e^x), so 1 - e^-y = sigmoid(x)
    default:
      return 1 / ((1 + std::abs(x)) * (1 + std::abs(x)));
  }
}

class ActivationProp : public mxplug::FirstInPlace<> {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    return mxplug::InferSameShape(in, out);
  }
  // Backward reads the output (and softsign the input too); the output may then overwrite the
  // input, and the input's gradient the output's gradient.
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>& out) const override {
    if (param_.act_type == kSoftsign) return {og[0], in[0], out[0]};
    return {og[0], out[0]};
  }
  std::vector<std::pair<int, int>> ForwardInplaceOption(
      const std::vector<int>& in, const std::vector<int>& out) const override {
    if (param_.act_type == kSoftsign) return {};
    return FirstInPlace::ForwardInplaceOption(in, out);
  }
  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override {
    return mxplug_nn::onednn::Resources();
  }
  std::vector<mxplug::ResourceRequest> BackwardResource(const std::vector<TShape>&) const override {
    return mxplug_nn::onednn::Resources();
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    struct Kernel : mxplug::Operator {
      int t;
      void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
                   const std::vector<TBlob>&) override {
        if (mxplug_nn::onednn::EltwiseForward(ctx, Kind(), in[0], out[0], req[0])) return;
        Map(in[0], out[0], req[0], [&](double x) { return ActF(t, x); });
      }
      void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                    const std::vector<TBlob>& in, const std::vector<TBlob>& out,
                    const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                    const std::vector<TBlob>&) override {
        if (mxplug_nn::onednn::EltwiseBackward(ctx, Kind(), og[0], out[0], ig[0], req[0])) return;
        MapGrad(og[0], in[0], out[0], ig[0], req[0],
                [&](double x, double y) { return ActD(t, x, y); });
      }
      mxplug_nn::onednn::EltwiseKind Kind() const {
        using K = mxplug_nn::onednn::EltwiseKind;
        return t == kRelu      ? K::kRelu
               : t == kSigmoid ? K::kSigmoid
               : t == kTanh    ? K::kTanh
                               : K::kOther;
      }
    };
    auto* k = new Kernel();
    k->t = param_.act_type;
    return k;
  }

 private:
  ActivationParam param_;
};

// ---- LeakyReLU ----

enum Leaky { kLeaky, kElu, kPrelu, kSelu, kGelu };
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluLambda = 1.0507009873554804934193349852946;

struct LeakyReLUParam : mxplug::Parameter<LeakyReLUParam> {
  int act_type;
  float slope, lower_bound, upper_bound;
  MXPLUG_DECLARE_PARAMETER(LeakyReLUParam) {
    MXPLUG_DECLARE_FIELD(act_type)
        .set_default(kLeaky)
        .add_enum("leaky", kLeaky)
        .add_enum("elu", kElu)
        .add_enum("prelu", kPrelu)
        .add_enum("selu", kSelu)
        .add_enum("gelu", kGelu)
        .describe("Activation function to be applied.");
    MXPLUG_DECLARE_FIELD(slope).set_default(0.25f).describe(
        "Init slope for the activation (leaky, elu).");
    MXPLUG_DECLARE_FIELD(lower_bound)
        .set_default(0.125f)
        .describe("Lower bound of random slope (rrelu).");
    MXPLUG_DECLARE_FIELD(upper_bound)
        .set_default(0.334f)
        .describe("Upper bound of random slope (rrelu).");
  }
};
MXPLUG_REGISTER_PARAMETER(LeakyReLUParam);

double LeakyF(int t, double a, double x) {
  switch (t) {
    case kLeaky:
    case kPrelu:
      return x > 0 ? x : a * x;
    case kElu:
      return x > 0 ? x : a * std::expm1(x);
    case kSelu:
      return kSeluLambda * (x > 0 ? x : kSeluAlpha * std::expm1(x));
    default:
      return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  }
}
double LeakyD(int t, double a, double x) {
  switch (t) {
    case kLeaky:
    case kPrelu:
      return x > 0 ? 1 : a;
    case kElu:
      return x > 0 ? 1 : a * std::exp(x);
    case kSelu:
      return kSeluLambda * (x > 0 ? 1 : kSeluAlpha * std::exp(x));
    default: {
      const double pdf = std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI);
      return 0.5 * (1 + std::erf(x / std::sqrt(2.0))) + x * pdf;
    }
  }
}

class LeakyReLUProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override {
    if (param_.act_type == kPrelu) return {"data", "gamma"};
    return {"data"};
  }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& d = (*in)[0];
    if (d.ndim() < 0) return false;
    if (param_.act_type == kPrelu) {
      // One slope per channel (axis 1), or a single slope shared by all.
      TShape& g = (*in)[1];
      const TShape want{d.ndim() > 1 ? d[1] : 1};
      if (g.ndim() < 0) g = want;
      if (g != want && g != TShape{1})
        throw std::invalid_argument("gamma has shape " + g.ToString() + ", expected " +
                                    want.ToString() + " (one slope per channel of data " +
                                    d.ToString() + ") or (1,)");
    }
    (*out)[0] = d;
    return d.IsKnown();
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    struct Kernel : mxplug::Operator {
      LeakyReLUParam p;
      // Calls fn(i, channel) for every element; channel indexes gamma.
      static void Walk(const TShape& s, int64_t gamma_size,
                       const std::function<void(int64_t, int64_t)>& fn) {
        const int64_t c = s.ndim() > 1 ? s[1] : 1,
                      inner = s.ndim() > 2 ? s.ProdShape(2, s.ndim()) : 1;
        for (int64_t i = 0; i < s.Size(); ++i) fn(i, gamma_size == 1 ? 0 : (i / inner) % c);
      }
      void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
                   const std::vector<TBlob>&) override {
        if (req[0] == mxplug::kNullOp) return;
        mxplug::RealTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
          using T = decltype(zero);
          const T* x = in[0].dptr<T>();
          const T* gamma = p.act_type == kPrelu ? in[1].dptr<T>() : nullptr;
          T* o = out[0].dptr<T>();
          Walk(in[0].shape_, gamma ? in[1].Size() : 1, [&](int64_t i, int64_t ch) {
            const double a = gamma ? double(gamma[ch]) : double(p.slope);
            Assign(o[i], req[0], static_cast<T>(LeakyF(p.act_type, a, double(x[i]))));
          });
        });
      }
      void Backward(const mxplug::OpContext&, const std::vector<TBlob>& og,
                    const std::vector<TBlob>& in, const std::vector<TBlob>&,
                    const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                    const std::vector<TBlob>&) override {
        mxplug::RealTypeSwitch(og[0].type_flag_, "", [&](auto zero) {
          using T = decltype(zero);
          const T* g = og[0].dptr<T>();
          const T* x = in[0].dptr<T>();
          const bool prelu = p.act_type == kPrelu;
          const T* gamma = prelu ? in[1].dptr<T>() : nullptr;
          std::vector<double> dgamma(prelu ? in[1].Size() : 0, 0.0);
          T* dx = req[0] != mxplug::kNullOp ? ig[0].dptr<T>() : nullptr;
          Walk(og[0].shape_, prelu ? in[1].Size() : 1, [&](int64_t i, int64_t ch) {
            const double a = prelu ? double(gamma[ch]) : double(p.slope), xv = double(x[i]);
            if (prelu && xv <= 0) dgamma[ch] += double(g[i]) * xv;
            if (dx) Assign(dx[i], req[0], static_cast<T>(double(g[i]) * LeakyD(p.act_type, a, xv)));
          });
          if (prelu && req[1] != mxplug::kNullOp) {
            T* dg = ig[1].dptr<T>();
            for (size_t c = 0; c < dgamma.size(); ++c)
              Assign(dg[c], req[1], static_cast<T>(dgamma[c]));
          }
        });
      }
    };
    auto* k = new Kernel();
    k->p = param_;
    return k;
  }

 private:
  LeakyReLUParam param_;
};

[[maybe_unused]] const bool registered = [] {
  mxplug::RegisterOpProperty<ActivationProp>("Activation")
      .describe(
          "Applies an activation function element-wise: relu, sigmoid, tanh, softrelu (log(1 + "
          "exp(x))) or softsign (x / (1 + |x|)).")
      .add_argument("data", "NDArray-or-Symbol", "The input array.")
      .add_arguments(ActivationParam::Fields())
      .add_kernel(kDLCPU);
  mxplug::RegisterOpProperty<LeakyReLUProp>("LeakyReLU")
      .describe(
          "Leaky rectified linear units and friends: leaky (x or slope * x), elu, selu, gelu, "
          "and prelu (a learned slope per channel, input gamma).")
      .add_argument("data", "NDArray-or-Symbol", "The input array.")
      .add_argument("gamma", "NDArray-or-Symbol", "Slope per channel (prelu only).")
      .add_arguments(LeakyReLUParam::Fields())
      .add_kernel(kDLCPU);
  return true;
}();

}  // namespace
