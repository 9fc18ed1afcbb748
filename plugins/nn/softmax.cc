// softmax and log_softmax along an axis, and SoftmaxOutput (softmax in forward; in backward
// the cross-entropy gradient against the label, ignoring the incoming gradient, as MXNet).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "mxplug/plugin.hpp"
#include "onednn/onednn.h"

namespace {

using mxplug::Assign;
using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;

// Calls fn(base, stride, n) for every line along `axis`: elements base + j * stride, j < n.
template <class Fn>
void ForEachLine(const TShape& s, int axis, Fn&& fn) {
  const int64_t outer = s.ProdShape(0, axis), n = s[axis], inner = s.ProdShape(axis + 1, s.ndim());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) fn(o * n * inner + i, inner, n);
}

// y = softmax(x / temperature) (or its log) along one line: one exp per element, in T (float
// for float32, as MXNet and PyTorch compute it), the sum in double. Written straight into y
// unless req adds to it.
template <class T>
void SoftmaxLine(const T* x, T* y, int64_t base, int64_t stride, int64_t n, double temp, bool log, OpReqType req) {
  const T inv = static_cast<T>(1.0 / temp);
  T mx = -std::numeric_limits<T>::infinity();
  for (int64_t j = 0; j < n; ++j) mx = std::max(mx, x[base + j * stride] * inv);
  double sum = 0;
  if (req != mxplug::kAddTo && !log) {
    for (int64_t j = 0; j < n; ++j) {
      const T e = std::exp(x[base + j * stride] * inv - mx);
      y[base + j * stride] = e;
      sum += e;
    }
    const T scale = static_cast<T>(1.0 / sum);
    for (int64_t j = 0; j < n; ++j) y[base + j * stride] *= scale;
    return;
  }
  for (int64_t j = 0; j < n; ++j) sum += std::exp(x[base + j * stride] * inv - mx);
  const T lse = mx + static_cast<T>(std::log(sum));
  for (int64_t j = 0; j < n; ++j) {
    const T v = x[base + j * stride] * inv - lse;
    Assign(y[base + j * stride], req, log ? v : std::exp(v));
  }
}

struct SoftmaxParam : mxplug::Parameter<SoftmaxParam> {
  int axis;
  std::optional<double> temperature;
  std::optional<int> dtype;
  bool use_length;
  MXPLUG_DECLARE_PARAMETER(SoftmaxParam) {
    MXPLUG_DECLARE_FIELD(axis).set_default(-1).describe("The axis along which to compute softmax.");
    MXPLUG_DECLARE_FIELD(temperature).set_default(std::nullopt).describe("Temperature parameter in softmax.");
    MXPLUG_DECLARE_FIELD(dtype).set_default(std::nullopt).add_dtype_enum().describe(
        "Output dtype (None: the input's).");
    MXPLUG_DECLARE_FIELD(use_length).set_default(false).describe("Unsupported; must be false.");
  }
};
MXPLUG_REGISTER_PARAMETER(SoftmaxParam);

template <bool kLog>
class SoftmaxProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override {
    param_.Init(kwargs);
    if (param_.use_length) throw std::invalid_argument("use_length=True is not supported");
    if (param_.dtype) throw std::invalid_argument("dtype is not supported; cast the input instead");
    if (param_.temperature && *param_.temperature == 0) throw std::invalid_argument("temperature must not be 0");
  }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out, std::vector<TShape>*) const override {
    const TShape& d = (*in)[0];
    if (d.ndim() < 0) return false;
    mxplug::NormalizeAxis(param_.axis, d.ndim());
    (*out)[0] = d;
    return d.IsKnown();
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>&,
                                             const std::vector<int>& out) const override {
    return {og[0], out[0]};
  }
  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override {
    return mxplug_nn::onednn::Resources();
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    struct Kernel : mxplug::Operator {
      int axis;
      double temp;
      void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
        if (req[0] == mxplug::kNullOp) return;
        const int a = mxplug::NormalizeAxis(axis, in[0].ndim());
        if (temp == 1.0 && mxplug_nn::onednn::SoftmaxForward(ctx, in[0], a, kLog, out[0], req[0])) return;
        mxplug::RealTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
          using T = decltype(zero);
          const T* x = in[0].dptr<T>();
          T* y = out[0].dptr<T>();
          ForEachLine(in[0].shape_, a, [&](int64_t b, int64_t s, int64_t n) {
            SoftmaxLine(x, y, b, s, n, temp, kLog, req[0]);
          });
        });
      }
      // softmax: dx = y * (g - sum(g * y)) / t; log_softmax: dx = (g - exp(y) * sum(g)) / t.
      void Backward(const mxplug::OpContext&, const std::vector<TBlob>& og, const std::vector<TBlob>&,
                    const std::vector<TBlob>& out, const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& ig, const std::vector<TBlob>&) override {
        if (req[0] == mxplug::kNullOp) return;
        mxplug::RealTypeSwitch(og[0].type_flag_, "", [&](auto zero) {
          using T = decltype(zero);
          const T* g = og[0].dptr<T>();
          const T* y = out[0].dptr<T>();
          T* dx = ig[0].dptr<T>();
          ForEachLine(og[0].shape_, mxplug::NormalizeAxis(axis, og[0].ndim()), [&](int64_t b, int64_t s, int64_t n) {
            double dot = 0;
            for (int64_t j = 0; j < n; ++j) dot += kLog ? double(g[b + j * s]) : double(g[b + j * s]) * double(y[b + j * s]);
            for (int64_t j = 0; j < n; ++j) {
              const double gj = g[b + j * s], yj = y[b + j * s];
              const double v = kLog ? gj - std::exp(yj) * dot : yj * (gj - dot);
              Assign(dx[b + j * s], req[0], static_cast<T>(v / temp));
            }
          });
        });
      }
    };
    auto* k = new Kernel();
    k->axis = param_.axis;
    k->temp = param_.temperature.value_or(1.0);
    return k;
  }

 private:
  SoftmaxParam param_;
};

// ---- SoftmaxOutput ----

enum Normalization { kNull, kBatch, kValid };

struct SoftmaxOutputParam : mxplug::Parameter<SoftmaxOutputParam> {
  float grad_scale, ignore_label, smooth_alpha;
  bool multi_output, use_ignore, preserve_shape, out_grad;
  int normalization;
  MXPLUG_DECLARE_PARAMETER(SoftmaxOutputParam) {
    MXPLUG_DECLARE_FIELD(grad_scale).set_default(1.0f).describe("Scales the gradient by a float factor.");
    MXPLUG_DECLARE_FIELD(ignore_label).set_default(-1.0f).describe(
        "The instances whose labels equal this are ignored (with use_ignore).");
    MXPLUG_DECLARE_FIELD(multi_output).set_default(false).describe(
        "Softmax over axis 1 of (n, k, x1, ...), with labels of shape (n, x1, ...).");
    MXPLUG_DECLARE_FIELD(use_ignore).set_default(false).describe("Ignore instances labelled ignore_label.");
    MXPLUG_DECLARE_FIELD(preserve_shape).set_default(false).describe("Softmax over the last axis only.");
    MXPLUG_DECLARE_FIELD(normalization).set_default(kNull).add_enum("null", kNull).add_enum("batch", kBatch)
        .add_enum("valid", kValid).describe("Normalizes the gradient: none, by batch size, or by valid labels.");
    MXPLUG_DECLARE_FIELD(out_grad).set_default(false).describe("Multiplies the gradient by the output gradient.");
    MXPLUG_DECLARE_FIELD(smooth_alpha).set_default(0.0f).describe(
        "Label smoothing: the target puts 1 - alpha on the label and spreads alpha over the others.");
  }
};
MXPLUG_REGISTER_PARAMETER(SoftmaxOutputParam);

// How SoftmaxOutput sees data of shape d: without multi_output or preserve_shape MXNet flattens
// it to (n, prod(rest)); the classes are on axis 1 with multi_output, else on the last axis.
TShape SoftmaxOutputView(const SoftmaxOutputParam& p, const TShape& d) {
  return p.multi_output || p.preserve_shape || d.ndim() <= 2 ? d : TShape{d[0], d.ProdShape(1, d.ndim())};
}
int ClassAxis(const SoftmaxOutputParam& p, const TShape& view) { return p.multi_output ? 1 : view.ndim() - 1; }

class SoftmaxOutputProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {"data", "label"}; }
  // The label's shape for the data's view: the view without its class axis.
  TShape LabelShape(const TShape& d) const {
    if (param_.multi_output) {
      std::vector<int64_t> l{d[0]};
      l.insert(l.end(), d.begin() + 2, d.end());
      return TShape(l);
    }
    if (param_.preserve_shape) return TShape(std::vector<int64_t>(d.begin(), d.end() - 1));
    return TShape{d[0]};
  }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out, std::vector<TShape>*) const override {
    const TShape& d = (*in)[0];
    if (d.ndim() < 0) return false;
    if (d.ndim() < (param_.multi_output ? 2 : 1))
      throw std::invalid_argument("data has shape " + d.ToString() + "; too few dimensions");
    TShape& label = (*in)[1];
    const TShape want = LabelShape(SoftmaxOutputView(param_, d));
    if (label.ndim() < 0) label = want;
    if (label.Size() != want.Size())
      throw std::invalid_argument("label has shape " + label.ToString() + ", expected " + want.ToString() +
                                  " for data of shape " + d.ToString());
    (*out)[0] = d;
    return d.IsKnown();
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>& out) const override {
    if (param_.out_grad) return {og[0], in[1], out[0]};
    return {in[1], out[0]};
  }
  std::vector<std::pair<int, int>> ForwardInplaceOption(const std::vector<int>& in,
                                                        const std::vector<int>& out) const override {
    return {{in[0], out[0]}};
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    struct Kernel : mxplug::Operator {
      SoftmaxOutputParam p;
      void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
        if (req[0] == mxplug::kNullOp) return;
        const TShape s = SoftmaxOutputView(p, in[0].shape_);
        mxplug::RealTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
          using T = decltype(zero);
          const T* x = in[0].dptr<T>();
          T* y = out[0].dptr<T>();
          ForEachLine(s, ClassAxis(p, s), [&](int64_t b, int64_t st, int64_t n) {
            SoftmaxLine(x, y, b, st, n, 1.0, false, req[0]);
          });
        });
      }
      void Backward(const mxplug::OpContext&, const std::vector<TBlob>& og, const std::vector<TBlob>& in,
                    const std::vector<TBlob>& out, const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& ig, const std::vector<TBlob>&) override {
        mxplug::WriteZeroGradient(ig[1], req[1]);  // labels get no gradient
        if (req[0] == mxplug::kNullOp) return;
        const TShape s = SoftmaxOutputView(p, out[0].shape_);
        const int axis = ClassAxis(p, s);
        mxplug::RealTypeSwitch(out[0].type_flag_, "", [&](auto zero) {
          using T = decltype(zero);
          const T* y = out[0].dptr<T>();
          const T* g = p.out_grad ? og[0].dptr<T>() : nullptr;
          T* dx = ig[0].dptr<T>();
          const int64_t inner = s.ProdShape(axis + 1, s.ndim());
          int64_t valid = 0;
          std::vector<double> grad(static_cast<size_t>(s.Size()));
          ForEachLine(s, axis, [&](int64_t b, int64_t st, int64_t n) {
            // The line starting at b is (outer o, inner i); its label sits at o * inner + i.
            const int64_t o = b / (n * inner), i = b % inner;
            const double lv = mxplug::ValueAsDouble(in[1], o * inner + i);
            const bool ignored = p.use_ignore && lv == double(p.ignore_label);
            if (!ignored) ++valid;
            const int64_t k = static_cast<int64_t>(lv);
            const double off = n > 1 ? p.smooth_alpha / double(n - 1) : 0.0;
            for (int64_t j = 0; j < n; ++j) {
              const double target = j == k ? 1.0 - p.smooth_alpha : off;
              grad[b + j * st] = ignored ? 0.0 : double(y[b + j * st]) - target;
            }
          });
          double scale = p.grad_scale;
          if (p.normalization == kBatch) scale /= double(s[0]);
          else if (p.normalization == kValid) scale /= double(std::max<int64_t>(valid, 1));
          for (int64_t e = 0; e < s.Size(); ++e)
            Assign(dx[e], req[0], static_cast<T>(grad[e] * scale * (g ? double(g[e]) : 1.0)));
        });
      }
    };
    auto* k = new Kernel();
    k->p = param_;
    return k;
  }

 private:
  SoftmaxOutputParam param_;
};

[[maybe_unused]] const bool registered = [] {
  for (auto [name, log] : {std::pair{"softmax", false}, std::pair{"log_softmax", true}}) {
    auto& r = log ? mxplug::RegisterOpProperty<SoftmaxProp<true>>(name)
                  : mxplug::RegisterOpProperty<SoftmaxProp<false>>(name);
    r.describe(log ? "The log of softmax along an axis, computed stably."
                   : "Softmax along an axis: exp(x / t) / sum(exp(x / t)).")
        .add_argument("data", "NDArray-or-Symbol", "The input array.")
        .add_arguments(SoftmaxParam::Fields()).add_kernel(kDLCPU);
  }
  for (const char* name : {"SoftmaxOutput", "Softmax"})
    mxplug::RegisterOpProperty<SoftmaxOutputProp>(name)
        .describe("Softmax in forward; in backward, the gradient of cross-entropy against the label "
                  "(softmax - one_hot(label)) times grad_scale, ignoring the incoming gradient.")
        .add_argument("data", "NDArray-or-Symbol", "Input array.")
        .add_argument("label", "NDArray-or-Symbol", "Ground truth label.")
        .add_arguments(SoftmaxOutputParam::Fields()).add_kernel(kDLCPU);
  return true;
}();

}  // namespace
