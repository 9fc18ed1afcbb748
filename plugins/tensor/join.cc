// Joining, splitting and repeating along axes (MXNet's names): Concat/concat, stack,
// SliceChannel/split, slice_axis, tile, repeat, flip/reverse, squeeze, ElementWiseSum/add_n.
#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "elementwise.h"
#include "mxplug/plugin.hpp"

namespace {

using mxplug::Assign;
using mxplug::NormalizeAxis;
using mxplug::OpReqType;
using mxplug_tensor::TBlob;
using mxplug_tensor::TShape;

// Copies `len` elements per outer row between a piece and the joined array: the piece's rows are
// contiguous blocks of `len` at `offset` within each joined row of `row` elements.
template <class Fn>
void ForEachBlock(int64_t outer, int64_t len, int64_t row, int64_t offset, Fn&& fn) {
  for (int64_t o = 0; o < outer; ++o) fn(o * len, o * row + offset, len);
}

// Moves blocks between pieces (one per input or output) and the joined array along an axis of
// the joined shape; to_joined says which way. Pieces have `sizes[i]` along the axis.
void JoinOrSplit(const std::vector<TBlob>& pieces, const TBlob& joined, int axis,
                 const std::vector<OpReqType>& req, bool to_joined, OpReqType joined_req = mxplug::kWriteTo) {
  const TShape& js = joined.shape_;
  const int64_t outer = js.ProdShape(0, axis), inner = js.ProdShape(axis + 1, js.ndim());
  const int64_t row = js[axis] * inner;
  mxplug::TypeSwitch(joined.type_flag_, [&](auto zero) {
    using T = decltype(zero);
    T* j = joined.dptr<T>();
    int64_t offset = 0;
    for (size_t p = 0; p < pieces.size(); ++p) {
      const int64_t len = pieces[p].Size() / std::max<int64_t>(outer, 1);
      if (to_joined) {
        const T* s = pieces[p].dptr<T>();
        ForEachBlock(outer, len, row, offset, [&](int64_t ps, int64_t jp, int64_t n) {
          for (int64_t t = 0; t < n; ++t) Assign(j[jp + t], joined_req, s[ps + t]);
        });
      } else if (req[p] != mxplug::kNullOp) {
        T* d = pieces[p].dptr<T>();
        ForEachBlock(outer, len, row, offset, [&](int64_t ps, int64_t jp, int64_t n) {
          for (int64_t t = 0; t < n; ++t) Assign(d[ps + t], req[p], j[jp + t]);
        });
      }
      offset += len;
    }
  });
}

struct ConcatParam : mxplug::Parameter<ConcatParam> {
  int num_args;
  int dim;
  MXPLUG_DECLARE_PARAMETER(ConcatParam) {
    MXPLUG_DECLARE_FIELD(num_args).set_lower_bound(1).describe("Number of inputs to be concatenated.");
    MXPLUG_DECLARE_FIELD(dim).set_default(1).describe("The dimension to be concatenated.");
  }
};
MXPLUG_REGISTER_PARAMETER(ConcatParam);

std::vector<std::string> ArgNames(int n) {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.push_back("arg" + std::to_string(i));
  return names;
}

struct StackParam : mxplug::Parameter<StackParam> {
  int num_args;
  int axis;
  MXPLUG_DECLARE_PARAMETER(StackParam) {
    MXPLUG_DECLARE_FIELD(num_args).set_lower_bound(1).describe("Number of inputs to be stacked.");
    MXPLUG_DECLARE_FIELD(axis).set_default(0).describe("The axis of the new dimension.");
  }
};
MXPLUG_REGISTER_PARAMETER(StackParam);

int JoinAxis(const ConcatParam& p) { return p.dim; }
int JoinAxis(const StackParam& p) { return p.axis; }

// Concat (along an existing axis) and stack (along a new one, kStack).
template <class Param, bool kStack>
class JoinProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return ArgNames(param_.num_args); }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out, std::vector<TShape>*) const override {
    const TShape* first = nullptr;
    for (const TShape& s : *in)
      if (s.ndim() >= 0) { first = &s; break; }
    if (!first) return false;
    const int nd = first->ndim() + (kStack ? 1 : 0);
    const int axis = NormalizeAxis(JoinAxis(param_), nd, kStack ? "axis" : "dim");
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
    if (kStack) d.insert(d.begin() + axis, total);
    else d[axis] = total;
    (*out)[0] = TShape(d);
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return {og[0]};
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    struct Kernel : mxplug::Operator {
      int axis;
      void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
        if (req[0] == mxplug::kNullOp) return;
        JoinOrSplit(in, out[0], NormalizeAxis(axis, out[0].ndim()), {}, true, req[0]);
      }
      void Backward(const mxplug::OpContext&, const std::vector<TBlob>& og, const std::vector<TBlob>&,
                    const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& ig, const std::vector<TBlob>&) override {
        JoinOrSplit(ig, og[0], NormalizeAxis(axis, og[0].ndim()), req, false);
      }
    };
    auto* k = new Kernel();
    k->axis = JoinAxis(param_);
    return k;
  }

 private:
  Param param_;
};

// SliceChannel / split: num_outputs equal parts along axis, optionally squeezing it.
struct SplitParam : mxplug::Parameter<SplitParam> {
  int num_outputs;
  int axis;
  bool squeeze_axis;
  MXPLUG_DECLARE_PARAMETER(SplitParam) {
    MXPLUG_DECLARE_FIELD(num_outputs).set_lower_bound(1).describe("Number of splits.");
    MXPLUG_DECLARE_FIELD(axis).set_default(1).describe("Axis along which to split.");
    MXPLUG_DECLARE_FIELD(squeeze_axis).set_default(false).describe(
        "Remove the split axis from the outputs (its length must then equal num_outputs).");
  }
};
MXPLUG_REGISTER_PARAMETER(SplitParam);

class SplitProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListOutputs() const override {
    std::vector<std::string> names;
    for (int i = 0; i < param_.num_outputs; ++i) names.push_back("output" + std::to_string(i));
    return names;
  }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out, std::vector<TShape>*) const override {
    const TShape& s = (*in)[0];
    if (s.ndim() < 0) return false;
    const int axis = NormalizeAxis(param_.axis, s.ndim());
    if (s[axis] % param_.num_outputs != 0)
      throw std::invalid_argument("axis " + std::to_string(axis) + " of shape " + s.ToString() +
                                  " does not split into " + std::to_string(param_.num_outputs) + " equal parts");
    std::vector<int64_t> d(s.begin(), s.end());
    d[axis] /= param_.num_outputs;
    if (param_.squeeze_axis) {
      if (d[axis] != 1)
        throw std::invalid_argument("squeeze_axis needs axis length == num_outputs, got " + s.ToString());
      d.erase(d.begin() + axis);
    }
    for (TShape& o : *out) o = TShape(d);
    return s.IsKnown();
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return og;
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    struct Kernel : mxplug::Operator {
      int axis;
      void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
        JoinOrSplit(out, in[0], NormalizeAxis(axis, in[0].ndim()), req, false);
      }
      void Backward(const mxplug::OpContext&, const std::vector<TBlob>& og, const std::vector<TBlob>&,
                    const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& ig, const std::vector<TBlob>&) override {
        if (req[0] == mxplug::kNullOp) return;
        JoinOrSplit(og, ig[0], NormalizeAxis(axis, ig[0].ndim()), {}, true, req[0]);
      }
    };
    auto* k = new Kernel();
    k->axis = param_.axis;
    return k;
  }

 private:
  SplitParam param_;
};

// ElementWiseSum / add_n: the sum of num_args same-shape arrays.
struct SumParam : mxplug::Parameter<SumParam> {
  int num_args;
  MXPLUG_DECLARE_PARAMETER(SumParam) {
    MXPLUG_DECLARE_FIELD(num_args).set_lower_bound(1).describe("Number of inputs to be summed.");
  }
};
MXPLUG_REGISTER_PARAMETER(SumParam);

class AddNProp : public mxplug_tensor::ElementwiseProp {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return ArgNames(param_.num_args); }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out, std::vector<TShape>*) const override {
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
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    struct Kernel : mxplug::Operator {
      void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
        if (req[0] == mxplug::kNullOp) return;
        mxplug::TypeSwitch(out[0].type_flag_, [&](auto zero) {
          using T = decltype(zero);
          using C = mxplug::ComputeType<T>;
          T* o = out[0].dptr<T>();
          for (int64_t i = 0; i < out[0].Size(); ++i) {
            C s = C(0);
            for (const TBlob& b : in) s += C(b.dptr<T>()[i]);  // o may alias in[0]: read all first
            Assign(o[i], req[0], T(s));
          }
        });
      }
      void Backward(const mxplug::OpContext&, const std::vector<TBlob>& og, const std::vector<TBlob>&,
                    const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& ig, const std::vector<TBlob>&) override {
        mxplug::TypeSwitch(og[0].type_flag_, [&](auto zero) {
          using T = decltype(zero);
          const T* g = og[0].dptr<T>();
          // Input 0's gradient may share og's memory: write it last.
          for (size_t k = ig.size(); k-- > 0;) {
            if (req[k] == mxplug::kNullOp) continue;
            T* d = ig[k].dptr<T>();
            for (int64_t i = 0; i < og[0].Size(); ++i) Assign(d[i], req[k], g[i]);
          }
        });
      }
    };
    return new Kernel();
  }

 private:
  SumParam param_;
};

// Ops that map output index -> input index by a fixed rule: slice_axis, tile, repeat, flip,
// squeeze. Forward gathers, backward scatter-adds; each prop supplies the shape and the rule.
class GatherKernel : public mxplug::Operator {
 public:
  using Map = std::function<void(const TShape& in, const TShape& out, std::vector<int64_t>* src)>;
  explicit GatherKernel(Map map) : map_(std::move(map)) {}
  void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
               const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    std::vector<int64_t> src;
    map_(in[0].shape_, out[0].shape_, &src);
    mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      const T* x = in[0].dptr<T>();
      T* o = out[0].dptr<T>();
      for (size_t i = 0; i < src.size(); ++i) Assign(o[i], req[0], x[src[i]]);
    });
  }
  void Backward(const mxplug::OpContext&, const std::vector<TBlob>& og, const std::vector<TBlob>&,
                const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                const std::vector<TBlob>& ig, const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    std::vector<int64_t> src;
    map_(ig[0].shape_, og[0].shape_, &src);
    mxplug_tensor::ScatterAddGradient(og[0], ig[0], req[0], [&](auto add) {
      for (size_t o = 0; o < src.size(); ++o) add(static_cast<int64_t>(o), src[o]);
    });
  }

 private:
  Map map_;
};

// For every output index (row-major), the input index given per-axis source coordinates.
void GatherByAxis(const TShape& in, const TShape& out, std::vector<int64_t>* src,
                  const std::function<int64_t(int axis, int64_t coord)>& source_coord,
                  const std::vector<int>& out_to_in_axis) {
  std::vector<int64_t> in_strides(std::max(in.ndim(), 0), 1);
  for (int i = in.ndim() - 2; i >= 0; --i) in_strides[i] = in_strides[i + 1] * in[i + 1];
  src->assign(static_cast<size_t>(out.Size()), 0);
  std::vector<int64_t> idx(std::max(out.ndim(), 0), 0);
  for (int64_t flat = 0; flat < out.Size(); ++flat) {
    int64_t s = 0;
    for (int a = 0; a < out.ndim(); ++a) {
      const int ia = out_to_in_axis[a];
      if (ia >= 0) s += source_coord(a, idx[a]) * in_strides[ia];
    }
    (*src)[flat] = s;
    for (int a = out.ndim() - 1; a >= 0; --a) {
      if (++idx[a] < out[a]) break;
      idx[a] = 0;
    }
  }
}

std::vector<int> Identity(int n) {
  std::vector<int> v(n);
  for (int i = 0; i < n; ++i) v[i] = i;
  return v;
}

template <class Param>
class GatherProp : public mxplug_tensor::LayoutProp<Param> {
 public:
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    auto self = this->Clone();
    return new GatherKernel([self](const TShape& in, const TShape& out, std::vector<int64_t>* src) {
      self->Sources(in, out, src);
    });
  }

 protected:
  virtual void Sources(const TShape& in, const TShape& out, std::vector<int64_t>* src) const = 0;
  virtual std::shared_ptr<const GatherProp> Clone() const = 0;
};

#define MXPLUG_GATHER_CLONE(Cls) \
  std::shared_ptr<const GatherProp> Clone() const override { return std::make_shared<Cls>(*this); }

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
MXPLUG_REGISTER_PARAMETER(SliceAxisParam);

class SliceAxisProp : public GatherProp<SliceAxisParam> {
  std::pair<int64_t, int64_t> Range(const TShape& in, int* axis) const {
    *axis = NormalizeAxis(param_.axis, in.ndim());
    const int64_t n = in[*axis];
    int64_t b = param_.begin < 0 ? param_.begin + n : param_.begin;
    int64_t e = param_.end ? (*param_.end < 0 ? *param_.end + n : *param_.end) : n;
    if (b < 0 || e > n || b >= e)
      throw std::out_of_range("slice [" + std::to_string(param_.begin) + ", " +
                              (param_.end ? std::to_string(*param_.end) : std::string("None")) +
                              ") is empty or out of range for axis of length " + std::to_string(n));
    return {b, e};
  }
  TShape OutShape(const TShape& in) const override {
    int axis;
    auto [b, e] = Range(in, &axis);
    std::vector<int64_t> d(in.begin(), in.end());
    d[axis] = e - b;
    return TShape(d);
  }
  void Sources(const TShape& in, const TShape& out, std::vector<int64_t>* src) const override {
    int axis;
    const int64_t b = Range(in, &axis).first;
    GatherByAxis(in, out, src, [&](int a, int64_t c) { return a == axis ? c + b : c; }, Identity(in.ndim()));
  }
  MXPLUG_GATHER_CLONE(SliceAxisProp)
};

struct TileParam : mxplug::Parameter<TileParam> {
  TShape reps;
  MXPLUG_DECLARE_PARAMETER(TileParam) {
    MXPLUG_DECLARE_FIELD(reps).describe("Repetitions per axis (aligned on the right, as NumPy's tile).");
  }
};
MXPLUG_REGISTER_PARAMETER(TileParam);

class TileProp : public GatherProp<TileParam> {
  TShape OutShape(const TShape& in) const override {
    const int nd = std::max(in.ndim(), param_.reps.ndim());
    std::vector<int64_t> d(nd);
    for (int i = 0; i < nd; ++i) {
      const int ii = in.ndim() - nd + i, ir = param_.reps.ndim() - nd + i;
      const int64_t r = ir >= 0 ? param_.reps[ir] : 1;
      if (r < 0) throw std::invalid_argument("reps " + param_.reps.ToString() + " must not be negative");
      d[i] = (ii >= 0 ? in[ii] : 1) * r;
    }
    return TShape(d);
  }
  void Sources(const TShape& in, const TShape& out, std::vector<int64_t>* src) const override {
    const int nd = out.ndim();
    std::vector<int> map(nd);
    for (int i = 0; i < nd; ++i) map[i] = in.ndim() - nd + i;
    GatherByAxis(in, out, src, [&](int a, int64_t c) { return map[a] >= 0 ? c % in[map[a]] : 0; }, map);
  }
  MXPLUG_GATHER_CLONE(TileProp)
};

struct RepeatParam : mxplug::Parameter<RepeatParam> {
  int repeats;
  std::optional<int> axis;
  MXPLUG_DECLARE_PARAMETER(RepeatParam) {
    MXPLUG_DECLARE_FIELD(repeats).set_lower_bound(0).describe("Repetitions of each element.");
    MXPLUG_DECLARE_FIELD(axis).set_default(std::nullopt).describe(
        "The axis to repeat along; None repeats the flattened array.");
  }
};
MXPLUG_REGISTER_PARAMETER(RepeatParam);

class RepeatProp : public GatherProp<RepeatParam> {
  TShape OutShape(const TShape& in) const override {
    if (!param_.axis) return TShape{in.Size() * param_.repeats};
    std::vector<int64_t> d(in.begin(), in.end());
    d[NormalizeAxis(*param_.axis, in.ndim())] *= param_.repeats;
    return TShape(d);
  }
  void Sources(const TShape& in, const TShape& out, std::vector<int64_t>* src) const override {
    if (!param_.axis) {
      src->resize(static_cast<size_t>(out.Size()));
      for (int64_t i = 0; i < out.Size(); ++i) (*src)[i] = i / param_.repeats;
      return;
    }
    const int axis = NormalizeAxis(*param_.axis, in.ndim());
    GatherByAxis(in, out, src, [&](int a, int64_t c) { return a == axis ? c / param_.repeats : c; },
                 Identity(in.ndim()));
  }
  MXPLUG_GATHER_CLONE(RepeatProp)
};

struct FlipParam : mxplug::Parameter<FlipParam> {
  TShape axis;
  MXPLUG_DECLARE_PARAMETER(FlipParam) {
    MXPLUG_DECLARE_FIELD(axis).describe("The axis or axes to reverse.");
  }
};
MXPLUG_REGISTER_PARAMETER(FlipParam);

class FlipProp : public GatherProp<FlipParam> {
  TShape OutShape(const TShape& in) const override {
    for (int64_t a : param_.axis) NormalizeAxis(static_cast<int>(a), in.ndim());
    return in;
  }
  void Sources(const TShape& in, const TShape& out, std::vector<int64_t>* src) const override {
    std::vector<bool> flip(in.ndim(), false);
    for (int64_t a : param_.axis) flip[NormalizeAxis(static_cast<int>(a), in.ndim())] = true;
    GatherByAxis(in, out, src, [&](int a, int64_t c) { return flip[a] ? in[a] - 1 - c : c; },
                 Identity(in.ndim()));
  }
  MXPLUG_GATHER_CLONE(FlipProp)
};

struct SqueezeParam : mxplug::Parameter<SqueezeParam> {
  std::optional<TShape> axis;
  MXPLUG_DECLARE_PARAMETER(SqueezeParam) {
    MXPLUG_DECLARE_FIELD(axis).set_default(std::nullopt).describe(
        "The size-1 axes to remove; None removes all of them.");
  }
};
MXPLUG_REGISTER_PARAMETER(SqueezeParam);

class SqueezeProp : public GatherProp<SqueezeParam> {
  TShape OutShape(const TShape& in) const override {
    std::vector<bool> drop(in.ndim(), false);
    if (!param_.axis) {
      for (int i = 0; i < in.ndim(); ++i) drop[i] = in[i] == 1;
    } else {
      for (int64_t a : *param_.axis) {
        const int ax = NormalizeAxis(static_cast<int>(a), in.ndim());
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
  void Sources(const TShape&, const TShape& out, std::vector<int64_t>* src) const override {
    src->resize(static_cast<size_t>(out.Size()));
    for (int64_t i = 0; i < out.Size(); ++i) (*src)[i] = i;
  }
  MXPLUG_GATHER_CLONE(SqueezeProp)
};
#undef MXPLUG_GATHER_CLONE

const std::initializer_list<mxplug_tensor::InputDoc> kData{{"data", "The input array."}};

[[maybe_unused]] const bool registered = [] {
  using mxplug_tensor::Register;
  Register<JoinProp<ConcatParam, false>>("Concat", "Joins arrays along an existing axis.", {},
                                         ConcatParam::Fields());
  Register<JoinProp<ConcatParam, false>>("concat", "Same as Concat.", {}, ConcatParam::Fields());
  Register<JoinProp<StackParam, true>>("stack", "Joins arrays along a new axis.", {}, StackParam::Fields());
  Register<SplitProp>("SliceChannel", "Splits an array into equal parts along an axis.", kData,
                      SplitParam::Fields());
  Register<SplitProp>("split", "Same as SliceChannel.", kData, SplitParam::Fields());
  Register<AddNProp>("ElementWiseSum", "Adds all input arguments element-wise.", {}, SumParam::Fields());
  Register<AddNProp>("add_n", "Same as ElementWiseSum.", {}, SumParam::Fields());
  Register<SliceAxisProp>("slice_axis", "A slice along one axis.", kData, SliceAxisParam::Fields());
  Register<TileProp>("tile", "Repeats the whole array along each axis.", kData, TileParam::Fields());
  Register<RepeatProp>("repeat", "Repeats each element.", kData, RepeatParam::Fields());
  Register<FlipProp>("flip", "Reverses the order of elements along the given axes.", kData,
                     FlipParam::Fields());
  Register<FlipProp>("reverse", "Same as flip.", kData, FlipParam::Fields());
  Register<SqueezeProp>("squeeze", "Removes axes of size 1.", kData, SqueezeParam::Fields());
  return true;
}();

}  // namespace
