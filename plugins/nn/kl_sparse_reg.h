// Definition of IdentityAttachKLSparseReg (MXNet's legacy layer for sparse autoencoders): the
// identity in forward; in backward the incoming gradient plus the gradient of a KL-divergence
// penalty that pulls each channel's mean activation (axis 1, averaged over the other axes) towards
// sparseness_target:
//   avg = momentum * avg + (1 - momentum) * mean(data[:, c])          (moving_avg, an aux state)
//   grad = out_grad + penalty * (-target / avg + (1 - target) / (1 - avg))
// The average is updated in backward, as MXNet's is (MXNet 1.9.1's kernel fails on data of more
// than two axes; here the mean runs over every axis but the channels'). kl_sparse_reg.cc registers
// the definition and the CPU kernel, devices/cuda/kernels/kl_sparse_reg.cu the GPU one.
#ifndef MXPLUG_PLUGINS_NN_KL_SPARSE_REG_H_
#define MXPLUG_PLUGINS_NN_KL_SPARSE_REG_H_

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "loss.h"
#include "mxplug/plugin.hpp"

namespace mxplug_nn {

struct KLSparseRegParam : mxplug::Parameter<KLSparseRegParam> {
  float sparseness_target = 0.1f, penalty = 0.001f, momentum = 0.9f;
  MXPLUG_DECLARE_PARAMETER(KLSparseRegParam) {
    MXPLUG_DECLARE_FIELD(sparseness_target)
        .set_default(0.1f)
        .set_range(0, 1)
        .describe("The mean activation each channel is pulled towards.");
    MXPLUG_DECLARE_FIELD(penalty).set_default(0.001f).describe(
        "The weight of the sparseness penalty's gradient.");
    MXPLUG_DECLARE_FIELD(momentum).set_default(0.9f).set_range(0, 1).describe(
        "The decay of the moving mean activation.");
  }
};

class KLSparseRegProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListAuxiliaryStates() const override { return {"moving_avg"}; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>* aux) const override {
    const TShape& d = (*in)[0];
    if (d.ndim() < 0) return false;
    if (d.ndim() < 2)
      throw std::invalid_argument("data has shape " + d.ToString() +
                                  ", expected at least 2 axes (batch, channel, ...)");
    mxplug::InferParameterShape(&(*aux)[0], TShape{d[1]}, "moving_avg", d);
    (*out)[0] = d;
    return d.IsKnown();
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>&) const override {
    return {og[0], in[0]};
  }
  std::vector<std::pair<int, int>> ForwardInplaceOption(
      const std::vector<int>& in, const std::vector<int>& out) const override {
    return {{in[0], out[0]}};
  }

 private:
  KLSparseRegParam param_;
};

/*! \brief Channel c's mean over the data (outer, C, inner) folded into moving_avg. */
template <class T>
struct FoldChannelMean {
  KLSparseRegParam p;
  const T* x;
  int64_t outer, channels, inner;
  T* avg;
  MXPLUG_XINLINE void operator()(int64_t c) const {
    using C = mxplug::ComputeType<T>;
    double sum = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) sum += AsDouble(x[(o * channels + c) * inner + i]);
    const double mean = outer * inner > 0 ? sum / double(outer * inner) : 0.0;
    avg[c] = T(C(double(p.momentum) * AsDouble(avg[c]) + (1.0 - double(p.momentum)) * mean));
  }
};

template <class T>
struct KLSparseGradient {
  KLSparseRegParam p;
  const T* og;
  const T* avg;
  int64_t channels, inner;
  T* dx;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    const C a = C(avg[i / inner % channels]), target = C(p.sparseness_target);
    mxplug::StoreAs<C>(dx[i], req,
                       C(og[i]) + C(p.penalty) * (-target / a + (C(1) - target) / (C(1) - a)));
  }
};

template <class Loop>
class KLSparseRegKernel : public mxplug::Operator {
 public:
  KLSparseRegKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    IdentityForward<Loop>(ctx, in[0], req[0], out[0]);
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                const std::vector<TBlob>& in, const std::vector<TBlob>&,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>& aux) override {
    const TShape& s = in[0].shape_;
    const int64_t channels = s[1], outer = s[0];
    const int64_t inner = outer * channels > 0 ? in[0].Size() / (outer * channels) : 0;
    mxplug::FloatTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      T* avg = aux[0].dptr<T>();
      Loop::Run(ctx, channels,
                FoldChannelMean<T>{p_, in[0].dptr<T>(), outer, channels, inner, avg});
      if (req[0] == mxplug::kNullOp) return;
      Loop::Run(
          ctx, ig[0].Size(),
          KLSparseGradient<T>{p_, og[0].dptr<T>(), avg, channels, inner, ig[0].dptr<T>(), req[0]});
    });
  }

 private:
  KLSparseRegParam p_;
};

template <class Loop>
void RegisterKLSparseRegKernel(DLDeviceType device) {
  mxplug::sdk::RegisterKernel<KLSparseRegKernel<Loop>>("IdentityAttachKLSparseReg", device);
}

}  // namespace mxplug_nn

#endif  // MXPLUG_PLUGINS_NN_KL_SPARSE_REG_H_
