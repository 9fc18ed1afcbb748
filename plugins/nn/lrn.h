// LRN: local response normalization across channels (MXNet's alpha, beta, knorm, nsize):
// out = x * (knorm + alpha / nsize * sum of x^2 over the nsize channels around)^-beta. The
// definitions, registered by lrn.cc, and the computation as per-element functors every device runs
// (LrnKernel<Loop>): the CPU behind oneDNN (lrn.cc), CUDA behind cuDNN's backward and HIP as they
// are (devices/cuda/kernels/lrn.cu).
#ifndef MXPLUG_PLUGINS_NN_LRN_H_
#define MXPLUG_PLUGINS_NN_LRN_H_

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "mxplug/plugin.hpp"

namespace mxplug_nn {

using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;

struct LRNParam : mxplug::Parameter<LRNParam> {
  float alpha, beta, knorm;
  int nsize;
  MXPLUG_DECLARE_PARAMETER(LRNParam) {
    MXPLUG_DECLARE_FIELD(alpha).set_default(1e-4f).describe(
        "The variance scaling parameter alpha.");
    MXPLUG_DECLARE_FIELD(beta).set_default(0.75f).describe("The power parameter beta.");
    MXPLUG_DECLARE_FIELD(knorm).set_default(2.0f).describe("The constant k added to the sum.");
    MXPLUG_DECLARE_FIELD(nsize).set_lower_bound(1).describe(
        "The number of channels summed over (odd).");
  }
};
class LRNProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override {
    param_.Init(kwargs);
    if (param_.nsize % 2 == 0)
      throw std::invalid_argument("nsize " + std::to_string(param_.nsize) + " must be odd");
  }
  std::vector<std::string> ListOutputs() const override { return {"output", "tmp_norm"}; }
  int NumVisibleOutputs() const override { return 1; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& data = (*in)[0];
    if (data.ndim() < 0) return false;
    if (data.ndim() < 2)
      throw std::invalid_argument("data has shape " + data.ToString() +
                                  "; expected at least (batch, channel)");
    (*out)[0] = (*out)[1] = data;
    return data.IsKnown();
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad,
                                             const std::vector<int>& in_data,
                                             const std::vector<int>& out_data) const override {
    // The output too: cuDNN's backward (the CUDA kernel's fused path) reads it.
    return {out_grad[0], in_data[0], out_data[0], out_data[1]};
  }
  // Temp space for oneDNN where the nn plugin has it (defined in lrn.cc, which knows).
  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override;
  std::vector<mxplug::ResourceRequest> BackwardResource(const std::vector<TShape>&) const override;

 private:
  LRNParam param_;
};

// ---- The computation, written once for every device ----

/*! \brief Data seen as (batch, channels, inner); each element's window is the nsize channels
 * centred on its own (clipped at the ends), which is symmetric: j is in i's window exactly when i
 * is in j's. Passed to kernels by value. */
struct LrnGeometry {
  int64_t channels, inner;
  int half;
  float alpha, beta, knorm;
  int nsize;
  /*! \brief Calls f(j) for every element j in element i's window. */
  template <class F>
  MXPLUG_XINLINE void ForWindow(int64_t i, F&& f) const {
    const int64_t c = (i / inner) % channels, base = i - c * inner;
    const int64_t lo = c - half < 0 ? 0 : c - half,
                  hi = c + half >= channels ? channels - 1 : c + half;
    for (int64_t d = lo; d <= hi; ++d) f(base + d * inner);
  }
};

inline LrnGeometry MakeLrnGeometry(const LRNParam& p, const TShape& s) {
  return {
      s[1],   static_cast<int64_t>(s.Size() / (s[0] * s[1])), p.nsize / 2, p.alpha, p.beta, p.knorm,
      p.nsize};
}

/*! \brief y = x * norm^-beta and tmp_norm = norm = knorm + alpha / nsize * sum of x^2 over the
 * window. */
template <class T>
struct LrnForwardElements {
  LrnGeometry g;
  const T* x;
  T *y, *norm;
  int y_req, norm_req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    C sum = 0;
    g.ForWindow(i, [&](int64_t j) { sum += static_cast<C>(x[j]) * static_cast<C>(x[j]); });
    const C n = static_cast<C>(g.knorm) + static_cast<C>(g.alpha) / static_cast<C>(g.nsize) * sum;
    mxplug::StoreAs<C>(y[i], y_req, static_cast<C>(x[i]) * std::pow(n, -static_cast<C>(g.beta)));
    mxplug::StoreAs<C>(norm[i], norm_req, n);
  }
};

/*! \brief dx = dy norm^-beta - 2 beta alpha / nsize * x * sum over the window of
 * dy x norm^(-beta - 1) (each neighbour's term computed where it is needed). */
template <class T>
struct LrnBackwardElements {
  LrnGeometry g;
  const T *x, *dy, *norm;
  T* dx;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    const C beta = static_cast<C>(g.beta);
    C acc = 0;
    g.ForWindow(i, [&](int64_t j) {
      acc += static_cast<C>(dy[j]) * static_cast<C>(x[j]) *
             std::pow(static_cast<C>(norm[j]), -beta - C(1));
    });
    const C k = C(2) * beta * static_cast<C>(g.alpha) / static_cast<C>(g.nsize);
    mxplug::StoreAs<C>(dx[i], req,
                       static_cast<C>(dy[i]) * std::pow(static_cast<C>(norm[i]), -beta) -
                           k * static_cast<C>(x[i]) * acc);
  }
};

/*! \brief A device without a fused LRN backward. */
struct NoFusedLrn {
  static bool Backward(const mxplug::OpContext&, const LRNParam&, const TBlob&, const TBlob&,
                       const TBlob&, const TBlob&, OpReqType) {
    return false;
  }
};

/*! \brief LRN on `Loop` (mxplug::CpuLoop, a device's loop): one element per iteration. Backward
 * tries Fused::Backward(ctx, param, data, out, out_grad, data_grad, req) first, which returns
 * false where the device has no fused kernel for the call. */
template <class Loop, class Fused = NoFusedLrn>
class LrnKernel : public mxplug::Operator {
 public:
  LrnKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { param_.Init(kwargs); }

  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    const LrnGeometry g = MakeLrnGeometry(param_, in[0].shape_);
    mxplug::RealTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(ctx, static_cast<int64_t>(in[0].Size()),
                LrnForwardElements<T>{g, in[0].dptr<T>(), out[0].dptr<T>(), out[1].dptr<T>(),
                                      req[0], req[1]});
    });
  }

  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& out_grad,
                const std::vector<TBlob>& in_data, const std::vector<TBlob>& out_data,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& in_grad,
                const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    if (Fused::Backward(ctx, param_, in_data[0], out_data[0], out_grad[0], in_grad[0], req[0]))
      return;
    const LrnGeometry g = MakeLrnGeometry(param_, in_data[0].shape_);
    mxplug::RealTypeSwitch(in_data[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(ctx, static_cast<int64_t>(in_data[0].Size()),
                LrnBackwardElements<T>{g, in_data[0].dptr<T>(), out_grad[0].dptr<T>(),
                                       out_data[1].dptr<T>(), in_grad[0].dptr<T>(), req[0]});
    });
  }

 protected:
  LRNParam param_;
};

template <class Loop, class Fused = NoFusedLrn>
void RegisterLrnKernels(DLDeviceType device) {
  mxplug::sdk::RegisterKernel<LrnKernel<Loop, Fused>>("LRN", device);
}

}  // namespace mxplug_nn

#endif  // MXPLUG_PLUGINS_NN_LRN_H_
