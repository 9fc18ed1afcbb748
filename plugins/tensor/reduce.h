// Definitions of the reductions over axes (MXNet's sum, mean, prod, max, min, nansum, nanprod,
// norm) and of argmax/argmin: parameters, shapes, the math each kernel runs (Reducer, ArgExtreme)
// and the list that registers them. reduce.cc registers the definitions; the kernels of each
// device (reduce_cpu.cc, devices/cuda/kernels/reduce.cu) register from the same list.
#ifndef MXPLUG_PLUGINS_TENSOR_REDUCE_H_
#define MXPLUG_PLUGINS_TENSOR_REDUCE_H_

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "elementwise.h"
#include "mxplug/plugin.hpp"

namespace mxplug_tensor {

// ---- Parameters ----

struct ReduceParam : mxplug::Parameter<ReduceParam> {
  std::string axis;
  bool keepdims;
  bool exclude;
  MXPLUG_DECLARE_PARAMETER(ReduceParam) {
    MXPLUG_DECLARE_FIELD(axis).set_default("None").describe(
        "The axis or axes to reduce: an int, a tuple of ints, or None for all axes.");
    MXPLUG_DECLARE_FIELD(keepdims).set_default(false).describe(
        "Keep the reduced axes in the result, with size 1.");
    MXPLUG_DECLARE_FIELD(exclude).set_default(false).describe(
        "Reduce every axis except those in `axis`.");
  }
};

struct NormParam : mxplug::Parameter<NormParam> {
  int ord;
  std::string axis;
  std::optional<int> out_dtype;
  bool keepdims;
  MXPLUG_DECLARE_PARAMETER(NormParam) {
    MXPLUG_DECLARE_FIELD(ord).set_default(2).set_range(1, 2).describe("Order of the norm: 1 or 2.");
    MXPLUG_DECLARE_FIELD(axis).set_default("None").describe(
        "The axis or axes to reduce: an int, a tuple of ints, or None for all axes.");
    MXPLUG_DECLARE_FIELD(out_dtype)
        .set_default(std::nullopt)
        .add_enum("float16", kMXPFloat16)
        .add_enum("float32", kMXPFloat32)
        .add_enum("float64", kMXPFloat64)
        .add_enum("int32", kMXPInt32)
        .add_enum("int64", kMXPInt64)
        .add_enum("int8", kMXPInt8)
        .describe(
            "The data type of the output: the data's own (Note [norm out_dtype] in reduce.h).");
    MXPLUG_DECLARE_FIELD(keepdims).set_default(false).describe(
        "Keep the reduced axes with size 1.");
  }
};

struct ArgParam : mxplug::Parameter<ArgParam> {
  std::optional<int> axis;
  bool keepdims;
  MXPLUG_DECLARE_PARAMETER(ArgParam) {
    MXPLUG_DECLARE_FIELD(axis)
        .set_default(std::nullopt)
        .describe("The axis to search; None searches the flattened array.");
    MXPLUG_DECLARE_FIELD(keepdims).set_default(false).describe(
        "Keep the reduced axis with size 1.");
  }
};

// ---- Shapes ----

// Which axes of an ndim-d input are reduced.
inline std::vector<bool> ReducedAxes(const ReduceParam& p, int nd) {
  std::vector<bool> reduced(nd, false);
  if (p.axis == "None") {
    std::fill(reduced.begin(), reduced.end(), !p.exclude);
    return reduced;
  }
  const std::vector<std::optional<int64_t>> axes = ParseOptionalTuple(p.axis, "axis");
  if (axes.empty()) std::fill(reduced.begin(), reduced.end(), true);  // "()": every axis
  for (const auto& a : axes) {
    if (!a) throw std::invalid_argument("parameter 'axis' = '" + p.axis + "' may not contain None");
    const int axis = mxplug::NormalizeAxis(*a, nd);
    if (reduced[axis])
      throw std::invalid_argument("axis " + std::to_string(axis) + " is named twice");
    reduced[axis] = true;
  }
  if (p.exclude) reduced.flip();
  return reduced;
}

// The result's shape: reduced axes dropped (or kept as 1); MXNet's legacy shapes have no 0-d
// arrays, so reducing everything gives (1,).
inline TShape ReducedShape(const TShape& in, const std::vector<bool>& reduced, bool keepdims) {
  std::vector<int64_t> d;
  for (int i = 0; i < in.ndim(); ++i) {
    if (!reduced[i])
      d.push_back(in[i]);
    else if (keepdims)
      d.push_back(1);
  }
  if (d.empty()) d.push_back(1);
  return TShape(d);
}

// The result's shape with the reduced axes kept as size 1 (what kernels index with).
inline TShape KeptShape(const TShape& in, const std::vector<bool>& reduced) {
  std::vector<int64_t> d(in.begin(), in.end());
  for (size_t i = 0; i < d.size(); ++i)
    if (reduced[i]) d[i] = 1;
  return TShape(d);
}

// ---- The math of a reduction ----

// kNorm is the op norm, whose kernels run kNorm1 or kNorm2 as its `ord` says.
enum class ReduceKind { kSum, kMean, kProd, kMax, kMin, kNanSum, kNanProd, kNorm, kNorm1, kNorm2 };

// What an element of type T accumulates in: double for floats (float16 too), the type itself for
// integers (as NumPy); norms in double always.
template <ReduceKind K, class T>
using AccumulatorOf =
    std::conditional_t<std::is_integral_v<T> && K != ReduceKind::kNorm1 && K != ReduceKind::kNorm2,
                       T, double>;

/*! \brief The math of reduction K, the same on every device: the output is
 * Finish(Merge(...Merge(Init(), Element(x0))..., Element(xn)), n); Merge also joins partial
 * results (a device reducing in parallel). Grad(g, x, y, n) is the input's gradient for output
 * gradient g, input element x and output y. */
template <ReduceKind K>
struct Reducer {
  static_assert(K != ReduceKind::kNorm, "norm runs as kNorm1 or kNorm2");
  static constexpr ReduceKind kKind = K;
  // sum and mean read only the output gradient.
  static constexpr bool kGradReadsData = K != ReduceKind::kSum && K != ReduceKind::kMean;

  template <class A>
  static MXPLUG_XINLINE A Init() {
    if constexpr (K == ReduceKind::kProd || K == ReduceKind::kNanProd) return A(1);
    // -inf / +inf for floats: lowest() would be the answer for a row of -inf in float64.
    // Integers start at their extremes.
    else if constexpr (K == ReduceKind::kMax)
      return std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity()
                                                  : std::numeric_limits<A>::lowest();
    else if constexpr (K == ReduceKind::kMin)
      return std::numeric_limits<A>::has_infinity ? std::numeric_limits<A>::infinity()
                                                  : std::numeric_limits<A>::max();
    else
      return A(0);
  }
  template <class A>
  static MXPLUG_XINLINE A Element(A v) {
    if constexpr (K == ReduceKind::kNanSum)
      return IsNan(v) ? A(0) : v;
    else if constexpr (K == ReduceKind::kNanProd)
      return IsNan(v) ? A(1) : v;
    else if constexpr (K == ReduceKind::kNorm1)
      return v < A(0) ? -v : v;
    else if constexpr (K == ReduceKind::kNorm2)
      return v * v;
    else
      return v;
  }
  template <class A>
  static MXPLUG_XINLINE void Merge(A& acc, A v) {
    if constexpr (K == ReduceKind::kProd || K == ReduceKind::kNanProd)
      acc *= v;
    else if constexpr (K == ReduceKind::kMax)  // a NaN wins and stays
      acc = (v > acc || IsNan(v)) ? v : acc;
    else if constexpr (K == ReduceKind::kMin)
      acc = (v < acc || IsNan(v)) ? v : acc;
    else
      acc += v;
  }
  template <class A>
  static MXPLUG_XINLINE A Finish(A acc, int64_t count) {
    if constexpr (K == ReduceKind::kMean && std::is_integral_v<A>)
      return count ? acc / A(count) : A(0);
    else if constexpr (K == ReduceKind::kMean)
      return count ? acc / A(count) : std::numeric_limits<A>::quiet_NaN();
    else if constexpr (K == ReduceKind::kNorm2)
      return sqrt(acc);
    else
      return acc;
  }
  template <class C>
  static MXPLUG_XINLINE C Grad(C g, C x, C y, int64_t count) {
    if constexpr (K == ReduceKind::kSum)
      return g;
    else if constexpr (K == ReduceKind::kNanSum)
      return IsNan(x) ? C(0) : g;
    else if constexpr (K == ReduceKind::kMean)
      return g / C(count);
    else if constexpr (K == ReduceKind::kProd || K == ReduceKind::kNanProd)
      return x == C(0) ? C(0) : g * y / x;
    else if constexpr (K == ReduceKind::kNorm1 && std::is_unsigned_v<C>)
      return x > C(0) ? g : C(0);
    else if constexpr (K == ReduceKind::kNorm1)
      return x > C(0) ? g : x < C(0) ? C(-g) : C(0);
    else if constexpr (K == ReduceKind::kNorm2)
      return y == C(0) ? C(0) : g * x / y;
    else  // max, min: the elements equal to the result
      return x == y ? g : C(0);
  }
};

/*! \brief What a reduction kernel is built from: the kind it runs (norm's from its ord) and the
 * axes it reduces. */
struct ReduceSpec {
  ReduceKind kind;
  ReduceParam axes;
  std::optional<int> out_dtype;  // norm's

  ReduceSpec(ReduceKind k, const mxplug::KwArgs& kwargs) : kind(k) {
    if (k != ReduceKind::kNorm) {
      axes.Init(kwargs);
      return;
    }
    NormParam n;
    n.Init(kwargs);
    kind = n.ord == 1 ? ReduceKind::kNorm1 : ReduceKind::kNorm2;
    axes.axis = n.axis, axes.keepdims = n.keepdims, axes.exclude = false;
    out_dtype = n.out_dtype;
  }

  /*! \brief Calls fn(Reducer<K>{}) for the op's kind K, or for norm fn(Reducer<kNorm1>{}) or
   * fn(Reducer<kNorm2>{}) as its ord says. */
  template <ReduceKind K, class Fn>
  void Visit(Fn&& fn) const {
    if constexpr (K != ReduceKind::kNorm)
      fn(Reducer<K>{});
    else if (kind == ReduceKind::kNorm1)
      fn(Reducer<ReduceKind::kNorm1>{});
    else
      fn(Reducer<ReduceKind::kNorm2>{});
  }
};

// ---- argmax / argmin ----

/*! \brief The index of the first maximum (kMax) or minimum of x[0], x[stride], ...,
 * x[(n-1)*stride]; a NaN is more extreme than any number (the first NaN's index, as MXNet 1.9.1,
 * NumPy and PyTorch give). */
template <bool kMax, class T>
MXPLUG_XINLINE int64_t ArgExtreme(const T* x, int64_t n, int64_t stride) {
  int64_t best = 0;
  for (int64_t k = 1; k < n; ++k) {
    const T w = x[best * stride];
    if (IsNan(w)) break;
    const T v = x[k * stride];
    if (IsNan(v) || (kMax ? v > w : v < w)) best = k;
  }
  return best;
}

/*! \brief argmax/argmin's parameters; argmax_channel (kChannel) has none of its own and
 * searches axis 1, the channels, as MXNet's. */
template <bool kChannel>
ArgParam ParseArgParam(const mxplug::KwArgs& kwargs) {
  ArgParam p;
  if (!kChannel) {
    p.Init(kwargs);
    return p;
  }
  NoParam none;
  none.Init(kwargs);  // refuses every keyword
  p.Init({});
  p.axis = 1;
  return p;
}

/*! \brief argmax/argmin viewed as (outer, n, inner): the searched axis of length n between the
 * axes before and after it (the flattened array when axis is None). */
struct ArgGeometry {
  int64_t outer, n, inner;
  ArgGeometry(const ArgParam& p, const TShape& s) {
    const int axis = p.axis ? mxplug::NormalizeAxis(*p.axis, s.ndim()) : -1;
    outer = axis < 0 ? 1 : s.ProdShape(0, axis);
    n = axis < 0 ? s.Size() : s[axis];
    inner = axis < 0 ? 1 : s.ProdShape(axis + 1, s.ndim());
  }
};

// ---- Properties ----

template <ReduceKind K>
class ReduceProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override {
    const ReduceSpec spec(K, kwargs);
    param_ = spec.axes;
    out_dtype_ = spec.out_dtype;
  }
  // Note [norm out_dtype]: MXNet 1.9.1's norm reports out_dtype as its output's dtype, but its
  // kernels then fail on any out_dtype other than the data's own (a TBlob dtype check at the first
  // read). mxplug accepts the data's own dtype and refuses another when the dtypes are inferred,
  // saying so, rather than at a later wait.
  bool InferType(std::vector<int>* in, std::vector<int>* out,
                 std::vector<int>* aux) const override {
    if (!mxplug::OperatorProperty::InferType(in, out, aux)) return false;
    if (out_dtype_ && *out_dtype_ != (*in)[0])
      throw std::invalid_argument("out_dtype " + mxplug::DTypeName(*out_dtype_) +
                                  " differs from the data's dtype " + mxplug::DTypeName((*in)[0]) +
                                  "; norm computes in and returns the data's dtype (MXNet 1.9.1's "
                                  "kernels fail on another out_dtype too)");
    return true;
  }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& is = (*in)[0];
    if (is.ndim() < 0) return false;
    (*out)[0] = ReducedShape(is, ReducedAxes(param_, is.ndim()), param_.keepdims);
    return is.IsKnown();
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>& out) const override {
    if (K == ReduceKind::kSum || K == ReduceKind::kMean) return {og[0]};
    return {og[0], in[0], out[0]};
  }

 private:
  ReduceParam param_;
  std::optional<int> out_dtype_;
};

template <bool kMax, bool kChannel = false>
class ArgProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_ = ParseArgParam<kChannel>(kwargs); }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& s = (*in)[0];
    if (s.ndim() < 0) return false;
    if (!param_.axis) {
      (*out)[0] = param_.keepdims ? TShape(s.ndim(), 1) : TShape{1};
      return s.IsKnown();
    }
    const int axis = mxplug::NormalizeAxis(*param_.axis, s.ndim());
    std::vector<int64_t> d(s.begin(), s.end());
    if (param_.keepdims)
      d[axis] = 1;
    else
      d.erase(d.begin() + axis);
    if (d.empty()) d.push_back(1);
    (*out)[0] = TShape(d);
    return s.IsKnown();
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>&, const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return {};  // an index has no gradient
  }

 private:
  ArgParam param_;
};

// ---- moments: the mean and the (biased) variance over axes ----

struct MomentsParam : mxplug::Parameter<MomentsParam> {
  std::optional<TShape> axes;
  bool keepdims;
  MXPLUG_DECLARE_PARAMETER(MomentsParam) {
    MXPLUG_DECLARE_FIELD(axes).set_default(std::nullopt).describe("The axes to reduce.");
    MXPLUG_DECLARE_FIELD(keepdims).set_default(false).describe(
        "Keep the reduced axes with size 1.");
  }
};

inline std::vector<bool> MomentsAxes(const MomentsParam& p, int nd) {
  if (!p.axes || p.axes->ndim() <= 0)
    throw std::invalid_argument(
        "axes is empty: Empty axes is not supported, if you would like to do global moments, "
        "please pass all axes to axes argument");
  std::vector<bool> reduced(nd, false);
  for (int64_t a : *p.axes) {
    const int axis = mxplug::NormalizeAxis(static_cast<int>(a), nd);
    if (reduced[axis])
      throw std::invalid_argument("axis " + std::to_string(axis) + " is named twice");
    reduced[axis] = true;
  }
  return reduced;
}

constexpr int kMaxMomentAxes = 8;

/*! \brief The input as kept positions (the outputs) times reduced positions: each output's
 * elements, and each element's output. Passed to kernels by value. */
struct MomentsGeometry {
  int kept = 0, red = 0;
  int64_t kept_size[kMaxMomentAxes] = {}, kept_stride[kMaxMomentAxes] = {};
  int64_t red_size[kMaxMomentAxes] = {}, red_stride[kMaxMomentAxes] = {};
  int64_t nd = 0, size[kMaxMomentAxes] = {}, out_stride[kMaxMomentAxes] = {};  // per input axis
  int64_t count = 1;  // reduced elements per output

  MomentsGeometry(const TShape& in, const std::vector<bool>& reduced) {
    if (in.ndim() > kMaxMomentAxes)
      throw std::invalid_argument("data has " + std::to_string(in.ndim()) +
                                  " axes; moments takes at most " + std::to_string(kMaxMomentAxes));
    nd = in.ndim();
    int64_t stride = 1, ostride = 1;
    for (int a = in.ndim() - 1; a >= 0; --a) {
      size[a] = in[a];
      out_stride[a] = reduced[a] ? 0 : ostride;
      if (!reduced[a]) ostride *= in[a];
      stride *= in[a];
    }
    stride = 1;
    for (int a = in.ndim() - 1; a >= 0; --a) {
      if (reduced[a]) {
        red_size[red] = in[a], red_stride[red] = stride, ++red;
        count *= in[a];
      } else {
        kept_size[kept] = in[a], kept_stride[kept] = stride, ++kept;
      }
      stride *= in[a];
    }
  }
  // (The axes are listed innermost first.)
  MXPLUG_XINLINE int64_t KeptOffset(int64_t o) const {
    int64_t off = 0;
    for (int a = 0; a < kept; ++a) off += (o % kept_size[a]) * kept_stride[a], o /= kept_size[a];
    return off;
  }
  MXPLUG_XINLINE int64_t ReducedOffset(int64_t r) const {
    int64_t off = 0;
    for (int a = 0; a < red; ++a) off += (r % red_size[a]) * red_stride[a], r /= red_size[a];
    return off;
  }
  MXPLUG_XINLINE int64_t OutputOf(int64_t e) const {
    int64_t o = 0;
    for (int64_t a = nd - 1; a >= 0; --a) o += (e % size[a]) * out_stride[a], e /= size[a];
    return o;
  }
};

/*! \brief Per output: the mean, then the mean squared deviation from it, in double. */
template <class T>
struct MomentsForward {
  MomentsGeometry g;
  const T* x;
  T *mean, *var;
  int mean_req, var_req;
  MXPLUG_XINLINE void operator()(int64_t o) const {
    using C = mxplug::ComputeType<T>;
    const int64_t base = g.KeptOffset(o);
    double sum = 0;
    for (int64_t r = 0; r < g.count; ++r)
      sum += static_cast<double>(static_cast<C>(x[base + g.ReducedOffset(r)]));
    const double m = sum / static_cast<double>(g.count);
    double squares = 0;
    for (int64_t r = 0; r < g.count; ++r) {
      const double d = static_cast<double>(static_cast<C>(x[base + g.ReducedOffset(r)])) - m;
      squares += d * d;
    }
    mxplug::StoreAs<C>(mean[o], mean_req, static_cast<C>(m));
    mxplug::StoreAs<C>(var[o], var_req, static_cast<C>(squares / static_cast<double>(g.count)));
  }
};

/*! \brief dx = dmean / n + dvar * 2 (x - mean) / n. */
template <class T>
struct MomentsBackward {
  MomentsGeometry g;
  const T *x, *mean, *dmean, *dvar;
  T* dx;
  int req;
  MXPLUG_XINLINE void operator()(int64_t e) const {
    using C = mxplug::ComputeType<T>;
    const int64_t o = g.OutputOf(e);
    const double n = static_cast<double>(g.count);
    const double d = static_cast<double>(static_cast<C>(dmean[o])) / n +
                     static_cast<double>(static_cast<C>(dvar[o])) * 2.0 *
                         (static_cast<double>(static_cast<C>(x[e])) -
                          static_cast<double>(static_cast<C>(mean[o]))) /
                         n;
    mxplug::StoreAs<C>(dx[e], req, static_cast<C>(d));
  }
};

class MomentsProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListOutputs() const override { return {"output0", "output1"}; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& s = (*in)[0];
    if (s.ndim() < 0) return false;
    const TShape o = ReducedShape(s, MomentsAxes(param_, s.ndim()), param_.keepdims);
    (*out)[0] = (*out)[1] = o;
    return s.IsKnown();
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>& out) const override {
    return {og[0], og[1], in[0], out[0]};
  }

 private:
  MomentsParam param_;
};

/*! \brief moments on a device whose element loop is Loop: a thread per output forward, per
 * element backward. */
template <class Loop>
class MomentsKernel : public mxplug::Operator {
 public:
  MomentsKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<mxplug::OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    const MomentsGeometry g(in[0].shape_, MomentsAxes(p_, in[0].ndim()));
    mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(ctx, static_cast<int64_t>(out[0].Size()),
                MomentsForward<T>{g, in[0].dptr<T>(), out[0].dptr<T>(), out[1].dptr<T>(), req[0],
                                  req[1]});
    });
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                const std::vector<TBlob>& in, const std::vector<TBlob>& out,
                const std::vector<mxplug::OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const MomentsGeometry g(in[0].shape_, MomentsAxes(p_, in[0].ndim()));
    mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(ctx, static_cast<int64_t>(ig[0].Size()),
                MomentsBackward<T>{g, in[0].dptr<T>(), out[0].dptr<T>(), og[0].dptr<T>(),
                                   og[1].dptr<T>(), ig[0].dptr<T>(), req[0]});
    });
  }

 private:
  MomentsParam p_;
};

// ---- cumsum: running sums along an axis ----

struct CumsumParam : mxplug::Parameter<CumsumParam> {
  std::optional<int> axis;
  std::optional<int> dtype;
  MXPLUG_DECLARE_PARAMETER(CumsumParam) {
    MXPLUG_DECLARE_FIELD(axis)
        .set_default(std::nullopt)
        .describe("The axis to sum along (None: the flattened array).");
    MXPLUG_DECLARE_FIELD(dtype)
        .set_default(std::nullopt)
        .add_enum("float16", kMXPFloat16)
        .add_enum("float32", kMXPFloat32)
        .add_enum("float64", kMXPFloat64)
        .add_enum("int32", kMXPInt32)
        .add_enum("int64", kMXPInt64)
        .add_enum("int8", kMXPInt8)
        .describe("The output's dtype (None: the input's).");
  }
};

class CumsumProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {"a"}; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& s = (*in)[0];
    if (s.ndim() < 0) return false;
    if (param_.axis) mxplug::NormalizeAxis(*param_.axis, s.ndim());  // checks it
    (*out)[0] = param_.axis ? s : TShape{s.IsKnown() ? s.Size() : -1};
    return s.IsKnown();
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    if ((*in)[0] == kMXPUnknownDType) return false;
    (*out)[0] = param_.dtype.value_or((*in)[0]);
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return {og[0]};
  }

 private:
  CumsumParam param_;
};

/*! \brief Per run (a, b) of n along the axis: out = the running sum of in, forward from the
 * start, or backward from the end (the gradient: each element's sum of the gradients at and
 * after it). */
template <bool kReverse, class In, class Out>
struct RunningSums {
  int64_t n, inner;
  const In* in;
  Out* out;
  int req;
  MXPLUG_XINLINE void operator()(int64_t run) const {
    using A = mxplug::ComputeType<Out>;
    const int64_t base = (run / inner) * n * inner + run % inner;
    A sum = 0;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t e = base + (kReverse ? n - 1 - k : k) * inner;
      sum += static_cast<A>(static_cast<mxplug::ComputeType<In>>(in[e]));
      mxplug::StoreAs<A>(out[e], req, sum);
    }
  }
};

/*! \brief cumsum on a device whose element loop is Loop: a thread per run. */
template <class Loop>
class CumsumKernel : public mxplug::Operator {
 public:
  CumsumKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<mxplug::OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    Run<false>(ctx, in[0], out[0], req[0]);
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                const std::vector<TBlob>&, const std::vector<TBlob>&,
                const std::vector<mxplug::OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    Run<true>(ctx, og[0], ig[0], req[0]);
  }

 private:
  // `from` and `to` have the input's shape but for axis None, where one is flat.
  template <bool kReverse>
  void Run(const mxplug::OpContext& ctx, const TBlob& from, const TBlob& to,
           mxplug::OpReqType req) const {
    if (req == mxplug::kNullOp || from.Size() == 0) return;
    const TShape& s = kReverse ? to.shape_ : from.shape_;
    int64_t n = from.Size(), inner = 1;
    if (p_.axis) {
      const int axis = mxplug::NormalizeAxis(*p_.axis, s.ndim());
      n = s[axis], inner = s.ProdShape(axis + 1, s.ndim());
    }
    mxplug::TypeSwitch(from.type_flag_, [&](auto in_zero) {
      mxplug::TypeSwitch(to.type_flag_, [&](auto out_zero) {
        using In = decltype(in_zero);
        using Out = decltype(out_zero);
        Loop::Run(ctx, static_cast<int64_t>(from.Size()) / n,
                  RunningSums<kReverse, In, Out>{n, inner, from.dptr<In>(), to.dptr<Out>(), req});
      });
    });
  }
  CumsumParam p_;
};

// Calls visit.template Reduce<K>(name, doc) for every reduction, visit.template Arg<kMax,
// kChannel>(name, doc) for argmax, argmin and argmax_channel, visit.Moments(name, doc) and
// visit.Cumsum(name, doc): the one list the definitions and each device's kernels register from.
template <class Visitor>
void ForEachReduceOp(Visitor&& visit) {
  using K = ReduceKind;
  visit.template Reduce<K::kSum>("sum", "Sum over the given axes.");
  visit.template Reduce<K::kMean>("mean", "Mean over the given axes.");
  visit.template Reduce<K::kProd>("prod", "Product over the given axes.");
  visit.template Reduce<K::kMax>("max", "Maximum over the given axes.");
  visit.template Reduce<K::kMin>("min", "Minimum over the given axes.");
  visit.template Reduce<K::kNanSum>("nansum", "Sum over the given axes, NaN counted as 0.");
  visit.template Reduce<K::kNanProd>("nanprod", "Product over the given axes, NaN counted as 1.");
  visit.template Reduce<K::kSum>("sum_axis", "Same as sum.");
  visit.template Reduce<K::kMax>("max_axis", "Same as max.");
  visit.template Reduce<K::kMin>("min_axis", "Same as min.");
  visit.template Reduce<K::kNorm>("norm", "The L1 or L2 norm over the given axes.");
  visit.template Arg<true>("argmax", "Index of the maximum along an axis (as the input's dtype).");
  visit.template Arg<false>("argmin", "Index of the minimum along an axis (as the input's dtype).");
  visit.template Arg<true, true>("argmax_channel",
                                 "Index of the maximum along axis 1, the channels (as the "
                                 "input's dtype).");
  visit.Moments("moments", "The mean and the variance over the given axes.");
  visit.Cumsum("cumsum", "The running sums along an axis (of the flattened array for None).");
}

/*! \brief argmax/argmin's search at position o of the (outer, inner) positions: its run of n. */
template <bool kMax, class T>
struct ArgSearch {
  const T* x;
  T* out;
  int req;
  int64_t n, inner;
  MXPLUG_XINLINE void operator()(int64_t o) const {
    const int64_t a = o / inner, b = o % inner;
    const int64_t best = ArgExtreme<kMax>(x + a * n * inner + b, n, inner);
    mxplug::StoreAs<mxplug::ComputeType<T>>(out[o], req, static_cast<mxplug::ComputeType<T>>(best));
  }
};

/*! \brief argmax/argmin on a device whose element loop is Loop: a search per position; an index
 * has no gradient. */
template <bool kMax, bool kChannel, class Loop>
class ArgKernel : public mxplug::Operator {
 public:
  ArgKernel(const mxplug::KwArgs& kwargs, mxplug::Context) : p_(ParseArgParam<kChannel>(kwargs)) {}

  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<mxplug::OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const ArgGeometry geo(p_, in[0].shape_);
    mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(ctx, geo.outer * geo.inner,
                ArgSearch<kMax, T>{in[0].dptr<T>(), out[0].dptr<T>(), req[0], geo.n, geo.inner});
    });
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>&, const std::vector<TBlob>&,
                const std::vector<TBlob>&, const std::vector<mxplug::OpReqType>& req,
                const std::vector<TBlob>& ig, const std::vector<TBlob>&) override {
    Loop::Zero(ctx, ig[0], req[0]);
  }

 private:
  ArgParam p_;
};

/*! \brief Registers the kernels of every reduction on one device from the list above, given the
 * device's kernel template ReduceKernel<K> (constructed with a ReduceSpec) and its element loop
 * (argmax/argmin's ArgKernel). */
template <template <ReduceKind> class ReduceKernel, class Loop>
struct ReduceKernels {
  DLDeviceType device;
  template <ReduceKind K>
  void Reduce(const char* name, const char*) const {
    mxplug::sdk::RegisterKernel<ReduceKernel<K>>(name, device);
  }
  template <bool kMax, bool kChannel = false>
  void Arg(const char* name, const char*) const {
    mxplug::sdk::RegisterKernel<ArgKernel<kMax, kChannel, Loop>>(name, device);
  }
  void Moments(const char* name, const char*) const {
    mxplug::sdk::RegisterKernel<MomentsKernel<Loop>>(name, device);
  }
  void Cumsum(const char* name, const char*) const {
    mxplug::sdk::RegisterKernel<CumsumKernel<Loop>>(name, device);
  }
  void RegisterAll() const { ForEachReduceOp(*this); }
};

}  // namespace mxplug_tensor

#endif  // MXPLUG_PLUGINS_TENSOR_REDUCE_H_
