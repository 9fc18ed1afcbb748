// Output layers whose backward is the loss gradient, ignoring the incoming gradient (MXNet):
// LinearRegressionOutput, LogisticRegressionOutput, MAERegressionOutput, and MakeLoss.
#include <algorithm>
#include <cmath>
#include <string>

#include "mxplug/plugin.hpp"

namespace {

using mxplug::Assign;
using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;

enum Regression { kLinear, kLogistic, kMAE };

struct RegressionParam : mxplug::Parameter<RegressionParam> {
  float grad_scale;
  MXPLUG_DECLARE_PARAMETER(RegressionParam) {
    MXPLUG_DECLARE_FIELD(grad_scale).set_default(1.0f).describe("Scale the gradient by a float factor.");
  }
};
MXPLUG_REGISTER_PARAMETER(RegressionParam);


template <Regression K>
class RegressionProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {"data", "label"}; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out, std::vector<TShape>*) const override {
    const TShape& d = (*in)[0];
    if (d.ndim() < 0) return false;
    TShape& l = (*in)[1];
    if (l.ndim() < 0) l = d;
    if (l.Size() != d.Size())
      throw std::invalid_argument("label has shape " + l.ToString() + ", expected " + d.ToString() +
                                  " (or another shape of the same size)");
    (*out)[0] = d;
    return d.IsKnown();
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    return mxplug::InferTypeFromFirst(in, out);
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>&, const std::vector<int>& in,
                                             const std::vector<int>& out) const override {
    return {in[1], out[0]};
  }
  std::vector<std::pair<int, int>> ForwardInplaceOption(const std::vector<int>& in,
                                                        const std::vector<int>& out) const override {
    return {{in[0], out[0]}};
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    struct Kernel : mxplug::Operator {
      float scale;
      void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
        if (req[0] == mxplug::kNullOp) return;
        mxplug::RealTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
          using T = decltype(zero);
          const T* x = in[0].dptr<T>();
          T* y = out[0].dptr<T>();
          for (int64_t i = 0; i < out[0].Size(); ++i) {
            const double v = double(x[i]);
            Assign(y[i], req[0], static_cast<T>(K == kLogistic ? 1 / (1 + std::exp(-v)) : v));
          }
        });
      }
      // grad = scale / num_output * (y - label) (sign of it for MAE), num_output per instance.
      void Backward(const mxplug::OpContext&, const std::vector<TBlob>&, const std::vector<TBlob>& in,
                    const std::vector<TBlob>& out, const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& ig, const std::vector<TBlob>&) override {
        mxplug::WriteZeroGradient(ig[1], req[1]);
        if (req[0] == mxplug::kNullOp) return;
        const TShape& ls = in[1].shape_;
        const double num_output = ls.ndim() > 0 && ls[0] > 0 ? double(ls.Size()) / double(ls[0]) : 1.0;
        mxplug::RealTypeSwitch(out[0].type_flag_, "", [&](auto zero) {
          using T = decltype(zero);
          const T* y = out[0].dptr<T>();
          T* dx = ig[0].dptr<T>();
          for (int64_t i = 0; i < out[0].Size(); ++i) {
            const double diff = double(y[i]) - mxplug::ValueAsDouble(in[1], i);
            const double d = K == kMAE ? (diff > 0 ? 1.0 : diff < 0 ? -1.0 : 0.0) : diff;
            Assign(dx[i], req[0], static_cast<T>(scale / num_output * d));
          }
        });
      }
    };
    auto* k = new Kernel();
    k->scale = param_.grad_scale;
    return k;
  }

 private:
  RegressionParam param_;
};

// MakeLoss(data): forward identity; backward grad_scale (normalised), whatever the incoming gradient.
enum LossNorm { kNullNorm, kBatchNorm, kValidNorm };

struct MakeLossParam : mxplug::Parameter<MakeLossParam> {
  float grad_scale, valid_thresh;
  int normalization;
  MXPLUG_DECLARE_PARAMETER(MakeLossParam) {
    MXPLUG_DECLARE_FIELD(grad_scale).set_default(1.0f).describe("Gradient scale as a supplement to unary ops.");
    MXPLUG_DECLARE_FIELD(valid_thresh).set_default(0.0f).describe(
        "Elements above this count as valid (normalization='valid').");
    MXPLUG_DECLARE_FIELD(normalization).set_default(kNullNorm).add_enum("null", kNullNorm)
        .add_enum("batch", kBatchNorm).add_enum("valid", kValidNorm)
        .describe("Divide the gradient by nothing, the batch size, or the number of valid elements.");
  }
};
MXPLUG_REGISTER_PARAMETER(MakeLossParam);

class MakeLossProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out, std::vector<TShape>*) const override {
    return mxplug::InferSameShape(in, out);
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>&, const std::vector<int>&,
                                             const std::vector<int>& out) const override {
    if (param_.normalization == kValidNorm) return {out[0]};
    return {};
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    struct Kernel : mxplug::Operator {
      MakeLossParam p;
      void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
        mxplug::AssignBlob(in[0], out[0], req[0]);
      }
      void Backward(const mxplug::OpContext&, const std::vector<TBlob>&, const std::vector<TBlob>&,
                    const std::vector<TBlob>& out, const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& ig, const std::vector<TBlob>&) override {
        if (req[0] == mxplug::kNullOp) return;
        mxplug::RealTypeSwitch(ig[0].type_flag_, "", [&](auto zero) {
          using T = decltype(zero);
          double scale = p.grad_scale;
          const TShape& s = ig[0].shape_;
          if (p.normalization == kBatchNorm && s.ndim() > 0) scale /= double(s[0]);
          if (p.normalization == kValidNorm) {
            const T* y = out[0].dptr<T>();
            int64_t valid = 0;
            for (int64_t i = 0; i < out[0].Size(); ++i) valid += double(y[i]) > p.valid_thresh;
            scale /= double(std::max<int64_t>(valid, 1));
          }
          T* dx = ig[0].dptr<T>();
          for (int64_t i = 0; i < ig[0].Size(); ++i) Assign(dx[i], req[0], static_cast<T>(scale));
        });
      }
    };
    auto* k = new Kernel();
    k->p = param_;
    return k;
  }

 private:
  MakeLossParam param_;
};

template <Regression K>
void RegisterRegression(const char* name, const char* doc) {
  mxplug::RegisterOpProperty<RegressionProp<K>>(name)
      .describe(doc)
      .add_argument("data", "NDArray-or-Symbol", "Input data to the function.")
      .add_argument("label", "NDArray-or-Symbol", "Input label to the function.")
      .add_arguments(RegressionParam::Fields()).add_kernel(kDLCPU);
}

[[maybe_unused]] const bool registered = [] {
  RegisterRegression<kLinear>("LinearRegressionOutput",
                              "Identity in forward; the squared-loss gradient (y - label) in backward.");
  RegisterRegression<kLogistic>("LogisticRegressionOutput",
                                "Sigmoid in forward; the logistic-loss gradient (y - label) in backward.");
  RegisterRegression<kMAE>("MAERegressionOutput",
                           "Identity in forward; the absolute-loss gradient sign(y - label) in backward.");
  for (const char* name : {"MakeLoss", "make_loss"})
    mxplug::RegisterOpProperty<MakeLossProp>(name)
        .describe("Marks data as a loss: identity in forward, grad_scale as its gradient in backward.")
        .add_argument("data", "NDArray-or-Symbol", "Input array.")
        .add_arguments(MakeLossParam::Fields()).add_kernel(kDLCPU);
  return true;
}();

}  // namespace
