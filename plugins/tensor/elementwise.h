// What the tensor plugin's ops share: parameterless and scalar parameter structs, broadcasting
// index arithmetic, and the property bases of elementwise ops (same shape in and out, in-place
// allowed, registered with documented inputs and a CPU kernel).
#ifndef MXPLUG_PLUGINS_TENSOR_ELEMENTWISE_H_
#define MXPLUG_PLUGINS_TENSOR_ELEMENTWISE_H_

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "mxplug/plugin.hpp"

namespace mxplug_tensor {

using mxplug::TBlob;
using mxplug::TShape;

struct NoParam : mxplug::Parameter<NoParam> {
  MXPLUG_DECLARE_PARAMETER(NoParam) {}
};

struct ScalarParam : mxplug::Parameter<ScalarParam> {
  double scalar;
  bool is_int;
  MXPLUG_DECLARE_PARAMETER(ScalarParam) {
    MXPLUG_DECLARE_FIELD(scalar).set_default(1.0).describe("Scalar input value");
    MXPLUG_DECLARE_FIELD(is_int).set_default(true).describe(
        "Indicate whether scalar input is int type");
  }
};

// Elementwise outputs may overwrite the first input in forward, and the first input's gradient
// may overwrite the output gradient in backward: each element is read before it is written.
using ElementwiseProp = mxplug::FirstInPlace<>;

// One input "data", one output of the same shape (unary and scalar ops).
template <typename Param>
class UnaryShapeProp : public ElementwiseProp {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    return mxplug::InferSameShape(in, out);
  }

 protected:
  Param param_;
};

/*! \brief NaN test for every element type (float16 through float; integers are never NaN). */
template <class T>
MXPLUG_XINLINE bool IsNan(T v) {
  if constexpr (std::is_integral_v<T>)
    return false;
  else if constexpr (std::is_floating_point_v<T>)
    return std::isnan(v);
  else
    return std::isnan(static_cast<float>(v));
}

// The type that math library calls on element type C take: double for integers (as the CPU's
// promotion rules would pick, written out so that device code calls the same function).
template <class C>
using RealOf = std::conditional_t<std::is_integral_v<C>, double, C>;

// What take and pick do with an index outside [0, n): the values of their `mode` parameter.
enum IndexMode { kIndexClip = 0, kIndexWrap = 1, kIndexRaise = 2 };

// Index k into an axis of length n, wrapped (kIndexWrap) or clipped to the range (the others).
MXPLUG_XINLINE int64_t ClipOrWrapIndex(int64_t k, int64_t n, int mode) {
  if (mode == kIndexWrap) return ((k % n) + n) % n;
  return k < 0 ? 0 : k >= n ? n - 1 : k;
}

/*! \brief An index held in an array of any dtype, truncated toward zero (float16 through
 * float). */
template <class I>
MXPLUG_XINLINE int64_t IndexValue(I v) {
  return static_cast<int64_t>(static_cast<mxplug::ComputeType<I>>(v));
}

/*! \brief Calls fn(T{}, I{}) with the C++ types of two dtype flags (values and indices). */
template <class Fn>
void TypeSwitch2(int values, int indices, Fn&& fn) {
  mxplug::TypeSwitch(values,
                     [&](auto v) { mxplug::TypeSwitch(indices, [&](auto i) { fn(v, i); }); });
}

/*! \brief out[o] = src[geo.Source(o, idx)] as req says: a gather whose geometry maps output
 * element o to its source through an index array (take's TakeGeometry, pick's PickGeometry). */
template <class Geometry, class T, class I>
struct GatherByIndex {
  Geometry geo;
  const T* src;
  const I* idx;
  T* out;
  int req;
  MXPLUG_XINLINE void operator()(int64_t o) const {
    using C = mxplug::ComputeType<T>;
    mxplug::StoreAs<C>(out[o], req, static_cast<C>(src[geo.Source(o, idx)]));
  }
};

// Index k into an axis of length n, resolved as `mode` says. \throws std::out_of_range (raise).
inline int64_t ResolveIndex(int64_t k, int64_t n, int mode, int axis) {
  if (mode == kIndexRaise) {
    if (k < -n || k >= n)
      throw std::out_of_range("index " + std::to_string(k) + " is out of range for axis " +
                              std::to_string(axis) + " of size " + std::to_string(n));
    return k < 0 ? k + n : k;
  }
  return ClipOrWrapIndex(k, n, mode);
}

// Base of ops whose output holds the input's elements, rearranged (reshapes, transposes, slices,
// repeats): the output shape is OutShape(input), the dtype is kept, and backward reads only the
// output gradient.
template <typename Param>
class LayoutProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    if ((*in)[0].ndim() < 0 || !(*in)[0].IsKnown()) return false;
    (*out)[0] = OutShape((*in)[0]);
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad,
                                             const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return {out_grad[0]};
  }

 protected:
  virtual TShape OutShape(const TShape& in) const = 0;
  Param param_;
};

// The base of ops that read input 0 at the indices held in input 1 (take, pick): the output has
// input 0's dtype, and backward reads only the output gradient and the indices.
class ReadAtIndicesProp : public mxplug::OperatorProperty {
 public:
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    return mxplug::InferTypeFromFirst(in, out);
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>&) const override {
    return {og[0], in[1]};
  }
};

struct InputDoc {
  const char* name;
  const char* doc;
};

// Defines op `name` by Prop with its documented inputs: its semantics, without a kernel (the
// kernels of each device register apart, by name: <family>_cpu.cc, devices/cuda/kernels).
template <typename Prop>
mxplug::OpRegistration& Define(const char* name, const char* doc,
                               std::initializer_list<InputDoc> inputs,
                               const std::vector<mxplug::FieldInfo>& params = {}) {
  mxplug::OpRegistration& reg = mxplug::RegisterOpProperty<Prop>(name).describe(doc);
  for (const InputDoc& in : inputs) reg.add_argument(in.name, "NDArray-or-Symbol", in.doc);
  return reg.add_arguments(params);
}

// The input lists of the elementwise families, shared by their definitions.
inline const std::initializer_list<InputDoc> kDataInput{{"data", "The input array."}};

/*! \brief Registers the definition of every op a list visits whose entries are
 * Op<Prop, Kernel>(name, doc, inputs, params) (ForEachLayoutOp, ForEachJoinOp, ForEachIndexOp). */
struct LayoutDefinitions {
  template <class Prop, template <class> class Kernel>
  void Op(const char* name, const char* doc, std::initializer_list<InputDoc> inputs,
          const std::vector<mxplug::FieldInfo>& params) const {
    Define<Prop>(name, doc, inputs, params);
  }
};

/*! \brief Registers the kernels Kernel<L> of every op such a list visits on one device: L is the
 * device's layout primitives (shape.h) or its element loop (index.h). */
template <class L>
struct LayoutKernels {
  DLDeviceType device;
  template <class Prop, template <class> class Kernel>
  void Op(const char* name, const char*, std::initializer_list<InputDoc>,
          const std::vector<mxplug::FieldInfo>&) const {
    mxplug::sdk::RegisterKernel<Kernel<L>>(name, device);
  }
};

// A tuple parameter as MXNet writes it, "(0, None, 2)" or a bare "1", where None means the
// default for that position. \throws std::invalid_argument naming the parameter.
inline std::vector<std::optional<int64_t>> ParseOptionalTuple(const std::string& text,
                                                              const char* name) {
  std::vector<std::optional<int64_t>> out;
  std::string body = text;
  body.erase(std::remove_if(body.begin(), body.end(), [](char c) { return c == ' '; }), body.end());
  if (!body.empty() && body.front() != '(' && body.front() != '[') body = "(" + body + ")";
  if (body.size() < 2 || (body.front() != '(' && body.front() != '[') ||
      (body.back() != ')' && body.back() != ']'))
    throw std::invalid_argument(std::string("parameter '") + name + "' = '" + text +
                                "' is not a tuple of integers or None");
  body = body.substr(1, body.size() - 2);
  size_t pos = 0;
  while (pos < body.size()) {
    size_t comma = body.find(',', pos);
    std::string item =
        body.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (item == "None") {
      out.emplace_back(std::nullopt);
    } else if (!item.empty()) {
      char* end = nullptr;
      long long v = std::strtoll(item.c_str(), &end, 10);
      if (*end != '\0')
        throw std::invalid_argument(std::string("parameter '") + name + "' = '" + text +
                                    "' is not a tuple of integers or None");
      out.emplace_back(v);
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

// ---- Maps: the math of an op of one input (unary, scalar and clip ops) ----
//
// A map is what MapKernel (elementwise_kernels.h) runs per element on every device:
//   Map(kwargs)                  built on the host from the op's parameters
//   m(x)                         the output for input x, in the compute type Map::Compute<T>
//   m.Grad(g, x, y)              the input's gradient for output gradient g, input x, output y
//   Map::kReadsX, Map::kReadsY   whether Grad reads x and y (else it is passed 0)
// Its functions are MXPLUG_XINLINE, so that device code calls the same math.

// ---- Broadcasting (NumPy's rules: align on the right, size-1 axes stretch) ----

inline TShape BroadcastShape(const TShape& a, const TShape& b, const char* lhs = "lhs",
                             const char* rhs = "rhs") {
  const int nd = std::max(a.ndim(), b.ndim());
  std::vector<int64_t> out(nd);
  for (int i = 0; i < nd; ++i) {
    const int ia = a.ndim() - nd + i, ib = b.ndim() - nd + i;
    const int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1)
      throw std::invalid_argument(std::string("operands could not be broadcast together: ") + lhs +
                                  " has shape " + a.ToString() + ", " + rhs + " has shape " +
                                  b.ToString());
    out[i] = da == 1 ? db : da;
  }
  return TShape(out);
}

// Element strides of `in` viewed as `out`'s shape: 0 along axes that broadcast.
inline std::vector<int64_t> BroadcastStrides(const TShape& in, const TShape& out) {
  const int nd = out.ndim();
  std::vector<int64_t> strides(nd, 0);
  int64_t stride = 1;
  for (int i = nd - 1; i >= 0; --i) {
    const int j = in.ndim() - nd + i;
    if (j < 0) break;
    strides[i] = in[j] == 1 ? 0 : stride;
    stride *= in[j];
  }
  return strides;
}

// Calls fn(out_index, a_index, b_index) for every element of `out`, in row-major order.
template <typename Fn>
void ForEachBroadcast(const TShape& out, const std::vector<int64_t>& sa,
                      const std::vector<int64_t>& sb, Fn&& fn) {
  const int nd = out.ndim();
  if (out.Size() == 0) return;
  if (nd == 0) return fn(int64_t{0}, int64_t{0}, int64_t{0});
  std::vector<int64_t> idx(nd, 0);
  const int64_t inner = out[nd - 1], ia_step = sa[nd - 1], ib_step = sb[nd - 1];
  int64_t ia = 0, ib = 0, io = 0;
  while (true) {
    for (int64_t j = 0; j < inner; ++j) fn(io + j, ia + j * ia_step, ib + j * ib_step);
    io += inner;
    int d = nd - 2;
    for (; d >= 0; --d) {
      ia += sa[d], ib += sb[d];
      if (++idx[d] < out[d]) break;
      ia -= sa[d] * out[d], ib -= sb[d] * out[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

// The gradient of a gather (an op whose output elements are copies of input elements):
// visit(fn) calls fn(o, i) for every output element o and the input element i it copied; og[o]
// is summed onto in_grad[i] in the compute type, then written as req says.
template <typename Visit>
void ScatterAddGradient(const TBlob& og, const TBlob& in_grad, mxplug::OpReqType req,
                        Visit&& visit) {
  if (req == mxplug::kNullOp) return;
  mxplug::TypeSwitch(og.type_flag_, [&](auto zero) {
    using T = decltype(zero);
    using C = mxplug::ComputeType<T>;
    const T* g = og.dptr<T>();
    T* d = in_grad.dptr<T>();
    std::vector<C> acc(in_grad.Size(), C(0));
    visit([&](int64_t o, int64_t i) { acc[i] += C(g[o]); });
    for (size_t i = 0; i < acc.size(); ++i) mxplug::Assign(d[i], req, T(acc[i]));
  });
}

}  // namespace mxplug_tensor

#endif  // MXPLUG_PLUGINS_TENSOR_ELEMENTWISE_H_
