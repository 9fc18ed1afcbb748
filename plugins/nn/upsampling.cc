// UpSampling with sample_type nearest (MXNet's scale, num_args, multi_input_mode): every input
// is repeated up to the first input's size times scale, then the results are concatenated
// along the channels or summed.
#include <cstring>
#include <string>
#include <vector>

#include "mxplug/plugin.hpp"

namespace {

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
    MXPLUG_DECLARE_FIELD(num_filter).set_default(0).set_lower_bound(0).describe(
        "Input filter; only used by bilinear sampling.");
    MXPLUG_DECLARE_FIELD(sample_type).add_enum("nearest", kNearest).add_enum("bilinear", kBilinear)
        .describe("Up sampling method.");
    MXPLUG_DECLARE_FIELD(multi_input_mode).set_default(kConcat).add_enum("concat", kConcat).add_enum("sum", kSum)
        .describe("How to combine several inputs: concatenate the channels or sum.");
    MXPLUG_DECLARE_FIELD(num_args).set_lower_bound(1).describe("Number of inputs to be up sampled.");
    MXPLUG_DECLARE_FIELD(workspace).set_default(512).set_lower_bound(0).describe(
        "Temporary workspace in MB (accepted for compatibility).");
  }
};
MXPLUG_REGISTER_PARAMETER(UpSamplingParam);

// Input i's factor: the output's height over its own.
int64_t Factor(const TShape& out, const TShape& in) { return out[2] / in[2]; }

// Calls f(input element, output element) for every output element input `in` spreads onto,
// where the input starts at channel `c0` of the output.
template <class F>
void ForEachCopy(const TShape& in, const TShape& out, int64_t c0, F&& f) {
  const int64_t k = Factor(out, in), h = in[2], w = in[3], oh = out[2], ow = out[3];
  for (int64_t n = 0; n < in[0]; ++n)
    for (int64_t c = 0; c < in[1]; ++c)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x)
          f(((n * in[1] + c) * h + y / k) * w + x / k, ((n * out[1] + c0 + c) * oh + y) * ow + x);
}

class UpSamplingOp : public mxplug::Operator {
 public:
  explicit UpSamplingOp(const UpSamplingParam& p) : param_(p) {}

  void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
               const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    mxplug::TypeSwitch(out[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      T* y = out[0].dptr<T>();
      // Summed inputs meet in the output: gather into zeros first unless adding to it.
      if (param_.multi_input_mode == kSum && req[0] != mxplug::kAddTo && in.size() > 1)
        std::memset(y, 0, sizeof(T) * out[0].Size());
      const OpReqType each = param_.multi_input_mode == kSum && in.size() > 1 ? mxplug::kAddTo : req[0];
      int64_t c0 = 0;
      for (const TBlob& b : in) {
        const T* x = b.dptr<T>();
        ForEachCopy(b.shape_, out[0].shape_, c0, [&](int64_t i, int64_t o) { mxplug::Assign(y[o], each, x[i]); });
        if (param_.multi_input_mode == kConcat) c0 += b.shape_[1];
      }
    });
  }

  void Backward(const mxplug::OpContext&, const std::vector<TBlob>& out_grad, const std::vector<TBlob>&,
                const std::vector<TBlob>&, const std::vector<OpReqType>& req, const std::vector<TBlob>& in_grad,
                const std::vector<TBlob>&) override {
    mxplug::TypeSwitch(out_grad[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      const T* dy = out_grad[0].dptr<T>();
      int64_t c0 = 0;
      for (size_t a = 0; a < in_grad.size(); ++a) {
        const TBlob& g = in_grad[a];
        if (req[a] != mxplug::kNullOp) {
          T* dx = g.dptr<T>();
          if (req[a] != mxplug::kAddTo) std::memset(dx, 0, sizeof(T) * g.Size());
          ForEachCopy(g.shape_, out_grad[0].shape_, c0, [&](int64_t i, int64_t o) { dx[i] += dy[o]; });
        }
        if (param_.multi_input_mode == kConcat) c0 += g.shape_[1];
      }
    });
  }

 private:
  UpSamplingParam param_;
};

class UpSamplingProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override {
    param_.Init(kwargs);
    if (param_.sample_type == kBilinear)
      throw std::invalid_argument("sample_type 'bilinear' is not supported on CPU yet; expected 'nearest' "
                                  "(bilinear up sampling is a Deconvolution with a bilinear weight)");
  }
  std::vector<std::string> ListArguments() const override {
    std::vector<std::string> names;
    for (int i = 0; i < param_.num_args; ++i) names.push_back("arg" + std::to_string(i));
    return names;
  }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out, std::vector<TShape>*) const override {
    for (const TShape& s : *in)
      if (!s.IsKnown()) return false;
    const TShape& first = (*in)[0];
    std::vector<int64_t> oshape{first[0], 0, 0, 0};
    for (size_t i = 0; i < in->size(); ++i) {
      const TShape& s = (*in)[i];
      const std::string arg = "arg" + std::to_string(i);
      if (s.ndim() != 4)
        throw std::invalid_argument(arg + " has shape " + s.ToString() + "; expected 4 axes (batch, channel, y, x)");
      if (i == 0) oshape = {s[0], 0, s[2] * param_.scale, s[3] * param_.scale};
      if (s[0] != oshape[0] || s[2] == 0 || s[3] == 0 || oshape[2] % s[2] != 0 || oshape[3] % s[3] != 0 ||
          oshape[2] / s[2] != oshape[3] / s[3])
        throw std::invalid_argument(arg + " has shape " + s.ToString() + "; its batch must be " +
                                    std::to_string(oshape[0]) + " and its height and width must divide the output's (" +
                                    std::to_string(oshape[2]) + ", " + std::to_string(oshape[3]) + ") by one factor");
      if (param_.multi_input_mode == kConcat) {
        oshape[1] += s[1];
      } else if (i > 0 && s[1] != oshape[1]) {
        throw std::invalid_argument(arg + " has " + std::to_string(s[1]) + " channels; multi_input_mode 'sum' needs " +
                                    std::to_string(oshape[1]) + " like arg0");
      } else {
        oshape[1] = s[1];
      }
    }
    (*out)[0] = TShape(oshape);
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad, const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return {out_grad[0]};
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override { return new UpSamplingOp(param_); }

 private:
  UpSamplingParam param_;
};

}  // namespace

MXPLUG_REGISTER_OP_PROPERTY(UpSampling, UpSamplingProp)
    .describe("Up samples 4-d inputs (batch, channel, y, x) by repeating each pixel scale times along y and x "
              "(nearest); several inputs are each brought to the first one's size times scale, then "
              "concatenated along the channels or summed.")
    .add_arguments(UpSamplingParam::Fields())
    .add_kernel(kDLCPU);
