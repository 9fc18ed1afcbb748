// Definitions of the ops that join, split and repeat arrays along axes (MXNet's names and
// parameters): Concat/concat, stack, SliceChannel/split, ElementWiseSum/add_n, slice_axis, tile,
// repeat, flip/reverse, squeeze. Like the layout ops (shape.h), their outputs hold their inputs'
// elements moved about, so their kernels are written once here over the same device primitives
// (L::Copy, Gather, Scatter, Zero, SumBroadcast); shape_cpu.cc and devices/cuda/kernels/shape.cu
// register them with the layout ops.
#ifndef MXPLUG_PLUGINS_TENSOR_JOIN_H_
#define MXPLUG_PLUGINS_TENSOR_JOIN_H_

#include <optional>
#include <string>
#include <vector>

#include "shape.h"

namespace mxplug_tensor {

// ---- Parameters and shapes ----

inline std::vector<std::string> ArgNames(int n) {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.push_back("arg" + std::to_string(i));
  return names;
}

struct ConcatParam : mxplug::Parameter<ConcatParam> {
  int num_args;
  int dim;
  MXPLUG_DECLARE_PARAMETER(ConcatParam) {
    MXPLUG_DECLARE_FIELD(num_args).set_lower_bound(1).describe(
        "Number of inputs to be concatenated.");
    MXPLUG_DECLARE_FIELD(dim).set_default(1).describe("The dimension to be concatenated.");
  }
};

struct StackParam : mxplug::Parameter<StackParam> {
  int num_args;
  int axis;
  MXPLUG_DECLARE_PARAMETER(StackParam) {
    MXPLUG_DECLARE_FIELD(axis).set_default(0).describe("The axis of the new dimension.");
    MXPLUG_DECLARE_FIELD(num_args).set_lower_bound(1).describe("Number of inputs to be stacked.");
  }
};

inline int JoinAxis(const ConcatParam& p) { return p.dim; }
inline int JoinAxis(const StackParam& p) { return p.axis; }

/*! \brief Concat (along an existing axis) and stack (along a new one, kStack). */
template <class Param, bool kStack>
class JoinProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return ArgNames(param_.num_args); }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape* first = nullptr;
    for (const TShape& s : *in)
      if (s.ndim() >= 0) {
        first = &s;
        break;
      }
    if (!first) return false;
    const int nd = first->ndim() + (kStack ? 1 : 0);
    const int axis = mxplug::NormalizeAxis(JoinAxis(param_), nd, kStack ? "axis" : "dim");
    int64_t total = 0;
    for (size_t i = 0; i < in->size(); ++i) {
      const TShape& s = (*in)[i];
      if (s.ndim() < 0) return false;
      for (int d = 0; d < first->ndim(); ++d)
        if (s.ndim() != first->ndim() || ((d != axis || kStack) && s[d] != (*first)[d]))
          throw std::invalid_argument("input " + std::to_string(i) + " has shape " + s.ToString() +
                                      ", incompatible with input 0's " + first->ToString() +
                                      (kStack ? " (all must be equal)" : " along the other axes"));
      total += kStack ? 1 : s[axis];
    }
    std::vector<int64_t> d(first->begin(), first->end());
    if (kStack)
      d.insert(d.begin() + axis, total);
    else
      d[axis] = total;
    (*out)[0] = TShape(d);
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return {og[0]};
  }

 private:
  Param param_;
};

/*! \brief SliceChannel / split: num_outputs equal parts along axis, optionally squeezing it. */
struct SplitParam : mxplug::Parameter<SplitParam> {
  int num_outputs;
  int axis;
  bool squeeze_axis;
  MXPLUG_DECLARE_PARAMETER(SplitParam) {
    MXPLUG_DECLARE_FIELD(num_outputs).set_lower_bound(1).describe("Number of splits.");
    MXPLUG_DECLARE_FIELD(axis).set_default(1).describe("Axis along which to split.");
    MXPLUG_DECLARE_FIELD(squeeze_axis)
        .set_default(false)
        .describe(
            "Remove the split axis from the outputs (its length must then equal num_outputs).");
  }
};

class SplitProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListOutputs() const override {
    std::vector<std::string> names;
    for (int i = 0; i < param_.num_outputs; ++i) names.push_back("output" + std::to_string(i));
    return names;
  }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& s = (*in)[0];
    if (s.ndim() < 0) return false;
    const int axis = mxplug::NormalizeAxis(param_.axis, s.ndim());
    if (s[axis] % param_.num_outputs != 0)
      throw std::invalid_argument("axis " + std::to_string(axis) + " of shape " + s.ToString() +
                                  " does not split into " + std::to_string(param_.num_outputs) +
                                  " equal parts");
    std::vector<int64_t> d(s.begin(), s.end());
    d[axis] /= param_.num_outputs;
    if (param_.squeeze_axis) {
      if (d[axis] != 1)
        throw std::invalid_argument("squeeze_axis needs axis length == num_outputs, got " +
                                    s.ToString());
      d.erase(d.begin() + axis);
    }
    for (TShape& o : *out) o = TShape(d);
    return s.IsKnown();
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return og;
  }

 private:
  SplitParam param_;
};

/*! \brief _split_v2 (mx.nd.split_v2): pieces that start at `indices` along axis (the last runs to
 * the end), or `sections` equal ones. */
struct SplitV2Param : mxplug::Parameter<SplitV2Param> {
  TShape indices;
  int axis;
  bool squeeze_axis;
  int sections;
  MXPLUG_DECLARE_PARAMETER(SplitV2Param) {
    MXPLUG_DECLARE_FIELD(indices).describe("Where each piece starts along the axis (0 first).");
    MXPLUG_DECLARE_FIELD(axis).set_default(1).describe("Axis along which to split.");
    MXPLUG_DECLARE_FIELD(squeeze_axis)
        .set_default(false)
        .describe("Remove the split axis from pieces of length 1.");
    MXPLUG_DECLARE_FIELD(sections).set_default(0).describe(
        "Number of equal pieces (0: use indices).");
  }
};

/*! \brief The pieces' lengths along the axis, of a data axis of length n. */
inline std::vector<int64_t> SplitV2Lengths(const SplitV2Param& p, int64_t n) {
  std::vector<int64_t> lens;
  if (p.sections > 0) {
    if (n % p.sections != 0)
      throw std::invalid_argument("an axis of length " + std::to_string(n) +
                                  " does not split into " + std::to_string(p.sections) +
                                  " equal sections");
    return std::vector<int64_t>(p.sections, n / p.sections);
  }
  for (int i = 0; i < p.indices.ndim(); ++i) {
    if (p.indices[i] > n)
      throw std::invalid_argument(
          "indices " + p.indices.ToString() + " go past the axis of length " + std::to_string(n) +
          " (end " + std::to_string(p.indices[i]) + " is no less than the size of the axis " +
          std::to_string(n) + ")");
    const int64_t begin = p.indices[i];
    const int64_t end = i + 1 < p.indices.ndim() ? p.indices[i + 1] : n;
    if (end < begin)
      throw std::invalid_argument("indices " + p.indices.ToString() + " must not decrease");
    lens.push_back(end - begin);
  }
  return lens;
}

class SplitV2Prop : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override {
    param_.Init(kwargs);
    if (param_.sections <= 0 && param_.indices.ndim() <= 0)
      throw std::invalid_argument("indices is empty and sections is 0; expected one of them");
  }
  std::vector<std::string> ListOutputs() const override {
    std::vector<std::string> names;
    const int n = param_.sections > 0 ? param_.sections : param_.indices.ndim();
    for (int i = 0; i < n; ++i) names.push_back("output" + std::to_string(i));
    return names;
  }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& s = (*in)[0];
    if (s.ndim() < 0 || !s.IsKnown()) return false;
    const int axis = mxplug::NormalizeAxis(param_.axis, s.ndim());
    const std::vector<int64_t> lens = SplitV2Lengths(param_, s[axis]);
    for (size_t i = 0; i < lens.size(); ++i) {
      std::vector<int64_t> d(s.begin(), s.end());
      d[axis] = lens[i];
      if (param_.squeeze_axis && lens[i] == 1) d.erase(d.begin() + axis);
      (*out)[i] = TShape(d);
    }
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return og;
  }

 private:
  SplitV2Param param_;
};

/*! \brief ElementWiseSum / add_n: the sum of num_args same-shape arrays. */
struct SumParam : mxplug::Parameter<SumParam> {
  int num_args;
  MXPLUG_DECLARE_PARAMETER(SumParam) {
    MXPLUG_DECLARE_FIELD(num_args).set_lower_bound(1).describe("Number of inputs to be summed.");
  }
};

class AddNProp : public ElementwiseProp {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return ArgNames(param_.num_args); }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    TShape known = (*out)[0];
    for (const TShape& s : *in)
      if (s.ndim() >= 0) {
        if (known.ndim() >= 0 && s != known)
          throw std::invalid_argument("all inputs must have one shape; got " + known.ToString() +
                                      " and " + s.ToString());
        known = s;
      }
    if (known.ndim() < 0) return false;
    for (TShape& s : *in) s = known;
    (*out)[0] = known;
    return known.IsKnown();
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return {og[0]};
  }

 private:
  SumParam param_;
};

struct SliceAxisParam : mxplug::Parameter<SliceAxisParam> {
  int axis;
  int64_t begin;
  std::optional<int64_t> end;
  MXPLUG_DECLARE_PARAMETER(SliceAxisParam) {
    MXPLUG_DECLARE_FIELD(axis).describe("Axis along which to slice.");
    MXPLUG_DECLARE_FIELD(begin).describe("The beginning index (negative counts from the end).");
    MXPLUG_DECLARE_FIELD(end).describe("The ending index (exclusive); None: the axis's end.");
  }
};

/*! \brief slice_axis's region of `in`: the whole of every axis but one. */
inline Region SliceAxisRegion(const SliceAxisParam& p, const TShape& in) {
  const int axis = mxplug::NormalizeAxis(p.axis, in.ndim());
  const int64_t n = in[axis];
  const int64_t b = p.begin < 0 ? p.begin + n : p.begin;
  const int64_t e = p.end ? (*p.end < 0 ? *p.end + n : *p.end) : n;
  if (b < 0 || e > n || b >= e)
    throw std::out_of_range("slice [" + std::to_string(p.begin) + ", " +
                            (p.end ? std::to_string(*p.end) : std::string("None")) +
                            ") is empty or out of range for axis of length " + std::to_string(n));
  Region r{std::vector<int64_t>(in.ndim(), 0), std::vector<int64_t>(in.ndim(), 1), in};
  r.start[axis] = b;
  r.shape[axis] = e - b;
  return r;
}

class SliceAxisProp : public LayoutProp<SliceAxisParam> {
  TShape OutShape(const TShape& in) const override { return SliceAxisRegion(param_, in).shape; }
};

struct TileParam : mxplug::Parameter<TileParam> {
  TShape reps;
  MXPLUG_DECLARE_PARAMETER(TileParam) {
    MXPLUG_DECLARE_FIELD(reps).describe(
        "Repetitions per axis (aligned on the right, as NumPy's tile).");
  }
};

struct RepeatParam : mxplug::Parameter<RepeatParam> {
  int repeats;
  std::optional<int> axis;
  MXPLUG_DECLARE_PARAMETER(RepeatParam) {
    MXPLUG_DECLARE_FIELD(repeats).set_lower_bound(0).describe("Repetitions of each element.");
    MXPLUG_DECLARE_FIELD(axis)
        .set_default(std::nullopt)
        .describe("The axis to repeat along; None repeats the flattened array.");
  }
};

/*!
 * \brief tile and repeat as broadcasts: the output, viewed with each repeated axis split in two
 * (repeats, length) for tile or (length, repeats) for repeat, is the input viewed with a size-1
 * axis beside each of its own, broadcast. Forward gathers along `walk`; backward sums the
 * output gradient (viewed as walk.shape) onto the input's gradient (viewed as `input`).
 */
struct Expansion {
  StridedWalk walk;
  TShape input;
};

inline Expansion TileExpansion(const TileParam& p, const TShape& in) {
  const int nd = std::max(in.ndim(), p.reps.ndim());
  std::vector<int64_t> out, view;
  for (int i = 0; i < nd; ++i) {
    const int ii = in.ndim() - nd + i, ir = p.reps.ndim() - nd + i;
    const int64_t r = ir >= 0 ? p.reps[ir] : 1;
    if (r < 0) throw std::invalid_argument("reps " + p.reps.ToString() + " must not be negative");
    out.push_back(r), out.push_back(ii >= 0 ? in[ii] : 1);
    view.push_back(1), view.push_back(ii >= 0 ? in[ii] : 1);
  }
  const TShape input(view);
  return {BroadcastWalk(input, TShape(out)), input};
}

inline Expansion RepeatExpansion(const RepeatParam& p, const TShape& in) {
  const TShape flat{in.Size()};
  const TShape& shape = p.axis ? in : flat;
  const int axis = p.axis ? mxplug::NormalizeAxis(*p.axis, in.ndim()) : 0;
  std::vector<int64_t> out(shape.begin(), shape.end()), view(shape.begin(), shape.end());
  out.insert(out.begin() + axis + 1, p.repeats);
  view.insert(view.begin() + axis + 1, 1);
  const TShape input(view);
  return {BroadcastWalk(input, TShape(out)), input};
}

/*! \brief The output shape of an expansion: its walk's, with each split axis whole again. */
inline TShape Joined(const TShape& split, bool all_pairs, int axis) {
  std::vector<int64_t> d;
  for (int i = 0; i < split.ndim(); ++i) {
    if (all_pairs ? i % 2 == 0 : i == axis) {
      d.push_back(split[i] * split[i + 1]);
      ++i;
    } else {
      d.push_back(split[i]);
    }
  }
  return TShape(d);
}

class TileProp : public LayoutProp<TileParam> {
  TShape OutShape(const TShape& in) const override {
    return Joined(TileExpansion(param_, in).walk.shape, true, 0);
  }
};

class RepeatProp : public LayoutProp<RepeatParam> {
  TShape OutShape(const TShape& in) const override {
    const int axis = param_.axis ? mxplug::NormalizeAxis(*param_.axis, in.ndim()) : 0;
    return Joined(RepeatExpansion(param_, in).walk.shape, false, axis);
  }
};

struct FlipParam : mxplug::Parameter<FlipParam> {
  TShape axis;
  MXPLUG_DECLARE_PARAMETER(FlipParam) {
    MXPLUG_DECLARE_FIELD(axis).describe("The axis or axes to reverse.");
  }
};

/*! \brief `in` with the given axes reversed: negative strides from the far end. Flipping twice
 * is the identity, so the gradient walks the same way. */
inline StridedWalk FlipWalk(const FlipParam& p, const TShape& in) {
  StridedWalk w{in, Strides(in), 0};
  std::vector<bool> flip(in.ndim(), false);
  for (int64_t a : p.axis) flip[mxplug::NormalizeAxis(static_cast<int>(a), in.ndim())] = true;
  for (int d = 0; d < in.ndim(); ++d)
    if (flip[d] && in[d] > 0) {
      w.offset += (in[d] - 1) * w.stride[d];
      w.stride[d] = -w.stride[d];
    }
  return w;
}

class FlipProp : public LayoutProp<FlipParam> {
  TShape OutShape(const TShape& in) const override { return FlipWalk(param_, in).shape; }
};

struct SqueezeParam : mxplug::Parameter<SqueezeParam> {
  std::optional<TShape> axis;
  MXPLUG_DECLARE_PARAMETER(SqueezeParam) {
    MXPLUG_DECLARE_FIELD(axis)
        .set_default(std::nullopt)
        .describe("The size-1 axes to remove; None removes all of them.");
  }
};

class SqueezeProp : public LayoutProp<SqueezeParam> {
  TShape OutShape(const TShape& in) const override {
    std::vector<bool> drop(in.ndim(), false);
    if (!param_.axis) {
      for (int i = 0; i < in.ndim(); ++i) drop[i] = in[i] == 1;
    } else {
      for (int64_t a : *param_.axis) {
        const int ax = mxplug::NormalizeAxis(static_cast<int>(a), in.ndim());
        if (in[ax] != 1)
          throw std::invalid_argument("axis " + std::to_string(ax) + " of shape " + in.ToString() +
                                      " has size " + std::to_string(in[ax]) + ", not 1");
        drop[ax] = true;
      }
    }
    std::vector<int64_t> d;
    for (int i = 0; i < in.ndim(); ++i)
      if (!drop[i]) d.push_back(in[i]);
    if (d.empty()) d.push_back(1);  // MXNet's legacy shapes have no 0-d arrays
    return TShape(d);
  }
};

// ---- Kernels, over a device's primitives (shape.h lists them) ----

/*! \brief A piece of a joined array: the elements of `joined` at [offset, offset + len) along
 * axis, in the piece's order. A stacked piece is a length-1 slab of the stacked output. */
inline StridedWalk PieceWalk(const TShape& joined, int axis, int64_t offset, int64_t len) {
  StridedWalk w{joined, Strides(joined), 0};
  w.shape[axis] = len;
  w.offset = offset * w.stride[axis];
  return w;
}

/*! \brief The blob with another shape of the same size (a view). */
inline TBlob Viewed(const TBlob& b, const TShape& shape) {
  TBlob v = b;
  v.shape_ = shape;
  return v;
}

#define MXPLUG_JOIN_FORWARD                                                              \
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,               \
               const std::vector<mxplug::OpReqType>& req, const std::vector<TBlob>& out, \
               const std::vector<TBlob>&) override
#define MXPLUG_JOIN_BACKWARD                                                             \
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,              \
                const std::vector<TBlob>&, const std::vector<TBlob>&,                    \
                const std::vector<mxplug::OpReqType>& req, const std::vector<TBlob>& ig, \
                const std::vector<TBlob>&) override

/*! \brief Moves each piece to (kScatter) or from `joined`, as reqs[piece] says (or reqs[0], for
 * all, when there is one); piece i is `lens[i]` long along axis, after the pieces before it. */
template <class L, bool kScatter>
void MovePieces(const mxplug::OpContext& ctx, const std::vector<TBlob>& pieces, const TBlob& joined,
                int axis, const std::vector<int64_t>& lens,
                const std::vector<mxplug::OpReqType>& reqs) {
  int64_t offset = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const StridedWalk w = PieceWalk(joined.shape_, axis, offset, lens[i]);
    const mxplug::OpReqType r = reqs[reqs.size() == 1 ? 0 : i];
    if (kScatter)
      L::Scatter(ctx, w, pieces[i], joined, r);
    else
      L::Gather(ctx, w, joined, pieces[i], r);
    offset += lens[i];
  }
}

/*! \brief Concat and stack: each input is a piece of the output. */
template <class L, class Param, bool kStack>
struct JoinKernel : mxplug::Operator {
  int axis;
  JoinKernel(const mxplug::KwArgs& kwargs, mxplug::Context) {
    Param p;
    p.Init(kwargs);
    axis = JoinAxis(p);
  }
  std::vector<int64_t> Lengths(const std::vector<TBlob>& pieces, int a) const {
    std::vector<int64_t> lens;
    for (const TBlob& b : pieces) lens.push_back(kStack ? 1 : b.shape_[a]);
    return lens;
  }
  MXPLUG_JOIN_FORWARD {
    const int a = mxplug::NormalizeAxis(axis, out[0].ndim());
    MovePieces<L, true>(ctx, in, out[0], a, Lengths(in, a), req);
  }
  MXPLUG_JOIN_BACKWARD {
    const int a = mxplug::NormalizeAxis(axis, og[0].ndim());
    MovePieces<L, false>(ctx, ig, og[0], a, Lengths(ig, a), req);
  }
};

/*! \brief split: the outputs are equal pieces of the input (one axis short with squeeze_axis,
 * holding the same elements in the same order). */
template <class L>
struct SplitKernel : mxplug::Operator {
  SplitParam p;
  SplitKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p.Init(kwargs); }
  std::vector<int64_t> Lengths(const TBlob& joined, int a) const {
    return std::vector<int64_t>(p.num_outputs, joined.shape_[a] / p.num_outputs);
  }
  MXPLUG_JOIN_FORWARD {
    const int a = mxplug::NormalizeAxis(p.axis, in[0].ndim());
    MovePieces<L, false>(ctx, out, in[0], a, Lengths(in[0], a), req);
  }
  MXPLUG_JOIN_BACKWARD {
    const int a = mxplug::NormalizeAxis(p.axis, ig[0].ndim());
    MovePieces<L, true>(ctx, og, ig[0], a, Lengths(ig[0], a), req);
  }
};

/*! \brief _split_v2: piece i is the run of its length from its start (the data before the first
 * index is in no piece; its gradient is 0). */
template <class L>
struct SplitV2Kernel : mxplug::Operator {
  SplitV2Param p;
  SplitV2Kernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p.Init(kwargs); }
  int64_t First() const { return p.sections > 0 ? 0 : p.indices[0]; }
  MXPLUG_JOIN_FORWARD {
    const int a = mxplug::NormalizeAxis(p.axis, in[0].ndim());
    const std::vector<int64_t> lens = SplitV2Lengths(p, in[0].shape_[a]);
    int64_t offset = First();
    for (size_t i = 0; i < out.size(); offset += lens[i], ++i)
      L::Gather(ctx, PieceWalk(in[0].shape_, a, offset, lens[i]), in[0], out[i], req[i]);
  }
  MXPLUG_JOIN_BACKWARD {
    if (req[0] == mxplug::kNullOp) return;
    const int a = mxplug::NormalizeAxis(p.axis, ig[0].ndim());
    const std::vector<int64_t> lens = SplitV2Lengths(p, ig[0].shape_[a]);
    int64_t offset = First();
    mxplug::OpReqType r = req[0];
    if (offset > 0 && r == mxplug::kWriteTo) {  // a part no piece holds
      L::Zero(ctx, ig[0], r);
      r = mxplug::kAddTo;
    }
    for (size_t i = 0; i < og.size(); offset += lens[i], ++i)
      L::Scatter(ctx, PieceWalk(ig[0].shape_, a, offset, lens[i]), og[i], ig[0], r);
  }
};

template <class L>
using ConcatKernel = JoinKernel<L, ConcatParam, false>;
template <class L>
using StackKernel = JoinKernel<L, StackParam, true>;

/*! \brief add_n: the inputs added into the output one after another (as MXNet does past four
 * inputs; the output may share input 0's memory, never another's). Every input's gradient is the
 * output's. */
template <class L>
struct AddNKernel : mxplug::Operator {
  AddNKernel(const mxplug::KwArgs&, mxplug::Context) {}
  MXPLUG_JOIN_FORWARD {
    if (req[0] == mxplug::kNullOp) return;
    for (size_t i = 0; i < in.size(); ++i)
      L::Copy(ctx, in[i], out[0], i == 0 ? req[0] : mxplug::kAddTo);
  }
  MXPLUG_JOIN_BACKWARD {
    for (size_t i = ig.size(); i-- > 0;)  // input 0's gradient may share og's memory: last
      L::Copy(ctx, og[0], ig[i], req[i]);
  }
};

template <class L>
using SliceAxisKernel = RegionKernel<L, SliceAxisParam, SliceAxisRegion>;

/*! \brief tile and repeat (Expansion). */
template <class L, class Param, Expansion (*Expand)(const Param&, const TShape&)>
struct ExpandKernel : mxplug::Operator {
  Param p;
  ExpandKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p.Init(kwargs); }
  MXPLUG_JOIN_FORWARD { L::Gather(ctx, Expand(p, in[0].shape_).walk, in[0], out[0], req[0]); }
  MXPLUG_JOIN_BACKWARD {
    const Expansion e = Expand(p, ig[0].shape_);
    L::SumBroadcast(ctx, Viewed(og[0], e.walk.shape), Viewed(ig[0], e.input), req[0]);
  }
};

template <class L>
using TileKernel = ExpandKernel<L, TileParam, TileExpansion>;
template <class L>
using RepeatKernel = ExpandKernel<L, RepeatParam, RepeatExpansion>;

template <class L>
struct FlipKernel : mxplug::Operator {
  FlipParam p;
  FlipKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p.Init(kwargs); }
  MXPLUG_JOIN_FORWARD { L::Gather(ctx, FlipWalk(p, in[0].shape_), in[0], out[0], req[0]); }
  MXPLUG_JOIN_BACKWARD { L::Gather(ctx, FlipWalk(p, og[0].shape_), og[0], ig[0], req[0]); }
};

#undef MXPLUG_JOIN_FORWARD
#undef MXPLUG_JOIN_BACKWARD

/*! \brief Calls visit.template Op<Prop, Kernel>(name, doc, inputs, params) for every op above
 * (as ForEachLayoutOp does for the layout ops). */
template <class Visitor>
void ForEachJoinOp(Visitor&& visit) {
  visit.template Op<JoinProp<ConcatParam, false>, ConcatKernel>(
      "Concat", "Joins arrays along an existing axis.", {}, ConcatParam::Fields());
  visit.template Op<JoinProp<ConcatParam, false>, ConcatKernel>("concat", "Same as Concat.", {},
                                                                ConcatParam::Fields());
  visit.template Op<JoinProp<ConcatParam, false>, ConcatKernel>(
      "_rnn_param_concat",
      "Same as Concat (Gluon's recurrent layers join their parameters with it).", {},
      ConcatParam::Fields());
  visit.template Op<JoinProp<StackParam, true>, StackKernel>(
      "stack", "Joins arrays along a new axis.", {}, StackParam::Fields());
  visit.template Op<SplitProp, SplitKernel>("SliceChannel",
                                            "Splits an array into equal parts along an axis.",
                                            kDataInput, SplitParam::Fields());
  visit.template Op<SplitV2Prop, SplitV2Kernel>(
      "_split_v2", "Splits an array along an axis at the given indices, or into equal sections.",
      kDataInput, SplitV2Param::Fields());
  visit.template Op<SplitProp, SplitKernel>("split", "Same as SliceChannel.", kDataInput,
                                            SplitParam::Fields());
  visit.template Op<AddNProp, AddNKernel>(
      "ElementWiseSum", "Adds all input arguments element-wise.", {}, SumParam::Fields());
  visit.template Op<AddNProp, AddNKernel>("add_n", "Same as ElementWiseSum.", {},
                                          SumParam::Fields());
  visit.template Op<SliceAxisProp, SliceAxisKernel>("slice_axis", "A slice along one axis.",
                                                    kDataInput, SliceAxisParam::Fields());
  visit.template Op<TileProp, TileKernel>("tile", "Repeats the whole array along each axis.",
                                          kDataInput, TileParam::Fields());
  visit.template Op<RepeatProp, RepeatKernel>("repeat", "Repeats each element.", kDataInput,
                                              RepeatParam::Fields());
  visit.template Op<FlipProp, FlipKernel>("flip",
                                          "Reverses the order of elements along the given axes.",
                                          kDataInput, FlipParam::Fields());
  visit.template Op<FlipProp, FlipKernel>("reverse", "Same as flip.", kDataInput,
                                          FlipParam::Fields());
  visit.template Op<SqueezeProp, CopyKernel>("squeeze", "Removes axes of size 1.", kDataInput,
                                             SqueezeParam::Fields());
}

}  // namespace mxplug_tensor

#endif  // MXPLUG_PLUGINS_TENSOR_JOIN_H_
