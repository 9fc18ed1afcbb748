// Definition of CTCLoss (alias ctc_loss): the connectionist temporal classification loss (Graves
// et al., 2006) of each sequence of a batch, as MXNet 1.9.1's operator.
//   data (T, N, A): unnormalized scores of A classes (the blank among them) per time step;
//   label (N, L): each sequence's classes, padded (blank_label 'first': the blank is class 0 and
//     the padding 0; 'last': the blank is class A-1 and the padding -1), or cut by label_lengths;
//   data_lengths (N,): each sequence's time steps with use_data_lengths (else all T).
// The output is -log p(label | data) per sequence, p summed over every alignment by the
// forward-backward recursions in log space (in double). The gradient with respect to data,
// softmax(data) - the posterior of each class at each step, is computed in forward into a hidden
// second output, as MXNet's is, and scaled by the output's gradient in backward; steps past a
// sequence's length get none. A sequence whose label no alignment fits (or holds a class out of
// range) gets an infinite (or NaN) loss and no gradient. ctc_loss.cc registers the definition and
// the CPU kernel, devices/cuda/kernels/ctc_loss.cu the GPU one: one thread per sequence.
#ifndef MXPLUG_PLUGINS_NN_CTC_LOSS_H_
#define MXPLUG_PLUGINS_NN_CTC_LOSS_H_

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "elements.h"
#include "mxplug/plugin.hpp"

namespace mxplug_nn {

using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;

struct CTCLossParam : mxplug::Parameter<CTCLossParam> {
  bool use_data_lengths = false, use_label_lengths = false;
  int blank_label = 0;  // 0: 'first', 1: 'last'
  MXPLUG_DECLARE_PARAMETER(CTCLossParam) {
    MXPLUG_DECLARE_FIELD(use_data_lengths)
        .set_default(false)
        .describe("Whether the data lengths are given as the input data_lengths.");
    MXPLUG_DECLARE_FIELD(use_label_lengths)
        .set_default(false)
        .describe("Whether the label lengths are given as the input label_lengths.");
    MXPLUG_DECLARE_FIELD(blank_label)
        .add_enum("first", 0)
        .add_enum("last", 1)
        .set_default(0)
        .describe(
            "The blank: 'first' (class 0, labels padded with 0) or 'last' (class alphabet_size-1, "
            "labels padded with -1).");
  }
};

class CTCLossProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override {
    std::vector<std::string> names{"data", "label"};
    if (param_.use_data_lengths) names.push_back("data_lengths");
    if (param_.use_label_lengths) names.push_back("label_lengths");
    return names;
  }
  std::vector<std::string> ListOutputs() const override { return {"output0", "output1"}; }
  int NumVisibleOutputs() const override { return 1; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape &d = (*in)[0], &l = (*in)[1];
    if (d.ndim() < 0 || l.ndim() < 0) return false;
    if (d.ndim() != 3)
      throw std::invalid_argument("data has shape " + d.ToString() +
                                  ", expected 3 axes (sequence length, batch, alphabet)");
    if (l.ndim() != 2)
      throw std::invalid_argument("label has shape " + l.ToString() +
                                  ", expected 2 axes (batch, label length)");
    if (d[1] != l[0])
      throw std::invalid_argument(
          "The batch size for the labels and data arrays must be the same "
          "(label " +
          l.ToString() + ", data " + d.ToString() + ")");
    if (d[0] < l[1])
      throw std::invalid_argument(
          "The max number of labels cannot exceed the maximum sequence "
          "length of the data (label " +
          l.ToString() + ", data " + d.ToString() + ")");
    for (size_t i = 2; i < in->size(); ++i) {
      const char* what = i == 2 && param_.use_data_lengths ? "Data length" : "Label length";
      mxplug::InferParameterShape(&(*in)[i], TShape{d[1]}, what, d);
    }
    (*out)[0] = TShape{d[1]};
    (*out)[1] = d;
    return true;
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    for (int t : *in)
      if (t == kMXPUnknownDType) return false;
    (*out)[0] = (*out)[1] = (*in)[0];
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>&,
                                             const std::vector<int>& out) const override {
    return {og[0], out[1]};
  }
  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override {
    return {mxplug::ResourceRequest::kTempSpace};
  }

 private:
  CTCLossParam param_;
};

/*! \brief Elements of any type as doubles (the labels and lengths, in scratch space). */
template <class S>
struct ToDoubles {
  const S* in;
  double* out;
  MXPLUG_XINLINE void operator()(int64_t i) const { out[i] = AsDouble(in[i]); }
};

MXPLUG_XINLINE double LogAdd(double a, double b) {
  const double inf = HUGE_VAL;
  if (a == -inf) return b;
  if (b == -inf) return a;
  return a > b ? a + std::log1p(std::exp(b - a)) : b + std::log1p(std::exp(a - b));
}

/*! \brief Sequence n's loss and gradient. Scratch per sequence: log-softmax (T x A), alpha and
 * beta (T x S each, S = 2 L + 1), the extended label (S). */
template <class T>
struct CtcSequence {
  const T* data;
  const double* label;          // (N, L)
  const double* data_lengths;   // (N,) or null
  const double* label_lengths;  // (N,) or null
  int64_t steps, batch, classes, width;
  int blank_last;
  double* scratch;
  T* loss;
  T* grad;  // (T, N, A)
  MXPLUG_XINLINE void operator()(int64_t n) const {
    const double inf = HUGE_VAL;
    const int64_t S = 2 * width + 1, blank = blank_last ? classes - 1 : 0;
    double* logp = scratch + n * (steps * classes + 2 * steps * S + S);
    double* alpha = logp + steps * classes;
    double* beta = alpha + steps * S;
    double* ext = beta + steps * S;
    // The label's length and its extended form: blank, l1, blank, l2, ..., blank.
    const double* l = label + n * width;
    int64_t len = 0;
    bool valid = true;
    if (label_lengths) {
      len = static_cast<int64_t>(label_lengths[n]);
      if (len < 0 || len > width) valid = false, len = 0;
    } else {
      const double pad = blank_last ? -1.0 : 0.0;
      while (len < width && l[len] != pad) ++len;
    }
    for (int64_t i = 0; i < len; ++i)
      if (l[i] < 0 || l[i] >= classes || static_cast<int64_t>(l[i]) == blank) valid = false;
    int64_t t_n = data_lengths ? static_cast<int64_t>(data_lengths[n]) : steps;
    if (t_n < 0 || t_n > steps) valid = false, t_n = 0;
    const int64_t s_n = 2 * len + 1;
    for (int64_t s = 0; s < s_n; ++s) ext[s] = s % 2 ? l[s / 2] : static_cast<double>(blank);
    // Log-softmax of each step.
    for (int64_t t = 0; t < t_n; ++t) {
      const T* x = data + (t * batch + n) * classes;
      double mx = -inf, sum = 0;
      for (int64_t a = 0; a < classes; ++a) mx = AsDouble(x[a]) > mx ? AsDouble(x[a]) : mx;
      for (int64_t a = 0; a < classes; ++a) sum += std::exp(AsDouble(x[a]) - mx);
      for (int64_t a = 0; a < classes; ++a)
        logp[t * classes + a] = AsDouble(x[a]) - mx - std::log(sum);
    }
    auto lp = [&](int64_t t, int64_t s) {
      return logp[t * classes + static_cast<int64_t>(ext[s])];
    };
    auto skips = [&](int64_t s) { return s >= 2 && s % 2 && ext[s] != ext[s - 2]; };
    double log_p = -inf;
    if (valid && t_n > 0) {
      for (int64_t t = 0; t < t_n; ++t)
        for (int64_t s = 0; s < s_n; ++s) {
          double a = -inf;
          if (t == 0) {
            a = s < 2 ? 0.0 : -inf;
          } else {
            a = alpha[(t - 1) * S + s];
            if (s >= 1) a = LogAdd(a, alpha[(t - 1) * S + s - 1]);
            if (skips(s)) a = LogAdd(a, alpha[(t - 1) * S + s - 2]);
          }
          alpha[t * S + s] = a == -inf ? -inf : a + lp(t, s);
        }
      for (int64_t t = t_n - 1; t >= 0; --t)
        for (int64_t s = s_n - 1; s >= 0; --s) {
          double b = -inf;
          if (t == t_n - 1) {
            b = s >= s_n - 2 ? 0.0 : -inf;
          } else {
            b = beta[(t + 1) * S + s];
            if (s + 1 < s_n) b = LogAdd(b, beta[(t + 1) * S + s + 1]);
            if (s + 2 < s_n && skips(s + 2)) b = LogAdd(b, beta[(t + 1) * S + s + 2]);
          }
          beta[t * S + s] = b == -inf ? -inf : b + lp(t, s);
        }
      log_p = alpha[(t_n - 1) * S + s_n - 1];
      if (s_n >= 2) log_p = LogAdd(log_p, alpha[(t_n - 1) * S + s_n - 2]);
    } else if (valid) {
      log_p = len == 0 ? 0.0 : -inf;  // no steps: only the empty label has an alignment
    }
    loss[n] = static_cast<T>(valid ? -log_p : static_cast<double>(NAN));
    // d(-log p)/d data[t, a] = softmax - exp(log(sum over s with ext[s] = a of alpha beta) -
    // log p - logp[t, a]): beta includes step t's probability, as alpha does.
    const bool finite = valid && log_p > -inf;
    for (int64_t t = 0; t < steps; ++t)
      for (int64_t a = 0; a < classes; ++a) {
        double g = 0;
        if (finite && t < t_n) {
          double post = -inf;
          for (int64_t s = 0; s < s_n; ++s)
            if (static_cast<int64_t>(ext[s]) == a)
              post = LogAdd(post, alpha[t * S + s] + beta[t * S + s]);
          const double lpa = logp[t * classes + a];
          g = std::exp(lpa) - (post == -inf ? 0.0 : std::exp(post - log_p - lpa));
        }
        grad[(t * batch + n) * classes + a] = static_cast<T>(g);
      }
  }
};

/*! \brief in_grad = grad * out_grad of the sequence (req). */
template <class T>
struct CtcScaleGradient {
  const T* grad;
  const T* og;
  int64_t batch, classes;
  T* dx;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    mxplug::StoreAs<C>(dx[i], req, C(grad[i]) * C(og[(i / classes) % batch]));
  }
};

template <class Loop>
class CTCLossKernel : public mxplug::Operator {
 public:
  CTCLossKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>&, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    const TShape& d = in[0].shape_;
    const int64_t steps = d[0], batch = d[1], classes = d[2], width = in[1].shape_[1];
    const int64_t S = 2 * width + 1;
    const size_t per = static_cast<size_t>(steps * classes + 2 * steps * S + S);
    size_t extra = static_cast<size_t>(in[1].Size());
    for (size_t i = 2; i < in.size(); ++i) extra += static_cast<size_t>(in[i].Size());
    double* scratch = ctx.requested[0].get_space_typed<double>(per * batch + extra);
    // The labels and lengths as doubles, after the per-sequence scratch.
    double* at = scratch + per * batch;
    const double* as_double[3] = {nullptr, nullptr, nullptr};
    for (size_t i = 1; i < in.size(); ++i) {
      mxplug::TypeSwitch(in[i].type_flag_, [&](auto zero) {
        using S = decltype(zero);
        Loop::Run(ctx, in[i].Size(), ToDoubles<S>{in[i].dptr<S>(), at});
      });
      as_double[i - 1] = at;
      at += in[i].Size();
    }
    const double* data_lengths = p_.use_data_lengths ? as_double[1] : nullptr;
    const double* label_lengths =
        p_.use_label_lengths ? as_double[p_.use_data_lengths ? 2 : 1] : nullptr;
    mxplug::FloatTypeSwitch(in[0].type_flag_, "CTCLoss", [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(ctx, batch,
                CtcSequence<T>{in[0].dptr<T>(), as_double[0], data_lengths, label_lengths, steps,
                               batch, classes, width, p_.blank_label, scratch, out[0].dptr<T>(),
                               out[1].dptr<T>()});
    });
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                const std::vector<TBlob>&, const std::vector<TBlob>& out,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const TShape& d = out[1].shape_;
    mxplug::FloatTypeSwitch(out[1].type_flag_, "CTCLoss", [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(ctx, out[1].Size(),
                CtcScaleGradient<T>{out[1].dptr<T>(), og[0].dptr<T>(), d[1], d[2], ig[0].dptr<T>(),
                                    req[0]});
    });
    // The labels and lengths have no gradient.
    for (size_t i = 1; i < ig.size(); ++i) Loop::Zero(ctx, ig[i], req[i]);
  }

 private:
  CTCLossParam p_;
};

template <class Loop>
void RegisterCTCLossKernels(DLDeviceType device) {
  for (const char* name : {"CTCLoss", "ctc_loss"})
    mxplug::sdk::RegisterKernel<CTCLossKernel<Loop>>(name, device);
}

}  // namespace mxplug_nn

#endif  // MXPLUG_PLUGINS_NN_CTC_LOSS_H_
