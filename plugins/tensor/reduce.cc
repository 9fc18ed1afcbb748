// Reductions over axes (MXNet's sum, mean, prod, max, min, nansum, nanprod): axis (an int, a
// tuple, or None for all), keepdims, exclude (reduce every axis but those named).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

#include "elementwise.h"
#include "mxplug/plugin.hpp"

namespace {

using mxplug::Assign;
using mxplug::OpReqType;
using mxplug_tensor::TBlob;
using mxplug_tensor::TShape;

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
MXPLUG_REGISTER_PARAMETER(ReduceParam);

// Which axes of an ndim-d input are reduced.
std::vector<bool> ReducedAxes(const ReduceParam& p, int nd) {
  std::vector<bool> reduced(nd, false);
  if (p.axis == "None") {
    std::fill(reduced.begin(), reduced.end(), !p.exclude);
    return reduced;
  }
  const std::vector<std::optional<int64_t>> axes =
      mxplug_tensor::ParseOptionalTuple(p.axis, "axis");
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
TShape ReducedShape(const TShape& in, const std::vector<bool>& reduced, bool keepdims) {
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

// The result's shape with the reduced axes kept as size 1 (what the kernel indexes with).
TShape KeptShape(const TShape& in, const std::vector<bool>& reduced) {
  std::vector<int64_t> d(in.begin(), in.end());
  for (size_t i = 0; i < d.size(); ++i)
    if (reduced[i]) d[i] = 1;
  return TShape(d);
}

// Calls fn(i, j) for every element i of an array of shape `in`, with j the element of the
// kept-dims result (`kept`) it reduces into.
template <class Fn>
void ForEachReduced(const TShape& in, const TShape& kept, Fn&& fn) {
  const std::vector<int64_t> zero_strides(in.ndim(), 0);
  mxplug_tensor::ForEachBroadcast(in, zero_strides, mxplug_tensor::BroadcastStrides(kept, in),
                                  [&](int64_t i, int64_t, int64_t j) { fn(i, j); });
}

enum class Kind { kSum, kMean, kProd, kMax, kMin, kNanSum, kNanProd };

template <Kind K>
class ReduceKernel : public mxplug::Operator {
 public:
  explicit ReduceKernel(const ReduceParam& p) : p_(p) {}

  void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const TShape& is = in[0].shape_;
    const std::vector<bool> reduced = ReducedAxes(p_, is.ndim());
    const TShape kept = KeptShape(is, reduced);
    mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      // Sums of floats accumulate in double; integers in their own type (as NumPy).
      using A = std::conditional_t<std::is_integral_v<T>, T, double>;
      const T* x = in[0].dptr<T>();
      T* o = out[0].dptr<T>();
      const int64_t n = kept.Size();
      std::vector<A> acc(n, Init<A>());
      ForEachReduced(is, kept, [&](int64_t i, int64_t j) { Combine(acc[j], A(x[i])); });
      const int64_t count = n ? is.Size() / n : 0;
      for (int64_t j = 0; j < n; ++j) {
        A v = acc[j];
        if constexpr (K == Kind::kMean)
          v = count ? v / A(count) : A(std::numeric_limits<double>::quiet_NaN());
        Assign(o[j], req[0], static_cast<T>(v));
      }
    });
  }

  void Backward(const mxplug::OpContext&, const std::vector<TBlob>& og,
                const std::vector<TBlob>& in, const std::vector<TBlob>& out,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const TShape& is = ig[0].shape_;
    const std::vector<bool> reduced = ReducedAxes(p_, is.ndim());
    const TShape kept = KeptShape(is, reduced);
    const int64_t count = kept.Size() ? is.Size() / kept.Size() : 0;
    mxplug::TypeSwitch(og[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      using C = mxplug::ComputeType<T>;
      const T* g = og[0].dptr<T>();
      const T* x = in[0].dptr<T>();
      const T* y = out[0].dptr<T>();
      T* d = ig[0].dptr<T>();
      ForEachReduced(is, kept, [&](int64_t i, int64_t j) {
        const C gv = C(g[j]), xv = C(x[i]), yv = C(y[j]);
        C v;
        if constexpr (K == Kind::kSum)
          v = gv;
        else if constexpr (K == Kind::kNanSum)
          v = std::isnan(double(xv)) ? C(0) : gv;
        else if constexpr (K == Kind::kMean)
          v = gv / C(count);
        else if constexpr (K == Kind::kProd || K == Kind::kNanProd)
          v = xv == C(0) ? C(0) : gv * yv / xv;
        else
          v = xv == yv ? gv : C(0);
        Assign(d[i], req[0], T(v));
      });
    });
  }

 private:
  template <class A>
  static A Init() {
    if constexpr (K == Kind::kProd || K == Kind::kNanProd) return A(1);
    // -inf / +inf for floats: lowest() would be the answer for a row of -inf in float64 (float32
    // hid it by rounding the double's lowest() to -inf). Integers start at their extremes.
    else if constexpr (K == Kind::kMax)
      return std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity()
                                                  : std::numeric_limits<A>::lowest();
    else if constexpr (K == Kind::kMin)
      return std::numeric_limits<A>::has_infinity ? std::numeric_limits<A>::infinity()
                                                  : std::numeric_limits<A>::max();
    else
      return A(0);
  }
  template <class A>
  static void Combine(A& acc, A v) {
    if constexpr (K == Kind::kSum || K == Kind::kMean)
      acc += v;
    else if constexpr (K == Kind::kNanSum)
      acc += std::isnan(double(v)) ? A(0) : v;
    else if constexpr (K == Kind::kProd)
      acc *= v;
    else if constexpr (K == Kind::kNanProd)
      acc *= std::isnan(double(v)) ? A(1) : v;
    else if constexpr (K == Kind::kMax)
      acc = (v > acc || std::isnan(double(v))) ? v : acc;
    else
      acc = (v < acc || std::isnan(double(v))) ? v : acc;
  }

  ReduceParam p_;
};

template <Kind K>
class ReduceProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& is = (*in)[0];
    if (is.ndim() < 0) return false;
    (*out)[0] = ReducedShape(is, ReducedAxes(param_, is.ndim()), param_.keepdims);
    return is.IsKnown();
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>& out) const override {
    if (K == Kind::kSum || K == Kind::kMean) return {og[0]};
    return {og[0], in[0], out[0]};
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    return new ReduceKernel<K>(param_);
  }

 private:
  ReduceParam param_;
};

// ---- norm: the L2 (ord=2) or L1 (ord=1) norm over axes ----

struct NormParam : mxplug::Parameter<NormParam> {
  int ord;
  std::string axis;
  bool keepdims;
  MXPLUG_DECLARE_PARAMETER(NormParam) {
    MXPLUG_DECLARE_FIELD(ord).set_default(2).set_range(1, 2).describe("Order of the norm: 1 or 2.");
    MXPLUG_DECLARE_FIELD(axis).set_default("None").describe(
        "The axis or axes to reduce: an int, a tuple of ints, or None for all axes.");
    MXPLUG_DECLARE_FIELD(keepdims).set_default(false).describe(
        "Keep the reduced axes with size 1.");
  }
};
MXPLUG_REGISTER_PARAMETER(NormParam);

ReduceParam AsReduce(const NormParam& n) {
  ReduceParam p;
  p.axis = n.axis, p.keepdims = n.keepdims, p.exclude = false;
  return p;
}

class NormKernel : public mxplug::Operator {
 public:
  explicit NormKernel(const NormParam& p) : p_(p) {}
  void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    // L1 = sum |x|, L2 = sqrt(sum x^2): a sum over transformed values, then a root.
    if (req[0] == mxplug::kNullOp) return;
    const TShape& is = in[0].shape_;
    const TShape kept = KeptShape(is, ReducedAxes(AsReduce(p_), is.ndim()));
    mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      const T* x = in[0].dptr<T>();
      T* o = out[0].dptr<T>();
      std::vector<double> acc(static_cast<size_t>(kept.Size()), 0.0);
      ForEachReduced(is, kept, [&](int64_t i, int64_t j) {
        const double v = static_cast<double>(x[i]);
        acc[j] += p_.ord == 1 ? std::abs(v) : v * v;
      });
      for (size_t j = 0; j < acc.size(); ++j)
        Assign(o[j], req[0], static_cast<T>(p_.ord == 1 ? acc[j] : std::sqrt(acc[j])));
    });
  }
  void Backward(const mxplug::OpContext&, const std::vector<TBlob>& og,
                const std::vector<TBlob>& in, const std::vector<TBlob>& out,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const TShape& is = ig[0].shape_;
    const TShape kept = KeptShape(is, ReducedAxes(AsReduce(p_), is.ndim()));
    mxplug::TypeSwitch(og[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      using C = mxplug::ComputeType<T>;
      const T* g = og[0].dptr<T>();
      const T* x = in[0].dptr<T>();
      const T* y = out[0].dptr<T>();
      T* d = ig[0].dptr<T>();
      ForEachReduced(is, kept, [&](int64_t i, int64_t j) {
        const C gj = C(g[j]), xi = C(x[i]), yj = C(y[j]);
        C v;
        if (p_.ord == 1)
          v = gj * (xi > C(0) ? C(1) : xi < C(0) ? C(-1) : C(0));
        else
          v = yj == C(0) ? C(0) : gj * xi / yj;
        Assign(d[i], req[0], T(v));
      });
    });
  }

 private:
  NormParam p_;
};

class NormProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& is = (*in)[0];
    if (is.ndim() < 0) return false;
    (*out)[0] = ReducedShape(is, ReducedAxes(AsReduce(param_), is.ndim()), param_.keepdims);
    return is.IsKnown();
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>& out) const override {
    return {og[0], in[0], out[0]};
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    return new NormKernel(param_);
  }

 private:
  NormParam param_;
};

// ---- argmax / argmin: the index along one axis (or of the flattened array), as a float ----

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
MXPLUG_REGISTER_PARAMETER(ArgParam);

template <bool kMax>
class ArgProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& s = (*in)[0];
    if (s.ndim() < 0) return false;
    if (!param_.axis) {
      (*out)[0] = param_.keepdims ? TShape(s.ndim(), 1) : TShape{1};
      return s.IsKnown();
    }
    const int axis = Axis(s.ndim());
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
    return {};
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    struct Kernel : mxplug::Operator {
      ArgParam p;
      int axis_of(int nd) const { return p.axis ? mxplug::NormalizeAxis(*p.axis, nd) : -1; }
      void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
                   const std::vector<TBlob>&) override {
        if (req[0] == mxplug::kNullOp) return;
        const TShape& s = in[0].shape_;
        const int axis = axis_of(s.ndim());
        const int64_t outer = axis < 0 ? 1 : s.ProdShape(0, axis);
        const int64_t n = axis < 0 ? s.Size() : s[axis];
        const int64_t inner = axis < 0 ? 1 : s.ProdShape(axis + 1, s.ndim());
        mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
          using T = decltype(zero);
          const T* x = in[0].dptr<T>();
          T* o = out[0].dptr<T>();
          for (int64_t a = 0; a < outer; ++a)
            for (int64_t b = 0; b < inner; ++b) {
              // The first extreme wins, and a NaN is more extreme than any number (the first
              // NaN's index, as MXNet 1.9.1, NumPy and PyTorch give).
              int64_t best = 0;
              for (int64_t k = 1; k < n; ++k) {
                const T w = x[(a * n + best) * inner + b];
                if (mxplug_tensor::IsNan(w)) break;
                const T v = x[(a * n + k) * inner + b];
                if (mxplug_tensor::IsNan(v) || (kMax ? v > w : v < w)) best = k;
              }
              Assign(o[a * inner + b], req[0], static_cast<T>(best));
            }
        });
      }
      void Backward(const mxplug::OpContext&, const std::vector<TBlob>&, const std::vector<TBlob>&,
                    const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& ig, const std::vector<TBlob>&) override {
        mxplug::WriteZeroGradient(ig[0], req[0]);  // an index has no gradient
      }
    };
    auto* k = new Kernel();
    k->p = param_;
    return k;
  }

 private:
  int Axis(int nd) const { return mxplug::NormalizeAxis(*param_.axis, nd); }
  ArgParam param_;
};

const std::initializer_list<mxplug_tensor::InputDoc> kData{{"data", "The input array."}};

[[maybe_unused]] const bool registered = [] {
  using mxplug_tensor::Register;
  Register<ReduceProp<Kind::kSum>>("sum", "Sum over the given axes.", kData, ReduceParam::Fields());
  Register<ReduceProp<Kind::kMean>>("mean", "Mean over the given axes.", kData,
                                    ReduceParam::Fields());
  Register<ReduceProp<Kind::kProd>>("prod", "Product over the given axes.", kData,
                                    ReduceParam::Fields());
  Register<ReduceProp<Kind::kMax>>("max", "Maximum over the given axes.", kData,
                                   ReduceParam::Fields());
  Register<ReduceProp<Kind::kMin>>("min", "Minimum over the given axes.", kData,
                                   ReduceParam::Fields());
  Register<ReduceProp<Kind::kNanSum>>("nansum", "Sum over the given axes, NaN counted as 0.", kData,
                                      ReduceParam::Fields());
  Register<ReduceProp<Kind::kNanProd>>("nanprod", "Product over the given axes, NaN counted as 1.",
                                       kData, ReduceParam::Fields());
  Register<ReduceProp<Kind::kSum>>("sum_axis", "Same as sum.", kData, ReduceParam::Fields());
  Register<NormProp>("norm", "The L1 or L2 norm over the given axes.", kData, NormParam::Fields());
  Register<ArgProp<true>>("argmax", "Index of the maximum along an axis (as the input's dtype).",
                          kData, ArgParam::Fields());
  Register<ArgProp<false>>("argmin", "Index of the minimum along an axis (as the input's dtype).",
                           kData, ArgParam::Fields());
  return true;
}();

}  // namespace
