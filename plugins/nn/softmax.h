// Definitions of softmax and log_softmax along an axis, and SoftmaxOutput (softmax in forward;
// in backward the cross-entropy gradient against the label, ignoring the incoming gradient, as
// MXNet), with MXNet's names and parameters. Their kernels are written once here over a
// device's element loop, one call per line along the softmax axis; a device may take a fused
// path first (oneDNN's softmax on the CPU). softmax.cc registers the definitions and the CPU
// kernels, devices/cuda/kernels/softmax.cu the CUDA kernels.
#ifndef MXPLUG_PLUGINS_NN_SOFTMAX_H_
#define MXPLUG_PLUGINS_NN_SOFTMAX_H_

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "elements.h"
#include "mxplug/plugin.hpp"

namespace mxplug_nn {

using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;

/*!
 * \brief y = softmax(x * inv_temp) (or its log) along line l: one exp per element in the compute
 * type (float for float32, as MXNet and PyTorch compute it), the sum in double. Written straight
 * into y unless req adds to it.
 */
/*! \brief Element l of softmax's length input, of any integer dtype. */
MXPLUG_XINLINE int64_t LengthAt(const void* length, int type, int64_t l) {
  switch (type) {
    case kMXPInt64:
      return static_cast<const int64_t*>(length)[l];
    case kMXPInt32:
      return static_cast<const int32_t*>(length)[l];
    case kMXPInt8:
      return static_cast<const int8_t*>(length)[l];
    default:
      return static_cast<const uint8_t*>(length)[l];
  }
}

/*! \brief How many elements of line l count: all, or its length (clamped to [0, n]) when softmax
 * has a length input; the others are 0 in the output and the gradient. */
MXPLUG_XINLINE int64_t ValidOfLine(const Lines& lines, const void* length, int length_type,
                                   int64_t l) {
  if (!length) return lines.n;
  const int64_t k = LengthAt(length, length_type, l);
  return k < 0 ? 0 : k > lines.n ? lines.n : k;
}

template <class T, class O = T>
struct SoftmaxLines {
  Lines lines;
  const T* x;
  O* y;  // O: the output's dtype (softmax's dtype parameter), else T
  double inv_temp;
  bool log;
  int req;
  const void* length = nullptr;  // softmax's length input (use_length), or null
  int length_type = kMXPInt32;
  MXPLUG_XINLINE void operator()(int64_t l) const {
    using C = mxplug::ComputeType<T>;
    const int64_t base = lines.Base(l), st = lines.inner;
    const int64_t n = ValidOfLine(lines, length, length_type, l);
    for (int64_t j = n; j < lines.n; ++j) mxplug::StoreAs<C>(y[base + j * st], req, C(0));
    const C inv = static_cast<C>(inv_temp);
    C mx = -std::numeric_limits<C>::infinity();
    for (int64_t j = 0; j < n; ++j) mx = std::max(mx, static_cast<C>(x[base + j * st]) * inv);
    double sum = 0;
    if (req != mxplug::kAddTo && !log && std::is_same_v<T, O>) {
      for (int64_t j = 0; j < n; ++j) {
        const C e = std::exp(static_cast<C>(x[base + j * st]) * inv - mx);
        y[base + j * st] = static_cast<O>(e);
        sum += static_cast<double>(e);
      }
      const C scale = static_cast<C>(1.0 / sum);
      for (int64_t j = 0; j < n; ++j)
        y[base + j * st] = static_cast<O>(static_cast<C>(y[base + j * st]) * scale);
      return;
    }
    for (int64_t j = 0; j < n; ++j)
      sum += static_cast<double>(std::exp(static_cast<C>(x[base + j * st]) * inv - mx));
    const C lse = mx + static_cast<C>(std::log(sum));
    for (int64_t j = 0; j < n; ++j) {
      const C v = static_cast<C>(x[base + j * st]) * inv - lse;
      mxplug::StoreAs<C>(y[base + j * st], req, log ? v : std::exp(v));
    }
  }
};

/*! \brief The gradient along line l: softmax dx = y * (g - sum(g * y)) / t; log_softmax
 * dx = (g - exp(y) * sum(g)) / t; in double. */
template <class T, class O = T>
struct SoftmaxGradLines {
  Lines lines;
  const O* og;
  const O* y;
  T* dx;
  double inv_temp;
  bool log;
  int req;
  const void* length = nullptr;
  int length_type = kMXPInt32;
  MXPLUG_XINLINE void operator()(int64_t l) const {
    using C = mxplug::ComputeType<T>;
    const int64_t base = lines.Base(l), st = lines.inner;
    const int64_t n = ValidOfLine(lines, length, length_type, l);
    for (int64_t j = n; j < lines.n; ++j) mxplug::StoreAs<C>(dx[base + j * st], req, C(0));
    double dot = 0;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t i = base + j * st;
      dot += log ? AsDouble(og[i]) : AsDouble(og[i]) * AsDouble(y[i]);
    }
    for (int64_t j = 0; j < n; ++j) {
      const int64_t i = base + j * st;
      const double g = AsDouble(og[i]), yj = AsDouble(y[i]);
      const double v = log ? g - std::exp(yj) * dot : yj * (g - dot);
      mxplug::StoreAs<C>(dx[i], req, static_cast<C>(v * inv_temp));
    }
  }
};

// ---- softmax, log_softmax ----

struct SoftmaxParam : mxplug::Parameter<SoftmaxParam> {
  int axis;
  std::optional<double> temperature;
  std::optional<int> dtype;
  bool use_length;
  MXPLUG_DECLARE_PARAMETER(SoftmaxParam) {
    MXPLUG_DECLARE_FIELD(axis).set_default(-1).describe("The axis along which to compute softmax.");
    MXPLUG_DECLARE_FIELD(temperature)
        .set_default(std::nullopt)
        .describe("Temperature parameter in softmax.");
    MXPLUG_DECLARE_FIELD(dtype)
        .set_default(std::nullopt)
        .add_enum("float16", kMXPFloat16)
        .add_enum("float32", kMXPFloat32)
        .add_enum("float64", kMXPFloat64)
        .describe("The output's dtype (None: the input's); the gradient keeps the input's.");
    MXPLUG_DECLARE_FIELD(use_length)
        .set_default(false)
        .describe(
            "softmax only: a second input, length (integers, the data's shape without axis), "
            "says how many elements of each line count; the rest are 0.");
  }
};

// kLength: softmax, which takes the length input; log_softmax and softmin refuse use_length, as
// MXNet's do.
template <bool kLog, bool kLength = false>
class SoftmaxProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override {
    param_.Init(kwargs);
    if (param_.use_length && !kLength)
      throw std::invalid_argument("use_length needs a length input, which only softmax has");
    if (param_.temperature && *param_.temperature == 0)
      throw std::invalid_argument("temperature must not be 0");
  }
  std::vector<std::string> ListArguments() const override {
    if (param_.use_length) return {"data", "length"};
    return {"data"};
  }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& d = (*in)[0];
    if (d.ndim() < 0) return false;
    const int axis = mxplug::NormalizeAxis(param_.axis, d.ndim());
    if (param_.use_length) {
      std::vector<int64_t> lines(d.begin(), d.end());
      lines.erase(lines.begin() + axis);
      mxplug::InferParameterShape(&(*in)[1], TShape(lines), "length", d);
    }
    (*out)[0] = d;
    return d.IsKnown();
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    const int t = (*in)[0];
    if (t == kMXPUnknownDType) return false;
    if (param_.use_length && (*in)[1] != kMXPUnknownDType) {
      const int l = (*in)[1];
      if (l != kMXPInt32 && l != kMXPInt64 && l != kMXPInt8 && l != kMXPUint8)
        throw std::invalid_argument("length has dtype " + mxplug::DTypeName(l) +
                                    ": This operation only support integer types");
    }
    if (param_.use_length && (*in)[1] == kMXPUnknownDType) (*in)[1] = kMXPInt32;
    (*out)[0] = param_.dtype.value_or(t);
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>& out) const override {
    if (param_.use_length) return {og[0], in[1], out[0]};
    return {og[0], out[0]};
  }
  // Temp space for a device's fused path (oneDNN's reorders on the CPU).
  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override {
    return {mxplug::ResourceRequest::kTempSpace};
  }

 private:
  SoftmaxParam param_;
};

/*! \brief A device without a fused softmax. */
struct NoFusedSoftmax {
  static bool Forward(const mxplug::OpContext&, const TBlob&, int, bool, const TBlob&, OpReqType) {
    return false;
  }
  static bool Backward(const mxplug::OpContext&, const TBlob&, const TBlob&, int, bool,
                       const TBlob&, OpReqType) {
    return false;
  }
};

/*!
 * \brief softmax (kLog false) or log_softmax on a device whose element loop is Loop, a call per
 * line. At temperature 1, Fused::Forward(ctx, data, axis, log, out, req) and
 * Fused::Backward(ctx, out_grad, out, axis, log, data_grad, req) are tried first and return false
 * where the device has no fused kernel for the call.
 */
template <bool kLog, class Loop, class Fused = NoFusedSoftmax, bool kMin = false>
class SoftmaxKernel : public mxplug::Operator {
 public:
  SoftmaxKernel(const mxplug::KwArgs& kwargs, mxplug::Context) {
    SoftmaxParam p;
    p.Init(kwargs);
    axis_ = p.axis;
    // softmin(x) is softmax(-x): a negative temperature, which the gradient carries too.
    temp_ = p.temperature.value_or(1.0) * (kMin ? -1.0 : 1.0);
    use_length_ = p.use_length;
  }
  // Fused paths take the plain calls: one dtype, no length.
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const int a = mxplug::NormalizeAxis(axis_, in[0].ndim());
    const bool plain = !use_length_ && in[0].type_flag_ == out[0].type_flag_;
    if (plain && temp_ == 1.0 && Fused::Forward(ctx, in[0], a, kLog, out[0], req[0])) return;
    const Lines lines = LinesAlong(in[0].shape_, a);
    mxplug::FloatTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      mxplug::FloatTypeSwitch(out[0].type_flag_, "", [&](auto out_zero) {
        using O = decltype(out_zero);
        Loop::Run(ctx, lines.count,
                  SoftmaxLines<T, O>{lines, in[0].dptr<T>(), out[0].dptr<O>(), 1.0 / temp_, kLog,
                                     req[0], use_length_ ? in[1].dptr_ : nullptr,
                                     use_length_ ? in[1].type_flag_ : kMXPInt32});
      });
    });
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                const std::vector<TBlob>& in, const std::vector<TBlob>& out,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    if (use_length_) Loop::Zero(ctx, ig[1], req[1]);  // the lengths get no gradient
    if (req[0] == mxplug::kNullOp) return;
    const int a = mxplug::NormalizeAxis(axis_, og[0].ndim());
    const bool plain = !use_length_ && ig[0].type_flag_ == og[0].type_flag_;
    if (plain && temp_ == 1.0 && Fused::Backward(ctx, og[0], out[0], a, kLog, ig[0], req[0]))
      return;
    const Lines lines = LinesAlong(og[0].shape_, a);
    mxplug::FloatTypeSwitch(ig[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      mxplug::FloatTypeSwitch(og[0].type_flag_, "", [&](auto out_zero) {
        using O = decltype(out_zero);
        Loop::Run(
            ctx, lines.count,
            SoftmaxGradLines<T, O>{lines, og[0].dptr<O>(), out[0].dptr<O>(), ig[0].dptr<T>(),
                                   1.0 / temp_, kLog, req[0], use_length_ ? in[1].dptr_ : nullptr,
                                   use_length_ ? in[1].type_flag_ : kMXPInt32});
      });
    });
  }

 private:
  int axis_;
  double temp_;
  bool use_length_ = false;
};

// ---- SoftmaxOutput ----

enum Normalization { kNull, kBatch, kValid };

struct SoftmaxOutputParam : mxplug::Parameter<SoftmaxOutputParam> {
  float grad_scale, ignore_label, smooth_alpha;
  bool multi_output, use_ignore, preserve_shape, out_grad;
  int normalization;
  MXPLUG_DECLARE_PARAMETER(SoftmaxOutputParam) {
    MXPLUG_DECLARE_FIELD(grad_scale)
        .set_default(1.0f)
        .describe("Scales the gradient by a float factor.");
    MXPLUG_DECLARE_FIELD(ignore_label)
        .set_default(-1.0f)
        .describe("The instances whose labels equal this are ignored (with use_ignore).");
    MXPLUG_DECLARE_FIELD(multi_output)
        .set_default(false)
        .describe("Softmax over axis 1 of (n, k, x1, ...), with labels of shape (n, x1, ...).");
    MXPLUG_DECLARE_FIELD(use_ignore)
        .set_default(false)
        .describe("Ignore instances labelled ignore_label.");
    MXPLUG_DECLARE_FIELD(preserve_shape)
        .set_default(false)
        .describe("Softmax over the last axis only.");
    MXPLUG_DECLARE_FIELD(normalization)
        .set_default(kNull)
        .add_enum("null", kNull)
        .add_enum("batch", kBatch)
        .add_enum("valid", kValid)
        .describe("Normalizes the gradient: none, by batch size, or by valid labels.");
    MXPLUG_DECLARE_FIELD(out_grad).set_default(false).describe(
        "Multiplies the gradient by the output gradient.");
    MXPLUG_DECLARE_FIELD(smooth_alpha)
        .set_default(0.0f)
        .describe(
            "Label smoothing: the target puts 1 - alpha on the label and spreads alpha over the "
            "others.");
  }
};

// How SoftmaxOutput sees data of shape d: without multi_output or preserve_shape MXNet flattens
// it to (n, prod(rest)); the classes are on axis 1 with multi_output, else on the last axis.
inline TShape SoftmaxOutputView(const SoftmaxOutputParam& p, const TShape& d) {
  return p.multi_output || p.preserve_shape || d.ndim() <= 2
             ? d
             : TShape{d[0], d.ProdShape(1, d.ndim())};
}
inline int ClassAxis(const SoftmaxOutputParam& p, const TShape& view) {
  return p.multi_output ? 1 : view.ndim() - 1;
}

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
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& d = (*in)[0];
    if (d.ndim() < 0) return false;
    if (d.ndim() < (param_.multi_output ? 2 : 1))
      throw std::invalid_argument("data has shape " + d.ToString() + "; too few dimensions");
    TShape& label = (*in)[1];
    const TShape want = LabelShape(SoftmaxOutputView(param_, d));
    if (label.ndim() < 0) label = want;
    if (label.Size() != want.Size())
      throw std::invalid_argument("label has shape " + label.ToString() + ", expected " +
                                  want.ToString() + " for data of shape " + d.ToString());
    (*out)[0] = d;
    return d.IsKnown();
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>& out) const override {
    if (param_.out_grad) return {og[0], in[1], out[0]};
    return {in[1], out[0]};
  }
  std::vector<std::pair<int, int>> ForwardInplaceOption(
      const std::vector<int>& in, const std::vector<int>& out) const override {
    return {{in[0], out[0]}};
  }
  // Temp space for a device's fused softmax (oneDNN's reorders on the CPU).
  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override {
    return {mxplug::ResourceRequest::kTempSpace};
  }
  // normalization 'valid' counts the valid labels on the device, into temp space.
  std::vector<mxplug::ResourceRequest> BackwardResource(const std::vector<TShape>&) const override {
    if (param_.normalization == kValid) return {mxplug::ResourceRequest::kTempSpace};
    return {};
  }

 private:
  SoftmaxOutputParam param_;
};

/*! \brief Whether a label counts: not ignored (use_ignore and equal to ignore_label). */
struct LabelFilter {
  bool use_ignore;
  float ignore_label;
  MXPLUG_XINLINE bool Ignored(double label) const {
    return use_ignore && label == static_cast<double>(ignore_label);
  }
  MXPLUG_XINLINE bool operator()(double label) const { return !Ignored(label); }
};

/*! \brief SoftmaxOutput's gradient along line l: (y - target) * scale (divided by *valid when
 * given), times the output gradient with out_grad; the target is the label smoothed by alpha. */
template <class T, class L>
struct SoftmaxOutputGradLines {
  Lines lines;
  const T* y;
  const L* label;
  const T* og;  // null unless out_grad
  T* dx;
  LabelFilter filter;
  double alpha, scale;
  const double* valid;  // null unless normalization is 'valid'
  int req;
  MXPLUG_XINLINE void operator()(int64_t l) const {
    using C = mxplug::ComputeType<T>;
    const int64_t base = lines.Base(l), st = lines.inner, n = lines.n;
    // The line of (outer o, inner i) has its label at o * inner + i, which is l.
    const double lv = AsDouble(label[l]);
    const bool ignored = filter.Ignored(lv);
    const int64_t k = static_cast<int64_t>(lv);
    const double off = n > 1 ? alpha / static_cast<double>(n - 1) : 0.0;
    const double s = valid ? scale / *valid : scale;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t i = base + j * st;
      const double target = j == k ? 1.0 - alpha : off;
      double g = ignored ? 0.0 : (AsDouble(y[i]) - target) * s;
      if (og) g *= AsDouble(og[i]);
      mxplug::StoreAs<C>(dx[i], req, static_cast<C>(g));
    }
  }
};

/*! \brief SoftmaxOutput on a device whose element loop is Loop, a call per line; its forward is
 * Fused's softmax first, as softmax's is. */
template <class Loop, class Fused = NoFusedSoftmax>
class SoftmaxOutputKernel : public mxplug::Operator {
 public:
  SoftmaxOutputKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const TShape s = SoftmaxOutputView(p_, in[0].shape_);
    TBlob data = in[0], y = out[0];  // seen as the view
    data.shape_ = y.shape_ = s;
    if (Fused::Forward(ctx, data, ClassAxis(p_, s), false, y, req[0])) return;
    const Lines lines = LinesAlong(s, ClassAxis(p_, s));
    mxplug::RealTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(ctx, lines.count,
                SoftmaxLines<T>{lines, in[0].dptr<T>(), out[0].dptr<T>(), 1.0, false, req[0]});
    });
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                const std::vector<TBlob>& in, const std::vector<TBlob>& out,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    Loop::Zero(ctx, ig[1], req[1]);  // labels get no gradient
    if (req[0] == mxplug::kNullOp) return;
    const TShape s = SoftmaxOutputView(p_, out[0].shape_);
    const Lines lines = LinesAlong(s, ClassAxis(p_, s));
    const LabelFilter filter{p_.use_ignore, p_.ignore_label};
    double scale = p_.grad_scale;
    if (p_.normalization == kBatch) scale /= static_cast<double>(s[0]);
    mxplug::RealTypeSwitch(out[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      mxplug::TypeSwitch(in[1].type_flag_, [&](auto label_zero) {
        using L = decltype(label_zero);
        const L* label = in[1].dptr<L>();
        double* valid = nullptr;
        if (p_.normalization == kValid) {
          valid = ctx.requested[0].get_space_typed<double>(1);
          // Labels are one per line: a batch, or a batch's pixels with multi_output.
          Loop::Run(ctx, 1, CountAtLeastOne<L, LabelFilter>{label, lines.count, filter, valid});
        }
        Loop::Run(ctx, lines.count,
                  SoftmaxOutputGradLines<T, L>{
                      lines, out[0].dptr<T>(), label, p_.out_grad ? og[0].dptr<T>() : nullptr,
                      ig[0].dptr<T>(), filter, p_.smooth_alpha, scale, valid, req[0]});
      });
    });
  }

 private:
  SoftmaxOutputParam p_;
};

// ---- SoftmaxActivation: MXNet's older softmax, per instance or per channel ----

enum SoftmaxActivationMode { kSoftmaxChannel, kSoftmaxInstance };

struct SoftmaxActivationParam : mxplug::Parameter<SoftmaxActivationParam> {
  int mode;
  MXPLUG_DECLARE_PARAMETER(SoftmaxActivationParam) {
    MXPLUG_DECLARE_FIELD(mode)
        .set_default(kSoftmaxInstance)
        .add_enum("channel", kSoftmaxChannel)
        .add_enum("instance", kSoftmaxInstance)
        .describe(
            "Softmax over each instance (its last axis), or over the channels (axis 1) at "
            "each position.");
  }
};

/*! \brief The softmax call SoftmaxActivation is: over axis 1 by channel, else over the last axis
 * (what MXNet 1.9.1 computes by instance; for 2-d data, the whole instance). */
inline mxplug::KwArgs SoftmaxActivationAsSoftmax(const mxplug::KwArgs& kwargs) {
  SoftmaxActivationParam p;
  p.Init(kwargs);
  return {{"axis", p.mode == kSoftmaxChannel ? "1" : "-1"}};
}

class SoftmaxActivationProp : public SoftmaxProp<false> {
 public:
  void Init(const mxplug::KwArgs& kwargs) override {
    SoftmaxProp<false>::Init(SoftmaxActivationAsSoftmax(kwargs));
  }
};

template <class Loop, class Fused>
class SoftmaxActivationKernel : public SoftmaxKernel<false, Loop, Fused> {
 public:
  SoftmaxActivationKernel(const mxplug::KwArgs& kwargs, mxplug::Context ctx)
      : SoftmaxKernel<false, Loop, Fused>(SoftmaxActivationAsSoftmax(kwargs), ctx) {}
};

// ---- softmax_cross_entropy(data, label): sum over rows of -log softmax(data)[label] ----

class SoftmaxCrossEntropyProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {"data", "label"}; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& d = (*in)[0];
    if (d.ndim() < 0) return false;
    if (d.ndim() != 2)
      throw std::invalid_argument("data has shape " + d.ToString() +
                                  "; expected (batch, classes): SoftmaxCrossEntropy only accept "
                                  "2D data");
    TShape& label = (*in)[1];
    if (label.ndim() < 0) label = TShape{d[0]};
    if (label != TShape{d[0]})
      throw std::invalid_argument("label has shape " + label.ToString() + ", expected (" +
                                  std::to_string(d[0]) + ",) for data " + d.ToString());
    (*out)[0] = TShape{1};
    return d.IsKnown();
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    return mxplug::InferTypeFromFirst(in, out);
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>&) const override {
    return {og[0], in[0], in[1]};
  }
  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override {
    return {mxplug::ResourceRequest::kTempSpace};
  }
  std::vector<mxplug::ResourceRequest> BackwardResource(const std::vector<TShape>&) const override {
    return {mxplug::ResourceRequest::kTempSpace};
  }

 private:
  struct NoParam : mxplug::Parameter<NoParam> {
    MXPLUG_DECLARE_PARAMETER(NoParam) {}
  } param_;
};

/*! \brief Row i's log-sum-exp, in double, and its label's column (clipped to the classes). */
template <class T, class L>
struct CrossEntropyRows {
  const T* x;
  const L* label;
  int64_t classes;
  double *lse, *picked;  // picked: x at the label, or null
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    const T* row = x + i * classes;
    double top = static_cast<double>(static_cast<C>(row[0]));
    for (int64_t j = 1; j < classes; ++j) {
      const double v = static_cast<double>(static_cast<C>(row[j]));
      top = v > top ? v : top;
    }
    double sum = 0;
    for (int64_t j = 0; j < classes; ++j)
      sum += exp(static_cast<double>(static_cast<C>(row[j])) - top);
    lse[i] = top + log(sum);
    if (picked) picked[i] = static_cast<double>(static_cast<C>(row[LabelColumn(i)]));
  }
  MXPLUG_XINLINE int64_t LabelColumn(int64_t i) const {
    const int64_t k = static_cast<int64_t>(static_cast<mxplug::ComputeType<L>>(label[i]));
    return k < 0 ? 0 : k >= classes ? classes - 1 : k;
  }
};

template <class T>
struct CrossEntropySum {
  const double *lse, *picked;
  int64_t rows;
  T* out;
  int req;
  MXPLUG_XINLINE void operator()(int64_t) const {
    double loss = 0;
    for (int64_t i = 0; i < rows; ++i) loss += lse[i] - picked[i];
    mxplug::StoreAs<mxplug::ComputeType<T>>(out[0], req, static_cast<mxplug::ComputeType<T>>(loss));
  }
};

/*! \brief dx = og * (softmax(x) - one_hot(label)). */
template <class T, class L>
struct CrossEntropyGradient {
  CrossEntropyRows<T, L> rows;
  const double* lse;
  const T* og;
  T* dx;
  int req;
  MXPLUG_XINLINE void operator()(int64_t e) const {
    using C = mxplug::ComputeType<T>;
    const int64_t i = e / rows.classes, j = e % rows.classes;
    const double p = exp(static_cast<double>(static_cast<C>(rows.x[e])) - lse[i]);
    const double g =
        static_cast<double>(static_cast<C>(og[0])) * (p - (j == rows.LabelColumn(i) ? 1.0 : 0.0));
    mxplug::StoreAs<C>(dx[e], req, static_cast<C>(g));
  }
};

/*! \brief softmax_cross_entropy on a device whose element loop is Loop: a thread per row, then
 * one for the sum; backward a thread per element. Labels outside [0, classes) are clipped. */
template <class Loop>
class SoftmaxCrossEntropyKernel : public mxplug::Operator {
 public:
  SoftmaxCrossEntropyKernel(const mxplug::KwArgs&, mxplug::Context) {}
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const int64_t n = in[0].shape_[0], k = in[0].shape_[1];
    double* lse = ctx.resource(mxplug::ResourceRequest::kTempSpace)
                      .get_space_typed<double>(static_cast<size_t>(2 * n + 1));
    Switch(in[0], in[1], [&](auto zero, auto label_zero) {
      using T = decltype(zero);
      using L = decltype(label_zero);
      const CrossEntropyRows<T, L> rows{in[0].dptr<T>(), in[1].dptr<L>(), k, lse, lse + n};
      if (n > 0 && k > 0) Loop::Run(ctx, n, rows);
      Loop::Run(ctx, 1, CrossEntropySum<T>{lse, lse + n, k > 0 ? n : 0, out[0].dptr<T>(), req[0]});
    });
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                const std::vector<TBlob>& in, const std::vector<TBlob>&,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    Loop::Zero(ctx, ig[1], req[1]);  // labels have no gradient
    if (req[0] == mxplug::kNullOp || ig[0].Size() == 0) return;
    const int64_t n = in[0].shape_[0], k = in[0].shape_[1];
    double* lse = ctx.resource(mxplug::ResourceRequest::kTempSpace)
                      .get_space_typed<double>(static_cast<size_t>(n));
    Switch(in[0], in[1], [&](auto zero, auto label_zero) {
      using T = decltype(zero);
      using L = decltype(label_zero);
      const CrossEntropyRows<T, L> rows{in[0].dptr<T>(), in[1].dptr<L>(), k, lse, nullptr};
      Loop::Run(ctx, n, rows);
      Loop::Run(ctx, n * k,
                CrossEntropyGradient<T, L>{rows, lse, og[0].dptr<T>(), ig[0].dptr<T>(), req[0]});
    });
  }

 private:
  template <class Fn>
  static void Switch(const TBlob& data, const TBlob& label, Fn&& fn) {
    mxplug::RealTypeSwitch(data.type_flag_, "", [&](auto zero) {
      mxplug::TypeSwitch(label.type_flag_, [&](auto label_zero) { fn(zero, label_zero); });
    });
  }
};

/*! \brief Registers the kernels of softmax, log_softmax, SoftmaxOutput (and its alias
 * Softmax), SoftmaxActivation and softmax_cross_entropy on a device whose element loop is Loop and
 * whose fused softmax is Fused (their definitions register in softmax.cc). */
template <class Loop, class Fused = NoFusedSoftmax>
void RegisterSoftmaxKernels(DLDeviceType device) {
  // In the order softmax.cc defines the ops (a plugin's records list them alike).
  mxplug::sdk::RegisterKernel<SoftmaxKernel<false, Loop, Fused>>("softmax", device);
  mxplug::sdk::RegisterKernel<SoftmaxKernel<false, Loop, Fused, true>>("softmin", device);
  mxplug::sdk::RegisterKernel<SoftmaxKernel<true, Loop, Fused>>("log_softmax", device);
  for (const char* name : {"SoftmaxOutput", "Softmax"})
    mxplug::sdk::RegisterKernel<SoftmaxOutputKernel<Loop, Fused>>(name, device);
  mxplug::sdk::RegisterKernel<SoftmaxActivationKernel<Loop, Fused>>("SoftmaxActivation", device);
  mxplug::sdk::RegisterKernel<SoftmaxCrossEntropyKernel<Loop>>("softmax_cross_entropy", device);
}

}  // namespace mxplug_nn

#endif  // MXPLUG_PLUGINS_NN_SOFTMAX_H_
