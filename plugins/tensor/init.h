// Definitions of array creation without inputs (MXNet's _zeros, _ones, _full, _arange, _eye; the
// frontend's zeros/ones/full/arange/eye run these), the *_like forms, and Cast: parameters,
// properties, the value of each output element (the generators), the kernels over a device's
// element loop, and the list that registers them. init.cc registers the definitions and the CPU
// kernels; devices/cuda/kernels/init.cu registers the CUDA kernels from the same list.
#ifndef MXPLUG_PLUGINS_TENSOR_INIT_H_
#define MXPLUG_PLUGINS_TENSOR_INIT_H_

#include <cmath>
#include <cstdint>
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

struct FullParam : mxplug::Parameter<FullParam> {
  TShape shape;
  std::string ctx;
  int dtype;
  double value;
  MXPLUG_DECLARE_PARAMETER(FullParam) {
    MXPLUG_DECLARE_FIELD(shape)
        .set_default(TShape(std::vector<int64_t>{}))
        .describe("The shape of the output");
    MXPLUG_DECLARE_FIELD(ctx).set_default("").describe(
        "Context of output (the call's context is used)");
    MXPLUG_DECLARE_FIELD(dtype)
        .set_default(kMXPFloat32)
        .add_dtype_enum()
        .describe("Target data type.");
    MXPLUG_DECLARE_FIELD(value).set_default(0.0).describe("Value with which to fill the array");
  }
};

struct ArangeParam : mxplug::Parameter<ArangeParam> {
  double start;
  std::optional<double> stop;
  double step;
  int repeat;
  bool infer_range;
  std::string ctx;
  int dtype;
  MXPLUG_DECLARE_PARAMETER(ArangeParam) {
    MXPLUG_DECLARE_FIELD(start).describe("Start of interval.");
    MXPLUG_DECLARE_FIELD(stop)
        .set_default(std::nullopt)
        .describe("End of interval (exclusive). None: the interval is [0, start).");
    MXPLUG_DECLARE_FIELD(step).set_default(1.0).describe("Spacing between values.");
    MXPLUG_DECLARE_FIELD(repeat).set_default(1).set_lower_bound(1).describe(
        "How many times to repeat each value.");
    MXPLUG_DECLARE_FIELD(infer_range).set_default(false).describe("Unused imperatively.");
    MXPLUG_DECLARE_FIELD(ctx).set_default("").describe("Context of output.");
    MXPLUG_DECLARE_FIELD(dtype)
        .set_default(kMXPFloat32)
        .add_dtype_enum()
        .describe("Target data type.");
  }
};

struct LinspaceParam : mxplug::Parameter<LinspaceParam> {
  double start, stop;
  int num;
  bool endpoint;
  std::string ctx;
  int dtype;
  MXPLUG_DECLARE_PARAMETER(LinspaceParam) {
    MXPLUG_DECLARE_FIELD(start).describe("Start of interval.");
    MXPLUG_DECLARE_FIELD(stop).describe("End of interval.");
    MXPLUG_DECLARE_FIELD(num).set_lower_bound(0).describe("Number of values.");
    MXPLUG_DECLARE_FIELD(endpoint).set_default(true).describe(
        "Whether stop is the last value; else the values are num of num + 1.");
    MXPLUG_DECLARE_FIELD(ctx).set_default("").describe("Context of output.");
    MXPLUG_DECLARE_FIELD(dtype)
        .set_default(kMXPFloat32)
        .add_dtype_enum()
        .describe("Target data type.");
  }
};

struct EyeParam : mxplug::Parameter<EyeParam> {
  int64_t N, M, k;
  std::string ctx;
  int dtype;
  MXPLUG_DECLARE_PARAMETER(EyeParam) {
    MXPLUG_DECLARE_FIELD(N).set_lower_bound(0).describe("Number of rows in the output.");
    MXPLUG_DECLARE_FIELD(M).set_default(0).set_lower_bound(0).describe(
        "Number of columns in the output. 0: N.");
    MXPLUG_DECLARE_FIELD(k).set_default(0).describe(
        "Index of the diagonal: 0 the main one, positive above, negative below.");
    MXPLUG_DECLARE_FIELD(ctx).set_default("").describe("Context of output.");
    MXPLUG_DECLARE_FIELD(dtype)
        .set_default(kMXPFloat32)
        .add_dtype_enum()
        .describe("Target data type.");
  }
};

// _set_value(src): the array out (its shape and dtype) filled with src.
struct SetValueParam : mxplug::Parameter<SetValueParam> {
  double src;
  MXPLUG_DECLARE_PARAMETER(SetValueParam) {
    MXPLUG_DECLARE_FIELD(src).describe("Source input to the function.");
  }
};

// Cast(data, dtype): converts element types; the gradient is cast back.
struct CastParam : mxplug::Parameter<CastParam> {
  int dtype;
  MXPLUG_DECLARE_PARAMETER(CastParam) {
    MXPLUG_DECLARE_FIELD(dtype).add_dtype_enum().describe("Output data type.");
  }
};

// dtype bool is stored as uint8.
inline int StorageType(int dtype) { return dtype == kMXPBool ? kMXPUint8 : dtype; }

// Where the interval of _arange starts and ends: (start, stop), or [0, start) without stop.
inline double ArangeStart(const ArangeParam& p) { return p.stop ? p.start : 0.0; }
inline double ArangeStop(const ArangeParam& p) { return p.stop ? *p.stop : p.start; }

// ---- Generators: the value of output element i, as a double ----
//
// Built on the host from the op's parameters, then bound to the output's shape (Bind) before each
// fill; called per element by FillKernel (below) on every device, which converts the value to the
// output's type.

/*! \brief _set_value's constant. */
struct SetValueGen {
  double value;
  explicit SetValueGen(const mxplug::KwArgs& kwargs) {
    SetValueParam p;
    p.Init(kwargs);
    value = p.src;
  }
  void Bind(const TShape&) {}
  MXPLUG_XINLINE double operator()(int64_t) const { return value; }
};

/*! \brief A constant: kValue (zeros, ones, zeros_like, ones_like), or `value` (kValue < 0). */
template <int kValue>
struct FullGen {
  double value = kValue;
  explicit FullGen(const mxplug::KwArgs& kwargs) {
    if constexpr (kValue < 0) {
      FullParam p;
      p.Init(kwargs);
      value = p.value;
    }
  }
  void Bind(const TShape&) {}
  MXPLUG_XINLINE double operator()(int64_t) const { return value; }
};

struct ArangeGen {
  double start, step;
  int64_t repeat;
  explicit ArangeGen(const mxplug::KwArgs& kwargs) {
    ArangeParam p;
    p.Init(kwargs);
    start = ArangeStart(p), step = p.step, repeat = p.repeat;
  }
  void Bind(const TShape&) {}
  MXPLUG_XINLINE double operator()(int64_t i) const {
    return start + static_cast<double>(i / repeat) * step;
  }
};

struct LinspaceGen {
  double start, step;
  explicit LinspaceGen(const mxplug::KwArgs& kwargs) {
    LinspaceParam p;
    p.Init(kwargs);
    const int intervals = p.endpoint ? p.num - 1 : p.num;
    start = p.start, step = intervals > 0 ? (p.stop - p.start) / intervals : 0.0;
  }
  void Bind(const TShape&) {}
  MXPLUG_XINLINE double operator()(int64_t i) const {
    return start + static_cast<double>(i) * step;
  }
};

struct EyeGen {
  int64_t k, cols = 1;
  explicit EyeGen(const mxplug::KwArgs& kwargs) {
    EyeParam p;
    p.Init(kwargs);
    k = p.k;
  }
  void Bind(const TShape& out) { cols = out[1]; }
  MXPLUG_XINLINE double operator()(int64_t i) const {
    return (i % cols) - (i / cols) == k ? 1.0 : 0.0;
  }
};

/*! \brief Converts an element to type D as MXNet does: through the compute types, so a double
 * becomes float16 through float (mshadow's half_t). The same on every device: a float becomes
 * uint8 through int64, so -1 is 255 as on MXNet's CPU and NumPy (converting a negative float
 * straight to an unsigned type is undefined; x86 wraps it, CUDA saturates it to 0). */
template <class D, class S>
MXPLUG_XINLINE D ConvertElement(S s) {
  using From = mxplug::ComputeType<S>;
  using To = mxplug::ComputeType<D>;
  if constexpr (std::is_floating_point<From>::value && std::is_unsigned<To>::value &&
                !std::is_same<To, bool>::value) {
    return static_cast<D>(static_cast<To>(static_cast<int64_t>(static_cast<From>(s))));
  } else {
    return static_cast<D>(static_cast<To>(static_cast<From>(s)));
  }
}

// ---- Properties ----

// The base of the no-input ops: no arguments, one output of the shape and dtype computed here.
template <class Param>
class InitProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override {
    param_.Init(kwargs);
    Check();
  }
  std::vector<std::string> ListArguments() const override { return {}; }
  bool InferShape(std::vector<TShape>*, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    // A dimension the shape leaves unknown (-1: MXNet 1.x's symbolic zeros((0, n)), a begin
    // state whose batch size the rest of the graph gives) is taken from what the consumers
    // inferred for the output.
    const TShape shape = Shape();
    TShape& o = (*out)[0];
    if (!mxplug::MergeShape(&o, shape))
      throw std::invalid_argument("the output has shape " + o.ToString() + " but shape is " +
                                  shape.ToString());
    return o.IsKnown();
  }
  bool InferType(std::vector<int>*, std::vector<int>* out, std::vector<int>*) const override {
    (*out)[0] = StorageType(param_.dtype);
    return true;
  }

 protected:
  virtual TShape Shape() const = 0;
  virtual void Check() const {}
  Param param_;
};

// The no-input ops whose output has the shape their `shape` parameter gives (_zeros, _ones,
// _full here; the random plugin's samplers too).
template <class Param>
class ShapeParamProp : public InitProp<Param> {
 protected:
  TShape Shape() const override {
    const TShape& shape = this->param_.shape;
    if (shape.ndim() < 0) throw std::invalid_argument("shape must be given");
    return shape;
  }
};

class FullProp : public ShapeParamProp<FullParam> {};

class ArangeProp : public InitProp<ArangeParam> {
  void Check() const override {
    if (param_.step == 0) throw std::invalid_argument("step must not be 0");
  }
  TShape Shape() const override {
    const double n = std::ceil((ArangeStop(param_) - ArangeStart(param_)) / param_.step);
    return TShape{static_cast<int64_t>(n > 0 ? n : 0) * param_.repeat};
  }
};

class LinspaceProp : public InitProp<LinspaceParam> {
  TShape Shape() const override { return TShape{param_.num}; }
};

class EyeProp : public InitProp<EyeParam> {
  TShape Shape() const override { return TShape{param_.N, param_.M > 0 ? param_.M : param_.N}; }
};

// _set_value: no inputs; the output given (out=) has the shape and dtype, and without one
// there are none, as in MXNet ("Set value target must not be empty").
class SetValueProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {}; }
  bool InferShape(std::vector<TShape>*, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    return (*out)[0].IsKnown();
  }
  bool InferType(std::vector<int>*, std::vector<int>* out, std::vector<int>*) const override {
    return (*out)[0] != kMXPUnknownDType;
  }

 private:
  SetValueParam param_;
};

// zeros_like / ones_like: the input's shape and dtype; no gradient flows to the input.
class LikeProp : public UnaryShapeProp<NoParam> {
 public:
  std::vector<int> DeclareBackwardDependency(const std::vector<int>&, const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return {};
  }
  std::vector<std::pair<int, int>> ForwardInplaceOption(const std::vector<int>&,
                                                        const std::vector<int>&) const override {
    return {};
  }
};

// Cast: the output's dtype is the parameter's; the gradient is cast back.
class CastProp : public UnaryShapeProp<CastParam> {
 public:
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    (*out)[0] = StorageType(param_.dtype);
    return (*in)[0] != kMXPUnknownDType;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad,
                                             const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return {out_grad[0]};
  }
  // The types differ: no in-place in either direction.
  std::vector<std::pair<int, int>> ForwardInplaceOption(const std::vector<int>&,
                                                        const std::vector<int>&) const override {
    return {};
  }
  std::vector<std::pair<int, int>> BackwardInplaceOption(const std::vector<int>&,
                                                         const std::vector<int>&,
                                                         const std::vector<int>&,
                                                         const std::vector<int>&) const override {
    return {};
  }
};

// Calls visit.template Fill<Prop, Gen>(name, doc, inputs, params) for every op that fills its
// output by a generator and visit.template Cast<Prop>(...) for Cast: the one list the definitions
// and each device's kernels register from.
template <class Visitor>
void ForEachInitOp(Visitor&& visit) {
  const std::initializer_list<InputDoc> none{};
  visit.template Fill<FullProp, FullGen<0>>("_zeros", "An array of zeros.", none,
                                            FullParam::Fields());
  visit.template Fill<FullProp, FullGen<1>>("_ones", "An array of ones.", none,
                                            FullParam::Fields());
  visit.template Fill<FullProp, FullGen<-1>>("_full", "An array filled with `value`.", none,
                                             FullParam::Fields());
  visit.template Fill<ArangeProp, ArangeGen>(
      "_arange", "Evenly spaced values within [start, stop), each repeated `repeat` times.", none,
      ArangeParam::Fields());
  visit.template Fill<LinspaceProp, LinspaceGen>(
      "_linspace", "num evenly spaced values from start to stop (included with endpoint).", none,
      LinspaceParam::Fields());
  visit.template Fill<EyeProp, EyeGen>(
      "_eye", "A 2-D array with ones on the k-th diagonal and zeros elsewhere.", none,
      EyeParam::Fields());
  visit.template Fill<LikeProp, FullGen<0>>(
      "zeros_like", "An array of zeros with the input's shape and dtype.", kDataInput, {});
  visit.template Fill<LikeProp, FullGen<1>>(
      "ones_like", "An array of ones with the input's shape and dtype.", kDataInput, {});
  visit.template Fill<SetValueProp, SetValueGen>(
      "_set_value", "Fills the output array (out) with src.", none, SetValueParam::Fields());
  visit.template Cast<CastProp>("Cast", "Casts all elements of the input to a new type.",
                                kDataInput, CastParam::Fields());
  visit.template Cast<CastProp>("cast", "Same as Cast.", kDataInput, CastParam::Fields());
}

// ---- Kernels, over a device's element loop (mxplug::CpuLoop, the CUDA plugin's CudaLoop) ----

template <class Gen, class T>
struct FillElements {
  Gen gen;
  T* out;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    mxplug::StoreAs<C>(out[i], req, static_cast<C>(ConvertElement<T>(gen(i))));
  }
};

/*! \brief Output element i is Gen(kwargs), bound to the output's shape, at i; the gradient of an
 * input, where there is one (zeros_like, ones_like), is zero. */
template <class Gen, class Loop>
class FillKernel : public mxplug::Operator {
 public:
  FillKernel(const mxplug::KwArgs& kwargs, mxplug::Context) : gen_(kwargs) {}

  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>&,
               const std::vector<mxplug::OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    Gen gen = gen_;
    gen.Bind(out[0].shape_);
    mxplug::TypeSwitch(out[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(ctx, out[0].Size(), FillElements<Gen, T>{gen, out[0].dptr<T>(), req[0]});
    });
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>&, const std::vector<TBlob>&,
                const std::vector<TBlob>&, const std::vector<mxplug::OpReqType>& req,
                const std::vector<TBlob>& in_grad, const std::vector<TBlob>&) override {
    for (size_t i = 0; i < in_grad.size(); ++i) Loop::Zero(ctx, in_grad[i], req[i]);
  }

 private:
  Gen gen_;
};

// Element i converted (ConvertElement), or to bool (stored as uint8): 1 where it is not zero.
template <class S, class D>
struct ConvertElements {
  const S* in;
  D* out;
  int req;
  bool to_bool;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<D>;
    C value = to_bool ? static_cast<C>(static_cast<mxplug::ComputeType<S>>(in[i]) != 0)
                      : static_cast<C>(ConvertElement<D>(in[i]));
    mxplug::StoreAs<C>(out[i], req, value);
  }
};

/*! \brief Cast: every element converted (ConvertElement), to bool as NumPy does; the gradient
 * converted back. */
template <class Loop>
class CastKernel : public mxplug::Operator {
 public:
  CastKernel(const mxplug::KwArgs& kwargs, mxplug::Context) {
    CastParam param;
    param.Init(kwargs);
    to_bool_ = param.dtype == kMXPBool;
  }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<mxplug::OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    Convert(ctx, in[0], out[0], req[0], to_bool_);
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& out_grad,
                const std::vector<TBlob>&, const std::vector<TBlob>&,
                const std::vector<mxplug::OpReqType>& req, const std::vector<TBlob>& in_grad,
                const std::vector<TBlob>&) override {
    Convert(ctx, out_grad[0], in_grad[0], req[0], false);
  }

 private:
  static void Convert(const mxplug::OpContext& ctx, const TBlob& from, const TBlob& to,
                      mxplug::OpReqType req, bool to_bool) {
    if (req == mxplug::kNullOp) return;
    mxplug::TypeSwitch(from.type_flag_, [&](auto a) {
      using S = decltype(a);
      mxplug::TypeSwitch(to.type_flag_, [&](auto b) {
        using D = decltype(b);
        Loop::Run(ctx, to.Size(),
                  ConvertElements<S, D>{from.dptr<S>(), to.dptr<D>(), req, to_bool});
      });
    });
  }
  bool to_bool_ = false;
};

/*! \brief Registers the kernels of every op above on a device whose element loop is Loop. */
template <class Loop>
struct InitKernels {
  DLDeviceType device;
  template <class Prop, class Gen>
  void Fill(const char* name, const char*, std::initializer_list<InputDoc>,
            const std::vector<mxplug::FieldInfo>&) const {
    mxplug::sdk::RegisterKernel<FillKernel<Gen, Loop>>(name, device);
  }
  template <class Prop>
  void Cast(const char* name, const char*, std::initializer_list<InputDoc>,
            const std::vector<mxplug::FieldInfo>&) const {
    mxplug::sdk::RegisterKernel<CastKernel<Loop>>(name, device);
  }
  void RegisterAll() const { ForEachInitOp(*this); }
};

}  // namespace mxplug_tensor

#endif  // MXPLUG_PLUGINS_TENSOR_INIT_H_
