// Definition of _histogram and its kernel, written once over a device's index loop (index.h's
// list registers it; a GPU counts with atomic adds). MXNet 1.9.1's semantics: with bin_cnt, the
// edges are range's split in bin_cnt equal parts, stored in the data's dtype (an integer dtype
// truncates them), and an element goes to the bin whose stored edges hold it; with a bins input,
// the edges are its elements. A bin holds its left edge, the last bin its right one too; elements
// outside the edges (and NaN) are not counted. The counts are int64.
#ifndef MXPLUG_PLUGINS_TENSOR_HISTOGRAM_H_
#define MXPLUG_PLUGINS_TENSOR_HISTOGRAM_H_

#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "elementwise.h"
#include "mxplug/plugin.hpp"

namespace mxplug_tensor {

struct HistogramParam : mxplug::Parameter<HistogramParam> {
  std::optional<int> bin_cnt;
  std::optional<std::string> range;
  MXPLUG_DECLARE_PARAMETER(HistogramParam) {
    MXPLUG_DECLARE_FIELD(bin_cnt)
        .set_default(std::nullopt)
        .describe("Number of bins for uniform case");
    MXPLUG_DECLARE_FIELD(range)
        .set_default(std::nullopt)
        .describe(
            "The lower and upper range of the bins. if not provided, range is simply (a.min(), "
            "a.max()). values outside the range are ignored. the first element of the range must "
            "be "
            "less than or equal to the second. range affects the automatic bin computation as "
            "well. "
            "while bin width is computed to be optimal based on the actual data within range, the "
            "bin "
            "count will fill the entire range including portions containing no data.");
  }

  /*! \brief range as (min, max), widened by 0.5 each way when empty, as MXNet does. */
  void Range(double* lo, double* hi) const {
    std::string text = range.value_or("");
    for (char& c : text)
      if (c == '(' || c == ')' || c == '[' || c == ']' || c == ',') c = ' ';
    std::istringstream in(text);
    std::string rest;
    if (!(in >> *lo >> *hi) || (in >> rest))
      throw std::invalid_argument("range must be two numbers (min, max), got '" +
                                  range.value_or("None") + "'");
    if (*lo > *hi)
      throw std::invalid_argument("range's min must not exceed its max, got '" + *range + "'");
    if (*lo == *hi) *lo -= 0.5, *hi += 0.5;
  }
};

class HistogramProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override {
    param_.Init(kwargs);
    if (param_.bin_cnt) {
      if (*param_.bin_cnt < 1)
        throw std::invalid_argument("bin_cnt must be at least 1, got " +
                                    std::to_string(*param_.bin_cnt));
      double lo, hi;
      if (!param_.range) throw std::invalid_argument("range must be given with bin_cnt");
      param_.Range(&lo, &hi);
    }
  }
  std::vector<std::string> ListArguments() const override {
    if (param_.bin_cnt) return {"data"};
    return {"data", "bins"};
  }
  std::vector<std::string> ListOutputs() const override { return {"output", "bin_edges"}; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    if (param_.bin_cnt) {
      (*out)[0] = TShape{*param_.bin_cnt};
      (*out)[1] = TShape{*param_.bin_cnt + 1};
      return (*in)[0].IsKnown();
    }
    const TShape& bins = (*in)[1];
    if (!bins.IsKnown()) return false;
    if (bins.ndim() != 1 || bins[0] < 2)
      throw std::invalid_argument("bins must be a 1-D array of at least two edges, got " +
                                  bins.ToString());
    (*out)[0] = TShape{bins[0] - 1};
    (*out)[1] = bins;
    return (*in)[0].IsKnown();
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    const int t = (*in)[0];
    if (t == kMXPUnknownDType) return false;
    if (in->size() > 1) {
      if ((*in)[1] == kMXPUnknownDType) (*in)[1] = t;
      if ((*in)[1] != t)
        throw std::invalid_argument("bins must have the data's dtype " + mxplug::DTypeName(t) +
                                    ", got " + mxplug::DTypeName((*in)[1]));
    }
    (*out)[0] = kMXPInt64;
    (*out)[1] = t;
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>&, const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return {};
  }

 private:
  HistogramParam param_;
};

// Edge i of bin_cnt equal bins of [lo, hi], in the data's dtype.
template <class T>
struct UniformEdges {
  T* edges;
  double lo, hi;
  int64_t bins;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    edges[i] = static_cast<T>(lo + static_cast<double>(i) * (hi - lo) / static_cast<double>(bins));
  }
};

template <class T>
struct CopyEdges {
  const T* from;
  T* edges;
  MXPLUG_XINLINE void operator()(int64_t i) const { edges[i] = from[i]; }
};

// Element i's bin, counted with Loop's add (atomic on a GPU). Uniform: the bin its position in
// [lo, hi] gives, moved by one where the stored edges (rounded to the dtype) say otherwise. Else:
// the last edge at or below it.
template <class Loop, class T>
struct CountBins {
  const T* x;
  const T* edges;
  int64_t* counts;
  int64_t bins;
  bool uniform;
  double lo, hi;
  MXPLUG_XINLINE double Edge(int64_t b) const {
    return static_cast<double>(static_cast<mxplug::ComputeType<T>>(edges[b]));
  }
  MXPLUG_XINLINE void operator()(int64_t i) const {
    const double v = static_cast<double>(static_cast<mxplug::ComputeType<T>>(x[i]));
    int64_t b = 0;
    if (uniform) {
      if (!(v >= lo && v <= hi)) return;
      b = static_cast<int64_t>((v - lo) * static_cast<double>(bins) / (hi - lo));
      if (b > bins - 1) b = bins - 1;
      if (v < Edge(b) && --b < 0) return;  // below the first stored edge
      if (b < bins - 1 && v >= Edge(b + 1)) ++b;
    } else {
      if (!(v >= Edge(0) && v <= Edge(bins))) return;
      while (b < bins && v >= Edge(b + 1)) ++b;
      if (b > bins - 1) b = bins - 1;
    }
    Loop::AddTo(&counts[b], int64_t{1});
  }
};

/*! \brief _histogram on a device whose index loop is Loop (Run, Zero, AddTo). */
template <class Loop>
class HistogramKernel : public mxplug::Operator {
 public:
  HistogramKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { param_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<mxplug::OpReqType>&, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    const int64_t bins = out[0].Size();
    double lo = 0, hi = 0;
    if (param_.bin_cnt) param_.Range(&lo, &hi);
    Loop::Zero(ctx, out[0], mxplug::kWriteTo);
    mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      T* edges = out[1].dptr<T>();
      if (param_.bin_cnt)
        Loop::Run(ctx, bins + 1, UniformEdges<T>{edges, lo, hi, bins});
      else
        Loop::Run(ctx, bins + 1, CopyEdges<T>{in[1].dptr<T>(), edges});
      if (in[0].Size() > 0)
        Loop::Run(ctx, in[0].Size(),
                  CountBins<Loop, T>{in[0].dptr<T>(), edges, out[0].dptr<int64_t>(), bins,
                                     param_.bin_cnt.has_value(), lo, hi});
    });
  }

 private:
  HistogramParam param_;
};

}  // namespace mxplug_tensor

#endif  // MXPLUG_PLUGINS_TENSOR_HISTOGRAM_H_
