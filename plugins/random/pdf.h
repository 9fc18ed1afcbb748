// Definitions of the probability densities (MXNet's _random_pdf_<dist>, random_pdf_<dist>) and
// their kernels, written once over a device's element loop. Each takes samples and the tensors of
// its distributions' parameters, whose shape is the samples' leading one: sample i belongs to
// distribution i / per. The output is the density (or, is_log, its logarithm) at each sample;
// the gradient flows to the sample and to every parameter, each parameter's summed over its
// samples (a loop per parameter element, so no atomics). The Dirichlet's samples are vectors on
// the last axis. pdf.cc registers the definitions and the CPU kernels,
// devices/cuda/kernels/pdf.cu the GPU kernels.
//
// Every density is written as its logarithm and that logarithm's derivatives; the density's own
// derivatives are density * d(log density). Where MXNet's formula gives a density for parameters
// outside the distribution's domain (a uniform with high < low, a normal with sigma < 0), Density
// follows it, so those stay MXNet's numbers too.
#ifndef MXPLUG_PLUGINS_RANDOM_PDF_H_
#define MXPLUG_PLUGINS_RANDOM_PDF_H_

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "mxplug/plugin.hpp"

namespace mxplug_random {

using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;

/*! \brief The digamma function (d/dx log Gamma(x)): the recurrence up to 6, then the
 * asymptotic series; the reflection formula below 0. */
MXPLUG_XINLINE double Digamma(double x) {
  constexpr double kPi = 3.14159265358979323846;
  if (x <= 0 && x == std::floor(x)) return NAN;
  double shift = 0;
  if (x < 0) {  // psi(x) = psi(1 - x) - pi / tan(pi x)
    shift = -kPi / std::tan(kPi * x);
    x = 1 - x;
  }
  for (; x < 6; x += 1) shift -= 1 / x;
  const double r = 1 / (x * x);
  return shift + std::log(x) - 0.5 / x -
         r * (1.0 / 12 - r * (1.0 / 120 - r * (1.0 / 252 - r * (1.0 / 240 - r / 132))));
}

// ---- The scalar distributions: log density at x of parameters p, and its derivatives ----
// LogGrad writes d/dx to *dx and d/dp[k] to dp[k].

struct UniformPdf {
  static constexpr int kParams = 2;
  static std::vector<std::string> Inputs() { return {"low", "high"}; }
  MXPLUG_XINLINE static double Log(double, const double* p) { return -std::log(p[1] - p[0]); }
  MXPLUG_XINLINE static double Density(double, const double* p) { return 1 / (p[1] - p[0]); }
  MXPLUG_XINLINE static void LogGrad(double, const double* p, double* dx, double* dp) {
    const double w = p[1] - p[0];
    *dx = 0, dp[0] = 1 / w, dp[1] = -1 / w;
  }
};

struct NormalPdf {
  static constexpr int kParams = 2;
  static std::vector<std::string> Inputs() { return {"mu", "sigma"}; }
  MXPLUG_XINLINE static double Log(double x, const double* p) {
    const double z = (x - p[0]) / p[1];
    return -0.5 * z * z - std::log(p[1]) - 0.91893853320467274178;  // log sqrt(2 pi)
  }
  MXPLUG_XINLINE static double Density(double x, const double* p) {
    const double z = (x - p[0]) / p[1];
    return std::exp(-0.5 * z * z) / (p[1] * 2.50662827463100050242);  // sqrt(2 pi)
  }
  MXPLUG_XINLINE static void LogGrad(double x, const double* p, double* dx, double* dp) {
    const double d = x - p[0], s2 = p[1] * p[1];
    *dx = -d / s2, dp[0] = d / s2, dp[1] = d * d / (s2 * p[1]) - 1 / p[1];
  }
};

// Gamma of shape alpha and rate beta (MXNet's density takes the rate; its sampler the scale).
struct GammaPdf {
  static constexpr int kParams = 2;
  static std::vector<std::string> Inputs() { return {"alpha", "beta"}; }
  MXPLUG_XINLINE static double Log(double x, const double* p) {
    return p[0] * std::log(p[1]) + (p[0] - 1) * std::log(x) - p[1] * x - std::lgamma(p[0]);
  }
  MXPLUG_XINLINE static double Density(double x, const double* p) { return std::exp(Log(x, p)); }
  MXPLUG_XINLINE static void LogGrad(double x, const double* p, double* dx, double* dp) {
    *dx = (p[0] - 1) / x - p[1];
    dp[0] = std::log(p[1]) + std::log(x) - Digamma(p[0]);
    dp[1] = p[0] / p[1] - x;
  }
};

struct ExponentialPdf {
  static constexpr int kParams = 1;
  static std::vector<std::string> Inputs() { return {"lam"}; }
  MXPLUG_XINLINE static double Log(double x, const double* p) { return std::log(p[0]) - p[0] * x; }
  MXPLUG_XINLINE static double Density(double x, const double* p) {
    return p[0] * std::exp(-p[0] * x);
  }
  MXPLUG_XINLINE static void LogGrad(double x, const double* p, double* dx, double* dp) {
    *dx = -p[0], dp[0] = 1 / p[0] - x;
  }
};

// The discrete ones: MXNet gives the sample no gradient.
struct PoissonPdf {
  static constexpr int kParams = 1;
  static std::vector<std::string> Inputs() { return {"lam"}; }
  MXPLUG_XINLINE static double Log(double x, const double* p) {
    return x * std::log(p[0]) - p[0] - std::lgamma(x + 1);
  }
  MXPLUG_XINLINE static double Density(double x, const double* p) { return std::exp(Log(x, p)); }
  MXPLUG_XINLINE static void LogGrad(double x, const double* p, double* dx, double* dp) {
    *dx = 0, dp[0] = x / p[0] - 1;
  }
};

// The failures x before k successes of probability p.
MXPLUG_XINLINE double NegativeBinomialLog(double x, double k, double p) {
  return std::lgamma(x + k) - std::lgamma(x + 1) - std::lgamma(k) + k * std::log(p) +
         x * std::log(1 - p);
}

struct NegativeBinomialPdf {
  static constexpr int kParams = 2;
  static std::vector<std::string> Inputs() { return {"k", "p"}; }
  MXPLUG_XINLINE static double Log(double x, const double* p) {
    return NegativeBinomialLog(x, p[0], p[1]);
  }
  MXPLUG_XINLINE static double Density(double x, const double* p) { return std::exp(Log(x, p)); }
  MXPLUG_XINLINE static void LogGrad(double x, const double* p, double* dx, double* dp) {
    *dx = 0;
    dp[0] = Digamma(x + p[0]) - Digamma(p[0]) + std::log(p[1]);
    dp[1] = p[0] / p[1] - x / (1 - p[1]);
  }
};

// Mean mu and dispersion alpha: the negative binomial of k = 1 / alpha, p = 1 / (1 + mu alpha).
struct GeneralizedNegativeBinomialPdf {
  static constexpr int kParams = 2;
  static std::vector<std::string> Inputs() { return {"mu", "alpha"}; }
  MXPLUG_XINLINE static double Log(double x, const double* p) {
    return NegativeBinomialLog(x, 1 / p[1], 1 / (1 + p[0] * p[1]));
  }
  MXPLUG_XINLINE static double Density(double x, const double* p) { return std::exp(Log(x, p)); }
  MXPLUG_XINLINE static void LogGrad(double x, const double* p, double* dx, double* dp) {
    const double mu = p[0], a = p[1], k = 1 / a, q = 1 / (1 + mu * a);
    const double dk = Digamma(x + k) - Digamma(k) + std::log(q), dq = k / q - x / (1 - q);
    *dx = 0;
    dp[0] = dq * -a * q * q;
    dp[1] = dk * -k * k + dq * -mu * q * q;
  }
};

// ---- Kernels ----

/*! \brief Where sample i's distribution is: per samples a distribution, params[k][i / per]. */
template <class T>
struct PdfArgs {
  const T* x;
  const T* params[2];
  int64_t per;
  bool is_log;
  MXPLUG_XINLINE void ParamsOf(int64_t i, double* p, int n) const {
    using C = mxplug::ComputeType<T>;
    for (int k = 0; k < n; ++k) p[k] = static_cast<double>(static_cast<C>(params[k][i / per]));
  }
  MXPLUG_XINLINE double X(int64_t i) const {
    return static_cast<double>(static_cast<mxplug::ComputeType<T>>(x[i]));
  }
};

template <class Pdf, class T>
struct PdfForward {
  PdfArgs<T> a;
  T* out;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    double p[2];
    a.ParamsOf(i, p, Pdf::kParams);
    const double x = a.X(i);
    using C = mxplug::ComputeType<T>;
    mxplug::StoreAs<C>(out[i], req, static_cast<C>(a.is_log ? Pdf::Log(x, p) : Pdf::Density(x, p)));
  }
};

/*! \brief d out[i] / d input, times the output's gradient g: the log density's derivative, times
 * the density unless is_log. */
template <class Pdf, class T>
MXPLUG_XINLINE void PdfGradAt(const PdfArgs<T>& a, int64_t i, double g, double* dx, double* dp) {
  double p[2];
  a.ParamsOf(i, p, Pdf::kParams);
  const double x = a.X(i);
  Pdf::LogGrad(x, p, dx, dp);
  const double scale = a.is_log ? g : g * Pdf::Density(x, p);
  *dx *= scale;
  for (int k = 0; k < Pdf::kParams; ++k) dp[k] *= scale;
}

// The sample's gradient, one element per sample.
template <class Pdf, class T>
struct PdfSampleGrad {
  PdfArgs<T> a;
  const T* og;
  T* grad;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    double dx, dp[2];
    PdfGradAt<Pdf>(a, i, static_cast<double>(static_cast<C>(og[i])), &dx, dp);
    mxplug::StoreAs<C>(grad[i], req, static_cast<C>(dx));
  }
};

// Parameter k's gradient, one element per distribution, summed over its samples.
template <class Pdf, class T>
struct PdfParamGrad {
  PdfArgs<T> a;
  const T* og;
  T* grad;
  int k, req;
  MXPLUG_XINLINE void operator()(int64_t j) const {
    using C = mxplug::ComputeType<T>;
    double sum = 0;
    for (int64_t i = j * a.per; i < (j + 1) * a.per; ++i) {
      double dx, dp[2];
      PdfGradAt<Pdf>(a, i, static_cast<double>(static_cast<C>(og[i])), &dx, dp);
      sum += dp[k];
    }
    mxplug::StoreAs<C>(grad[j], req, static_cast<C>(sum));
  }
};

// ---- The Dirichlet: samples are vectors of K on the last axis, as are the alphas ----

template <class T>
struct DirichletArgs {
  const T* x;
  const T* alpha;
  int64_t per, K;  // per sample vectors an alpha vector
  bool is_log;
  MXPLUG_XINLINE double V(const T* v, int64_t i) const {
    return static_cast<double>(static_cast<mxplug::ComputeType<T>>(v[i]));
  }
  // Sample vector s's log density; its alpha vector's sum in *sum.
  MXPLUG_XINLINE double Log(int64_t s, double* sum) const {
    const T* a = alpha + (s / per) * K;
    double total = 0, log = 0;
    for (int64_t c = 0; c < K; ++c) {
      total += V(a, c);
      log += (V(a, c) - 1) * std::log(V(x, s * K + c)) - std::lgamma(V(a, c));
    }
    *sum = total;
    return log + std::lgamma(total);
  }
  // What d(log density) is multiplied by: the output's gradient, times the density unless is_log.
  MXPLUG_XINLINE double Scale(int64_t s, double g) const {
    double sum;
    const double log = Log(s, &sum);
    return is_log ? g : g * std::exp(log);
  }
};

template <class T>
struct DirichletForward {
  DirichletArgs<T> a;
  T* out;
  int req;
  MXPLUG_XINLINE void operator()(int64_t s) const {
    using C = mxplug::ComputeType<T>;
    double sum;
    const double log = a.Log(s, &sum);
    mxplug::StoreAs<C>(out[s], req, static_cast<C>(a.is_log ? log : std::exp(log)));
  }
};

// Component e of the samples: d/dx = (alpha - 1) / x.
template <class T>
struct DirichletSampleGrad {
  DirichletArgs<T> a;
  const T* og;
  T* grad;
  int req;
  MXPLUG_XINLINE void operator()(int64_t e) const {
    using C = mxplug::ComputeType<T>;
    const int64_t s = e / a.K, c = e % a.K;
    const double scale = a.Scale(s, a.V(og, s));
    const double alpha = a.V(a.alpha, (s / a.per) * a.K + c);
    mxplug::StoreAs<C>(grad[e], req, static_cast<C>(scale * (alpha - 1) / a.V(a.x, e)));
  }
};

// Component e of the alphas: d/dalpha_c = digamma(sum) - digamma(alpha_c) + log x_c, summed
// over the alpha vector's samples.
template <class T>
struct DirichletAlphaGrad {
  DirichletArgs<T> a;
  const T* og;
  T* grad;
  int req;
  MXPLUG_XINLINE void operator()(int64_t e) const {
    using C = mxplug::ComputeType<T>;
    const int64_t j = e / a.K, c = e % a.K;
    double total = 0;
    for (int64_t m = 0; m < a.K; ++m) total += a.V(a.alpha, j * a.K + m);
    const double common = Digamma(total) - Digamma(a.V(a.alpha, e));
    double sum = 0;
    for (int64_t s = j * a.per; s < (j + 1) * a.per; ++s)
      sum += a.Scale(s, a.V(og, s)) * (common + std::log(a.V(a.x, s * a.K + c)));
    mxplug::StoreAs<C>(grad[e], req, static_cast<C>(sum));
  }
};

// ---- Properties ----

// The Dirichlet's parameter, for PdfProp.
struct DirichletInputs {
  static std::vector<std::string> Inputs() { return {"alpha"}; }
};

struct PdfParam : mxplug::Parameter<PdfParam> {
  bool is_log;
  MXPLUG_DECLARE_PARAMETER(PdfParam) {
    MXPLUG_DECLARE_FIELD(is_log).set_default(false).describe(
        "If set, compute the density of the log-probability instead of the probability.");
  }
};

/*! \brief _random_pdf_<dist>(sample, parameters...): the parameters share one shape, the
 * samples' leading one (for the Dirichlet, with the vectors' axis last on both); the output has
 * the samples' shape (the Dirichlet's, without the last axis); one dtype for all (the default
 * InferType). */
template <class Pdf, bool kVector = false>
class PdfProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override {
    std::vector<std::string> names{"sample"};
    for (const std::string& p : Pdf::Inputs()) names.push_back(p);
    return names;
  }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& x = (*in)[0];
    TShape params;
    for (size_t k = 1; k < in->size(); ++k)
      if (!mxplug::MergeShape(&params, (*in)[k]))
        throw std::invalid_argument("the parameters must have one shape, got " +
                                    (*in)[1].ToString() + " and " + (*in)[k].ToString());
    if (x.ndim() < 0 || params.ndim() < 0) return false;
    const int lead = params.ndim() - (kVector ? 1 : 0);  // the distributions' own axes
    bool fits =
        lead >= 0 && x.ndim() >= params.ndim() && (!kVector || x[x.ndim() - 1] == params[lead]);
    for (int d = 0; fits && d < lead; ++d) fits = x[d] == params[d];
    if (!fits)
      throw std::invalid_argument("the parameters' shape " + params.ToString() +
                                  " must be the leading part of the " + "sample's " + x.ToString() +
                                  (kVector ? " (and both end in the vectors' length)" : ""));
    for (size_t k = 1; k < in->size(); ++k) (*in)[k] = params;
    (*out)[0] = kVector ? TShape(std::vector<int64_t>(x.begin(), x.end() - 1)) : x;
    return x.IsKnown() && params.IsKnown();
  }

 private:
  PdfParam param_;
};

// The kernels' element functions of each kind of density: Args(in, is_log) locates the inputs;
// Forward, SampleGrad and ParamGrad(k) make the functors of the output's elements, the samples'
// and parameter k's.
template <class Pdf>
struct ScalarDensity {
  static constexpr int kParams = Pdf::kParams;
  template <class T>
  static PdfArgs<T> Args(const std::vector<TBlob>& in, bool is_log) {
    PdfArgs<T> a{in[0].dptr<T>(), {in[1].dptr<T>(), nullptr}, in[0].Size() / in[1].Size(), is_log};
    if (kParams > 1) a.params[1] = in[2].dptr<T>();
    return a;
  }
  template <class T>
  static PdfForward<Pdf, T> Forward(const PdfArgs<T>& a, T* out, int req) {
    return {a, out, req};
  }
  template <class T>
  static PdfSampleGrad<Pdf, T> SampleGrad(const PdfArgs<T>& a, const T* og, T* grad, int req) {
    return {a, og, grad, req};
  }
  template <class T>
  static PdfParamGrad<Pdf, T> ParamGrad(const PdfArgs<T>& a, const T* og, T* grad, int k, int req) {
    return {a, og, grad, k, req};
  }
};

struct DirichletDensity {
  static constexpr int kParams = 1;
  template <class T>
  static DirichletArgs<T> Args(const std::vector<TBlob>& in, bool is_log) {
    const int64_t K = in[1].shape_[in[1].ndim() - 1];
    return {in[0].dptr<T>(), in[1].dptr<T>(), in[0].Size() / in[1].Size(), K, is_log};
  }
  template <class T>
  static DirichletForward<T> Forward(const DirichletArgs<T>& a, T* out, int req) {
    return {a, out, req};
  }
  template <class T>
  static DirichletSampleGrad<T> SampleGrad(const DirichletArgs<T>& a, const T* og, T* grad,
                                           int req) {
    return {a, og, grad, req};
  }
  template <class T>
  static DirichletAlphaGrad<T> ParamGrad(const DirichletArgs<T>& a, const T* og, T* grad, int,
                                         int req) {
    return {a, og, grad, req};
  }
};

/*! \brief _random_pdf_<dist> on a device whose element loop is Loop; Density is ScalarDensity
 * or DirichletDensity. */
template <class Density, class Loop>
class PdfKernel : public mxplug::Operator {
 public:
  PdfKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { param_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp || in[0].Size() == 0) return;
    mxplug::FloatTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      const auto a = Density::template Args<T>(in, param_.is_log);
      Loop::Run(ctx, out[0].Size(), Density::Forward(a, out[0].dptr<T>(), req[0]));
    });
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                const std::vector<TBlob>& in, const std::vector<TBlob>&,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    if (in[0].Size() == 0) return;
    mxplug::FloatTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      const auto a = Density::template Args<T>(in, param_.is_log);
      const T* g = og[0].dptr<T>();
      if (req[0] != mxplug::kNullOp)
        Loop::Run(ctx, in[0].Size(), Density::SampleGrad(a, g, ig[0].dptr<T>(), req[0]));
      for (int k = 0; k < Density::kParams; ++k)
        if (req[k + 1] != mxplug::kNullOp)
          Loop::Run(ctx, in[k + 1].Size(),
                    Density::ParamGrad(a, g, ig[k + 1].dptr<T>(), k, req[k + 1]));
    });
  }

 private:
  PdfParam param_;
};

/*! \brief Calls visit.template Scalar<Pdf>(name, doc) for every density of a scalar distribution
 * and visit.Dirichlet(name, doc), under both of MXNet's names. */
template <class Visitor>
void ForEachPdf(Visitor&& visit) {
  for (const char* prefix : {"_random_pdf_", "random_pdf_"}) {
    const std::string p = prefix;
    visit.template Scalar<UniformPdf>(p + "uniform",
                                      "The density of uniform distributions on [low, high).");
    visit.template Scalar<NormalPdf>(p + "normal",
                                     "The density of normal distributions N(mu, sigma^2).");
    visit.template Scalar<GammaPdf>(
        p + "gamma", "The density of gamma distributions of shape alpha and rate beta.");
    visit.template Scalar<ExponentialPdf>(p + "exponential",
                                          "The density of exponential distributions of rate lam.");
    visit.template Scalar<PoissonPdf>(p + "poisson",
                                      "The density of Poisson distributions of rate lam.");
    visit.template Scalar<NegativeBinomialPdf>(
        p + "negative_binomial",
        "The density of negative binomial distributions: failures before k successes of "
        "probability p.");
    visit.template Scalar<GeneralizedNegativeBinomialPdf>(
        p + "generalized_negative_binomial",
        "The density of negative binomial distributions of mean mu and dispersion alpha.");
    visit.Dirichlet(p + "dirichlet",
                    "The density of Dirichlet distributions of concentrations alpha (vectors on "
                    "the last axis).");
  }
}

/*! \brief Registers the densities' kernels on a device whose element loop is Loop. */
template <class Loop>
struct PdfKernels {
  DLDeviceType device;
  template <class Pdf>
  void Scalar(const std::string& name, const char*) const {
    mxplug::sdk::RegisterKernel<PdfKernel<ScalarDensity<Pdf>, Loop>>(name.c_str(), device);
  }
  void Dirichlet(const std::string& name, const char*) const {
    mxplug::sdk::RegisterKernel<PdfKernel<DirichletDensity, Loop>>(name.c_str(), device);
  }
};

}  // namespace mxplug_random

#endif  // MXPLUG_PLUGINS_RANDOM_PDF_H_
