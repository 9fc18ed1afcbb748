// Definitions of the layout ops (MXNet's names and parameters): Reshape, Flatten, expand_dims,
// transpose, slice, _slice_assign, _slice_assign_scalar, take, Embedding, broadcast_to,
// broadcast_axis (and its alias broadcast_axes), broadcast_like. Their output holds their input's
// elements rearranged, so their kernels are written once here, over a few primitives each device
// provides (Layout, below): shape_cpu.cc and devices/cuda/kernels/shape.cu supply the primitives
// and register the kernels from one list.
#ifndef MXPLUG_PLUGINS_TENSOR_SHAPE_H_
#define MXPLUG_PLUGINS_TENSOR_SHAPE_H_

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "elementwise.h"
#include "mxplug/plugin.hpp"

namespace mxplug_tensor {

// ---- Walks: which element of an array each output element is ----

/*! \brief Element o of `shape` (row-major) is element offset + sum_d idx_d(o) * stride[d] of the
 * walked array: transposes, slices and broadcasts are walks. */
struct StridedWalk {
  TShape shape;
  std::vector<int64_t> stride;
  int64_t offset = 0;
};

// Row-major element strides of a shape.
inline std::vector<int64_t> Strides(const TShape& s) {
  std::vector<int64_t> st(std::max(s.ndim(), 0), 1);
  for (int i = s.ndim() - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

/*! \brief The walk of `in` transposed by perm (axis i of the result is axis perm[i] of in). */
inline StridedWalk TransposeWalk(const TShape& in, const std::vector<int>& perm) {
  const std::vector<int64_t> st = Strides(in);
  StridedWalk w;
  std::vector<int64_t> d(perm.size());
  w.stride.resize(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) d[i] = in[perm[i]], w.stride[i] = st[perm[i]];
  w.shape = TShape(d);
  return w;
}

/*! \brief The permutation that undoes perm (a transpose's backward). */
inline std::vector<int> InversePermutation(const std::vector<int>& perm) {
  std::vector<int> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int>(i);
  return inverse;
}

/*! \brief The same walk in as few axes as it takes: size-1 axes dropped, and an axis merged into
 * the one before it where the two step through memory as one (stride[d] == stride[d+1] *
 * shape[d+1]). Devices that walk with fixed-size index arrays need this (tile and repeat
 * double the axes). */
inline StridedWalk Simplified(const StridedWalk& w) {
  if (w.shape.Size() == 0) return w;
  std::vector<int64_t> dims, strides;
  for (int d = 0; d < w.shape.ndim(); ++d) {
    if (w.shape[d] == 1) continue;
    if (!dims.empty() && strides.back() == w.stride[d] * w.shape[d]) {
      dims.back() *= w.shape[d];
      strides.back() = w.stride[d];
      continue;
    }
    dims.push_back(w.shape[d]), strides.push_back(w.stride[d]);
  }
  return StridedWalk{TShape(dims), strides, w.offset};
}

/*! \brief The walk of `in` broadcast to `out` (NumPy's rules). */
inline StridedWalk BroadcastWalk(const TShape& in, const TShape& out) {
  return StridedWalk{out, BroadcastStrides(in, out), 0};
}

// ---- Parameters and shapes ----

struct ReshapeParam : mxplug::Parameter<ReshapeParam> {
  TShape shape;
  bool reverse;
  TShape target_shape;
  bool keep_highest;
  MXPLUG_DECLARE_PARAMETER(ReshapeParam) {
    MXPLUG_DECLARE_FIELD(shape)
        .set_default(TShape(std::vector<int64_t>{}))
        .describe(
            "The target shape. Special values: 0 copies this dimension from the input, -1 infers "
            "it, "
            "-2 copies all remaining input dimensions, -3 merges two consecutive input dimensions, "
            "-4 splits one input dimension into the next two values (one may be -1).");
    MXPLUG_DECLARE_FIELD(reverse).set_default(false).describe(
        "Apply the special values from right to left.");
    MXPLUG_DECLARE_FIELD(target_shape)
        .set_default(TShape(std::vector<int64_t>{}))
        .describe("(Deprecated: use shape.) The new shape; one 0 is inferred from the rest.");
    MXPLUG_DECLARE_FIELD(keep_highest)
        .set_default(false)
        .describe("(Deprecated: use shape.) Keep the first axis; target_shape's first is ignored.");
  }
};

/*! \brief MXNet's deprecated target_shape: the shape itself, with one 0 inferred from the rest
 * and, with keep_highest, the input's first axis in place of its first. */
inline TShape TargetShape(const ReshapeParam& p, const TShape& in) {
  std::vector<int64_t> out(p.target_shape.begin(), p.target_shape.end());
  if (p.keep_highest && !out.empty() && in.ndim() > 0) out[0] = in[0];
  int zeros = 0, at = -1;
  int64_t known = 1;
  for (size_t i = p.keep_highest ? 1 : 0; i < out.size(); ++i)
    if (out[i] == 0) ++zeros, at = static_cast<int>(i);
  for (size_t i = 0; i < out.size(); ++i)
    if (static_cast<int>(i) != at) known *= out[i];
  if (zeros == 1 && known > 0) out[at] = in.Size() / known;
  const TShape shape(out);
  if (zeros > 1 || shape.Size() != in.Size())
    throw std::invalid_argument("cannot reshape an array of shape " + in.ToString() +
                                " into target_shape " + p.target_shape.ToString() +
                                (zeros > 1 ? ": at most one 0 can be inferred"
                                           : ": the sizes differ (" + shape.ToString() + ")"));
  return shape;
}

// MXNet's rules for the special values, applied from the left (or the right with reverse).
inline TShape InferReshape(const TShape& target, const TShape& in, bool reverse) {
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
    if (src >= dshape.size())
      throw bad("the special values use more dimensions than the input has");
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
      if (a * b != d)
        throw bad("-4 splits " + std::to_string(d) + " into " + std::to_string(a) + " x " +
                  std::to_string(b));
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
    throw bad("the sizes differ (" + std::to_string(size) + " vs " + std::to_string(result.Size()) +
              ")");
  return result;
}

struct ExpandDimsParam : mxplug::Parameter<ExpandDimsParam> {
  int axis;
  MXPLUG_DECLARE_PARAMETER(ExpandDimsParam) {
    MXPLUG_DECLARE_FIELD(axis).describe("Position of the new axis; negative counts from the end.");
  }
};

struct TransposeParam : mxplug::Parameter<TransposeParam> {
  TShape axes;
  MXPLUG_DECLARE_PARAMETER(TransposeParam) {
    MXPLUG_DECLARE_FIELD(axes)
        .set_default(TShape(std::vector<int64_t>{}))
        .describe("Target axis order; empty reverses the axes.");
  }
};

inline std::vector<int> Permutation(const TShape& axes, int nd) {
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

inline std::vector<int> TransposeOrder(const TransposeParam& p, int nd) {
  return Permutation(p.axes, nd);
}

// SwapAxis (swapaxes): the transpose that exchanges two axes.
struct SwapAxisParam : mxplug::Parameter<SwapAxisParam> {
  int dim1, dim2;
  MXPLUG_DECLARE_PARAMETER(SwapAxisParam) {
    MXPLUG_DECLARE_FIELD(dim1).set_default(0).describe("The first axis to swap.");
    MXPLUG_DECLARE_FIELD(dim2).set_default(0).describe("The second axis to swap.");
  }
};

inline std::vector<int> SwapOrder(const SwapAxisParam& p, int nd) {
  std::vector<int> perm(nd);
  for (int i = 0; i < nd; ++i) perm[i] = i;
  int axis[2] = {p.dim1, p.dim2};
  for (int i = 0; i < 2; ++i) {
    int& a = axis[i];
    const int given = a;
    if (a < 0) a += nd;
    if (a < 0 || a >= nd)
      throw std::invalid_argument(
          std::string(i == 0 ? "dim1" : "dim2") + " = " + std::to_string(given) + ": axis " +
          std::to_string(given) + " is out of bounds for an array of " + std::to_string(nd) +
          " axes (expected " + std::to_string(-nd) + " to " + std::to_string(nd - 1) + ")");
  }
  std::swap(perm[axis[0]], perm[axis[1]]);
  return perm;
}

struct SliceParam : mxplug::Parameter<SliceParam> {
  std::string begin, end, step;
  MXPLUG_DECLARE_PARAMETER(SliceParam) {
    MXPLUG_DECLARE_FIELD(begin).describe("Starting indices, a tuple of int or None per axis.");
    MXPLUG_DECLARE_FIELD(end).describe("Ending indices (exclusive), a tuple of int or None.");
    MXPLUG_DECLARE_FIELD(step).set_default("()").describe("Steps, a tuple of int or None (1).");
  }
};

// The region a slice selects: per axis its start, step and length.
struct Region {
  std::vector<int64_t> start, step;
  TShape shape;
};

/*! \brief Whether element i of a row-major array of shape full[0..ndim) lies in the region that
 * starts at start[d], steps by step[d] and holds len[d] elements along each axis d. The same
 * test on every device. */
MXPLUG_XINLINE bool InRegion(int64_t i, int ndim, const int64_t* full, const int64_t* start,
                             const int64_t* step, const int64_t* len) {
  for (int d = ndim - 1; d >= 0; --d) {
    const int64_t k = i % full[d] - start[d];
    i /= full[d];
    if (k % step[d] != 0) return false;
    const int64_t q = k / step[d];
    if (q < 0 || q >= len[d]) return false;
  }
  return true;
}

inline Region SliceRegion(const SliceParam& p, const TShape& in) {
  auto begin = mxplug_tensor::ParseOptionalTuple(p.begin, "begin"),
       end = mxplug_tensor::ParseOptionalTuple(p.end, "end"),
       step = mxplug_tensor::ParseOptionalTuple(p.step, "step");
  if (begin.size() != end.size() || (!step.empty() && step.size() != begin.size()))
    throw std::invalid_argument("begin " + p.begin + ", end " + p.end + " and step " + p.step +
                                " must have the same length");
  if (static_cast<int>(begin.size()) > in.ndim())
    throw std::invalid_argument("begin " + p.begin + " has more axes than the input " +
                                in.ToString());
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
    const int64_t len =
        s > 0 ? (e > b ? (e - b + s - 1) / s : 0) : (b > e ? (b - e - s - 1) / -s : 0);
    r.start.push_back(b), r.step.push_back(s), dims.push_back(len);
  }
  r.shape = TShape(dims);
  return r;
}

/*! \brief The region's elements as a walk over the full array. */
inline StridedWalk RegionWalk(const Region& r, const TShape& full) {
  const std::vector<int64_t> st = Strides(full);
  StridedWalk w{r.shape, std::vector<int64_t>(st.size()), 0};
  for (size_t i = 0; i < st.size(); ++i) {
    w.stride[i] = st[i] * r.step[i];
    w.offset += st[i] * r.start[i];
  }
  return w;
}

/*! \brief take viewed as (outer, n, inner) blocks of `a` and (outer, count, inner) of the output:
 * output element o reads a's element Source(o, indices) (a device that gathers per element uses
 * it; mode 'raise' is checked before). */
struct TakeGeometry {
  int64_t n, inner, count;
  int mode;
  template <class I>
  MXPLUG_XINLINE int64_t Source(int64_t o, const I* idx) const {
    const int64_t t = o % inner, q = o / inner;
    const int64_t j = q % count, outer = q / count;
    const int64_t k = ClipOrWrapIndex(IndexValue(idx[j]), n, mode);
    return (outer * n + k) * inner + t;
  }
};

struct TakeParam : mxplug::Parameter<TakeParam> {
  int axis;
  int mode;
  MXPLUG_DECLARE_PARAMETER(TakeParam) {
    MXPLUG_DECLARE_FIELD(axis).set_default(0).describe("The axis to take along.");
    MXPLUG_DECLARE_FIELD(mode)
        .set_default(mxplug_tensor::kIndexClip)
        .add_enum("clip", mxplug_tensor::kIndexClip)
        .add_enum("wrap", mxplug_tensor::kIndexWrap)
        .add_enum("raise", mxplug_tensor::kIndexRaise)
        .describe("Out-of-range indices: clip to the range, wrap around, or raise an error.");
  }
};

struct EmbeddingParam : mxplug::Parameter<EmbeddingParam> {
  int64_t input_dim, output_dim;
  int dtype;
  bool sparse_grad;
  MXPLUG_DECLARE_PARAMETER(EmbeddingParam) {
    MXPLUG_DECLARE_FIELD(input_dim).set_lower_bound(1).describe(
        "Vocabulary size of the input indices.");
    MXPLUG_DECLARE_FIELD(output_dim)
        .set_lower_bound(1)
        .describe("Dimension of the embedding vectors.");
    MXPLUG_DECLARE_FIELD(dtype)
        .set_default(kMXPFloat32)
        .add_dtype_enum()
        .describe("Data type of weight.");
    MXPLUG_DECLARE_FIELD(sparse_grad)
        .set_default(false)
        .describe("Accepted for compatibility (dense gradient).");
  }
};

struct BroadcastToParam : mxplug::Parameter<BroadcastToParam> {
  TShape shape;
  MXPLUG_DECLARE_PARAMETER(BroadcastToParam) {
    MXPLUG_DECLARE_FIELD(shape)
        .set_default(TShape(std::vector<int64_t>{}))
        .describe("The target shape; 0 keeps the input's dimension.");
  }
};

struct BroadcastAxisParam : mxplug::Parameter<BroadcastAxisParam> {
  TShape axis, size;
  MXPLUG_DECLARE_PARAMETER(BroadcastAxisParam) {
    MXPLUG_DECLARE_FIELD(axis)
        .set_default(TShape(std::vector<int64_t>{}))
        .describe("The axes to broadcast along (each of size 1 in the input).");
    MXPLUG_DECLARE_FIELD(size)
        .set_default(TShape(std::vector<int64_t>{}))
        .describe("The size each of those axes takes.");
  }
};

struct BroadcastLikeParam : mxplug::Parameter<BroadcastLikeParam> {
  std::optional<TShape> lhs_axes, rhs_axes;
  MXPLUG_DECLARE_PARAMETER(BroadcastLikeParam) {
    MXPLUG_DECLARE_FIELD(lhs_axes)
        .set_default(std::nullopt)
        .describe("Axes of lhs to broadcast (default: all).");
    MXPLUG_DECLARE_FIELD(rhs_axes)
        .set_default(std::nullopt)
        .describe("Axes of rhs whose sizes lhs takes.");
  }
};

struct ReshapeLikeParam : mxplug::Parameter<ReshapeLikeParam> {
  std::optional<int> lhs_begin, lhs_end, rhs_begin, rhs_end;
  MXPLUG_DECLARE_PARAMETER(ReshapeLikeParam) {
    MXPLUG_DECLARE_FIELD(lhs_begin)
        .set_default(std::nullopt)
        .describe(
            "Defaults to 0. The beginning index along which the lhs dimensions are to be "
            "reshaped. Supports negative indices.");
    MXPLUG_DECLARE_FIELD(lhs_end)
        .set_default(std::nullopt)
        .describe(
            "Defaults to None. The ending index along which the lhs dimensions are to be "
            "used for reshaping. Supports negative indices.");
    MXPLUG_DECLARE_FIELD(rhs_begin)
        .set_default(std::nullopt)
        .describe(
            "Defaults to 0. The beginning index along which the rhs dimensions are to be "
            "used for reshaping. Supports negative indices.");
    MXPLUG_DECLARE_FIELD(rhs_end)
        .set_default(std::nullopt)
        .describe(
            "Defaults to None. The ending index along which the rhs dimensions are to be "
            "used for reshaping. Supports negative indices.");
  }
};

struct BlockParam : mxplug::Parameter<BlockParam> {
  int block_size;
  MXPLUG_DECLARE_PARAMETER(BlockParam) {
    MXPLUG_DECLARE_FIELD(block_size).describe("Blocks of [block_size. block_size] are moved");
  }
};

// depth_to_space (kToSpace) and space_to_depth on (N, C, H, W): a transpose of a 6-D view of
// the input (MXNet's definition), e.g. depth_to_space views (N, b, b, C/b^2, H, W) and orders it
// (0, 3, 4, 1, 5, 2), which read as (N, C/b^2, H*b, W*b).
template <bool kToSpace>
struct BlockLayout {
  TShape view;
  std::vector<int> perm;
  TShape out;
  BlockLayout(const TShape& in, int b) {
    const char* what = kToSpace ? "Depth To Space" : "Space To Depth";
    if (b <= 0) throw std::invalid_argument("block_size must be a positive integer value");
    if (in.ndim() != 4)
      throw std::invalid_argument(std::string("Operation ") + what +
                                  " requires exactly 4D tensor; got " + in.ToString());
    const int64_t n = in[0], c = in[1], h = in[2], w = in[3];
    auto need = [&](int dim, int64_t size, int64_t multiple, const char* name) {
      if (size % multiple != 0)
        throw std::invalid_argument(
            "Cannot perform Depth To Space operation on the specified "
            "tensor. Dimension:" +
            std::to_string(dim) + "(" + name + ") should be a multiple of " +
            (kToSpace ? "'block^2'" : "'block'") + "; got shape " + in.ToString() +
            " and block_size " + std::to_string(b));
    };
    if (kToSpace) {
      need(1, c, int64_t{b} * b, "depth dimension");
      view = TShape{n, b, b, c / (int64_t{b} * b), h, w};
      perm = {0, 3, 4, 1, 5, 2};
      out = TShape{n, c / (int64_t{b} * b), h * b, w * b};
    } else {
      need(2, h, b, "1st Space dimension");
      need(3, w, b, "2nd Space dimension");
      view = TShape{n, c, h / b, b, w / b, b};
      perm = {0, 3, 5, 1, 2, 4};
      out = TShape{n, c * b * b, h / b, w / b};
    }
  }
};

// ---- Properties ----

// LayoutProp whose output is its input's elements in order (reshapes). The copy may be done in
// place both ways, which then costs nothing (the memory plan hands the input's buffer on).
template <class Param>
using ReshapeLikeProp = mxplug::FirstInPlace<LayoutProp<Param>>;

class ReshapeProp : public ReshapeLikeProp<ReshapeParam> {
  TShape OutShape(const TShape& in) const override {
    if (param_.shape.ndim() <= 0 && param_.target_shape.ndim() > 0) return TargetShape(param_, in);
    return InferReshape(param_.shape, in, param_.reverse);
  }
};

class FlattenProp : public ReshapeLikeProp<NoParam> {
  TShape OutShape(const TShape& in) const override {
    if (in.ndim() == 0) return TShape{1, 1};
    return TShape{in[0], in.ndim() > 1 ? in.ProdShape(1, in.ndim()) : 1};
  }
};

class ExpandDimsProp : public ReshapeLikeProp<ExpandDimsParam> {
  TShape OutShape(const TShape& in) const override {
    // The new axis is an axis of the result, which has one more dimension.
    const int axis = mxplug::NormalizeAxis(param_.axis, in.ndim() + 1);
    std::vector<int64_t> d(in.begin(), in.end());
    d.insert(d.begin() + axis, 1);
    return TShape(d);
  }
};

// reshape_like(lhs, rhs): lhs's elements in the shape lhs[:lhs_begin] + rhs[rhs_begin:rhs_end] +
// lhs[lhs_end:]; rhs gives only its shape (its gradient is 0).
class ReshapeToRhsProp : public mxplug::FirstInPlace<LayoutProp<ReshapeLikeParam>> {
 public:
  std::vector<std::string> ListArguments() const override { return {"lhs", "rhs"}; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape &lhs = (*in)[0], &rhs = (*in)[1];
    if (!lhs.IsKnown() || !rhs.IsKnown()) return false;
    auto range = [](const std::optional<int>& begin, const std::optional<int>& end, int ndim,
                    const char* what) {
      auto index = [&](int i, const char* name) {
        const int k = i < 0 ? i + ndim : i;
        if (k < 0 || k > ndim)
          throw std::invalid_argument(std::string(what) + "_" + name + " " + std::to_string(i) +
                                      " is out of range for " + std::to_string(ndim) +
                                      " dimensions");
        return k;
      };
      const int b = index(begin.value_or(0), "begin"), e = end ? index(*end, "end") : ndim;
      if (b > e)
        throw std::invalid_argument(std::string(what) + "_begin must not be after " + what +
                                    "_end");
      return std::make_pair(b, e);
    };
    const auto [lb, le] = range(param_.lhs_begin, param_.lhs_end, lhs.ndim(), "lhs");
    const auto [rb, re] = range(param_.rhs_begin, param_.rhs_end, rhs.ndim(), "rhs");
    std::vector<int64_t> d(lhs.begin(), lhs.begin() + lb);
    d.insert(d.end(), rhs.begin() + rb, rhs.begin() + re);
    d.insert(d.end(), lhs.begin() + le, lhs.end());
    const TShape shape(d);
    if (shape.Size() != lhs.Size())
      throw std::invalid_argument("Cannot reshape lhs with shape " + lhs.ToString() +
                                  " to new shape " + shape.ToString() +
                                  " because they have different size.");
    (*out)[0] = shape;
    return true;
  }

 private:
  TShape OutShape(const TShape& in) const override { return in; }  // InferShape decides
};

// slice_like(data, shape_like, axes): data's leading part, of shape_like's sizes on `axes` (every
// axis when empty); shape_like gives only its shape (its gradient is 0).
struct SliceLikeParam : mxplug::Parameter<SliceLikeParam> {
  TShape axes;
  MXPLUG_DECLARE_PARAMETER(SliceLikeParam) {
    MXPLUG_DECLARE_FIELD(axes)
        .set_default(TShape(std::vector<int64_t>{}))
        .describe("The axes to slice to shape_like's sizes (every axis when empty).");
  }
};

class SliceLikeProp : public LayoutProp<SliceLikeParam> {
 public:
  std::vector<std::string> ListArguments() const override { return {"data", "shape_like"}; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape &d = (*in)[0], &like = (*in)[1];
    if (!d.IsKnown() || !like.IsKnown()) return false;
    std::vector<int64_t> o(d.begin(), d.end());
    auto take = [&](int axis) {
      if (axis >= like.ndim())
        throw std::invalid_argument("axis " + std::to_string(axis) + " exceeds shape_like " +
                                    like.ToString() + " (Slice axis: " + std::to_string(axis) +
                                    " exceeds second input: " + std::to_string(like.ndim()) + ")");
      if (like[axis] > d[axis])
        throw std::invalid_argument("axis " + std::to_string(axis) + " of shape_like " +
                                    like.ToString() + " is larger than data's " + d.ToString());
      o[axis] = like[axis];
    };
    if (param_.axes.ndim() <= 0) {
      if (like.ndim() != d.ndim())
        throw std::invalid_argument("shape_like " + like.ToString() + " and data " + d.ToString() +
                                    " differ in their number of axes, and no axes are given");
      for (int a = 0; a < d.ndim(); ++a) take(a);
    } else {
      for (int64_t a : param_.axes) take(mxplug::NormalizeAxis(static_cast<int>(a), d.ndim()));
    }
    (*out)[0] = TShape(o);
    return true;
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    return mxplug::InferTypeFromFirst(in, out);
  }

 private:
  TShape OutShape(const TShape& in) const override { return in; }  // InferShape decides
};

// diag(data, k, axis1, axis2): the k-th diagonal of the (axis1, axis2) planes, as the last axis;
// of a vector, the square matrix with it on the k-th diagonal.
struct DiagParam : mxplug::Parameter<DiagParam> {
  int k, axis1, axis2;
  MXPLUG_DECLARE_PARAMETER(DiagParam) {
    MXPLUG_DECLARE_FIELD(k).set_default(0).describe(
        "The diagonal: 0 the main one, > 0 above it, < 0 below it.");
    MXPLUG_DECLARE_FIELD(axis1).set_default(0).describe("The first axis of the planes.");
    MXPLUG_DECLARE_FIELD(axis2).set_default(1).describe("The second axis of the planes.");
  }
};

/*! \brief Where diag's elements lie: in the input (>= 2 axes) or in the output (a vector's
 * matrix), as a walk in the order of the diagonal's elements. */
inline StridedWalk DiagWalk(const DiagParam& p, const TShape& in) {
  const int64_t k = p.k;
  if (in.ndim() == 1) {
    const int64_t n = in[0] + (k < 0 ? -k : k);
    return {in, {n + 1}, k >= 0 ? k : -k * n};
  }
  const int a1 = mxplug::NormalizeAxis(p.axis1, in.ndim()),
            a2 = mxplug::NormalizeAxis(p.axis2, in.ndim());
  if (a1 == a2)
    throw std::invalid_argument("axis1 and axis2 are both axis " + std::to_string(a1) +
                                "; expected two different axes");
  const std::vector<int64_t> st = Strides(in);
  StridedWalk w;
  std::vector<int64_t> d;
  for (int a = 0; a < in.ndim(); ++a)
    if (a != a1 && a != a2) d.push_back(in[a]), w.stride.push_back(st[a]);
  const int64_t len = k >= 0 ? std::min(in[a1], in[a2] - k) : std::min(in[a1] + k, in[a2]);
  d.push_back(len > 0 ? len : 0);
  w.stride.push_back(st[a1] + st[a2]);
  w.shape = TShape(d);
  w.offset = len > 0 ? (k >= 0 ? k * st[a2] : -k * st[a1]) : 0;
  return w;
}

class DiagProp : public LayoutProp<DiagParam> {
  TShape OutShape(const TShape& in) const override {
    if (in.ndim() < 1)
      throw std::invalid_argument("data has shape " + in.ToString() + "; expected at least 1 axis");
    if (in.ndim() == 1) {
      const int64_t n = in[0] + (param_.k < 0 ? -param_.k : param_.k);
      return TShape{n, n};
    }
    return DiagWalk(param_, in).shape;
  }
};

template <bool kToSpace>
class BlockProp : public LayoutProp<BlockParam> {
  TShape OutShape(const TShape& in) const override {
    return BlockLayout<kToSpace>(in, param_.block_size).out;
  }
};

// shape_array and size_array (kSize): the input's shape (its size) as int64; the input's values
// are never read, and its gradient is 0.
template <bool kSize>
class ShapeArrayProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    if ((*in)[0].ndim() < 0) return false;
    (*out)[0] = TShape{kSize ? 1 : (*in)[0].ndim()};
    return true;
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    (*out)[0] = kMXPInt64;
    return (*in)[0] != kMXPUnknownDType;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>&, const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return {};
  }

 private:
  NoParam param_;
};

// transpose and SwapAxis: the input's axes in the order Order(param, ndim) gives.
template <class Param, std::vector<int> (*Order)(const Param&, int)>
class PermuteProp : public LayoutProp<Param> {
  TShape OutShape(const TShape& in) const override {
    return TransposeWalk(in, Order(this->param_, in.ndim())).shape;
  }
};
using TransposeProp = PermuteProp<TransposeParam, TransposeOrder>;
using SwapAxisProp = PermuteProp<SwapAxisParam, SwapOrder>;

class SliceProp : public LayoutProp<SliceParam> {
  TShape OutShape(const TShape& in) const override { return SliceRegion(param_, in).shape; }
};

// The kwargs of _slice_assign(_scalar) split into the slice's (begin, end, step) and the rest.
inline std::pair<mxplug::KwArgs, mxplug::KwArgs> SplitSliceArgs(const mxplug::KwArgs& kwargs) {
  std::pair<mxplug::KwArgs, mxplug::KwArgs> split;
  for (const auto& kv : kwargs)
    (kv.first == "begin" || kv.first == "end" || kv.first == "step" ? split.first : split.second)
        .push_back(kv);
  return split;
}

// _slice_assign(lhs, rhs): lhs with the region replaced by rhs; in place over lhs.
template <bool kScalar>
class SliceAssignProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override {
    const auto [slice_args, rest] = SplitSliceArgs(kwargs);
    slice_.Init(slice_args);
    scalar_.Init(rest);
  }
  std::vector<std::string> ListArguments() const override {
    if (kScalar) return {"data"};
    return {"lhs", "rhs"};
  }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& lhs = (*in)[0];
    if (lhs.ndim() < 0) return false;
    const Region r = SliceRegion(slice_, lhs);
    if (!kScalar) {
      if ((*in)[1].ndim() < 0) (*in)[1] = r.shape;
      if ((*in)[1] != r.shape)
        throw std::invalid_argument("rhs has shape " + (*in)[1].ToString() +
                                    ", expected the region's " + r.shape.ToString());
    }
    (*out)[0] = lhs;
    return lhs.IsKnown();
  }
  std::vector<std::pair<int, int>> ForwardInplaceOption(
      const std::vector<int>& in, const std::vector<int>& out) const override {
    return {{in[0], out[0]}};
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return {og[0]};
  }

 private:
  SliceParam slice_;
  ScalarParam scalar_;
};

class TakeProp : public ReadAtIndicesProp {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {"a", "indices"}; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& a = (*in)[0];
    const TShape& idx = (*in)[1];
    if (a.ndim() < 0 || idx.ndim() < 0) return false;
    const int axis = mxplug::NormalizeAxis(param_.axis, a.ndim());
    std::vector<int64_t> d(a.begin(), a.begin() + axis);
    d.insert(d.end(), idx.begin(), idx.end());
    d.insert(d.end(), a.begin() + axis + 1, a.end());
    (*out)[0] = TShape(d);
    return a.IsKnown() && idx.IsKnown();
  }

 private:
  TakeParam param_;
};

// Embedding(data, weight): rows of weight at the indices in data, take(weight, data, axis=0,
// mode='clip') with the indices first (MXNet's indexing_op).
class EmbeddingProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {"data", "weight"}; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& d = (*in)[0];
    mxplug::InferParameterShape(&(*in)[1], TShape{param_.input_dim, param_.output_dim}, "weight",
                                d);
    if (d.ndim() < 0) return false;
    std::vector<int64_t> o(d.begin(), d.end());
    o.push_back(param_.output_dim);
    (*out)[0] = TShape(o);
    return d.IsKnown();
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    const int wt = (*in)[1] != kMXPUnknownDType ? (*in)[1] : param_.dtype;
    (*in)[1] = wt;
    if ((*in)[0] == kMXPUnknownDType) (*in)[0] = wt;
    (*out)[0] = wt;
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>&) const override {
    return {og[0], in[0]};
  }

 private:
  EmbeddingParam param_;
};

class BroadcastToProp : public LayoutProp<BroadcastToParam> {
  TShape OutShape(const TShape& in) const override {
    const TShape& t = param_.shape;
    if (t.ndim() < in.ndim())
      throw std::invalid_argument("cannot broadcast shape " + in.ToString() + " to " +
                                  t.ToString());
    std::vector<int64_t> d(t.begin(), t.end());
    const int off = t.ndim() - in.ndim();
    for (int i = 0; i < t.ndim(); ++i) {
      const int64_t have = i >= off ? in[i - off] : 1;
      if (d[i] == 0) d[i] = have;
      if (have != 1 && have != d[i])
        throw std::invalid_argument("cannot broadcast shape " + in.ToString() + " to " +
                                    t.ToString());
    }
    return TShape(d);
  }
};

// broadcast_axis(data, axis, size): axis[i] (of size 1) becomes size[i] long.
class BroadcastAxisProp : public LayoutProp<BroadcastAxisParam> {
  TShape OutShape(const TShape& in) const override {
    const TShape &axes = param_.axis, &sizes = param_.size;
    if (axes.ndim() != sizes.ndim())
      throw std::invalid_argument("axis " + axes.ToString() + " and size " + sizes.ToString() +
                                  " must have the same length");
    std::vector<int64_t> d(in.begin(), in.end());
    for (int i = 0; i < axes.ndim(); ++i) {
      const int a = mxplug::NormalizeAxis(static_cast<int>(axes[i]), in.ndim(), "axis");
      if (in[a] != 1)
        throw std::invalid_argument("axis " + std::to_string(axes[i]) + " of shape " +
                                    in.ToString() + " has size " + std::to_string(in[a]) +
                                    "; only axes of size 1 can be broadcast");
      d[a] = sizes[i];
    }
    return TShape(d);
  }
};

class BroadcastLikeProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {"lhs", "rhs"}; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape &lhs = (*in)[0], &rhs = (*in)[1];
    if (!lhs.IsKnown() || !rhs.IsKnown()) return false;
    const auto bad = [&] {
      return std::invalid_argument(
          "lhs of shape " + lhs.ToString() + " cannot be broadcast like rhs of shape " +
          rhs.ToString() +
          (param_.lhs_axes ? " on lhs_axes " + param_.lhs_axes->ToString() + " and rhs_axes " +
                                 (param_.rhs_axes ? param_.rhs_axes->ToString() : "None")
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
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad,
                                             const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return {out_grad[0]};
  }

 private:
  BroadcastLikeParam param_;
};

// ---- Kernels, over a device's primitives ----
//
// What these kernels need of a device, as static functions of a class L (CpuLayout in
// shape_cpu.cc, CudaLayout in devices/cuda/kernels/shape.cu); every write follows `req`:
//   L::Copy(ctx, src, dst, req)            dst = src, element for element (nothing when in place)
//   L::Zero(ctx, dst, req)                 dst = 0 (nothing for kAddTo)
//   L::Gather(ctx, walk, src, dst, req)    dst[o] = src[walk(o)]
//   L::Scatter(ctx, walk, src, dst, req)   dst[walk(o)] = src[o] (the walk visits an element once)
//   L::Fill(ctx, walk, value, dst)         dst[walk(o)] = value
//   L::CopyOutside(ctx, region, src, dst, req)  dst[i] = src[i] for i outside the region, where
//                                          region is a Region of dst's shape (else dst[i] = 0)
//   L::SumBroadcast(ctx, src, dst, req)    dst = src summed over the axes dst was broadcast along
//   L::Take(ctx, a, indices, out, req, axis, mode) and
//   L::TakeGrad(ctx, og, indices, a_grad, req, axis, mode)

using mxplug::OpContext;
using mxplug::OpReqType;

// The layout kernels' Forward and Backward signatures, shared by the classes below.
#define MXPLUG_LAYOUT_FORWARD                                                    \
  void Forward(const OpContext& ctx, const std::vector<TBlob>& in,               \
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out, \
               const std::vector<TBlob>&) override
#define MXPLUG_LAYOUT_BACKWARD                                                            \
  void Backward(const OpContext& ctx, const std::vector<TBlob>& og,                       \
                [[maybe_unused]] const std::vector<TBlob>& in, const std::vector<TBlob>&, \
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,          \
                const std::vector<TBlob>&) override

/*! \brief Reshape, Flatten, expand_dims, reshape_like: the elements in order, both ways (an
 * input that gives only a shape gets a gradient of 0). */
template <class L>
struct CopyKernel : mxplug::Operator {
  CopyKernel(const mxplug::KwArgs&, mxplug::Context) {}
  MXPLUG_LAYOUT_FORWARD { L::Copy(ctx, in[0], out[0], req[0]); }
  MXPLUG_LAYOUT_BACKWARD {
    for (size_t i = 1; i < ig.size(); ++i) L::Zero(ctx, ig[i], req[i]);
    L::Copy(ctx, og[0], ig[0], req[0]);
  }
};

template <class L, class Param, std::vector<int> (*Order)(const Param&, int)>
struct PermuteKernel : mxplug::Operator {
  Param p;
  PermuteKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p.Init(kwargs); }
  MXPLUG_LAYOUT_FORWARD {
    L::Gather(ctx, TransposeWalk(in[0].shape_, Order(p, in[0].ndim())), in[0], out[0], req[0]);
  }
  MXPLUG_LAYOUT_BACKWARD {  // the inverse permutation
    L::Gather(ctx, TransposeWalk(og[0].shape_, InversePermutation(Order(p, ig[0].ndim()))), og[0],
              ig[0], req[0]);
  }
};
template <class L>
using TransposeKernel = PermuteKernel<L, TransposeParam, TransposeOrder>;

template <class L>
using SwapAxisKernel = PermuteKernel<L, SwapAxisParam, SwapOrder>;

/*! \brief depth_to_space and space_to_depth: the permuted walk of BlockLayout's view; backward,
 * the inverse permutation over the output's view. */
template <class L, bool kToSpace>
struct BlockKernel : mxplug::Operator {
  BlockParam p;
  BlockKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p.Init(kwargs); }
  MXPLUG_LAYOUT_FORWARD {
    const BlockLayout<kToSpace> b(in[0].shape_, p.block_size);
    L::Gather(ctx, TransposeWalk(b.view, b.perm), in[0], out[0], req[0]);
  }
  MXPLUG_LAYOUT_BACKWARD {
    const BlockLayout<kToSpace> b(ig[0].shape_, p.block_size);
    L::Gather(ctx, TransposeWalk(TransposeWalk(b.view, b.perm).shape, InversePermutation(b.perm)),
              og[0], ig[0], req[0]);
  }
};
template <class L>
using DepthToSpaceKernel = BlockKernel<L, true>;
template <class L>
using SpaceToDepthKernel = BlockKernel<L, false>;

/*! \brief shape_array and size_array (kSize): the input's shape, or size, written one value at a
 * time with the fill primitive; the input's values are not read. */
template <class L, bool kSize>
struct ShapeValuesKernel : mxplug::Operator {
  ShapeValuesKernel(const mxplug::KwArgs&, mxplug::Context) {}
  MXPLUG_LAYOUT_FORWARD {
    if (req[0] == mxplug::kNullOp) return;
    const TShape& s = in[0].shape_;
    const std::vector<int64_t> values =
        kSize ? std::vector<int64_t>{s.Size()} : std::vector<int64_t>(s.begin(), s.end());
    for (size_t i = 0; i < values.size(); ++i)
      L::Fill(ctx, StridedWalk{TShape{1}, {1}, static_cast<int64_t>(i)},
              static_cast<double>(values[i]), out[0]);
  }
  MXPLUG_LAYOUT_BACKWARD { L::Zero(ctx, ig[0], req[0]); }
};
template <class L>
using ShapeArrayKernel = ShapeValuesKernel<L, false>;
template <class L>
using SizeArrayKernel = ShapeValuesKernel<L, true>;

/*! \brief slice and slice_axis: the region Select(param, input shape) of the input. */
template <class L, class Param, Region (*Select)(const Param&, const TShape&)>
struct RegionKernel : mxplug::Operator {
  Param p;
  RegionKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p.Init(kwargs); }
  MXPLUG_LAYOUT_FORWARD {
    const TShape& s = in[0].shape_;
    L::Gather(ctx, RegionWalk(Select(p, s), s), in[0], out[0], req[0]);
  }
  MXPLUG_LAYOUT_BACKWARD {  // the gradient outside the region is 0
    if (req[0] == mxplug::kNullOp) return;
    const TShape& s = ig[0].shape_;
    L::Zero(ctx, ig[0], req[0]);
    L::Scatter(ctx, RegionWalk(Select(p, s), s), og[0], ig[0],
               req[0] == mxplug::kAddTo ? mxplug::kAddTo : mxplug::kWriteTo);
  }
};

template <class L>
using SliceKernel = RegionKernel<L, SliceParam, SliceRegion>;

/*! \brief slice_like: the leading region of the output's shape; shape_like gets no gradient. */
template <class L>
struct SliceLikeKernel : mxplug::Operator {
  SliceLikeKernel(const mxplug::KwArgs&, mxplug::Context) {}
  static StridedWalk Leading(const TShape& part, const TShape& full) {
    const int n = full.ndim();
    return RegionWalk(Region{std::vector<int64_t>(n, 0), std::vector<int64_t>(n, 1), part}, full);
  }
  MXPLUG_LAYOUT_FORWARD {
    L::Gather(ctx, Leading(out[0].shape_, in[0].shape_), in[0], out[0], req[0]);
  }
  MXPLUG_LAYOUT_BACKWARD {
    L::Zero(ctx, ig[1], req[1]);
    if (req[0] == mxplug::kNullOp) return;
    L::Zero(ctx, ig[0], req[0]);
    L::Scatter(ctx, Leading(og[0].shape_, ig[0].shape_), og[0], ig[0],
               req[0] == mxplug::kAddTo ? mxplug::kAddTo : mxplug::kWriteTo);
  }
};

/*! \brief diag: a gather of the diagonal (a scatter into zeros for a vector's matrix), and the
 * other way back. */
template <class L>
struct DiagKernel : mxplug::Operator {
  DiagParam p;
  DiagKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p.Init(kwargs); }
  MXPLUG_LAYOUT_FORWARD {
    const TShape& s = in[0].shape_;
    if (s.ndim() > 1) return L::Gather(ctx, DiagWalk(p, s), in[0], out[0], req[0]);
    if (req[0] == mxplug::kNullOp) return;
    L::Zero(ctx, out[0], req[0]);
    L::Scatter(ctx, DiagWalk(p, s), in[0], out[0],
               req[0] == mxplug::kAddTo ? mxplug::kAddTo : mxplug::kWriteTo);
  }
  MXPLUG_LAYOUT_BACKWARD {
    const TShape& s = ig[0].shape_;
    if (s.ndim() == 1) return L::Gather(ctx, DiagWalk(p, s), og[0], ig[0], req[0]);
    if (req[0] == mxplug::kNullOp) return;
    L::Zero(ctx, ig[0], req[0]);
    L::Scatter(ctx, DiagWalk(p, s), og[0], ig[0],
               req[0] == mxplug::kAddTo ? mxplug::kAddTo : mxplug::kWriteTo);
  }
};

template <class L, bool kScalar>
struct SliceAssignKernel : mxplug::Operator {
  SliceParam p;
  double scalar = 0;
  SliceAssignKernel(const mxplug::KwArgs& kwargs, mxplug::Context) {
    const auto [slice_args, rest] = SplitSliceArgs(kwargs);
    p.Init(slice_args);
    ScalarParam s;
    s.Init(rest);
    scalar = s.scalar;
  }
  MXPLUG_LAYOUT_FORWARD {
    if (req[0] == mxplug::kNullOp) return;
    if (req[0] == mxplug::kAddTo)
      throw std::invalid_argument("_slice_assign: adding to its output (kAddTo) is not supported");
    L::Copy(ctx, in[0], out[0], mxplug::kWriteTo);
    const StridedWalk region = RegionWalk(SliceRegion(p, out[0].shape_), out[0].shape_);
    if (kScalar)
      L::Fill(ctx, region, scalar, out[0]);
    else
      L::Scatter(ctx, region, in[1], out[0], mxplug::kWriteTo);
  }
  // lhs's gradient is the output gradient outside the region; rhs's is the region's.
  MXPLUG_LAYOUT_BACKWARD {
    const TShape& s = og[0].shape_;
    const StridedWalk region = RegionWalk(SliceRegion(p, s), s);
    if (!kScalar) L::Gather(ctx, region, og[0], ig[1], req[1]);  // before ig[0] may overwrite og
    L::CopyOutside(ctx, SliceRegion(p, s), og[0], ig[0], req[0]);
  }
};

template <class L>
using SliceAssignArrayKernel = SliceAssignKernel<L, false>;
template <class L>
using SliceAssignScalarKernel = SliceAssignKernel<L, true>;

template <class L>
struct TakeKernel : mxplug::Operator {
  TakeParam p;
  TakeKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p.Init(kwargs); }
  MXPLUG_LAYOUT_FORWARD {
    L::Take(ctx, in[0], in[1], out[0], req[0], mxplug::NormalizeAxis(p.axis, in[0].ndim()), p.mode);
  }
  MXPLUG_LAYOUT_BACKWARD {
    L::Zero(ctx, ig[1], req[1]);  // indices get no gradient
    L::TakeGrad(ctx, og[0], in[1], ig[0], req[0], mxplug::NormalizeAxis(p.axis, ig[0].ndim()),
                p.mode);
  }
};

/*! \brief Embedding: take along axis 0 of the weight, out-of-range indices clipped (MXNet). */
template <class L>
struct EmbeddingKernel : mxplug::Operator {
  EmbeddingKernel(const mxplug::KwArgs&, mxplug::Context) {}
  MXPLUG_LAYOUT_FORWARD { L::Take(ctx, in[1], in[0], out[0], req[0], 0, kIndexClip); }
  MXPLUG_LAYOUT_BACKWARD {
    L::Zero(ctx, ig[0], req[0]);  // indices get no gradient
    L::TakeGrad(ctx, og[0], in[0], ig[1], req[1], 0, kIndexClip);
  }
};

/*! \brief broadcast_to, broadcast_axis, broadcast_like: input 0 repeated to the output's shape;
 * backward sums the gradient over the repeats. broadcast_like's rhs only lends its shape: its
 * gradient is 0. */
template <class L>
struct BroadcastKernel : mxplug::Operator {
  BroadcastKernel(const mxplug::KwArgs&, mxplug::Context) {}
  MXPLUG_LAYOUT_FORWARD {
    L::Gather(ctx, BroadcastWalk(in[0].shape_, out[0].shape_), in[0], out[0], req[0]);
  }
  MXPLUG_LAYOUT_BACKWARD {
    for (size_t i = 1; i < ig.size(); ++i) L::Zero(ctx, ig[i], req[i]);
    L::SumBroadcast(ctx, og[0], ig[0], req[0]);
  }
};

#undef MXPLUG_LAYOUT_FORWARD
#undef MXPLUG_LAYOUT_BACKWARD

// Calls visit.template Op<Prop, Kernel>(name, doc, inputs, params) for every layout op: the one
// list the definitions (Prop) and each device's kernels (Kernel<L>) register from.
template <class Visitor>
void ForEachLayoutOp(Visitor&& visit) {
  static const std::vector<mxplug::FieldInfo> none;
  // The registration keeps pointers to the fields: a static lives as long as the plugin.
  static const std::vector<mxplug::FieldInfo> scalar_fields = [] {  // MXNet's order: scalar first
    std::vector<mxplug::FieldInfo> fields;
    for (const mxplug::FieldInfo& f : ScalarParam::Fields())
      if (f.name == "scalar") fields.push_back(f);
    for (const mxplug::FieldInfo& f : SliceParam::Fields()) fields.push_back(f);
    return fields;
  }();
  visit.template Op<ReshapeProp, CopyKernel>("Reshape",
                                             "Reshapes the input to a new shape of the same size.",
                                             kDataInput, ReshapeParam::Fields());
  visit.template Op<ReshapeProp, CopyKernel>("reshape", "Same as Reshape.", kDataInput,
                                             ReshapeParam::Fields());
  visit.template Op<FlattenProp, CopyKernel>(
      "Flatten", "Collapses all axes but the first: (d0, d1 * ... * dn).", kDataInput, none);
  visit.template Op<FlattenProp, CopyKernel>("flatten", "Same as Flatten.", kDataInput, none);
  visit.template Op<ReshapeToRhsProp, CopyKernel>(
      "reshape_like",
      "lhs reshaped to the shape of rhs (or of part of it, in place of part of lhs).",
      {{"lhs", "First input."}, {"rhs", "Second input."}}, ReshapeLikeParam::Fields());
  visit.template Op<ExpandDimsProp, CopyKernel>("expand_dims", "Inserts a new axis of size 1.",
                                                kDataInput, ExpandDimsParam::Fields());
  visit.template Op<ShapeArrayProp<false>, ShapeArrayKernel>(
      "shape_array", "The shape of the input, as an int64 array.", kDataInput, none);
  visit.template Op<ShapeArrayProp<true>, SizeArrayKernel>(
      "size_array", "The number of elements of the input, as an int64 array of one element.",
      kDataInput, none);
  visit.template Op<BlockProp<true>, DepthToSpaceKernel>(
      "depth_to_space",
      "Moves depth into blocks of space: (N, C, H, W) to (N, C / b^2, H * b, W * b).", kDataInput,
      BlockParam::Fields());
  visit.template Op<BlockProp<false>, SpaceToDepthKernel>(
      "space_to_depth",
      "Moves blocks of space into depth: (N, C, H, W) to (N, C * b^2, H / b, W / b).", kDataInput,
      BlockParam::Fields());
  visit.template Op<TransposeProp, TransposeKernel>("transpose", "Permutes the axes.", kDataInput,
                                                    TransposeParam::Fields());
  visit.template Op<SwapAxisProp, SwapAxisKernel>("SwapAxis", "Exchanges two axes.", kDataInput,
                                                  SwapAxisParam::Fields());
  visit.template Op<SwapAxisProp, SwapAxisKernel>("swapaxes", "Same as SwapAxis.", kDataInput,
                                                  SwapAxisParam::Fields());
  visit.template Op<SliceProp, SliceKernel>("slice",
                                            "A slice of the input: begin, end and step per axis.",
                                            kDataInput, SliceParam::Fields());
  visit.template Op<SliceProp, SliceKernel>("crop", "Same as slice.", kDataInput,
                                            SliceParam::Fields());
  visit.template Op<SliceLikeProp, SliceLikeKernel>(
      "slice_like", "The leading part of data of shape_like's sizes on the given axes.",
      {{"data", "The array to slice."}, {"shape_like", "The array whose shape is taken."}},
      SliceLikeParam::Fields());
  visit.template Op<DiagProp, DiagKernel>(
      "diag", "The k-th diagonal of a matrix (of each axis1-axis2 plane), or a vector's matrix.",
      kDataInput, DiagParam::Fields());
  visit.template Op<SliceAssignProp<false>, SliceAssignArrayKernel>(
      "_slice_assign", "lhs with the region begin:end:step replaced by rhs.",
      {{"lhs", "The array to assign into."}, {"rhs", "The values."}}, SliceParam::Fields());
  visit.template Op<SliceAssignProp<true>, SliceAssignScalarKernel>(
      "_slice_assign_scalar", "data with the region set to a scalar.", kDataInput, scalar_fields);
  visit.template Op<SliceAssignProp<false>, SliceAssignArrayKernel>(
      "_crop_assign", "Same as _slice_assign (MXNet's older name).",
      {{"lhs", "The array to assign into."}, {"rhs", "The values."}}, SliceParam::Fields());
  visit.template Op<SliceAssignProp<true>, SliceAssignScalarKernel>(
      "_crop_assign_scalar", "Same as _slice_assign_scalar (MXNet's older name).", kDataInput,
      scalar_fields);
  visit.template Op<TakeProp, TakeKernel>(
      "take", "Takes elements along an axis at the given indices.",
      {{"a", "The input array."}, {"indices", "The indices of the values to take."}},
      TakeParam::Fields());
  visit.template Op<EmbeddingProp, EmbeddingKernel>(
      "Embedding", "Maps integer indices to vector representations (rows of weight).",
      {{"data", "The input array to the embedding operator."},
       {"weight", "The embedding weight matrix."}},
      EmbeddingParam::Fields());
  visit.template Op<BroadcastToProp, BroadcastKernel>(
      "broadcast_to", "Broadcasts the input to a shape.", kDataInput, BroadcastToParam::Fields());
  for (const char* name : {"broadcast_axis", "broadcast_axes"})
    visit.template Op<BroadcastAxisProp, BroadcastKernel>(
        name, "Broadcasts the input along axes of size 1 to the given sizes.", kDataInput,
        BroadcastAxisParam::Fields());
  visit.template Op<BroadcastLikeProp, BroadcastKernel>(
      "broadcast_like", "Broadcasts lhs to the shape of rhs (or of rhs's rhs_axes).",
      {{"lhs", "The array to broadcast."}, {"rhs", "The array whose shape lhs takes."}},
      BroadcastLikeParam::Fields());
}

}  // namespace mxplug_tensor

#endif  // MXPLUG_PLUGINS_TENSOR_SHAPE_H_
