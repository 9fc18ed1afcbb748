// Array creation without inputs (MXNet's _zeros, _ones, _full, _arange, _eye; the frontend's
// zeros/ones/full/arange/eye run these), the *_like forms, and Cast.
#include <cmath>
#include <optional>
#include <string>

#include "elementwise.h"
#include "mxplug/plugin.hpp"

namespace {

using mxplug::Assign;
using mxplug::OpReqType;
using mxplug_tensor::TBlob;
using mxplug_tensor::TShape;

struct FullParam : mxplug::Parameter<FullParam> {
  TShape shape;
  std::string ctx;
  int dtype;
  double value;
  MXPLUG_DECLARE_PARAMETER(FullParam) {
    MXPLUG_DECLARE_FIELD(shape).set_default(TShape(std::vector<int64_t>{})).describe("The shape of the output");
    MXPLUG_DECLARE_FIELD(ctx).set_default("").describe("Context of output (the call's context is used)");
    MXPLUG_DECLARE_FIELD(dtype).set_default(kMXPFloat32).add_dtype_enum().describe("Target data type.");
    MXPLUG_DECLARE_FIELD(value).set_default(0.0).describe("Value with which to fill the array");
  }
};
MXPLUG_REGISTER_PARAMETER(FullParam);

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
    MXPLUG_DECLARE_FIELD(stop).set_default(std::nullopt).describe(
        "End of interval (exclusive). None: the interval is [0, start).");
    MXPLUG_DECLARE_FIELD(step).set_default(1.0).describe("Spacing between values.");
    MXPLUG_DECLARE_FIELD(repeat).set_default(1).set_lower_bound(1).describe(
        "How many times to repeat each value.");
    MXPLUG_DECLARE_FIELD(infer_range).set_default(false).describe("Unused imperatively.");
    MXPLUG_DECLARE_FIELD(ctx).set_default("").describe("Context of output.");
    MXPLUG_DECLARE_FIELD(dtype).set_default(kMXPFloat32).add_dtype_enum().describe("Target data type.");
  }
};
MXPLUG_REGISTER_PARAMETER(ArangeParam);

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
    MXPLUG_DECLARE_FIELD(dtype).set_default(kMXPFloat32).add_dtype_enum().describe("Target data type.");
  }
};
MXPLUG_REGISTER_PARAMETER(EyeParam);

// dtype bool is stored as uint8.
int StorageType(int dtype) { return dtype == kMXPBool ? kMXPUint8 : dtype; }

// The base of the no-input ops: no arguments, one output of the shape and dtype computed here.
template <class Param>
class InitProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); Check(); }
  std::vector<std::string> ListArguments() const override { return {}; }
  bool InferShape(std::vector<TShape>*, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    (*out)[0] = Shape();
    return true;
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

// Fills out[i] = fn(i) in the output's type.
template <class Fn>
void Fill(const TBlob& out, OpReqType req, Fn&& fn) {
  if (req == mxplug::kNullOp) return;
  mxplug::TypeSwitch(out.type_flag_, [&](auto zero) {
    using T = decltype(zero);
    T* o = out.dptr<T>();
    const int64_t n = out.Size();
    for (int64_t i = 0; i < n; ++i) Assign(o[i], req, static_cast<T>(fn(i)));
  });
}

class FullKernel : public mxplug::Operator {
 public:
  explicit FullKernel(double value) : value_(value) {}
  void Forward(const mxplug::OpContext&, const std::vector<TBlob>&, const std::vector<OpReqType>& req,
               const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
    Fill(out[0], req[0], [&](int64_t) { return value_; });
  }

 private:
  double value_;
};

template <int kFixed>  // -1: the `value` parameter; 0 or 1: _zeros or _ones
class FullProp : public InitProp<FullParam> {
  TShape Shape() const override {
    if (!param_.shape.IsKnown())
      throw std::invalid_argument("shape " + param_.shape.ToString() + " must be fully known");
    return param_.shape;
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    return new FullKernel(kFixed < 0 ? param_.value : kFixed);
  }
};

class ArangeProp : public InitProp<ArangeParam> {
  void Check() const override {
    if (param_.step == 0) throw std::invalid_argument("step must not be 0");
  }
  double Start() const { return param_.stop ? param_.start : 0.0; }
  double Stop() const { return param_.stop ? *param_.stop : param_.start; }
  TShape Shape() const override {
    const double n = std::ceil((Stop() - Start()) / param_.step);
    return TShape{static_cast<int64_t>(n > 0 ? n : 0) * param_.repeat};
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    struct Kernel : mxplug::Operator {
      double start, step;
      int repeat;
      void Forward(const mxplug::OpContext&, const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
        Fill(out[0], req[0], [&](int64_t i) { return start + static_cast<double>(i / repeat) * step; });
      }
    };
    auto* k = new Kernel();
    k->start = Start(), k->step = param_.step, k->repeat = param_.repeat;
    return k;
  }
};

class EyeProp : public InitProp<EyeParam> {
  TShape Shape() const override { return TShape{param_.N, param_.M > 0 ? param_.M : param_.N}; }
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    struct Kernel : mxplug::Operator {
      int64_t k;
      void Forward(const mxplug::OpContext&, const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
        const int64_t cols = out[0].shape_[1];
        Fill(out[0], req[0], [&](int64_t i) { return (i % cols) - (i / cols) == k ? 1.0 : 0.0; });
      }
    };
    auto* kernel = new Kernel();
    kernel->k = param_.k;
    return kernel;
  }
};

// zeros_like / ones_like: the input's shape and dtype; no gradient flows to the input.
template <int kValue>
class LikeProp : public mxplug_tensor::UnaryShapeProp<mxplug_tensor::NoParam> {
 public:
  std::vector<int> DeclareBackwardDependency(const std::vector<int>&, const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return {};
  }
  std::vector<std::pair<int, int>> ForwardInplaceOption(const std::vector<int>&,
                                                        const std::vector<int>&) const override {
    return {};
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    struct Kernel : FullKernel {
      Kernel() : FullKernel(kValue) {}
      void Backward(const mxplug::OpContext&, const std::vector<TBlob>&, const std::vector<TBlob>&,
                    const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& in_grad, const std::vector<TBlob>&) override {
        mxplug::WriteZeroGradient(in_grad[0], req[0]);
      }
    };
    return new Kernel();
  }
};

// Cast(data, dtype): converts element types; the gradient is cast back.
struct CastParam : mxplug::Parameter<CastParam> {
  int dtype;
  MXPLUG_DECLARE_PARAMETER(CastParam) {
    MXPLUG_DECLARE_FIELD(dtype).add_dtype_enum().describe("Output data type.");
  }
};
MXPLUG_REGISTER_PARAMETER(CastParam);

void Convert(const TBlob& from, const TBlob& to, OpReqType req) {
  if (req == mxplug::kNullOp) return;
  mxplug::TypeSwitch(from.type_flag_, [&](auto a) {
    using S = decltype(a);
    mxplug::TypeSwitch(to.type_flag_, [&](auto b) {
      using D = decltype(b);
      const S* s = from.dptr<S>();
      D* d = to.dptr<D>();
      for (int64_t i = 0; i < to.Size(); ++i) Assign(d[i], req, static_cast<D>(s[i]));
    });
  });
}

class CastProp : public mxplug_tensor::UnaryShapeProp<CastParam> {
 public:
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    (*out)[0] = StorageType(param_.dtype);
    return (*in)[0] != kMXPUnknownDType;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad, const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return {out_grad[0]};
  }
  // The types differ: no in-place in either direction.
  std::vector<std::pair<int, int>> ForwardInplaceOption(const std::vector<int>&,
                                                        const std::vector<int>&) const override {
    return {};
  }
  std::vector<std::pair<int, int>> BackwardInplaceOption(const std::vector<int>&, const std::vector<int>&,
                                                         const std::vector<int>&,
                                                         const std::vector<int>&) const override {
    return {};
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    struct Kernel : mxplug::Operator {
      void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
                   const std::vector<TBlob>&) override {
        Convert(in[0], out[0], req[0]);
      }
      void Backward(const mxplug::OpContext&, const std::vector<TBlob>& out_grad,
                    const std::vector<TBlob>&, const std::vector<TBlob>&,
                    const std::vector<OpReqType>& req, const std::vector<TBlob>& in_grad,
                    const std::vector<TBlob>&) override {
        Convert(out_grad[0], in_grad[0], req[0]);
      }
    };
    return new Kernel();
  }
};

const std::initializer_list<mxplug_tensor::InputDoc> kData{{"data", "The input array."}};

[[maybe_unused]] const bool registered = [] {
  using mxplug_tensor::Register;
  Register<FullProp<0>>("_zeros", "An array of zeros.", {}, FullParam::Fields());
  Register<FullProp<1>>("_ones", "An array of ones.", {}, FullParam::Fields());
  Register<FullProp<-1>>("_full", "An array filled with `value`.", {}, FullParam::Fields());
  Register<ArangeProp>("_arange", "Evenly spaced values within [start, stop), each repeated "
                       "`repeat` times.", {}, ArangeParam::Fields());
  Register<EyeProp>("_eye", "A 2-D array with ones on the k-th diagonal and zeros elsewhere.", {},
                    EyeParam::Fields());
  Register<LikeProp<0>>("zeros_like", "An array of zeros with the input's shape and dtype.", kData);
  Register<LikeProp<1>>("ones_like", "An array of ones with the input's shape and dtype.", kData);
  Register<CastProp>("Cast", "Casts all elements of the input to a new type.", kData,
                     CastParam::Fields());
  Register<CastProp>("cast", "Same as Cast.", kData, CastParam::Fields());
  return true;
}();

}  // namespace
