// Shape and indexing ops (MXNet's names and parameters): Reshape, Flatten, transpose,
// expand_dims, slice, _slice_assign, _slice_assign_scalar, take, broadcast_to, broadcast_like.
#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <string>

#include "elementwise.h"
#include "mxplug/plugin.hpp"

namespace {

using mxplug::Assign;
using mxplug::OpReqType;
using mxplug_tensor::TBlob;
using mxplug_tensor::TShape;

// Row-major element strides of a shape.
std::vector<int64_t> Strides(const TShape& s) {
  std::vector<int64_t> st(std::max(s.ndim(), 0), 1);
  for (int i = s.ndim() - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

// Calls fn(out_index, in_index) for every element of `shape`, the input walked with `in_strides`
// from `in_offset` (a strided view: transposes and slices).
template <class Fn>
void ForEachStrided(const TShape& shape, const std::vector<int64_t>& in_strides, int64_t in_offset, Fn&& fn) {
  const std::vector<int64_t> zero(in_strides.size(), 0);
  mxplug_tensor::ForEachBroadcast(shape, in_strides, zero,
                                  [&](int64_t o, int64_t i, int64_t) { fn(o, in_offset + i); });
}

// A kernel whose output is its input's elements in order (reshapes): forward and backward copy.
class CopyKernel : public mxplug::Operator {
 public:
  void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
               const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
    mxplug::AssignBlob(in[0], out[0], req[0]);
  }
  void Backward(const mxplug::OpContext&, const std::vector<TBlob>& out_grad, const std::vector<TBlob>&,
                const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                const std::vector<TBlob>& in_grad, const std::vector<TBlob>&) override {
    mxplug::AssignBlob(out_grad[0], in_grad[0], req[0]);
  }
};

// LayoutProp with a kernel that copies the elements in order (reshapes). The copy may be done in
// place both ways, which then costs nothing (the memory plan hands the input's buffer on).
template <class Param>
class ReshapeLikeProp : public mxplug::FirstInPlace<mxplug_tensor::LayoutProp<Param>> {
 public:
  mxplug::Operator* CreateOperator(mxplug::Context) const override { return new CopyKernel(); }
};

// ---- Reshape ----

struct ReshapeParam : mxplug::Parameter<ReshapeParam> {
  TShape shape;
  bool reverse;
  MXPLUG_DECLARE_PARAMETER(ReshapeParam) {
    MXPLUG_DECLARE_FIELD(shape).set_default(TShape(std::vector<int64_t>{})).describe(
        "The target shape. Special values: 0 copies this dimension from the input, -1 infers it, "
        "-2 copies all remaining input dimensions, -3 merges two consecutive input dimensions, "
        "-4 splits one input dimension into the next two values (one may be -1).");
    MXPLUG_DECLARE_FIELD(reverse).set_default(false).describe(
        "Apply the special values from right to left.");
  }
};
MXPLUG_REGISTER_PARAMETER(ReshapeParam);

// MXNet's rules for the special values, applied from the left (or the right with reverse).
TShape InferReshape(const TShape& target, const TShape& in, bool reverse) {
  std::vector<int64_t> param(target.begin(), target.end()), dshape(in.begin(), in.end());
  if (reverse) std::reverse(param.begin(), param.end()), std::reverse(dshape.begin(), dshape.end());
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("cannot reshape an array of shape " + in.ToString() + " into " +
                                 target.ToString() + ": " + why);
  };
  std::vector<int64_t> out;
  size_t src = 0;
  int inferred = -1;
  auto take = [&]() {
    if (src >= dshape.size()) throw bad("the special values use more dimensions than the input has");
    return dshape[src++];
  };
  for (size_t i = 0; i < param.size(); ++i) {
    const int64_t p = param[i];
    if (p == 0) {
      out.push_back(take());
    } else if (p == -1) {
      if (inferred >= 0) throw bad("only one dimension can be -1");
      inferred = static_cast<int>(out.size());
      ++src;
      out.push_back(1);
    } else if (p == -2) {
      while (src < dshape.size()) out.push_back(dshape[src++]);
    } else if (p == -3) {
      const int64_t a = take(), b = take();
      out.push_back(a * b);
    } else if (p == -4) {
      if (i + 2 >= param.size()) throw bad("-4 must be followed by two values");
      const int64_t d = take();
      int64_t a = param[++i], b = param[++i];
      if (a == -1 && b == -1) throw bad("-4 may not be followed by two -1");
      if (a == -1) a = b ? d / b : 0;
      if (b == -1) b = a ? d / a : 0;
      if (a * b != d) throw bad("-4 splits " + std::to_string(d) + " into " + std::to_string(a) +
                                " x " + std::to_string(b));
      out.push_back(a), out.push_back(b);
    } else if (p > 0) {
      out.push_back(p);
      ++src;
    } else {
      throw bad("unknown special value " + std::to_string(p));
    }
  }
  const int64_t size = in.Size();
  if (inferred >= 0) {
    int64_t known = 1;
    for (size_t j = 0; j < out.size(); ++j)
      if (static_cast<int>(j) != inferred) known *= out[j];
    if (known == 0 || size % known != 0) throw bad("the sizes do not divide");
    out[inferred] = size / known;
  }
  if (reverse) std::reverse(out.begin(), out.end());
  TShape result(out);
  if (result.Size() != size)
    throw bad("the sizes differ (" + std::to_string(size) + " vs " + std::to_string(result.Size()) + ")");
  return result;
}

class ReshapeProp : public ReshapeLikeProp<ReshapeParam> {
  TShape OutShape(const TShape& in) const override { return InferReshape(param_.shape, in, param_.reverse); }
};

class FlattenProp : public ReshapeLikeProp<mxplug_tensor::NoParam> {
  TShape OutShape(const TShape& in) const override {
    if (in.ndim() == 0) return TShape{1, 1};
    return TShape{in[0], in.ndim() > 1 ? in.ProdShape(1, in.ndim()) : 1};
  }
};

struct ExpandDimsParam : mxplug::Parameter<ExpandDimsParam> {
  int axis;
  MXPLUG_DECLARE_PARAMETER(ExpandDimsParam) {
    MXPLUG_DECLARE_FIELD(axis).describe("Position of the new axis; negative counts from the end.");
  }
};
MXPLUG_REGISTER_PARAMETER(ExpandDimsParam);

class ExpandDimsProp : public ReshapeLikeProp<ExpandDimsParam> {
  TShape OutShape(const TShape& in) const override {
    // The new axis is an axis of the result, which has one more dimension.
    const int axis = mxplug::NormalizeAxis(param_.axis, in.ndim() + 1);
    std::vector<int64_t> d(in.begin(), in.end());
    d.insert(d.begin() + axis, 1);
    return TShape(d);
  }
};

// ---- transpose ----

struct TransposeParam : mxplug::Parameter<TransposeParam> {
  TShape axes;
  MXPLUG_DECLARE_PARAMETER(TransposeParam) {
    MXPLUG_DECLARE_FIELD(axes).set_default(TShape(std::vector<int64_t>{})).describe(
        "Target axis order; empty reverses the axes.");
  }
};
MXPLUG_REGISTER_PARAMETER(TransposeParam);

std::vector<int> Permutation(const TShape& axes, int nd) {
  std::vector<int> perm(nd);
  if (axes.ndim() <= 0) {
    for (int i = 0; i < nd; ++i) perm[i] = nd - 1 - i;
    return perm;
  }
  if (axes.ndim() != nd)
    throw std::invalid_argument("axes " + axes.ToString() + " must name each of the " +
                                std::to_string(nd) + " axes once");
  std::vector<bool> seen(nd, false);
  for (int i = 0; i < nd; ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + nd : axes[i];
    if (a < 0 || a >= nd || seen[a])
      throw std::invalid_argument("axes " + axes.ToString() + " is not a permutation of " +
                                  std::to_string(nd) + " axes");
    seen[a] = true;
    perm[i] = static_cast<int>(a);
  }
  return perm;
}

// out = in transposed by perm (out axis i is in axis perm[i]).
void Transpose(const TBlob& in, const TBlob& out, const std::vector<int>& perm, OpReqType req) {
  if (req == mxplug::kNullOp) return;
  const std::vector<int64_t> st = Strides(in.shape_);
  std::vector<int64_t> walk(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) walk[i] = st[perm[i]];
  mxplug::TypeSwitch(in.type_flag_, [&](auto zero) {
    using T = decltype(zero);
    const T* s = in.dptr<T>();
    T* d = out.dptr<T>();
    ForEachStrided(out.shape_, walk, 0, [&](int64_t o, int64_t i) { Assign(d[o], req, s[i]); });
  });
}

class TransposeProp : public mxplug_tensor::LayoutProp<TransposeParam> {
  TShape OutShape(const TShape& in) const override {
    const std::vector<int> perm = Permutation(param_.axes, in.ndim());
    std::vector<int64_t> d(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) d[i] = in[perm[i]];
    return TShape(d);
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    struct Kernel : mxplug::Operator {
      TShape axes;
      void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
        Transpose(in[0], out[0], Permutation(axes, in[0].ndim()), req[0]);
      }
      void Backward(const mxplug::OpContext&, const std::vector<TBlob>& og, const std::vector<TBlob>&,
                    const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& ig, const std::vector<TBlob>&) override {
        const std::vector<int> perm = Permutation(axes, ig[0].ndim());
        std::vector<int> inverse(perm.size());
        for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int>(i);
        Transpose(og[0], ig[0], inverse, req[0]);
      }
    };
    auto* k = new Kernel();
    k->axes = param_.axes;
    return k;
  }
};

// ---- slice, _slice_assign, _slice_assign_scalar ----

struct SliceParam : mxplug::Parameter<SliceParam> {
  std::string begin, end, step;
  MXPLUG_DECLARE_PARAMETER(SliceParam) {
    MXPLUG_DECLARE_FIELD(begin).describe("Starting indices, a tuple of int or None per axis.");
    MXPLUG_DECLARE_FIELD(end).describe("Ending indices (exclusive), a tuple of int or None.");
    MXPLUG_DECLARE_FIELD(step).set_default("()").describe("Steps, a tuple of int or None (1).");
  }
};
MXPLUG_REGISTER_PARAMETER(SliceParam);

// The region a slice selects: per axis its start, step and length.
struct Region {
  std::vector<int64_t> start, step;
  TShape shape;
};

Region SliceRegion(const SliceParam& p, const TShape& in) {
  auto begin = mxplug_tensor::ParseOptionalTuple(p.begin, "begin"), end = mxplug_tensor::ParseOptionalTuple(p.end, "end"),
       step = mxplug_tensor::ParseOptionalTuple(p.step, "step");
  if (begin.size() != end.size() || (!step.empty() && step.size() != begin.size()))
    throw std::invalid_argument("begin " + p.begin + ", end " + p.end + " and step " + p.step +
                                " must have the same length");
  if (static_cast<int>(begin.size()) > in.ndim())
    throw std::invalid_argument("begin " + p.begin + " has more axes than the input " + in.ToString());
  Region r;
  std::vector<int64_t> dims;
  for (int i = 0; i < in.ndim(); ++i) {
    const int64_t n = in[i];
    const bool given = i < static_cast<int>(begin.size());
    const int64_t s = given && !step.empty() && step[i] ? *step[i] : 1;
    if (s == 0) throw std::invalid_argument("step of axis " + std::to_string(i) + " is 0");
    int64_t b, e;
    if (s > 0) {
      b = given && begin[i] ? *begin[i] : 0;
      e = given && end[i] ? *end[i] : n;
      if (b < 0) b += n;
      if (e < 0) e += n;
      b = std::clamp<int64_t>(b, 0, n);
      e = std::clamp<int64_t>(e, 0, n);
    } else {
      b = given && begin[i] ? *begin[i] : n - 1;
      e = given && end[i] ? *end[i] : -1;
      if (given && begin[i] && b < 0) b += n;
      if (given && end[i] && e < 0) e += n;
      b = std::clamp<int64_t>(b, -1, n - 1);
      e = std::clamp<int64_t>(e, -1, n - 1);
    }
    const int64_t len = s > 0 ? (e > b ? (e - b + s - 1) / s : 0) : (b > e ? (b - e - s - 1) / -s : 0);
    r.start.push_back(b), r.step.push_back(s), dims.push_back(len);
  }
  r.shape = TShape(dims);
  return r;
}

// The region's elements as a strided walk over the full array: strides and first offset.
void RegionWalk(const Region& r, const TShape& full, std::vector<int64_t>* walk, int64_t* offset) {
  const std::vector<int64_t> st = Strides(full);
  walk->resize(st.size());
  *offset = 0;
  for (size_t i = 0; i < st.size(); ++i) {
    (*walk)[i] = st[i] * r.step[i];
    *offset += st[i] * r.start[i];
  }
}

class SliceProp : public mxplug_tensor::LayoutProp<SliceParam> {
  TShape OutShape(const TShape& in) const override { return SliceRegion(param_, in).shape; }
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    struct Kernel : mxplug::Operator {
      SliceParam p;
      void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
        if (req[0] == mxplug::kNullOp) return;
        std::vector<int64_t> walk;
        int64_t offset;
        RegionWalk(SliceRegion(p, in[0].shape_), in[0].shape_, &walk, &offset);
        mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
          using T = decltype(zero);
          const T* s = in[0].dptr<T>();
          T* d = out[0].dptr<T>();
          ForEachStrided(out[0].shape_, walk, offset, [&](int64_t o, int64_t i) { Assign(d[o], req[0], s[i]); });
        });
      }
      void Backward(const mxplug::OpContext&, const std::vector<TBlob>& og, const std::vector<TBlob>&,
                    const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& ig, const std::vector<TBlob>&) override {
        if (req[0] == mxplug::kNullOp) return;
        std::vector<int64_t> walk;
        int64_t offset;
        RegionWalk(SliceRegion(p, ig[0].shape_), ig[0].shape_, &walk, &offset);
        mxplug::TypeSwitch(og[0].type_flag_, [&](auto zero) {
          using T = decltype(zero);
          const T* g = og[0].dptr<T>();
          T* d = ig[0].dptr<T>();
          if (req[0] != mxplug::kAddTo) std::fill(d, d + ig[0].Size(), T(0));
          ForEachStrided(og[0].shape_, walk, offset, [&](int64_t o, int64_t i) { d[i] += g[o]; });
        });
      }
    };
    auto* k = new Kernel();
    k->p = param_;
    return k;
  }
};

// _slice_assign(lhs, rhs): lhs with the region replaced by rhs; in place over lhs.
template <bool kScalar>
class SliceAssignProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override {
    mxplug::KwArgs slice_args, rest;
    for (const auto& kv : kwargs)
      (kv.first == "begin" || kv.first == "end" || kv.first == "step" ? slice_args : rest).push_back(kv);
    slice_.Init(slice_args);
    scalar_.Init(rest);
  }
  std::vector<std::string> ListArguments() const override {
    if (kScalar) return {"data"};
    return {"lhs", "rhs"};
  }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out, std::vector<TShape>*) const override {
    const TShape& lhs = (*in)[0];
    if (lhs.ndim() < 0) return false;
    const Region r = SliceRegion(slice_, lhs);
    if (!kScalar) {
      if ((*in)[1].ndim() < 0) (*in)[1] = r.shape;
      if ((*in)[1] != r.shape)
        throw std::invalid_argument("rhs has shape " + (*in)[1].ToString() + ", expected the region's " +
                                    r.shape.ToString());
    }
    (*out)[0] = lhs;
    return lhs.IsKnown();
  }
  std::vector<std::pair<int, int>> ForwardInplaceOption(const std::vector<int>& in,
                                                        const std::vector<int>& out) const override {
    return {{in[0], out[0]}};
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return {og[0]};
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    struct Kernel : mxplug::Operator {
      SliceParam p;
      double scalar;
      void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
        if (req[0] == mxplug::kNullOp) return;
        if (req[0] == mxplug::kAddTo) throw std::invalid_argument("kAddTo is not supported");
        mxplug::AssignBlob(in[0], out[0], mxplug::kWriteTo);
        std::vector<int64_t> walk;
        int64_t offset;
        RegionWalk(SliceRegion(p, out[0].shape_), out[0].shape_, &walk, &offset);
        mxplug::TypeSwitch(out[0].type_flag_, [&](auto zero) {
          using T = decltype(zero);
          T* d = out[0].dptr<T>();
          const T* v = kScalar ? nullptr : in[1].dptr<T>();
          const T s = static_cast<T>(scalar);
          TShape region = kScalar ? SliceRegion(p, out[0].shape_).shape : in[1].shape_;
          ForEachStrided(region, walk, offset, [&](int64_t o, int64_t i) { d[i] = v ? v[o] : s; });
        });
      }
      // lhs's gradient is the output gradient outside the region; rhs's is the region's.
      void Backward(const mxplug::OpContext&, const std::vector<TBlob>& og, const std::vector<TBlob>&,
                    const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& ig, const std::vector<TBlob>&) override {
        const TShape& shape = og[0].shape_;
        const Region r = SliceRegion(p, shape);
        std::vector<int64_t> walk;
        int64_t offset;
        RegionWalk(r, shape, &walk, &offset);
        mxplug::TypeSwitch(og[0].type_flag_, [&](auto zero) {
          using T = decltype(zero);
          const T* g = og[0].dptr<T>();
          if (req[0] != mxplug::kNullOp) {
            std::vector<T> outside(g, g + og[0].Size());
            ForEachStrided(r.shape, walk, offset, [&](int64_t, int64_t i) { outside[i] = T(0); });
            T* dl = ig[0].dptr<T>();
            for (size_t i = 0; i < outside.size(); ++i) Assign(dl[i], req[0], outside[i]);
          }
          if (!kScalar && req[1] != mxplug::kNullOp) {
            T* dr = ig[1].dptr<T>();
            ForEachStrided(r.shape, walk, offset, [&](int64_t o, int64_t i) { Assign(dr[o], req[1], g[i]); });
          }
        });
      }
    };
    auto* k = new Kernel();
    k->p = slice_;
    k->scalar = scalar_.scalar;
    return k;
  }

 private:
  SliceParam slice_;
  mxplug_tensor::ScalarParam scalar_;
};

// ---- take ----

struct TakeParam : mxplug::Parameter<TakeParam> {
  int axis;
  int mode;
  MXPLUG_DECLARE_PARAMETER(TakeParam) {
    MXPLUG_DECLARE_FIELD(axis).set_default(0).describe("The axis to take along.");
    MXPLUG_DECLARE_FIELD(mode).set_default(mxplug_tensor::kIndexClip)
        .add_enum("clip", mxplug_tensor::kIndexClip).add_enum("wrap", mxplug_tensor::kIndexWrap)
        .add_enum("raise", mxplug_tensor::kIndexRaise)
        .describe("Out-of-range indices: clip to the range, wrap around, or raise an error.");
  }
};
MXPLUG_REGISTER_PARAMETER(TakeParam);

struct TakeKernel : mxplug::Operator {
  TakeParam p;
  int axis = 0;
  // Calls fn(out_block, a_block, block_len) for every (outer, index) pair.
  template <class Fn>
  void Walk(const TShape& a, const TBlob& idx, Fn&& fn) const {
    const int64_t outer = a.ProdShape(0, axis), n = a[axis], inner = a.ProdShape(axis + 1, a.ndim());
    const int64_t count = idx.Size();
    mxplug::TypeSwitch(idx.type_flag_, [&](auto zero) {
      using I = decltype(zero);
      const I* ix = idx.dptr<I>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < count; ++j) {
          const int64_t k = mxplug_tensor::ResolveIndex(static_cast<int64_t>(ix[j]), n, p.mode, axis);
          fn((o * count + j) * inner, (o * n + k) * inner, inner);
        }
    });
  }
  void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
               const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    axis = AxisOf(in[0].ndim());
    mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      const T* a = in[0].dptr<T>();
      T* o = out[0].dptr<T>();
      Walk(in[0].shape_, in[1], [&](int64_t ob, int64_t ab, int64_t len) {
        for (int64_t t = 0; t < len; ++t) Assign(o[ob + t], req[0], a[ab + t]);
      });
    });
  }
  void Backward(const mxplug::OpContext&, const std::vector<TBlob>& og, const std::vector<TBlob>& in,
                const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                const std::vector<TBlob>& ig, const std::vector<TBlob>&) override {
    mxplug::WriteZeroGradient(ig[1], req[1]);  // indices get no gradient
    if (req[0] == mxplug::kNullOp) return;
    axis = AxisOf(ig[0].ndim());
    mxplug::TypeSwitch(og[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      const T* g = og[0].dptr<T>();
      T* d = ig[0].dptr<T>();
      if (req[0] != mxplug::kAddTo) std::fill(d, d + ig[0].Size(), T(0));
      Walk(ig[0].shape_, in[1], [&](int64_t ob, int64_t ab, int64_t len) {
        for (int64_t t = 0; t < len; ++t) d[ab + t] += g[ob + t];
      });
    });
  }
  int AxisOf(int nd) const { return mxplug::NormalizeAxis(p.axis, nd); }
};

class TakeProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {"a", "indices"}; }
  int Axis(int nd) const { return mxplug::NormalizeAxis(param_.axis, nd); }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out, std::vector<TShape>*) const override {
    const TShape& a = (*in)[0];
    const TShape& idx = (*in)[1];
    if (a.ndim() < 0 || idx.ndim() < 0) return false;
    const int axis = Axis(a.ndim());
    std::vector<int64_t> d(a.begin(), a.begin() + axis);
    d.insert(d.end(), idx.begin(), idx.end());
    d.insert(d.end(), a.begin() + axis + 1, a.end());
    (*out)[0] = TShape(d);
    return a.IsKnown() && idx.IsKnown();
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    return mxplug::InferTypeFromFirst(in, out);
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>&) const override {
    return {og[0], in[1]};
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    auto* k = new TakeKernel();
    k->p = param_;
    return k;
  }

 private:
  TakeParam param_;
};

// ---- broadcast_to, broadcast_like ----

// Input 0 repeated to the output's shape; backward sums the gradient over the repeats. Any
// further input (broadcast_like's rhs only lends its shape) gets a zero gradient.
struct BroadcastKernel : mxplug::Operator {
  void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
               const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const TShape& os = out[0].shape_;
    mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      const T* s = in[0].dptr<T>();
      T* d = out[0].dptr<T>();
      ForEachStrided(os, mxplug_tensor::BroadcastStrides(in[0].shape_, os), 0,
                     [&](int64_t o, int64_t i) { Assign(d[o], req[0], s[i]); });
    });
  }
  void Backward(const mxplug::OpContext&, const std::vector<TBlob>& og, const std::vector<TBlob>&,
                const std::vector<TBlob>&, const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    for (size_t i = 1; i < ig.size(); ++i) mxplug::WriteZeroGradient(ig[i], req[i]);
    const TShape& os = og[0].shape_;
    mxplug_tensor::ScatterAddGradient(og[0], ig[0], req[0], [&](auto add) {
      ForEachStrided(os, mxplug_tensor::BroadcastStrides(ig[0].shape_, os), 0, add);
    });
  }
};

struct BroadcastToParam : mxplug::Parameter<BroadcastToParam> {
  TShape shape;
  MXPLUG_DECLARE_PARAMETER(BroadcastToParam) {
    MXPLUG_DECLARE_FIELD(shape).set_default(TShape(std::vector<int64_t>{})).describe(
        "The target shape; 0 keeps the input's dimension.");
  }
};
MXPLUG_REGISTER_PARAMETER(BroadcastToParam);

class BroadcastToProp : public mxplug_tensor::LayoutProp<BroadcastToParam> {
  TShape OutShape(const TShape& in) const override {
    const TShape& t = param_.shape;
    if (t.ndim() < in.ndim())
      throw std::invalid_argument("cannot broadcast shape " + in.ToString() + " to " + t.ToString());
    std::vector<int64_t> d(t.begin(), t.end());
    const int off = t.ndim() - in.ndim();
    for (int i = 0; i < t.ndim(); ++i) {
      const int64_t have = i >= off ? in[i - off] : 1;
      if (d[i] == 0) d[i] = have;
      if (have != 1 && have != d[i])
        throw std::invalid_argument("cannot broadcast shape " + in.ToString() + " to " + t.ToString());
    }
    return TShape(d);
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override { return new BroadcastKernel(); }
};

struct BroadcastLikeParam : mxplug::Parameter<BroadcastLikeParam> {
  std::optional<TShape> lhs_axes, rhs_axes;
  MXPLUG_DECLARE_PARAMETER(BroadcastLikeParam) {
    MXPLUG_DECLARE_FIELD(lhs_axes).set_default(std::nullopt).describe("Axes of lhs to broadcast (default: all).");
    MXPLUG_DECLARE_FIELD(rhs_axes).set_default(std::nullopt).describe("Axes of rhs whose sizes lhs takes.");
  }
};
MXPLUG_REGISTER_PARAMETER(BroadcastLikeParam);

class BroadcastLikeProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {"lhs", "rhs"}; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out, std::vector<TShape>*) const override {
    const TShape &lhs = (*in)[0], &rhs = (*in)[1];
    if (!lhs.IsKnown() || !rhs.IsKnown()) return false;
    const auto bad = [&] {
      return std::invalid_argument("lhs of shape " + lhs.ToString() + " cannot be broadcast like rhs of shape " +
                                   rhs.ToString() + (param_.lhs_axes ? " on lhs_axes " + param_.lhs_axes->ToString() +
                                                                           " and rhs_axes " + param_.rhs_axes->ToString()
                                                                     : ""));
    };
    std::vector<int64_t> d(lhs.begin(), lhs.end());
    if (!param_.lhs_axes) {
      if (lhs.ndim() != rhs.ndim()) throw bad();
      d.assign(rhs.begin(), rhs.end());
    } else {
      if (!param_.rhs_axes || param_.rhs_axes->ndim() != param_.lhs_axes->ndim()) throw bad();
      for (int i = 0; i < param_.lhs_axes->ndim(); ++i) {
        const int l = mxplug::NormalizeAxis((*param_.lhs_axes)[i], lhs.ndim(), "lhs_axes");
        d[l] = rhs[mxplug::NormalizeAxis((*param_.rhs_axes)[i], rhs.ndim(), "rhs_axes")];
      }
    }
    for (int i = 0; i < lhs.ndim(); ++i)
      if (lhs[i] != 1 && lhs[i] != d[i]) throw bad();
    (*out)[0] = TShape(d);
    return true;
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    return mxplug::InferTypeFromFirst(in, out);
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad, const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return {out_grad[0]};
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override { return new BroadcastKernel(); }

 private:
  BroadcastLikeParam param_;
};

const std::initializer_list<mxplug_tensor::InputDoc> kData{{"data", "The input array."}};

[[maybe_unused]] const bool registered = [] {
  using mxplug_tensor::Register;
  Register<ReshapeProp>("Reshape", "Reshapes the input to a new shape of the same size.", kData,
                        ReshapeParam::Fields());
  Register<ReshapeProp>("reshape", "Same as Reshape.", kData, ReshapeParam::Fields());
  Register<FlattenProp>("Flatten", "Collapses all axes but the first: (d0, d1 * ... * dn).", kData);
  Register<FlattenProp>("flatten", "Same as Flatten.", kData);
  Register<ExpandDimsProp>("expand_dims", "Inserts a new axis of size 1.", kData, ExpandDimsParam::Fields());
  Register<TransposeProp>("transpose", "Permutes the axes.", kData, TransposeParam::Fields());
  Register<SliceProp>("slice", "A slice of the input: begin, end and step per axis.", kData,
                      SliceParam::Fields());
  Register<SliceProp>("crop", "Same as slice.", kData, SliceParam::Fields());
  Register<SliceAssignProp<false>>("_slice_assign", "lhs with the region begin:end:step replaced by rhs.",
                                   {{"lhs", "The array to assign into."}, {"rhs", "The values."}},
                                   SliceParam::Fields());
  // The registration keeps pointers to the fields: a static lives as long as the plugin.
  static const std::vector<mxplug::FieldInfo> scalar_fields = [] {
    std::vector<mxplug::FieldInfo> fields = SliceParam::Fields();
    for (const mxplug::FieldInfo& f : mxplug_tensor::ScalarParam::Fields())
      if (f.name == "scalar") fields.push_back(f);
    return fields;
  }();
  Register<SliceAssignProp<true>>("_slice_assign_scalar", "data with the region set to a scalar.", kData,
                                  scalar_fields);
  Register<TakeProp>("take", "Takes elements along an axis at the given indices.",
                     {{"a", "The input array."}, {"indices", "The indices of the values to take."}},
                     TakeParam::Fields());
  Register<BroadcastToProp>("broadcast_to", "Broadcasts the input to a shape.", kData,
                            BroadcastToParam::Fields());
  Register<BroadcastLikeProp>("broadcast_like", "Broadcasts lhs to the shape of rhs (or of rhs's rhs_axes).",
                              {{"lhs", "The array to broadcast."}, {"rhs", "The array whose shape lhs takes."}},
                              BroadcastLikeParam::Fields());
  return true;
}();

}  // namespace
