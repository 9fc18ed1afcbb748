// Definitions of the ordering ops (MXNet's names and parameters): topk, sort and argsort, and their
// kernels, written once over a device's element loop. Each is one computation: the rank of every
// element in its run along the axis (ascending or descending; ties keep index order, as MXNet's
// stable sort; NaN ranks above every number), then each element goes to its rank's place, or the
// mask marks the first k. The gradient of values goes back by the same ranks (a gather: no
// atomics). On a GPU each element counts the elements before it (n steps per element); the CPU
// sorts each run longer than kCountedRun. sort.cc registers the definitions and the CPU kernels,
// devices/cuda/kernels/sort.cu the GPU kernels.
#ifndef MXPLUG_PLUGINS_TENSOR_SORT_H_
#define MXPLUG_PLUGINS_TENSOR_SORT_H_

#include <algorithm>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "elementwise.h"
#include "mxplug/plugin.hpp"

namespace mxplug_tensor {

using mxplug::OpReqType;

enum OrderOp { kTopk, kSort, kArgsort };
enum OrderReturn { kReturnBoth, kReturnIndices, kReturnMask, kReturnValue };

// The index dtypes MXNet's ordering ops offer.
template <class Field>
Field& AddIndexDtypes(Field& f) {
  return f.add_enum("float16", kMXPFloat16)
      .add_enum("float32", kMXPFloat32)
      .add_enum("float64", kMXPFloat64)
      .add_enum("int32", kMXPInt32)
      .add_enum("int64", kMXPInt64)
      .add_enum("uint8", kMXPUint8);
}

struct TopkParam : mxplug::Parameter<TopkParam> {
  std::optional<int> axis;
  int k;
  int ret_typ;
  bool is_ascend;
  int dtype;
  MXPLUG_DECLARE_PARAMETER(TopkParam) {
    MXPLUG_DECLARE_FIELD(axis).set_default(-1).describe(
        "Axis along which to choose the top k (None: the flattened array).");
    MXPLUG_DECLARE_FIELD(k).set_default(1).describe(
        "Number of elements to take; k < 1 takes them all.");
    MXPLUG_DECLARE_FIELD(ret_typ)
        .set_default(kReturnIndices)
        .add_enum("both", kReturnBoth)
        .add_enum("indices", kReturnIndices)
        .add_enum("mask", kReturnMask)
        .add_enum("value", kReturnValue)
        .describe(
            "What to return: the values, their indices, both, or a 0/1 mask of the input's shape.");
    MXPLUG_DECLARE_FIELD(is_ascend).set_default(false).describe(
        "Take the smallest elements instead of the largest.");
    AddIndexDtypes(MXPLUG_DECLARE_FIELD(dtype).set_default(kMXPFloat32))
        .describe("Data type of the indices.");
  }
};

struct SortParam : mxplug::Parameter<SortParam> {
  std::optional<int> axis;
  bool is_ascend;
  MXPLUG_DECLARE_PARAMETER(SortParam) {
    MXPLUG_DECLARE_FIELD(axis).set_default(-1).describe(
        "Axis along which to sort (None: the flattened array).");
    MXPLUG_DECLARE_FIELD(is_ascend).set_default(true).describe("Ascending order, else descending.");
  }
};

struct ArgsortParam : mxplug::Parameter<ArgsortParam> {
  std::optional<int> axis;
  bool is_ascend;
  int dtype;
  MXPLUG_DECLARE_PARAMETER(ArgsortParam) {
    MXPLUG_DECLARE_FIELD(axis).set_default(-1).describe(
        "Axis along which to sort (None: the flattened array).");
    MXPLUG_DECLARE_FIELD(is_ascend).set_default(true).describe("Ascending order, else descending.");
    AddIndexDtypes(MXPLUG_DECLARE_FIELD(dtype).set_default(kMXPFloat32))
        .describe("Data type of the indices.");
  }
};

/*! \brief What a call of any of the three computes: sort and argsort are topk of every element. */
struct OrderSpec {
  std::optional<int> axis;
  int k = 0;  // < 1: every element
  int ret = kReturnValue;
  bool ascend = true;
  int dtype = kMXPFloat32;  // of indices

  template <int kOp>
  static OrderSpec Parse(const mxplug::KwArgs& kwargs) {
    OrderSpec s;
    if constexpr (kOp == kTopk) {
      TopkParam p;
      p.Init(kwargs);
      s = {p.axis, p.k, p.ret_typ, p.is_ascend, p.dtype};
    } else if constexpr (kOp == kSort) {
      SortParam p;
      p.Init(kwargs);
      s = {p.axis, 0, kReturnValue, p.is_ascend, kMXPFloat32};
    } else {
      ArgsortParam p;
      p.Init(kwargs);
      s = {p.axis, 0, kReturnIndices, p.is_ascend, p.dtype};
    }
    return s;
  }
  bool Values() const { return ret == kReturnValue || ret == kReturnBoth; }
};

/*! \brief The data as (outer, n, inner): runs of n along the axis (the whole flattened array when
 * axis is None), of which the first k ranks are taken. */
struct OrderGeometry {
  int64_t outer = 1, n = 1, inner = 1, k = 1;
  bool ascend = true;

  OrderGeometry() = default;
  OrderGeometry(const OrderSpec& s, const TShape& d) : ascend(s.ascend) {
    if (s.axis) {
      const int axis = mxplug::NormalizeAxis(*s.axis, d.ndim());
      outer = d.ProdShape(0, axis);
      n = d[axis];
      inner = d.ProdShape(axis + 1, d.ndim());
    } else {
      n = d.Size();
    }
    if (s.k > n)
      throw std::invalid_argument("k is " + std::to_string(s.k) + ", more than the " +
                                  std::to_string(n) + " elements along the axis of data " +
                                  d.ToString() + " (k must be smaller than " +
                                  std::to_string(n + 1) + ")");
    k = s.k < 1 ? n : s.k;
  }
  // Element e as (a, i, b): run (a, b), position i along it.
  MXPLUG_XINLINE int64_t Position(int64_t e) const { return (e / inner) % n; }
  MXPLUG_XINLINE int64_t RunStart(int64_t e) const {
    return (e / (inner * n)) * n * inner + e % inner;
  }
  // Where rank r of element e's run goes in a (outer, k, inner) output.
  MXPLUG_XINLINE int64_t Place(int64_t e, int64_t r) const {
    return ((e / (inner * n)) * k + r) * inner + e % inner;
  }
};

/*! \brief Whether value a at position i comes before value b at position j: NaN above every
 * number, ties in index order. */
template <class C>
MXPLUG_XINLINE bool OrderedBefore(C a, int64_t i, C b, int64_t j, bool ascend) {
  const bool a_nan = IsNan(a), b_nan = IsNan(b);
  const bool less = (!a_nan && b_nan) || (!a_nan && !b_nan && a < b);
  const bool more = (a_nan && !b_nan) || (!a_nan && !b_nan && b < a);
  if (ascend ? less : more) return true;
  if (ascend ? more : less) return false;
  return i < j;
}

/*! \brief rank[e]: how many elements of e's run come before it (n steps; the GPUs' way). */
template <class T>
struct CountRanks {
  OrderGeometry g;
  const T* x;
  int64_t* rank;
  MXPLUG_XINLINE void operator()(int64_t e) const {
    using C = mxplug::ComputeType<T>;
    const T* run = x + g.RunStart(e);
    const int64_t i = g.Position(e);
    const C v = static_cast<C>(x[e]);
    int64_t r = 0;
    for (int64_t j = 0; j < g.n; ++j)
      r += OrderedBefore(static_cast<C>(run[j * g.inner]), j, v, i, g.ascend) ? 1 : 0;
    rank[e] = r;
  }
};

/*! \brief The same ranks by sorting each run (the CPU's way: n log n per run). */
template <class T>
void SortRanks(const OrderGeometry& g, const T* x, int64_t* rank) {
  using C = mxplug::ComputeType<T>;
  std::vector<int64_t> order(static_cast<size_t>(g.n));
  for (int64_t a = 0; a < g.outer; ++a)
    for (int64_t b = 0; b < g.inner; ++b) {
      const int64_t start = a * g.n * g.inner + b;
      const T* run = x + start;
      std::iota(order.begin(), order.end(), int64_t{0});
      std::sort(order.begin(), order.end(), [&](int64_t i, int64_t j) {
        return OrderedBefore(static_cast<C>(run[i * g.inner]), i, static_cast<C>(run[j * g.inner]),
                             j, g.ascend);
      });
      for (int64_t r = 0; r < g.n; ++r) rank[start + order[r] * g.inner] = r;
    }
}

/*! \brief Forward: element e goes to its rank's place (value and index) when that rank is
 * taken, or marks the mask. */
template <class T, class I>
struct PlaceByRank {
  OrderGeometry g;
  const T* x;
  const int64_t* rank;
  T* value;  // or null
  I* index;  // or null
  T* mask;   // or null
  int value_req, index_req;
  MXPLUG_XINLINE void operator()(int64_t e) const {
    using C = mxplug::ComputeType<T>;
    const int64_t r = rank[e];
    if (mask) {
      mxplug::StoreAs<C>(mask[e], value_req, static_cast<C>(r < g.k ? 1 : 0));
      return;
    }
    if (r >= g.k) return;
    const int64_t o = g.Place(e, r);
    if (value) mxplug::StoreAs<C>(value[o], value_req, static_cast<C>(x[e]));
    if (index)
      mxplug::StoreAs<mxplug::ComputeType<I>>(index[o], index_req,
                                              static_cast<mxplug::ComputeType<I>>(g.Position(e)));
  }
};

/*! \brief Backward of the values: element e's gradient is its place's, or 0 when not taken. */
template <class T>
struct GatherByRank {
  OrderGeometry g;
  const int64_t* rank;
  const T* og;
  T* grad;
  int req;
  MXPLUG_XINLINE void operator()(int64_t e) const {
    using C = mxplug::ComputeType<T>;
    const int64_t r = rank[e];
    mxplug::StoreAs<C>(grad[e], req, r < g.k ? static_cast<C>(og[g.Place(e, r)]) : C(0));
  }
};

template <int kOp>
class OrderProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { spec_ = OrderSpec::Parse<kOp>(kwargs); }
  std::vector<std::string> ListOutputs() const override {
    if (spec_.ret == kReturnBoth) return {"output0", "output1"};
    return {"output"};
  }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& d = (*in)[0];
    if (d.ndim() < 0 || !d.IsKnown()) return false;
    const OrderGeometry g(spec_, d);
    TShape shape = d;
    if (spec_.ret != kReturnMask) {
      std::vector<int64_t> s(d.begin(), d.end());
      if (spec_.axis)
        s[mxplug::NormalizeAxis(*spec_.axis, d.ndim())] = g.k;
      else
        s = {g.k};
      shape = TShape(s);
    }
    for (TShape& o : *out) o = shape;
    return true;
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    if ((*in)[0] == kMXPUnknownDType) return false;
    (*out)[0] = spec_.ret == kReturnIndices ? spec_.dtype : (*in)[0];
    if (spec_.ret == kReturnBoth) (*out)[1] = spec_.dtype;
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>&) const override {
    if (!spec_.Values()) return {};  // indices and masks have no gradient
    return {og[0], in[0]};
  }
  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override {
    return {mxplug::ResourceRequest::kTempSpace};
  }
  std::vector<mxplug::ResourceRequest> BackwardResource(const std::vector<TShape>&) const override {
    return {mxplug::ResourceRequest::kTempSpace};
  }

 private:
  OrderSpec spec_;
};

// The longest run the CPU ranks by counting (CountRanks) rather than sorting (SortRanks); tests
// hold both ways to MXNet's results with runs on either side of it.
constexpr int64_t kCountedRun = 16;

/*! \brief topk, sort or argsort on a device whose element loop is Loop; the CPU sorts long runs. */
template <int kOp, class Loop>
class OrderKernel : public mxplug::Operator {
 public:
  OrderKernel(const mxplug::KwArgs& kwargs, mxplug::Context)
      : spec_(OrderSpec::Parse<kOp>(kwargs)) {}

  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    const OrderGeometry g(spec_, in[0].shape_);
    const int64_t size = static_cast<int64_t>(in[0].Size());
    if (size == 0) return;
    const TBlob* index = spec_.ret == kReturnIndices ? &out[0]
                         : spec_.ret == kReturnBoth  ? &out[1]
                                                     : nullptr;
    const int index_req = spec_.ret == kReturnBoth ? req[1] : req[0];
    const int index_dtype = index ? index->type_flag_ : kMXPFloat32;
    TypeSwitch2(in[0].type_flag_, index_dtype, [&](auto zero, auto index_zero) {
      using T = decltype(zero);
      using I = decltype(index_zero);
      const int64_t* rank = Ranks<T>(ctx, g, in[0].dptr<T>(), size);
      Loop::Run(ctx, size,
                PlaceByRank<T, I>{
                    g, in[0].dptr<T>(), rank, spec_.Values() ? out[0].dptr<T>() : nullptr,
                    index ? index->dptr<I>() : nullptr,
                    spec_.ret == kReturnMask ? out[0].dptr<T>() : nullptr, req[0], index_req});
    });
  }

  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                const std::vector<TBlob>& in, const std::vector<TBlob>&,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    if (!spec_.Values()) return Loop::Zero(ctx, ig[0], req[0]);
    if (req[0] == mxplug::kNullOp || ig[0].Size() == 0) return;
    const OrderGeometry g(spec_, ig[0].shape_);
    const int64_t size = static_cast<int64_t>(ig[0].Size());
    mxplug::TypeSwitch(ig[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      const int64_t* rank = Ranks<T>(ctx, g, in[0].dptr<T>(), size);
      Loop::Run(ctx, size, GatherByRank<T>{g, rank, og[0].dptr<T>(), ig[0].dptr<T>(), req[0]});
    });
  }

 private:
  template <class T>
  const int64_t* Ranks(const mxplug::OpContext& ctx, const OrderGeometry& g, const T* x,
                       int64_t size) const {
    int64_t* rank = ctx.resource(mxplug::ResourceRequest::kTempSpace)
                        .template get_space_typed<int64_t>(static_cast<size_t>(size));
    // The CPU counts too for short runs, where a sort's setup costs more than n steps.
    if (std::is_same_v<Loop, mxplug::CpuLoop> && g.n > kCountedRun)
      SortRanks(g, x, rank);
    else
      Loop::Run(ctx, size, CountRanks<T>{g, x, rank});
    return rank;
  }

  OrderSpec spec_;
};

template <class L>
using TopkKernel = OrderKernel<kTopk, L>;
template <class L>
using SortKernel = OrderKernel<kSort, L>;
template <class L>
using ArgsortKernel = OrderKernel<kArgsort, L>;

/*! \brief Calls visit.template Op<Prop, Kernel>(name, doc, inputs, params) for topk, sort and
 * argsort: the one list the definitions and each device's kernels register from. */
template <class Visitor>
void ForEachOrderOp(Visitor&& visit) {
  visit.template Op<OrderProp<kTopk>, TopkKernel>(
      "topk",
      "The k largest (or smallest) elements along an axis: values, indices, both or a mask.",
      {{"data", "The input array."}}, TopkParam::Fields());
  visit.template Op<OrderProp<kSort>, SortKernel>("sort", "Sorts the elements along an axis.",
                                                  {{"data", "The input array."}},
                                                  SortParam::Fields());
  visit.template Op<OrderProp<kArgsort>, ArgsortKernel>(
      "argsort", "The indices that sort the elements along an axis.",
      {{"data", "The input array."}}, ArgsortParam::Fields());
}

}  // namespace mxplug_tensor

#endif  // MXPLUG_PLUGINS_TENSOR_SORT_H_
