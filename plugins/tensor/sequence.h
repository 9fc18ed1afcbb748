// Definitions of the sequence ops (MXNet's names and parameters): SequenceMask, SequenceLast and
// SequenceReverse over data laid out (time, batch, ...) (axis 0) or (batch, time, ...) (axis 1),
// with each sample's length from sequence_length (truncated to an integer, as MXNet reads it) when
// use_sequence_length is set, else the whole time axis. Their kernels are per-element functors
// written once over a device's element loop, gradients as gathers (no atomics). sequence.cc
// registers the definitions and the CPU kernels, devices/cuda/kernels/sequence.cu the GPU kernels.
#ifndef MXPLUG_PLUGINS_TENSOR_SEQUENCE_H_
#define MXPLUG_PLUGINS_TENSOR_SEQUENCE_H_

#include <stdexcept>
#include <string>
#include <vector>

#include "elementwise.h"
#include "mxplug/plugin.hpp"

namespace mxplug_tensor {

using mxplug::OpReqType;

enum SequenceOp { kSequenceMask, kSequenceLast, kSequenceReverse };

struct SequenceParam : mxplug::Parameter<SequenceParam> {
  bool use_sequence_length;
  double value;
  int axis;
  MXPLUG_DECLARE_PARAMETER(SequenceParam) {
    MXPLUG_DECLARE_FIELD(use_sequence_length)
        .set_default(false)
        .describe("Take each sample's length from sequence_length, else the whole time axis.");
    MXPLUG_DECLARE_FIELD(value).set_default(0.0).describe("The value of masked elements.");
    MXPLUG_DECLARE_FIELD(axis).set_default(0).describe(
        "The time axis: 0 for (time, batch, ...), 1 for (batch, time, ...).");
  }
};
// SequenceLast and SequenceReverse take no value.
struct SequenceNoValueParam : mxplug::Parameter<SequenceNoValueParam> {
  bool use_sequence_length;
  int axis;
  MXPLUG_DECLARE_PARAMETER(SequenceNoValueParam) {
    MXPLUG_DECLARE_FIELD(use_sequence_length)
        .set_default(false)
        .describe("Take each sample's length from sequence_length, else the whole time axis.");
    MXPLUG_DECLARE_FIELD(axis).set_default(0).describe(
        "The time axis: 0 for (time, batch, ...), 1 for (batch, time, ...).");
  }
};

template <int kOp>
SequenceParam ParseSequenceParam(const mxplug::KwArgs& kwargs) {
  SequenceParam p;
  if (kOp == kSequenceMask) {
    p.Init(kwargs);
  } else {
    SequenceNoValueParam q;
    q.Init(kwargs);
    p.Init({});
    p.use_sequence_length = q.use_sequence_length;
    p.axis = q.axis;
  }
  if (p.axis != 0 && p.axis != 1)
    throw std::invalid_argument("axis is " + std::to_string(p.axis) + "; expected 0 or 1");
  if (kOp == kSequenceReverse && p.axis != 0)
    throw std::invalid_argument(
        "axis is 1; SequenceReverse takes (time, batch, ...) data only, axis 0 (as MXNet: "
        "Current implementation expects axis to be 0.)");
  return p;
}

/*! \brief Element e of the data as (time t, batch b): axis 0 is (T, B, R), axis 1 (B, T, R). */
struct SequenceGeometry {
  int64_t steps, batch, rest;
  int axis;
  bool lengths;  // read sequence_length
  MXPLUG_XINLINE int64_t Time(int64_t e) const {
    return axis == 0 ? e / (batch * rest) : (e / rest) % steps;
  }
  MXPLUG_XINLINE int64_t Batch(int64_t e) const {
    return axis == 0 ? (e / rest) % batch : e / (steps * rest);
  }
  MXPLUG_XINLINE int64_t At(int64_t t, int64_t b, int64_t k) const {
    return axis == 0 ? (t * batch + b) * rest + k : (b * steps + t) * rest + k;
  }
  /*! \brief Sample b's length, in [0, steps]. */
  template <class I>
  MXPLUG_XINLINE int64_t Length(const I* len, int64_t b) const {
    if (!lengths) return steps;
    const int64_t n = IndexValue(len[b]);
    return n < 0 ? 0 : n > steps ? steps : n;
  }
};

inline SequenceGeometry MakeSequenceGeometry(const SequenceParam& p, const TShape& d) {
  const int64_t steps = d[p.axis], batch = d[1 - p.axis];
  return {steps, batch, d.ProdShape(2, d.ndim()), p.axis, p.use_sequence_length};
}

template <int kOp>
class SequenceProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_ = ParseSequenceParam<kOp>(kwargs); }
  std::vector<std::string> ListArguments() const override {
    if (param_.use_sequence_length) return {"data", "sequence_length"};
    return {"data"};
  }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& d = (*in)[0];
    if (d.ndim() < 0) return false;
    if (d.ndim() < 2)
      throw std::invalid_argument("data has shape " + d.ToString() +
                                  "; expected at least 2 axes, time and batch");
    if (param_.use_sequence_length) {
      const TShape want{d[1 - param_.axis]};
      TShape& len = (*in)[1];
      if (len.ndim() < 0) len = want;
      if (len != want)
        throw std::invalid_argument("sequence_length has shape " + len.ToString() + ", expected " +
                                    want.ToString() + ", one per sample of data " + d.ToString());
    }
    if (kOp == kSequenceLast) {
      std::vector<int64_t> s(d.begin(), d.end());
      s.erase(s.begin() + param_.axis);
      (*out)[0] = TShape(s);
    } else {
      (*out)[0] = d;
    }
    return d.IsKnown();
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    return mxplug::InferTypeFromFirst(in, out);
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>&) const override {
    if (param_.use_sequence_length) return {og[0], in[1]};
    return {og[0]};
  }

 private:
  SequenceParam param_;
};

/*! \brief Forward of SequenceMask and SequenceReverse (per output element, the data's shape) and
 * backward of all three (per input element: a gather from the output gradient). */
template <int kOp, bool kBackward, class T, class I>
struct SequenceElements {
  SequenceGeometry g;
  const I* len;
  const T* src;  // the data forward, the output gradient backward
  T* dst;
  double value;
  int req;
  MXPLUG_XINLINE void operator()(int64_t e) const {
    using C = mxplug::ComputeType<T>;
    const int64_t t = g.Time(e), b = g.Batch(e), n = g.Length(len, b);
    C v;
    if (kOp == kSequenceMask) {
      v = t < n ? static_cast<C>(src[e]) : static_cast<C>(kBackward ? 0.0 : value);
    } else if (kOp == kSequenceReverse) {  // its own adjoint
      v = static_cast<C>(src[t < n ? g.At(n - 1 - t, b, e % g.rest) : e]);
    } else {  // SequenceLast's backward: the gradient reaches step n - 1 only
      const int64_t last = n > 0 ? n - 1 : 0;
      v = t == last ? static_cast<C>(src[b * g.rest + e % g.rest]) : C(0);
    }
    mxplug::StoreAs<C>(dst[e], req, v);
  }
};

/*! \brief SequenceLast's forward: output (b, k) is the data at (n - 1, b, k), or at step 0 for a
 * sample of length 0. */
template <class T, class I>
struct SequenceLastElements {
  SequenceGeometry g;
  const I* len;
  const T* x;
  T* out;
  int req;
  MXPLUG_XINLINE void operator()(int64_t o) const {
    using C = mxplug::ComputeType<T>;
    const int64_t b = o / g.rest, n = g.Length(len, b);
    mxplug::StoreAs<C>(out[o], req, static_cast<C>(x[g.At(n > 0 ? n - 1 : 0, b, o % g.rest)]));
  }
};

/*! \brief SequenceMask, SequenceLast or SequenceReverse on a device whose element loop is Loop. */
template <int kOp, class Loop>
class SequenceKernel : public mxplug::Operator {
 public:
  SequenceKernel(const mxplug::KwArgs& kwargs, mxplug::Context)
      : p_(ParseSequenceParam<kOp>(kwargs)) {}

  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp || out[0].Size() == 0) return;
    if (in[0].dptr_ == out[0].dptr_ && kOp == kSequenceReverse)
      throw std::invalid_argument("SequenceReverse cannot write over its input");
    const SequenceGeometry g = MakeSequenceGeometry(p_, in[0].shape_);
    TypeSwitch2(
        in[0].type_flag_, LengthType(in, in[0].type_flag_), [&](auto zero, auto index_zero) {
          using T = decltype(zero);
          using I = decltype(index_zero);
          const I* len = p_.use_sequence_length ? in[1].dptr<I>() : nullptr;
          if constexpr (kOp == kSequenceLast)
            Loop::Run(
                ctx, static_cast<int64_t>(out[0].Size()),
                SequenceLastElements<T, I>{g, len, in[0].dptr<T>(), out[0].dptr<T>(), req[0]});
          else
            Loop::Run(ctx, static_cast<int64_t>(out[0].Size()),
                      SequenceElements<kOp, false, T, I>{g, len, in[0].dptr<T>(), out[0].dptr<T>(),
                                                         p_.value, req[0]});
        });
  }

  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                const std::vector<TBlob>& in, const std::vector<TBlob>&,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    if (p_.use_sequence_length) Loop::Zero(ctx, ig[1], req[1]);  // lengths have no gradient
    if (req[0] == mxplug::kNullOp || ig[0].Size() == 0) return;
    const SequenceGeometry g = MakeSequenceGeometry(p_, ig[0].shape_);
    TypeSwitch2(ig[0].type_flag_, LengthType(in, ig[0].type_flag_),
                [&](auto zero, auto index_zero) {
                  using T = decltype(zero);
                  using I = decltype(index_zero);
                  Loop::Run(ctx, static_cast<int64_t>(ig[0].Size()),
                            SequenceElements<kOp, true, T, I>{
                                g, p_.use_sequence_length ? in[1].dptr<I>() : nullptr,
                                og[0].dptr<T>(), ig[0].dptr<T>(), 0.0, req[0]});
                });
  }

 private:
  // The lengths' dtype, or `none` without lengths (a type then never read).
  int LengthType(const std::vector<TBlob>& in, int none) const {
    return p_.use_sequence_length ? in[1].type_flag_ : none;
  }
  SequenceParam p_;
};

template <class L>
using SequenceMaskKernel = SequenceKernel<kSequenceMask, L>;
template <class L>
using SequenceLastKernel = SequenceKernel<kSequenceLast, L>;
template <class L>
using SequenceReverseKernel = SequenceKernel<kSequenceReverse, L>;

/*! \brief Calls visit.template Op<Prop, Kernel>(name, doc, inputs, params) for the sequence ops:
 * the one list the definitions and each device's kernels register from. */
template <class Visitor>
void ForEachSequenceOp(Visitor&& visit) {
  visit.template Op<SequenceProp<kSequenceMask>, SequenceMaskKernel>(
      "SequenceMask", "Sets the steps of each sample past its length to value.",
      {{"data", "(time, batch, ...) or (batch, time, ...) data."},
       {"sequence_length", "Each sample's length (with use_sequence_length)."}},
      SequenceParam::Fields());
  visit.template Op<SequenceProp<kSequenceLast>, SequenceLastKernel>(
      "SequenceLast", "The last step of each sample: step length - 1.",
      {{"data", "(time, batch, ...) or (batch, time, ...) data."},
       {"sequence_length", "Each sample's length (with use_sequence_length)."}},
      SequenceNoValueParam::Fields());
  visit.template Op<SequenceProp<kSequenceReverse>, SequenceReverseKernel>(
      "SequenceReverse", "Reverses the first length steps of each sample; the rest stay.",
      {{"data", "(time, batch, ...) data."},
       {"sequence_length", "Each sample's length (with use_sequence_length)."}},
      SequenceNoValueParam::Fields());
}

}  // namespace mxplug_tensor

#endif  // MXPLUG_PLUGINS_TENSOR_SEQUENCE_H_
