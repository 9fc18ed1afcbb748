// Definitions of Activation (relu, sigmoid, tanh, softrelu, softsign) and LeakyReLU (leaky, elu,
// selu, gelu, and prelu with a learned slope per channel), MXNet's names and parameters. Each
// activation's value and slope at one element are written once here (MXPLUG_XINLINE) and run by
// the kernels below over a device's element loop; a device may take a fused path first (oneDNN's
// eltwise on the CPU). activation.cc registers the definitions and the CPU kernels,
// devices/cuda/kernels/activation.cu the CUDA kernels.
#ifndef MXPLUG_PLUGINS_NN_ACTIVATION_H_
#define MXPLUG_PLUGINS_NN_ACTIVATION_H_

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "mxplug/plugin.hpp"

namespace mxplug_nn {

using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;

// ---- Activation ----

enum ActType { kRelu, kSigmoid, kTanh, kSoftrelu, kSoftsign };

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

template <class C>
MXPLUG_XINLINE C ActivationValue(int t, C x) {
  switch (t) {
    case kRelu:
      return !(x <= C(0)) ? x : C(0);  // NaN stays NaN, as MXNet and oneDNN
    case kSigmoid:
      return C(1) / (C(1) + std::exp(-x));
    case kTanh:
      return std::tanh(x);
    case kSoftrelu:
      return x > C(20) ? x : std::log1p(std::exp(x));  // softplus, overflow-safe
    default:
      return x / (C(1) + std::fabs(x));
  }
}

// The slope from the output alone, except softsign's: 1 - |y| loses precision as |x| grows, so
// softsign keeps its input (as MXNet does) and the others let the input's memory go.
template <class C>
MXPLUG_XINLINE C ActivationSlope(int t, C x, C y) {
  switch (t) {
    case kRelu:
      return y > C(0) ? C(1) : C(0);
    case kSigmoid:
      return y * (C(1) - y);
    case kTanh:
      return C(1) - y * y;
    case kSoftrelu:
      return -std::expm1(-y);  // y = log(1 + e^x), so 1 - e^-y = sigmoid(x)
    default:
      return C(1) / ((C(1) + std::fabs(x)) * (C(1) + std::fabs(x)));
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
  // Temp space for a device's fused path (oneDNN's reorders on the CPU).
  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override {
    return {mxplug::ResourceRequest::kTempSpace};
  }
  std::vector<mxplug::ResourceRequest> BackwardResource(const std::vector<TShape>&) const override {
    return {mxplug::ResourceRequest::kTempSpace};
  }

 private:
  ActivationParam param_;
};

template <class T>
struct ActivationForward {
  int t;
  const T* x;
  T* y;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    mxplug::StoreAs<C>(y[i], req, ActivationValue(t, static_cast<C>(x[i])));
  }
};

template <class T>
struct ActivationBackward {
  int t;
  const T* og;
  const T* x;  // null unless softsign (the backward keeps the input only there)
  const T* y;
  T* grad;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    // og[i] is read before grad[i], which may share its memory, is written.
    const C g = static_cast<C>(og[i]) *
                ActivationSlope(t, x ? static_cast<C>(x[i]) : C(0), static_cast<C>(y[i]));
    mxplug::StoreAs<C>(grad[i], req, g);
  }
};

/*! \brief A device without a fused activation. */
struct NoFusedActivation {
  static bool Forward(const mxplug::OpContext&, int, const TBlob&, const TBlob&, OpReqType) {
    return false;
  }
  static bool Backward(const mxplug::OpContext&, int, const TBlob&, const TBlob&, const TBlob&,
                       OpReqType) {
    return false;
  }
};

/*!
 * \brief Activation on a device whose element loop is Loop (mxplug::CpuLoop, CudaLoop). Fused
 * is tried first: Forward(ctx, act_type, data, out, req) and Backward(ctx, act_type, out_grad,
 * out, data_grad, req) return false where the device has no fused kernel for the call.
 */
template <class Loop, class Fused = NoFusedActivation>
class ActivationKernel : public mxplug::Operator {
 public:
  ActivationKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    if (Fused::Forward(ctx, p_.act_type, in[0], out[0], req[0])) return;
    mxplug::RealTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(ctx, out[0].Size(),
                ActivationForward<T>{p_.act_type, in[0].dptr<T>(), out[0].dptr<T>(), req[0]});
    });
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                const std::vector<TBlob>& in, const std::vector<TBlob>& out,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    if (Fused::Backward(ctx, p_.act_type, og[0], out[0], ig[0], req[0])) return;
    mxplug::RealTypeSwitch(og[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      const T* x = p_.act_type == kSoftsign ? in[0].dptr<T>() : nullptr;
      Loop::Run(ctx, ig[0].Size(),
                ActivationBackward<T>{p_.act_type, og[0].dptr<T>(), x, out[0].dptr<T>(),
                                      ig[0].dptr<T>(), req[0]});
    });
  }

 private:
  ActivationParam p_;
};

// ---- LeakyReLU ----

enum LeakyType { kLeaky, kElu, kPrelu, kSelu, kGelu };

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

// SELU's constants (Klambauer et al. 2017) and 1/sqrt(2), 1/sqrt(2 pi) for GELU.
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluLambda = 1.0507009873554804934193349852946;
constexpr double kSqrtHalf = 0.70710678118654752440084436210485;
constexpr double kInvSqrt2Pi = 0.39894228040143267793994605993438;

// a is the slope (leaky, elu) or the channel's gamma (prelu).
template <class C>
MXPLUG_XINLINE C LeakyValue(int t, C a, C x) {
  switch (t) {
    case kLeaky:
    case kPrelu:
      return x > C(0) ? x : a * x;
    case kElu:
      return x > C(0) ? x : a * std::expm1(x);
    case kSelu:
      return C(kSeluLambda) * (x > C(0) ? x : C(kSeluAlpha) * std::expm1(x));
    default:
      return C(0.5) * x * (C(1) + std::erf(x * C(kSqrtHalf)));
  }
}

template <class C>
MXPLUG_XINLINE C LeakySlope(int t, C a, C x) {
  switch (t) {
    case kLeaky:
    case kPrelu:
      return x > C(0) ? C(1) : a;
    case kElu:
      return x > C(0) ? C(1) : a * std::exp(x);
    case kSelu:
      return C(kSeluLambda) * (x > C(0) ? C(1) : C(kSeluAlpha) * std::exp(x));
    default:
      return C(0.5) * (C(1) + std::erf(x * C(kSqrtHalf))) +
             x * C(kInvSqrt2Pi) * std::exp(C(-0.5) * x * x);
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
      if (g.ndim() < 0 || (g.ndim() == 1 && g[0] < 0)) g = want;  // unknown, or Gluon's (0,)
      if (g != want && g != TShape{1})
        throw std::invalid_argument("gamma has shape " + g.ToString() + ", expected " +
                                    want.ToString() + " (one slope per channel of data " +
                                    d.ToString() + ") or (1,)");
    }
    (*out)[0] = d;
    return d.IsKnown();
  }

 private:
  LeakyReLUParam param_;
};

/*! \brief Where element i's slope comes from: the fixed slope, or gamma[channel of i] for
 * prelu, the channel being axis 1 of (outer, channels, inner) (gamma of size 1: shared). */
template <class T>
struct LeakySlopeSource {
  float slope;
  const T* gamma;  // null unless prelu
  int64_t channels, inner;
  MXPLUG_XINLINE int64_t Channel(int64_t i) const { return (i / inner) % channels; }
  template <class C>
  MXPLUG_XINLINE C At(int64_t i) const {
    return gamma ? static_cast<C>(gamma[Channel(i)]) : C(slope);
  }
};

template <class T>
struct LeakyForward {
  int t;
  LeakySlopeSource<T> a;
  const T* x;
  T* y;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    mxplug::StoreAs<C>(y[i], req, LeakyValue(t, a.template At<C>(i), static_cast<C>(x[i])));
  }
};

template <class T>
struct LeakyBackward {
  int t;
  LeakySlopeSource<T> a;
  const T* og;
  const T* x;
  T* grad;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    const C x_i = static_cast<C>(x[i]);
    mxplug::StoreAs<C>(grad[i], req,
                       static_cast<C>(og[i]) * LeakySlope(t, a.template At<C>(i), x_i));
  }
};

/*! \brief prelu's gamma gradient, one channel c per call: the sum of og * x where x <= 0 over
 * the channel's elements of (outer, channels, inner), accumulated in double (a channel may hold
 * millions). */
template <class T>
struct PreluGammaGrad {
  const T* og;
  const T* x;
  T* dgamma;
  int64_t outer, channels, inner;
  int req;
  MXPLUG_XINLINE void operator()(int64_t c) const {
    using C = mxplug::ComputeType<T>;
    double sum = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < inner; ++j) {
        const int64_t i = (o * channels + c) * inner + j;
        const double xv = static_cast<double>(static_cast<C>(x[i]));
        if (xv <= 0) sum += static_cast<double>(static_cast<C>(og[i])) * xv;
      }
    mxplug::StoreAs<C>(dgamma[c], req, static_cast<C>(sum));
  }
};

/*!
 * \brief LeakyReLU on a device whose element loop is Loop. prelu's gamma gradient runs a thread
 * per slope (each summing its channel); a device's block reduction would be faster on wide
 * channels.
 */
template <class Loop>
class LeakyReLUKernel : public mxplug::Operator {
 public:
  LeakyReLUKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    mxplug::RealTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(
          ctx, out[0].Size(),
          LeakyForward<T>{p_.act_type, Slopes<T>(in), in[0].dptr<T>(), out[0].dptr<T>(), req[0]});
    });
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                const std::vector<TBlob>& in, const std::vector<TBlob>&,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    mxplug::RealTypeSwitch(og[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      const LeakySlopeSource<T> a = Slopes<T>(in);
      // The gamma gradient first: the data gradient may overwrite the output gradient.
      if (a.gamma && req[1] != mxplug::kNullOp)
        Loop::Run(
            ctx, in[1].Size(),
            PreluGammaGrad<T>{og[0].dptr<T>(), in[0].dptr<T>(), ig[1].dptr<T>(),
                              in[0].Size() / (a.channels * a.inner), a.channels, a.inner, req[1]});
      if (req[0] != mxplug::kNullOp)
        Loop::Run(ctx, ig[0].Size(),
                  LeakyBackward<T>{p_.act_type, a, og[0].dptr<T>(), in[0].dptr<T>(),
                                   ig[0].dptr<T>(), req[0]});
    });
  }

 private:
  template <class T>
  LeakySlopeSource<T> Slopes(const std::vector<TBlob>& in) const {
    const TShape& s = in[0].shape_;
    // Empty axes count as 1 here: there are then no elements to walk.
    const int64_t channels = std::max<int64_t>(s.ndim() > 1 ? s[1] : 1, 1),
                  inner = std::max<int64_t>(s.ndim() > 2 ? s.ProdShape(2, s.ndim()) : 1, 1);
    if (p_.act_type != kPrelu) return {p_.slope, nullptr, channels, inner};
    // A single slope reads gamma[0] everywhere: one channel of all elements.
    if (in[1].Size() == 1) return {p_.slope, in[1].dptr<T>(), 1, std::max<int64_t>(s.Size(), 1)};
    return {p_.slope, in[1].dptr<T>(), channels, inner};
  }

  LeakyReLUParam p_;
};

/*! \brief Registers the kernels of Activation and LeakyReLU on a device whose element loop is
 * Loop and whose fused activation is Fused (their definitions register in activation.cc). */
template <class Loop, class Fused = NoFusedActivation>
void RegisterActivationKernels(DLDeviceType device) {
  mxplug::sdk::RegisterKernel<ActivationKernel<Loop, Fused>>("Activation", device);
  mxplug::sdk::RegisterKernel<LeakyReLUKernel<Loop>>("LeakyReLU", device);
}

}  // namespace mxplug_nn

#endif  // MXPLUG_PLUGINS_NN_ACTIVATION_H_
