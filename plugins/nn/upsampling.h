// UpSampling with sample_type nearest (MXNet's scale, num_args, multi_input_mode): every input
// is repeated up to the first input's size times scale, then the results are concatenated
// along the channels or summed. The definitions, registered by upsampling.cc, and the
// computation as per-element functors every device runs (UpSamplingKernel<Loop>: the CPU's,
// and CUDA's and HIP's in devices/cuda/kernels/upsampling.cu).
#ifndef MXPLUG_PLUGINS_NN_UPSAMPLING_H_
#define MXPLUG_PLUGINS_NN_UPSAMPLING_H_

#include <stdexcept>
#include <string>
#include <vector>

#include "elements.h"
#include "mxplug/plugin.hpp"

namespace mxplug_nn {

using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;

enum SampleType { kNearest, kBilinear };
enum MultiInput { kConcat, kSum };

struct UpSamplingParam : mxplug::Parameter<UpSamplingParam> {
  int scale;
  int num_filter;
  int sample_type;
  int multi_input_mode;
  int num_args;
  int64_t workspace;
  MXPLUG_DECLARE_PARAMETER(UpSamplingParam) {
    MXPLUG_DECLARE_FIELD(scale).set_lower_bound(1).describe("Up sampling scale.");
    MXPLUG_DECLARE_FIELD(num_filter)
        .set_default(0)
        .set_lower_bound(0)
        .describe("Input filter; only used by bilinear sampling.");
    MXPLUG_DECLARE_FIELD(sample_type)
        .add_enum("nearest", kNearest)
        .add_enum("bilinear", kBilinear)
        .describe("Up sampling method.");
    MXPLUG_DECLARE_FIELD(multi_input_mode)
        .set_default(kConcat)
        .add_enum("concat", kConcat)
        .add_enum("sum", kSum)
        .describe("How to combine several inputs: concatenate the channels or sum.");
    MXPLUG_DECLARE_FIELD(num_args).set_lower_bound(1).describe(
        "Number of inputs to be up sampled.");
    MXPLUG_DECLARE_FIELD(workspace).set_default(512).set_lower_bound(0).describe(
        "Temporary workspace in MB (accepted for compatibility).");
  }
};
class UpSamplingProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override {
    param_.Init(kwargs);
    if (param_.sample_type == kBilinear)
      throw std::invalid_argument(
          "sample_type 'bilinear' is not supported on CPU yet; expected 'nearest' "
          "(bilinear up sampling is a Deconvolution with a bilinear weight)");
  }
  std::vector<std::string> ListArguments() const override { return ArgNames(param_.num_args); }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    for (const TShape& s : *in)
      if (!s.IsKnown()) return false;
    const TShape& first = (*in)[0];
    std::vector<int64_t> oshape{first[0], 0, 0, 0};
    for (size_t i = 0; i < in->size(); ++i) {
      const TShape& s = (*in)[i];
      const std::string arg = "arg" + std::to_string(i);
      if (s.ndim() != 4)
        throw std::invalid_argument(arg + " has shape " + s.ToString() +
                                    "; expected 4 axes (batch, channel, y, x)");
      if (i == 0) oshape = {s[0], 0, s[2] * param_.scale, s[3] * param_.scale};
      if (s[0] != oshape[0] || s[2] == 0 || s[3] == 0 || oshape[2] % s[2] != 0 ||
          oshape[3] % s[3] != 0 || oshape[2] / s[2] != oshape[3] / s[3])
        throw std::invalid_argument(
            arg + " has shape " + s.ToString() + "; its batch must be " +
            std::to_string(oshape[0]) + " and its height and width must divide the output's (" +
            std::to_string(oshape[2]) + ", " + std::to_string(oshape[3]) + ") by one factor");
      if (param_.multi_input_mode == kConcat) {
        oshape[1] += s[1];
      } else if (i > 0 && s[1] != oshape[1]) {
        throw std::invalid_argument(arg + " has " + std::to_string(s[1]) +
                                    " channels; multi_input_mode 'sum' needs " +
                                    std::to_string(oshape[1]) + " like arg0");
      } else {
        oshape[1] = s[1];
      }
    }
    (*out)[0] = TShape(oshape);
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad,
                                             const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return {out_grad[0]};
  }

 private:
  UpSamplingParam param_;
};

// ---- The computation, written once for every device ----

/*! \brief Where input `in` (channels c0 onwards of the output) meets the output: each output pixel
 * (y, x) repeats input pixel (y / k, x / k). Passed to kernels by value. */
struct UpSamplingGeometry {
  int64_t channels, h, w;  // the input's
  int64_t out_channels, oh, ow, c0, k;
  MXPLUG_XINLINE int64_t Output(int64_t n, int64_t c, int64_t y, int64_t x) const {
    return ((n * out_channels + c0 + c) * oh + y) * ow + x;
  }
};

inline UpSamplingGeometry MakeUpSamplingGeometry(const TShape& in, const TShape& out, int64_t c0) {
  return {in[1], in[2], in[3], out[1], out[2], out[3], c0, out[2] / in[2]};
}

/*! \brief y[o] for the output elements input `x` spreads onto, e numbering them (n, c, y, x). */
template <class T>
struct UpSamplingForwardElements {
  UpSamplingGeometry g;
  const T* x;
  T* y;
  int req;
  MXPLUG_XINLINE void operator()(int64_t e) const {
    const int64_t px = e % g.ow, py = (e / g.ow) % g.oh, c = (e / (g.ow * g.oh)) % g.channels,
                  n = e / (g.ow * g.oh * g.channels);
    const T v = x[((n * g.channels + c) * g.h + py / g.k) * g.w + px / g.k];
    mxplug::StoreAs<mxplug::ComputeType<T>>(y[g.Output(n, c, py, px)], req,
                                            static_cast<mxplug::ComputeType<T>>(v));
  }
};

/*! \brief dx[i]: the sum of the k x k output gradients input pixel i was repeated onto. */
template <class T>
struct UpSamplingBackwardElements {
  UpSamplingGeometry g;
  const T* dy;
  T* dx;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    const int64_t px = i % g.w, py = (i / g.w) % g.h, c = (i / (g.w * g.h)) % g.channels,
                  n = i / (g.w * g.h * g.channels);
    C sum = 0;
    for (int64_t a = 0; a < g.k; ++a)
      for (int64_t b = 0; b < g.k; ++b)
        sum += static_cast<C>(dy[g.Output(n, c, py * g.k + a, px * g.k + b)]);
    mxplug::StoreAs<C>(dx[i], req, sum);
  }
};

/*! \brief UpSampling (nearest) on `Loop` (mxplug::CpuLoop, a device's loop). */
template <class Loop>
class UpSamplingKernel : public mxplug::Operator {
 public:
  UpSamplingKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { param_.Init(kwargs); }

  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const bool sum = param_.multi_input_mode == kSum && in.size() > 1;
    mxplug::TypeSwitch(out[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      int64_t c0 = 0;
      for (size_t a = 0; a < in.size(); ++a) {
        // Summed inputs meet in the output: the first writes as asked, the others add.
        const int each = sum && a > 0 ? mxplug::kAddTo : req[0];
        const UpSamplingGeometry g = MakeUpSamplingGeometry(in[a].shape_, out[0].shape_, c0);
        Loop::Run(ctx, in[a].shape_[0] * g.channels * g.oh * g.ow,
                  UpSamplingForwardElements<T>{g, in[a].dptr<T>(), out[0].dptr<T>(), each});
        if (param_.multi_input_mode == kConcat) c0 += in[a].shape_[1];
      }
    });
  }

  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& out_grad,
                const std::vector<TBlob>&, const std::vector<TBlob>&,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& in_grad,
                const std::vector<TBlob>&) override {
    mxplug::TypeSwitch(out_grad[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      int64_t c0 = 0;
      for (size_t a = 0; a < in_grad.size(); ++a) {
        if (req[a] != mxplug::kNullOp)
          Loop::Run(ctx, static_cast<int64_t>(in_grad[a].Size()),
                    UpSamplingBackwardElements<T>{
                        MakeUpSamplingGeometry(in_grad[a].shape_, out_grad[0].shape_, c0),
                        out_grad[0].dptr<T>(), in_grad[a].dptr<T>(), req[a]});
        if (param_.multi_input_mode == kConcat) c0 += in_grad[a].shape_[1];
      }
    });
  }

 private:
  UpSamplingParam param_;
};

template <class Loop>
void RegisterUpSamplingKernels(DLDeviceType device) {
  mxplug::sdk::RegisterKernel<UpSamplingKernel<Loop>>("UpSampling", device);
}

}  // namespace mxplug_nn

#endif  // MXPLUG_PLUGINS_NN_UPSAMPLING_H_
