// The normalizations over runs of one sample (MXNet's names and parameters): LayerNorm (over an
// axis), InstanceNorm (over each channel's spatial extent), GroupNorm (over groups of channels)
// and L2Normalization (by the L2 norm of an instance, a channel or a position). The definitions,
// registered by normalization.cc, and the computation as per-run and per-element functors every
// device runs; devices/cuda/kernels/normalization.cu registers the GPU kernels.
//
// All four see the data as (O, P, I): P is the axis the parameters (gamma, beta) index, and the
// statistics are taken over P (LayerNorm, L2Normalization by channel) or over I (the others), for
// each of the other positions: a run. Sums accumulate in double.
#ifndef MXPLUG_PLUGINS_NN_NORMALIZATION_H_
#define MXPLUG_PLUGINS_NN_NORMALIZATION_H_

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "mxplug/plugin.hpp"

namespace mxplug_nn {

using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;

enum NormKind { kLayerNorm, kInstanceNorm, kGroupNorm, kL2Norm };
enum L2Mode { kL2Channel, kL2Instance, kL2Spatial };

struct LayerNormParam : mxplug::Parameter<LayerNormParam> {
  int axis;
  float eps;
  bool output_mean_var;
  MXPLUG_DECLARE_PARAMETER(LayerNormParam) {
    MXPLUG_DECLARE_FIELD(axis).set_default(-1).describe("The axis to normalize over.");
    MXPLUG_DECLARE_FIELD(eps).set_default(1e-5f).describe("Added to the variance.");
    MXPLUG_DECLARE_FIELD(output_mean_var)
        .set_default(false)
        .describe("Also output the mean and the standard deviation.");
  }
};

struct InstanceNormParam : mxplug::Parameter<InstanceNormParam> {
  float eps;
  MXPLUG_DECLARE_PARAMETER(InstanceNormParam) {
    MXPLUG_DECLARE_FIELD(eps).set_default(1e-3f).describe("Added to the variance.");
  }
};

struct GroupNormParam : mxplug::Parameter<GroupNormParam> {
  int num_groups;
  float eps;
  bool output_mean_var;
  MXPLUG_DECLARE_PARAMETER(GroupNormParam) {
    MXPLUG_DECLARE_FIELD(num_groups).set_default(1).describe("Number of groups of channels.");
    MXPLUG_DECLARE_FIELD(eps).set_default(1e-5f).describe("Added to the variance.");
    MXPLUG_DECLARE_FIELD(output_mean_var)
        .set_default(false)
        .describe("Also output the mean and the standard deviation.");
  }
};

struct L2NormalizationParam : mxplug::Parameter<L2NormalizationParam> {
  float eps;
  int mode;
  MXPLUG_DECLARE_PARAMETER(L2NormalizationParam) {
    MXPLUG_DECLARE_FIELD(eps).set_default(1e-10f).describe("Added to the sum of squares.");
    MXPLUG_DECLARE_FIELD(mode)
        .set_default(kL2Instance)
        .add_enum("channel", kL2Channel)
        .add_enum("instance", kL2Instance)
        .add_enum("spatial", kL2Spatial)
        .describe("Normalize each instance, each position across channels, or each channel.");
  }
};

/*! \brief A call's parameters, whichever op. */
struct NormSpec {
  int axis = -1;           // LayerNorm
  int groups = 1;          // GroupNorm
  int mode = kL2Instance;  // L2Normalization
  double eps = 0;
  bool output_mean_var = false;

  template <int kKind>
  static NormSpec Parse(const mxplug::KwArgs& kwargs) {
    NormSpec s;
    if constexpr (kKind == kLayerNorm) {
      LayerNormParam p;
      p.Init(kwargs);
      s.axis = p.axis, s.eps = p.eps, s.output_mean_var = p.output_mean_var;
    } else if constexpr (kKind == kInstanceNorm) {
      InstanceNormParam p;
      p.Init(kwargs);
      s.eps = p.eps;
    } else if constexpr (kKind == kGroupNorm) {
      GroupNormParam p;
      p.Init(kwargs);
      if (p.num_groups < 1)
        throw std::invalid_argument("num_groups is " + std::to_string(p.num_groups) +
                                    "; expected at least 1");
      s.groups = p.num_groups, s.eps = p.eps, s.output_mean_var = p.output_mean_var;
    } else {
      L2NormalizationParam p;
      p.Init(kwargs);
      s.eps = p.eps, s.mode = p.mode;
    }
    return s;
  }
};

/*! \brief The data as (O, P, I), statistics over P or over I. Passed to kernels by value. */
struct NormGeometry {
  int64_t o = 1, p = 1, i = 1;
  bool over_p = false;

  MXPLUG_XINLINE int64_t Runs() const { return over_p ? o * i : o * p; }
  MXPLUG_XINLINE int64_t RunLength() const { return over_p ? p : i; }
  /*! \brief Element j of run r. */
  MXPLUG_XINLINE int64_t Element(int64_t r, int64_t j) const {
    return over_p ? ((r / i) * p + j) * i + r % i : r * i + j;
  }
  MXPLUG_XINLINE int64_t RunOf(int64_t e) const {
    return over_p ? (e / (p * i)) * i + e % i : e / i;
  }
  MXPLUG_XINLINE int64_t ParamOf(int64_t e) const { return (e / i) % p; }
};

/*! \brief The geometry of `kKind` over data of shape d, checking what the op requires of it.
 * \throws std::invalid_argument naming the shape. */
template <int kKind>
NormGeometry MakeNormGeometry(const NormSpec& s, const TShape& d) {
  NormGeometry g;
  if (kKind == kLayerNorm) {
    const int axis = mxplug::NormalizeAxis(s.axis, d.ndim());
    g.o = d.ProdShape(0, axis), g.p = d[axis], g.i = d.ProdShape(axis + 1, d.ndim());
    g.over_p = true;
    return g;
  }
  if (d.ndim() < (kKind == kL2Norm ? 2 : 3))
    throw std::invalid_argument("data has shape " + d.ToString() + "; expected (batch, channel" +
                                (kKind == kL2Norm ? ", ...)" : ", spatial...)"));
  const int64_t channels = d[1], spatial = d.ProdShape(2, d.ndim());
  g.o = d[0];
  if (kKind == kInstanceNorm) {
    g.p = channels, g.i = spatial;
  } else if (kKind == kGroupNorm) {
    if (channels % s.groups != 0)
      throw std::invalid_argument("data has " + std::to_string(channels) +
                                  " channels, which num_groups " + std::to_string(s.groups) +
                                  " does not divide");
    g.p = s.groups, g.i = channels / s.groups * spatial;
  } else if (s.mode == kL2Instance) {
    g.p = 1, g.i = channels * spatial;
  } else {
    g.p = channels, g.i = spatial, g.over_p = s.mode == kL2Channel;
  }
  return g;
}

/*! \brief Per run r: mean[r] and std[r] = sqrt(var + eps) (the biased variance), or for L2
 * normalization norm[r] = sqrt(sum of squares + eps) (mean unused). */
template <bool kL2, class T>
struct RunMoments {
  NormGeometry g;
  const T* x;
  T *mean, *std_dev;
  double eps;
  MXPLUG_XINLINE void operator()(int64_t r) const {
    const int64_t n = g.RunLength();
    double sum = 0, squares = 0;
    for (int64_t j = 0; j < n; ++j) {
      const double v = static_cast<double>(static_cast<mxplug::ComputeType<T>>(x[g.Element(r, j)]));
      sum += v, squares += v * v;
    }
    if (kL2) {
      std_dev[r] = static_cast<T>(sqrt(squares + eps));
      return;
    }
    const double m = sum / static_cast<double>(n);
    double var = 0;
    for (int64_t j = 0; j < n; ++j) {
      const double v =
          static_cast<double>(static_cast<mxplug::ComputeType<T>>(x[g.Element(r, j)])) - m;
      var += v * v;
    }
    mean[r] = static_cast<T>(m);
    std_dev[r] = static_cast<T>(sqrt(var / static_cast<double>(n) + eps));
  }
};

/*! \brief y = (x - mean) / std * gamma + beta, or x / norm. */
template <bool kL2, class T>
struct NormalizeElements {
  NormGeometry g;
  const T *x, *mean, *std_dev, *gamma, *beta;  // gamma, beta: null without them
  T* y;
  int req;
  MXPLUG_XINLINE void operator()(int64_t e) const {
    using C = mxplug::ComputeType<T>;
    const int64_t r = g.RunOf(e);
    C v = static_cast<C>(x[e]);
    if (!kL2) v -= static_cast<C>(mean[r]);
    v /= static_cast<C>(std_dev[r]);
    if (gamma) {
      const int64_t q = g.ParamOf(e);
      v = v * static_cast<C>(gamma[q]) + static_cast<C>(beta[q]);
    }
    mxplug::StoreAs<C>(y[e], req, v);
  }
};

/*! \brief Per run: the sums backward needs, of dy' = dy * gamma (or dy) and of dy' * xhat (or of
 * dy * x for L2), into sums[2 r] and sums[2 r + 1]. */
template <bool kL2, class T>
struct RunGradientSums {
  NormGeometry g;
  const T *x, *dy, *mean, *std_dev, *gamma;
  double* sums;
  MXPLUG_XINLINE void operator()(int64_t r) const {
    using C = mxplug::ComputeType<T>;
    const int64_t n = g.RunLength();
    const double m = kL2 ? 0.0 : static_cast<double>(static_cast<C>(mean[r]));
    const double s = static_cast<double>(static_cast<C>(std_dev[r]));
    double a = 0, b = 0;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t e = g.Element(r, j);
      double d = static_cast<double>(static_cast<C>(dy[e]));
      if (gamma) d *= static_cast<double>(static_cast<C>(gamma[g.ParamOf(e)]));
      const double v = static_cast<double>(static_cast<C>(x[e]));
      a += d;
      b += kL2 ? d * v : d * (v - m) / s;
    }
    sums[2 * r] = a, sums[2 * r + 1] = b;
  }
};

/*! \brief dx = (dy' - mean(dy') - xhat mean(dy' xhat)) / std; for L2, dx = dy / norm - x
 * sum(dy x) / norm^3. */
template <bool kL2, class T>
struct NormInputGradient {
  NormGeometry g;
  const T *x, *dy, *mean, *std_dev, *gamma;
  const double* sums;
  T* dx;
  int req;
  MXPLUG_XINLINE void operator()(int64_t e) const {
    using C = mxplug::ComputeType<T>;
    const int64_t r = g.RunOf(e);
    const double n = static_cast<double>(g.RunLength());
    const double s = static_cast<double>(static_cast<C>(std_dev[r]));
    const double v = static_cast<double>(static_cast<C>(x[e]));
    double d = static_cast<double>(static_cast<C>(dy[e]));
    if (gamma) d *= static_cast<double>(static_cast<C>(gamma[g.ParamOf(e)]));
    double grad;
    if (kL2) {
      grad = d / s - v * sums[2 * r + 1] / (s * s * s);
    } else {
      const double xhat = (v - static_cast<double>(static_cast<C>(mean[r]))) / s;
      grad = (d - sums[2 * r] / n - xhat * sums[2 * r + 1] / n) / s;
    }
    mxplug::StoreAs<C>(dx[e], req, static_cast<C>(grad));
  }
};

/*! \brief Per parameter q: dgamma[q] = sum of dy xhat and dbeta[q] = sum of dy over the elements
 * it scales (every (a, q, b)). */
template <class T>
struct ParamGradients {
  NormGeometry g;
  const T *x, *dy, *mean, *std_dev;
  T *dgamma, *dbeta;
  int gamma_req, beta_req;
  MXPLUG_XINLINE void operator()(int64_t q) const {
    using C = mxplug::ComputeType<T>;
    double sg = 0, sb = 0;
    for (int64_t a = 0; a < g.o; ++a)
      for (int64_t b = 0; b < g.i; ++b) {
        const int64_t e = (a * g.p + q) * g.i + b, r = g.RunOf(e);
        const double d = static_cast<double>(static_cast<C>(dy[e]));
        const double xhat = (static_cast<double>(static_cast<C>(x[e])) -
                             static_cast<double>(static_cast<C>(mean[r]))) /
                            static_cast<double>(static_cast<C>(std_dev[r]));
        sg += d * xhat, sb += d;
      }
    mxplug::StoreAs<C>(dgamma[q], gamma_req, static_cast<C>(sg));
    mxplug::StoreAs<C>(dbeta[q], beta_req, static_cast<C>(sb));
  }
};

template <int kKind>
class NormProp : public mxplug::OperatorProperty {
 public:
  static constexpr bool kAffine = kKind != kL2Norm;

  void Init(const mxplug::KwArgs& kwargs) override { spec_ = NormSpec::Parse<kKind>(kwargs); }
  std::vector<std::string> ListArguments() const override {
    if (kAffine) return {"data", "gamma", "beta"};
    return {"data"};
  }
  std::vector<std::string> ListOutputs() const override {
    if (kKind == kL2Norm) return {"output", "norm"};
    return {"output", "mean", "std"};
  }
  int NumVisibleOutputs() const override { return spec_.output_mean_var ? 3 : 1; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& d = (*in)[0];
    if (d.ndim() < 0 || !d.IsKnown()) return false;
    const NormGeometry g = MakeNormGeometry<kKind>(spec_, d);
    if (kAffine) {
      const TShape param{g.p};
      mxplug::InferParameterShape(&(*in)[1], param, "gamma", d);
      mxplug::InferParameterShape(&(*in)[2], param, "beta", d);
    }
    (*out)[0] = d;
    // The statistics: the data's shape with the normalized axes of size 1 (LayerNorm), or one
    // per run.
    std::vector<int64_t> stats;
    if (kKind == kLayerNorm) {
      stats.assign(d.begin(), d.end());
      stats[mxplug::NormalizeAxis(spec_.axis, d.ndim())] = 1;
    } else if (kKind == kGroupNorm) {
      stats = {d[0], spec_.groups};
    } else {
      stats = {g.Runs()};
    }
    for (size_t k = 1; k < out->size(); ++k) (*out)[k] = TShape(stats);
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>& out) const override {
    std::vector<int> deps{og[0], in[0], out[1]};
    if (kAffine) deps.insert(deps.end(), {in[1], out[2]});
    return deps;
  }
  std::vector<mxplug::ResourceRequest> BackwardResource(const std::vector<TShape>&) const override {
    return {mxplug::ResourceRequest::kTempSpace};
  }

 private:
  NormSpec spec_;
};

/*! \brief LayerNorm, InstanceNorm, GroupNorm or L2Normalization on a device whose element loop is
 * Loop: a thread per run for the statistics, per element for the output and its gradient, per
 * parameter for gamma's and beta's. */
template <int kKind, class Loop>
class NormKernel : public mxplug::Operator {
 public:
  static constexpr bool kL2 = kKind == kL2Norm;

  NormKernel(const mxplug::KwArgs& kwargs, mxplug::Context)
      : spec_(NormSpec::Parse<kKind>(kwargs)) {}

  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    const NormGeometry g = MakeNormGeometry<kKind>(spec_, in[0].shape_);
    if (in[0].Size() == 0) return;
    mxplug::RealTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      // The statistics go to the outputs that hold them (the mean unused for L2).
      T* mean = kL2 ? nullptr : out[1].dptr<T>();
      T* std_dev = kL2 ? out[1].dptr<T>() : out[2].dptr<T>();
      Loop::Run(ctx, g.Runs(), RunMoments<kL2, T>{g, in[0].dptr<T>(), mean, std_dev, spec_.eps});
      Loop::Run(ctx, static_cast<int64_t>(in[0].Size()),
                NormalizeElements<kL2, T>{
                    g, in[0].dptr<T>(), mean, std_dev, kL2 ? nullptr : in[1].dptr<T>(),
                    kL2 ? nullptr : in[2].dptr<T>(), out[0].dptr<T>(), req[0]});
    });
  }

  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                const std::vector<TBlob>& in, const std::vector<TBlob>& out,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    const NormGeometry g = MakeNormGeometry<kKind>(spec_, in[0].shape_);
    if (in[0].Size() == 0) {
      for (size_t k = 1; k < ig.size(); ++k) Loop::Zero(ctx, ig[k], req[k]);
      return;
    }
    mxplug::RealTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      const T* mean = kL2 ? nullptr : out[1].dptr<T>();
      const T* std_dev = kL2 ? out[1].dptr<T>() : out[2].dptr<T>();
      const T* gamma = kL2 ? nullptr : in[1].dptr<T>();
      if (req[0] != mxplug::kNullOp) {
        double* sums = ctx.resource(mxplug::ResourceRequest::kTempSpace)
                           .template get_space_typed<double>(static_cast<size_t>(2 * g.Runs()));
        Loop::Run(ctx, g.Runs(),
                  RunGradientSums<kL2, T>{g, in[0].dptr<T>(), og[0].dptr<T>(), mean, std_dev, gamma,
                                          sums});
        Loop::Run(ctx, static_cast<int64_t>(in[0].Size()),
                  NormInputGradient<kL2, T>{g, in[0].dptr<T>(), og[0].dptr<T>(), mean, std_dev,
                                            gamma, sums, ig[0].dptr<T>(), req[0]});
      }
      if constexpr (!kL2) {
        Loop::Run(ctx, g.p,
                  ParamGradients<T>{g, in[0].dptr<T>(), og[0].dptr<T>(), mean, std_dev,
                                    ig[1].dptr<T>(), ig[2].dptr<T>(), req[1], req[2]});
      }
    });
  }

 private:
  NormSpec spec_;
};

/*! \brief Calls visit.template Norm<kKind, Param>(name, doc) for each normalization: the one list
 * the definitions and each device's kernels register from. */
template <class Visitor>
void ForEachNormalization(Visitor&& visit) {
  visit.template Norm<kLayerNorm, LayerNormParam>(
      "LayerNorm",
      "Normalizes over an axis: (x - mean) / sqrt(var + eps) * gamma + beta, with "
      "gamma and beta indexed along the axis.");
  visit.template Norm<kInstanceNorm, InstanceNormParam>(
      "InstanceNorm",
      "Normalizes each channel of each sample over its spatial extent, then "
      "scales by gamma and shifts by beta per channel.");
  visit.template Norm<kGroupNorm, GroupNormParam>(
      "GroupNorm",
      "Normalizes each group of channels of each sample, then scales by gamma and "
      "shifts by beta per group (as MXNet 1.x, whose gamma and beta have one value "
      "per group).");
  visit.template Norm<kL2Norm, L2NormalizationParam>(
      "L2Normalization",
      "Divides by the L2 norm, sqrt(sum of squares + eps), of each instance, "
      "each position across channels, or each channel.");
}

/*! \brief Registers the kernels of every normalization on one device. */
template <class Loop>
struct NormalizationKernels {
  DLDeviceType device;
  template <int kKind, class Param>
  void Norm(const char* name, const char*) const {
    mxplug::sdk::RegisterKernel<NormKernel<kKind, Loop>>(name, device);
  }
};

}  // namespace mxplug_nn

#endif  // MXPLUG_PLUGINS_NN_NORMALIZATION_H_
