// Definitions of the ops that select by index or condition (MXNet's names and parameters):
// pick, one_hot, where, gather_nd and scatter_nd, and their kernels, written once over a device's
// element loop. index.cc registers the definitions and the CPU kernels,
// devices/cuda/kernels/index.cu the CUDA kernels.
#ifndef MXPLUG_PLUGINS_TENSOR_INDEX_H_
#define MXPLUG_PLUGINS_TENSOR_INDEX_H_

#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "elementwise.h"
#include "histogram.h"
#include "mxplug/plugin.hpp"

namespace mxplug_tensor {

using mxplug::OpReqType;

// ---- pick(data, index, axis, keepdims, mode): data's element at index along axis ----

struct PickParam : mxplug::Parameter<PickParam> {
  std::optional<int> axis;
  bool keepdims;
  int mode;
  MXPLUG_DECLARE_PARAMETER(PickParam) {
    MXPLUG_DECLARE_FIELD(axis).set_default(-1).describe(
        "The axis to pick along (None: flattened).");
    MXPLUG_DECLARE_FIELD(keepdims).set_default(false).describe("Keep the picked axis with size 1.");
    MXPLUG_DECLARE_FIELD(mode)
        .set_default(mxplug_tensor::kIndexClip)
        .add_enum("clip", mxplug_tensor::kIndexClip)
        .add_enum("wrap", mxplug_tensor::kIndexWrap)
        .describe("Out-of-range indices: clip to the range or wrap around.");
  }
};

class PickProp : public ReadAtIndicesProp {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {"data", "index"}; }
  // -1: the flattened array (axis None).
  int Axis(int nd) const { return param_.axis ? mxplug::NormalizeAxis(*param_.axis, nd) : -1; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& d = (*in)[0];
    if (d.ndim() < 0) return false;
    const int axis = Axis(d.ndim());
    std::vector<int64_t> o;
    if (axis < 0) {
      o = {1};
    } else {
      o.assign(d.begin(), d.end());
      if (param_.keepdims)
        o[axis] = 1;
      else
        o.erase(o.begin() + axis);
    }
    if (o.empty()) o.push_back(1);
    const TShape want(o);
    TShape& idx = (*in)[1];
    if (idx.ndim() < 0) idx = want;
    if (idx.Size() != want.Size())
      throw std::invalid_argument("index has shape " + idx.ToString() + ", expected " +
                                  want.ToString() + " for data of shape " + d.ToString());
    (*out)[0] = want;
    return d.IsKnown();
  }

 private:
  PickParam param_;
};

/*! \brief pick viewed as (outer, n, inner) blocks of the data: output element o = (a, b) reads
 * the data at (a, index[o], b). */
struct PickGeometry {
  int64_t n, inner;
  int mode;
  template <class I>
  MXPLUG_XINLINE int64_t Source(int64_t o, const I* idx) const {
    const int64_t k = ClipOrWrapIndex(IndexValue(idx[o]), n, mode);
    return ((o / inner) * n + k) * inner + o % inner;
  }
};

inline PickGeometry MakePickGeometry(const PickParam& p, const TShape& d) {
  if (!p.axis) return {d.Size(), 1, p.mode};  // the flattened array
  const int axis = mxplug::NormalizeAxis(*p.axis, d.ndim());
  return {d[axis], d.ProdShape(axis + 1, d.ndim()), p.mode};
}

// Output elements pick distinct data elements: each adds to its own.
template <class T, class I>
struct PickBackward {
  PickGeometry geo;
  const T* og;
  const I* idx;
  T* grad;
  MXPLUG_XINLINE void operator()(int64_t o) const {
    using C = mxplug::ComputeType<T>;
    mxplug::StoreAs<C>(grad[geo.Source(o, idx)], mxplug::kAddTo, static_cast<C>(og[o]));
  }
};

/*! \brief pick on a device whose element loop is Loop. */
template <class Loop>
class PickKernel : public mxplug::Operator {
 public:
  PickKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const PickGeometry geo = MakePickGeometry(p_, in[0].shape_);
    TypeSwitch2(in[0].type_flag_, in[1].type_flag_, [&](auto zero, auto index_zero) {
      using T = decltype(zero);
      using I = decltype(index_zero);
      Loop::Run(ctx, out[0].Size(),
                GatherByIndex<PickGeometry, T, I>{geo, in[0].dptr<T>(), in[1].dptr<I>(),
                                                  out[0].dptr<T>(), req[0]});
    });
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                const std::vector<TBlob>& in, const std::vector<TBlob>&,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    Loop::Zero(ctx, ig[1], req[1]);  // indices get no gradient
    if (req[0] == mxplug::kNullOp) return;
    Loop::Zero(ctx, ig[0], req[0]);  // the elements no index picks
    const PickGeometry geo = MakePickGeometry(p_, ig[0].shape_);
    TypeSwitch2(og[0].type_flag_, in[1].type_flag_, [&](auto zero, auto index_zero) {
      using T = decltype(zero);
      using I = decltype(index_zero);
      Loop::Run(ctx, og[0].Size(),
                PickBackward<T, I>{geo, og[0].dptr<T>(), in[1].dptr<I>(), ig[0].dptr<T>()});
    });
  }

 private:
  PickParam p_;
};

// ---- one_hot(indices, depth, on_value, off_value, dtype) ----

struct OneHotParam : mxplug::Parameter<OneHotParam> {
  int depth;
  double on_value, off_value;
  int dtype;
  MXPLUG_DECLARE_PARAMETER(OneHotParam) {
    MXPLUG_DECLARE_FIELD(depth).set_lower_bound(1).describe("Depth of the one hot dimension.");
    MXPLUG_DECLARE_FIELD(on_value).set_default(1.0).describe("The value where indices point.");
    MXPLUG_DECLARE_FIELD(off_value).set_default(0.0).describe("The value everywhere else.");
    MXPLUG_DECLARE_FIELD(dtype)
        .set_default(kMXPFloat32)
        .add_dtype_enum()
        .describe("Output data type.");
  }
};

class OneHotProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {"indices"}; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& s = (*in)[0];
    if (s.ndim() < 0) return false;
    std::vector<int64_t> d(s.begin(), s.end());
    d.push_back(param_.depth);
    (*out)[0] = TShape(d);
    return s.IsKnown();
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    (*out)[0] = param_.dtype == kMXPBool ? kMXPUint8 : param_.dtype;
    return (*in)[0] != kMXPUnknownDType;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>&, const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return {};
  }

 private:
  OneHotParam param_;
};

// Output element (i, j) is on_value where indices[i] is j; an index outside [0, depth) gives a
// row of off_value.
template <class T, class I>
struct OneHotElements {
  const I* idx;
  T* out;
  int64_t depth;
  double on, off;
  int req;
  MXPLUG_XINLINE void operator()(int64_t o) const {
    using C = mxplug::ComputeType<T>;
    const bool hot = IndexValue(idx[o / depth]) == o % depth;
    mxplug::StoreAs<C>(out[o], req, static_cast<C>(hot ? on : off));
  }
};

/*! \brief one_hot on a device whose element loop is Loop. */
template <class Loop>
class OneHotKernel : public mxplug::Operator {
 public:
  OneHotKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    TypeSwitch2(out[0].type_flag_, in[0].type_flag_, [&](auto zero, auto index_zero) {
      using T = decltype(zero);
      using I = decltype(index_zero);
      Loop::Run(ctx, out[0].Size(),
                OneHotElements<T, I>{in[0].dptr<I>(), out[0].dptr<T>(), p_.depth, p_.on_value,
                                     p_.off_value, req[0]});
    });
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>&, const std::vector<TBlob>&,
                const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                const std::vector<TBlob>& ig, const std::vector<TBlob>&) override {
    Loop::Zero(ctx, ig[0], req[0]);
  }

 private:
  OneHotParam p_;
};

// ---- where(condition, x, y): x where condition is nonzero, else y ----

class WhereProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {"condition", "x", "y"}; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    TShape& c = (*in)[0];
    TShape& x = (*in)[1];
    TShape& y = (*in)[2];
    const TShape& known = x.ndim() >= 0 ? x : y;
    if (known.ndim() < 0 || c.ndim() < 0) return false;
    if (x.ndim() < 0) x = known;
    if (y.ndim() < 0) y = known;
    if (x != y)
      throw std::invalid_argument("x has shape " + x.ToString() + " but y has shape " +
                                  y.ToString());
    if (c != x && !(c.ndim() == 1 && x.ndim() >= 1 && c[0] == x[0]))
      throw std::invalid_argument("condition has shape " + c.ToString() + "; expected " +
                                  x.ToString() + " or (" + std::to_string(x.ndim() ? x[0] : 0) +
                                  ",)");
    (*out)[0] = x;
    return x.IsKnown() && c.IsKnown();
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    int t = (*in)[1] != kMXPUnknownDType ? (*in)[1] : (*in)[2];
    if (t == kMXPUnknownDType) return false;
    if ((*in)[0] == kMXPUnknownDType) (*in)[0] = t;
    for (int i = 1; i < 3; ++i) {
      if ((*in)[i] != kMXPUnknownDType && (*in)[i] != t)
        throw std::invalid_argument("x and y must have one dtype, got " +
                                    mxplug::DTypeName((*in)[1]) + " and " +
                                    mxplug::DTypeName((*in)[2]));
      (*in)[i] = t;
    }
    (*out)[0] = t;
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>&) const override {
    return {og[0], in[0]};
  }

 private:
  NoParam param_;
};

/*! \brief Whether element i takes x: condition has the output's shape, or one value per row
 * (per elements each). */
template <class B>
struct Condition {
  const B* c;
  int64_t per;
  MXPLUG_XINLINE bool operator()(int64_t i) const {
    using C = mxplug::ComputeType<B>;
    return static_cast<C>(c[i / per]) != C(0);
  }
};

template <class B>
Condition<B> MakeCondition(const TBlob& cond, int64_t size) {
  const int64_t n = cond.Size();
  return {cond.dptr<B>(), n == size || n == 0 ? 1 : size / n};
}

template <class T, class B>
struct WhereForward {
  Condition<B> take_x;
  const T* x;
  const T* y;
  T* out;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    mxplug::StoreAs<C>(out[i], req, static_cast<C>(take_x(i) ? x[i] : y[i]));
  }
};

template <class T, class B>
struct WhereBackward {
  Condition<B> take_x;
  const T* og;
  T* gx;  // null where not wanted
  T* gy;
  int req_x, req_y;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    const C g = static_cast<C>(og[i]);
    const bool from_x = take_x(i);
    if (gx) mxplug::StoreAs<C>(gx[i], req_x, from_x ? g : C(0));
    if (gy) mxplug::StoreAs<C>(gy[i], req_y, from_x ? C(0) : g);
  }
};

/*! \brief where on a device whose element loop is Loop. */
template <class Loop>
class WhereKernel : public mxplug::Operator {
 public:
  WhereKernel(const mxplug::KwArgs&, mxplug::Context) {}
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    TypeSwitch2(out[0].type_flag_, in[0].type_flag_, [&](auto zero, auto cond_zero) {
      using T = decltype(zero);
      using B = decltype(cond_zero);
      Loop::Run(ctx, out[0].Size(),
                WhereForward<T, B>{MakeCondition<B>(in[0], out[0].Size()), in[1].dptr<T>(),
                                   in[2].dptr<T>(), out[0].dptr<T>(), req[0]});
    });
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                const std::vector<TBlob>& in, const std::vector<TBlob>&,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    Loop::Zero(ctx, ig[0], req[0]);  // the condition gets no gradient
    TypeSwitch2(og[0].type_flag_, in[0].type_flag_, [&](auto zero, auto cond_zero) {
      using T = decltype(zero);
      using B = decltype(cond_zero);
      T* gx = req[1] != mxplug::kNullOp ? ig[1].dptr<T>() : nullptr;
      T* gy = req[2] != mxplug::kNullOp ? ig[2].dptr<T>() : nullptr;
      Loop::Run(ctx, og[0].Size(),
                WhereBackward<T, B>{MakeCondition<B>(in[0], og[0].Size()), og[0].dptr<T>(), gx, gy,
                                    req[1], req[2]});
    });
  }
};

// ---- gather_nd(data, indices) and scatter_nd(data, indices, shape) ----
// indices has shape (M, Y0, Y1...): column y holds an index into each of the first M axes of the
// big array (gather_nd's data, scatter_nd's output), naming a block of its remaining axes. The
// small array (gather_nd's output, scatter_nd's data) has shape (Y0, Y1..., X_M...), block y at
// y * inner. gather_nd takes negative indices from the end; an index outside [-n, n), or a
// float that is not a whole number, is MXNet's IndexError on the CPU (checked before the kernel
// runs). A GPU kernel cannot throw: there, gather_nd reads 0 and scatter_nd skips such a block,
// as MXNet's GPU kernels do not check either. Several columns may name one block: gather_nd's
// gradient adds them (atomically on a GPU); scatter_nd keeps one of the values, as MXNet does.

constexpr int kMaxNdIndexed = 8;  // M, the axes one index column names

struct NdIndexGeometry {
  int m = 0;
  int64_t count = 0;  // columns: Y0 * Y1 ...
  int64_t inner = 1;  // elements of a block: X_M * ...
  int64_t dims[kMaxNdIndexed] = {}, strides[kMaxNdIndexed] = {};

  // big: the indexed array's shape; indices: (M, Y...).
  NdIndexGeometry(const TShape& big, const TShape& indices)
      : m(static_cast<int>(indices[0])), count(indices.ProdShape(1, indices.ndim())) {
    if (m > kMaxNdIndexed)
      throw std::invalid_argument("indices index " + std::to_string(m) + " axes; at most " +
                                  std::to_string(kMaxNdIndexed) + " can be");
    inner = big.ProdShape(m, big.ndim());
    int64_t stride = inner;
    for (int k = m - 1; k >= 0; --k) dims[k] = big[k], strides[k] = stride, stride *= big[k];
  }

  // The offset of column y's block in the big array, or -1 when an index is out of range or
  // not a whole number.
  template <class I>
  MXPLUG_XINLINE int64_t Block(int64_t y, const I* idx) const {
    int64_t offset = 0;
    for (int k = 0; k < m; ++k) {
      const auto v = static_cast<mxplug::ComputeType<I>>(idx[k * count + y]);
      int64_t j = static_cast<int64_t>(v);
      if (static_cast<mxplug::ComputeType<I>>(j) != v || j < -dims[k] || j >= dims[k]) return -1;
      offset += (j < 0 ? j + dims[k] : j) * strides[k];
    }
    return offset;
  }
};

// MXNet's IndexError for the first bad index, found on the host (indices in host memory).
template <class I>
void CheckNdIndices(const NdIndexGeometry& g, const I* idx) {
  for (int64_t y = 0; y < g.count; ++y) {
    if (g.Block(y, idx) >= 0) continue;
    for (int k = 0; k < g.m; ++k) {
      const auto v = static_cast<mxplug::ComputeType<I>>(idx[k * g.count + y]);
      const int64_t j = static_cast<int64_t>(v);
      if (static_cast<mxplug::ComputeType<I>>(j) == v && j >= -g.dims[k] && j < g.dims[k]) continue;
      std::ostringstream value;
      value << static_cast<double>(v);
      throw std::out_of_range("IndexError: index " + value.str() + " is out of bounds for axis " +
                              std::to_string(k) + " with size " + std::to_string(g.dims[k]));
    }
  }
}

class GatherNDProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs&) override {}
  std::vector<std::string> ListArguments() const override { return {"data", "indices"}; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape &d = (*in)[0], &i = (*in)[1];
    if (!d.IsKnown() || !i.IsKnown()) return false;
    if (i.ndim() < 2)
      throw std::invalid_argument("gather_nd requires index tensor to have at least 2 dimensions");
    if (i[0] > d.ndim())
      throw std::invalid_argument("gather_nd: indices index " + std::to_string(i[0]) +
                                  " axes, but data " + d.ToString() + " has " +
                                  std::to_string(d.ndim()));
    std::vector<int64_t> dims(i.begin() + 1, i.end());
    dims.insert(dims.end(), d.begin() + i[0], d.end());
    (*out)[0] = TShape(dims);
    return true;
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    (*out)[0] = (*in)[0];
    return (*in)[0] != kMXPUnknownDType && (*in)[1] != kMXPUnknownDType;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>&) const override {
    return {og[0], in[1]};
  }
};

struct ScatterNDParam : mxplug::Parameter<ScatterNDParam> {
  TShape shape;
  MXPLUG_DECLARE_PARAMETER(ScatterNDParam) {
    MXPLUG_DECLARE_FIELD(shape).describe("Shape of output.");
  }
};

class ScatterNDProp : public GatherNDProp {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape &d = (*in)[0], &i = (*in)[1], &s = param_.shape;
    (*out)[0] = s;
    if (!d.IsKnown() || !i.IsKnown()) return false;
    bool valid = i.ndim() >= 2 && i[0] <= s.ndim() && d.ndim() == i.ndim() - 1 + s.ndim() - i[0];
    for (int k = 1; valid && k < i.ndim(); ++k) valid = d[k - 1] == i[k];
    for (int k = static_cast<int>(i[0]); valid && k < s.ndim(); ++k)
      valid = d[i.ndim() - 1 + k - i[0]] == s[k];
    if (!valid) {
      auto text = [](const TShape& t) {
        std::string r;
        for (int k = 0; k < t.ndim(); ++k) r += (k ? "," : "") + std::to_string(t[k]);
        return "[" + r + "]";
      };
      throw std::invalid_argument(
          "Invalid data, indices, and output shape combination for scatter_nd: " + text(d) + ", " +
          text(i) + ", " + text(s));
    }
    return true;
  }

 private:
  ScatterNDParam param_;
};

// small[o] = big[block + t] (0 where the block is out of range).
template <class T, class I>
struct GatherNDElements {
  NdIndexGeometry g;
  const T* big;
  const I* idx;
  T* small;
  int req;
  MXPLUG_XINLINE void operator()(int64_t o) const {
    using C = mxplug::ComputeType<T>;
    const int64_t block = g.Block(o / g.inner, idx);
    mxplug::StoreAs<C>(small[o], req, block < 0 ? C(0) : static_cast<C>(big[block + o % g.inner]));
  }
};

// big[block + t] = small[o], or += with Loop's add (atomic on a GPU) when `add`.
template <class Loop, class T, class I>
struct ScatterNDElements {
  NdIndexGeometry g;
  const T* small;
  const I* idx;
  T* big;
  bool add;
  MXPLUG_XINLINE void operator()(int64_t o) const {
    const int64_t block = g.Block(o / g.inner, idx);
    if (block < 0) return;
    if (add)
      Loop::AddTo(&big[block + o % g.inner], small[o]);
    else
      big[block + o % g.inner] = small[o];
  }
};

/*! \brief gather_nd (kGather) or scatter_nd on a device whose loop is L: an element loop with
 * Zero, AddTo(T*, T) (which other elements of the loop may race with), CanAdd<T>() (whether it
 * has such an add for T) and kHostMemory (whether the host may read the indices, to check
 * them). */
template <bool kGather>
struct NdIndexKernels {
  template <class L>
  class Kernel : public mxplug::Operator {
   public:
    Kernel(const mxplug::KwArgs&, mxplug::Context) {}
    void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
                 const std::vector<TBlob>&) override {
      if (kGather)
        Gather(ctx, in[0], in[1], out[0], req[0]);
      else
        Scatter(ctx, in[0], in[1], out[0], req[0], false);
    }
    void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                  const std::vector<TBlob>& in, const std::vector<TBlob>&,
                  const std::vector<OpReqType>& req, const std::vector<TBlob>& in_grad,
                  const std::vector<TBlob>&) override {
      L::Zero(ctx, in_grad[1], req[1]);  // the indices have no gradient
      if (kGather)
        Scatter(ctx, og[0], in[1], in_grad[0], req[0], true);
      else
        Gather(ctx, og[0], in[1], in_grad[0], req[0]);
    }

   private:
    static void Gather(const mxplug::OpContext& ctx, const TBlob& big, const TBlob& idx,
                       const TBlob& small, OpReqType req) {
      if (req == mxplug::kNullOp || small.Size() == 0) return;
      const NdIndexGeometry g(big.shape_, idx.shape_);
      TypeSwitch2(big.type_flag_, idx.type_flag_, [&](auto t, auto i) {
        using T = decltype(t);
        using I = decltype(i);
        if constexpr (L::kHostMemory) CheckNdIndices(g, idx.dptr<I>());
        L::Run(ctx, small.Size(),
               GatherNDElements<T, I>{g, big.dptr<T>(), idx.dptr<I>(), small.dptr<T>(), req});
      });
    }
    // `accumulate`: several columns' values add up (a gradient), else one of them is kept.
    static void Scatter(const mxplug::OpContext& ctx, const TBlob& small, const TBlob& idx,
                        const TBlob& big, OpReqType req, bool accumulate) {
      if (req == mxplug::kNullOp) return;
      if (req != mxplug::kAddTo) L::Zero(ctx, big, mxplug::kWriteTo);
      if (small.Size() == 0) return;
      const NdIndexGeometry g(big.shape_, idx.shape_);
      TypeSwitch2(big.type_flag_, idx.type_flag_, [&](auto t, auto i) {
        using T = decltype(t);
        using I = decltype(i);
        const bool add = accumulate || req == mxplug::kAddTo;
        if (add && !L::template CanAdd<T>())
          throw std::invalid_argument("adding " + mxplug::DTypeName(big.type_flag_) +
                                      " values at indices is not available on this device (no "
                                      "atomic add)");
        if constexpr (L::kHostMemory) CheckNdIndices(g, idx.dptr<I>());
        L::Run(ctx, small.Size(),
               ScatterNDElements<L, T, I>{g, small.dptr<T>(), idx.dptr<I>(), big.dptr<T>(), add});
      });
    }
  };
};

// ---- _ravel_multi_index / _unravel_index(data, shape): flat indices into an array of `shape`
// from index columns (ndim, N...) and back, in data's dtype, as MXNet computes them: no bounds
// check, the first axis unwrapped, C's truncating division for negative values. No gradient
// (zeros, as MXNet's). ----

struct RavelParam : mxplug::Parameter<RavelParam> {
  std::optional<TShape> shape;
  MXPLUG_DECLARE_PARAMETER(RavelParam) {
    MXPLUG_DECLARE_FIELD(shape)
        .set_default(std::nullopt)
        .describe("Shape of the array into which the multi-indices apply.");
  }
};

template <bool kRavel>
class RavelProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override {
    param_.Init(kwargs);
    if (!param_.shape || param_.shape->ndim() < 1)
      throw std::invalid_argument(
          "shape: the shape of the array that the indices address is "
          "required");
    if (param_.shape->ndim() > kMaxNdIndexed)
      throw std::invalid_argument("shape has " + std::to_string(param_.shape->ndim()) +
                                  " axes; at most " + std::to_string(kMaxNdIndexed) + " are taken");
  }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& d = (*in)[0];
    if (!d.IsKnown()) return false;
    const int64_t n = param_.shape->ndim();
    if (kRavel) {
      if (d.ndim() < 1 || d[0] != n)
        throw std::invalid_argument("data has shape " + d.ToString() +
                                    "; its first axis must "
                                    "hold one index per axis of shape " +
                                    param_.shape->ToString());
      (*out)[0] = TShape(std::vector<int64_t>(d.begin() + 1, d.end()));
    } else {
      std::vector<int64_t> dims{n};
      dims.insert(dims.end(), d.begin(), d.end());
      (*out)[0] = TShape(dims);
    }
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>&, const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return {};
  }

 private:
  RavelParam param_;
};

struct RavelGeometry {
  int ndim = 0;
  int64_t count = 0, dims[kMaxNdIndexed] = {};
};

template <class T>
struct RavelElements {
  RavelGeometry g;
  const T* in;
  T* out;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    int64_t flat = 0;
    for (int k = 0; k < g.ndim; ++k) flat = flat * g.dims[k] + IndexValue(in[k * g.count + i]);
    mxplug::StoreAs<T>(out[i], req, static_cast<T>(flat));
  }
};

template <class T>
struct UnravelElements {
  RavelGeometry g;
  const T* in;
  T* out;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    int64_t flat = IndexValue(in[i]);
    for (int k = g.ndim - 1; k > 0; --k) {
      mxplug::StoreAs<T>(out[k * g.count + i], req, static_cast<T>(flat % g.dims[k]));
      flat /= g.dims[k];
    }
    mxplug::StoreAs<T>(out[i], req, static_cast<T>(flat));
  }
};

template <bool kRavel>
struct RavelKernels {
  template <class L>
  class Kernel : public mxplug::Operator {
   public:
    Kernel(const mxplug::KwArgs& kwargs, mxplug::Context) { param_.Init(kwargs); }
    void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
                 const std::vector<TBlob>&) override {
      if (req[0] == mxplug::kNullOp) return;
      RavelGeometry g;
      g.ndim = param_.shape->ndim();
      g.count = kRavel ? out[0].Size() : in[0].Size();
      for (int k = 0; k < g.ndim; ++k) g.dims[k] = (*param_.shape)[k];
      mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
        using T = decltype(zero);
        if constexpr (kRavel)
          L::Run(ctx, g.count, RavelElements<T>{g, in[0].dptr<T>(), out[0].dptr<T>(), req[0]});
        else
          L::Run(ctx, g.count, UnravelElements<T>{g, in[0].dptr<T>(), out[0].dptr<T>(), req[0]});
      });
    }
    void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>&,
                  const std::vector<TBlob>&, const std::vector<TBlob>&,
                  const std::vector<OpReqType>& req, const std::vector<TBlob>& in_grad,
                  const std::vector<TBlob>&) override {
      L::Zero(ctx, in_grad[0], req[0]);
    }

   private:
    RavelParam param_;
  };
};

// ---- batch_take(a, indices): out[i] = a[i, indices[i]] over a's last axis, the index clipped
// to it (MXNet's deprecated form of pick). int32 indices; no gradient. ----

class BatchTakeProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs&) override {}
  std::vector<std::string> ListArguments() const override { return {"a", "indices"}; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape &a = (*in)[0], &i = (*in)[1];
    if (!a.IsKnown() || !i.IsKnown()) return false;
    if (a.ndim() < 1 || a[a.ndim() - 1] == 0 || a.Size() / a[a.ndim() - 1] != i.Size())
      throw std::invalid_argument(
          "Index array's size must be the same as data array's size excluding the first "
          "dimension: a " +
          a.ToString() + ", indices " + i.ToString());
    (*out)[0] = i;
    return true;
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    if ((*in)[1] == kMXPUnknownDType) (*in)[1] = kMXPInt32;
    if ((*in)[1] != kMXPInt32)
      throw std::invalid_argument("Type inconsistent, Provided = " + mxplug::DTypeName((*in)[1]) +
                                  ", inferred type = int32");
    (*out)[0] = (*in)[0];
    return (*in)[0] != kMXPUnknownDType;
  }
};

template <class T>
struct BatchTakeElements {
  const T* a;
  const int32_t* idx;
  int64_t last;
  T* out;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    const int64_t k = idx[i] < 0 ? 0 : idx[i] >= last ? last - 1 : idx[i];
    mxplug::StoreAs<T>(out[i], req, a[i * last + k]);
  }
};

template <class L>
class BatchTakeKernel : public mxplug::Operator {
 public:
  BatchTakeKernel(const mxplug::KwArgs&, mxplug::Context) {}
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      L::Run(ctx, out[0].Size(),
             BatchTakeElements<T>{in[0].dptr<T>(), in[1].dptr<int32_t>(),
                                  in[0].shape_[in[0].ndim() - 1], out[0].dptr<T>(), req[0]});
    });
  }
};

// ---- MXNet's older NDArray functions of indices ----

// _onehot_encode(lhs, rhs): rows of rhs's shape (N, K), one at lhs[i] (a row of zeros where lhs[i]
// is outside [0, K)); rhs gives only the shape and dtype (MXNet's out=rhs idiom). No gradient.
class OneHotEncodeProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs&) override {}
  std::vector<std::string> ListArguments() const override { return {"lhs", "rhs"}; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape &idx = (*in)[0], &rows = (*in)[1];
    if (!idx.IsKnown() || !rows.IsKnown()) return false;
    if (idx.ndim() != 1 || rows.ndim() != 2 || rows[0] != idx[0])
      throw std::invalid_argument("expected indices of shape (N,) and an output of (N, K), got " +
                                  idx.ToString() + " and " + rows.ToString());
    (*out)[0] = rows;
    return true;
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    (*out)[0] = (*in)[1];
    return (*in)[0] != kMXPUnknownDType && (*in)[1] != kMXPUnknownDType;
  }
};

template <class T, class I>
struct OneHotEncodeElements {
  const I* idx;
  T* out;
  int64_t k;
  int req;
  MXPLUG_XINLINE void operator()(int64_t o) const {
    using C = mxplug::ComputeType<T>;
    mxplug::StoreAs<C>(out[o], req, static_cast<C>(IndexValue(idx[o / k]) == o % k ? 1 : 0));
  }
};

template <class Loop>
class OneHotEncodeKernel : public mxplug::Operator {
 public:
  OneHotEncodeKernel(const mxplug::KwArgs&, mxplug::Context) {}
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp || out[0].Size() == 0) return;
    TypeSwitch2(out[0].type_flag_, in[0].type_flag_, [&](auto zero, auto index_zero) {
      using T = decltype(zero);
      using I = decltype(index_zero);
      Loop::Run(
          ctx, out[0].Size(),
          OneHotEncodeElements<T, I>{in[0].dptr<I>(), out[0].dptr<T>(), out[0].shape_[1], req[0]});
    });
  }
};

// fill_element_0index(lhs, mhs, rhs): lhs (N, K) with element (i, rhs[i]) set to mhs[i] (left
// as it is where rhs[i] is outside [0, K)). No gradient, as MXNet's.
class FillElement0IndexProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs&) override {}
  std::vector<std::string> ListArguments() const override { return {"lhs", "mhs", "rhs"}; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape &m = (*in)[0], &v = (*in)[1], &idx = (*in)[2];
    if (!m.IsKnown() || !v.IsKnown() || !idx.IsKnown()) return false;
    if (m.ndim() != 2 || v != TShape{m[0]} || idx != TShape{m[0]})
      throw std::invalid_argument("expected lhs (N, K), mhs (N,) and rhs (N,), got " +
                                  m.ToString() + ", " + v.ToString() + " and " + idx.ToString());
    (*out)[0] = m;
    return true;
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    if ((*in)[0] == kMXPUnknownDType) return false;
    if ((*in)[1] == kMXPUnknownDType) (*in)[1] = (*in)[0];
    if ((*in)[1] != (*in)[0])
      throw std::invalid_argument("mhs has dtype " + mxplug::DTypeName((*in)[1]) +
                                  ", expected lhs's " + mxplug::DTypeName((*in)[0]));
    (*out)[0] = (*in)[0];
    return (*in)[2] != kMXPUnknownDType;
  }
};

template <class T, class I>
struct FillElement0IndexElements {
  const T* m;
  const T* v;
  const I* idx;
  T* out;
  int64_t k;
  int req;
  MXPLUG_XINLINE void operator()(int64_t o) const {
    mxplug::StoreAs<T>(out[o], req, IndexValue(idx[o / k]) == o % k ? v[o / k] : m[o]);
  }
};

template <class Loop>
class FillElement0IndexKernel : public mxplug::Operator {
 public:
  FillElement0IndexKernel(const mxplug::KwArgs&, mxplug::Context) {}
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp || out[0].Size() == 0) return;
    TypeSwitch2(in[0].type_flag_, in[2].type_flag_, [&](auto zero, auto index_zero) {
      using T = decltype(zero);
      using I = decltype(index_zero);
      Loop::Run(ctx, out[0].Size(),
                FillElement0IndexElements<T, I>{in[0].dptr<T>(), in[1].dptr<T>(), in[2].dptr<I>(),
                                                out[0].dptr<T>(), in[0].shape_[1], req[0]});
    });
  }
};

/*! \brief Calls visit.template Op<Prop, Kernel>(name, doc, inputs, params) for pick, one_hot,
 * where, gather_nd and scatter_nd: the one list the definitions and each device's kernels register
 * from. */
template <class Visitor>
void ForEachIndexOp(Visitor&& visit) {
  static const std::vector<mxplug::FieldInfo> none;
  visit.template Op<RavelProp<true>, RavelKernels<true>::template Kernel>(
      "_ravel_multi_index",
      "Flat indices into an array of `shape` from index columns: data (ndim, N...) gives (N...).",
      {{"data", "Batch of multi-indices"}}, RavelParam::Fields());
  visit.template Op<RavelProp<false>, RavelKernels<false>::template Kernel>(
      "_unravel_index",
      "Index columns into an array of `shape` from flat indices: data (N...) gives (ndim, N...).",
      {{"data", "Array of flat indices"}}, RavelParam::Fields());
  visit.template Op<RavelProp<true>, RavelKernels<true>::template Kernel>(
      "ravel_multi_index", "Same as _ravel_multi_index.", {{"data", "Batch of multi-indices"}},
      RavelParam::Fields());
  visit.template Op<RavelProp<false>, RavelKernels<false>::template Kernel>(
      "unravel_index", "Same as _unravel_index.", {{"data", "Array of flat indices"}},
      RavelParam::Fields());
  visit.template Op<BatchTakeProp, BatchTakeKernel>(
      "batch_take",
      "Takes elements along the last axis, one per row: out[i] = a[i, indices[i]], indices "
      "clipped to the axis (deprecated in MXNet: pick does it).",
      {{"a", "The input array"}, {"indices", "The index array"}}, none);
  visit.template Op<GatherNDProp, NdIndexKernels<true>::template Kernel>(
      "gather_nd",
      "Gathers elements or slices from data: output[y, ...] = data[indices[0, y], ..., "
      "indices[M-1, y], ...] for indices of shape (M, Y0, Y1...); negative indices count from "
      "the end.",
      {{"data", "data"}, {"indices", "indices"}}, none);
  visit.template Op<ScatterNDProp, NdIndexKernels<false>::template Kernel>(
      "scatter_nd",
      "Scatters data into a new array of `shape`: output[indices[0, y], ..., indices[M-1, y], "
      "...] = data[y, ...], zeros elsewhere (gather_nd's adjoint where the indices are unique).",
      {{"data", "data"}, {"indices", "indices"}}, ScatterNDParam::Fields());
  visit.template Op<PickProp, PickKernel>(
      "pick", "Picks elements from data at the indices given along an axis.",
      {{"data", "The input array."}, {"index", "The index array."}}, PickParam::Fields());
  visit.template Op<PickProp, PickKernel>(
      "choose_element_0index", "Same as pick (MXNet's older name).",
      {{"data", "The input array."}, {"index", "The index array."}}, PickParam::Fields());
  visit.template Op<OneHotProp, OneHotKernel>("one_hot", "One-hot encoding of the indices.",
                                              {{"indices", "Array of indices."}},
                                              OneHotParam::Fields());
  visit.template Op<WhereProp, WhereKernel>(
      "where", "Elements of x where condition is nonzero, of y elsewhere.",
      {{"condition", "The condition array."},
       {"x", "Values where true."},
       {"y", "Values where false."}},
      none);
  visit.template Op<OneHotEncodeProp, OneHotEncodeKernel>(
      "_onehot_encode",
      "One-hot rows of rhs's shape (N, K): a one at column lhs[i] of row i (MXNet's older "
      "one_hot; rhs gives only the shape and dtype).",
      {{"lhs", "Left operand to the function."}, {"rhs", "Right operand to the function."}}, none);
  visit.template Op<FillElement0IndexProp, FillElement0IndexKernel>(
      "fill_element_0index", "lhs (N, K) with element (i, rhs[i]) set to mhs[i].",
      {{"lhs", "Left operand to the function."},
       {"mhs", "Middle operand to the function."},
       {"rhs", "Right operand to the function."}},
      none);
  visit.template Op<HistogramProp, HistogramKernel>(
      "_histogram",
      "Counts of the flattened data in bin_cnt equal bins of range, or in the bins whose edges "
      "the input bins gives (each bin holds its left edge, the last also its right); the bins' "
      "edges are the second output.",
      {{"data", "Input ndarray"}, {"bins", "Input ndarray"}}, HistogramParam::Fields());
}

}  // namespace mxplug_tensor

#endif  // MXPLUG_PLUGINS_TENSOR_INDEX_H_
