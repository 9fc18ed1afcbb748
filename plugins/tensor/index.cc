// Selection by index or condition (MXNet's names): pick, one_hot, where.
#include <algorithm>
#include <functional>
#include <optional>
#include <string>

#include "elementwise.h"
#include "mxplug/plugin.hpp"

namespace {

using mxplug::Assign;
using mxplug::OpReqType;
using mxplug_tensor::TBlob;
using mxplug_tensor::TShape;

using mxplug::WriteZeroGradient;

int64_t IndexAt(const TBlob& idx, int64_t i) { return static_cast<int64_t>(mxplug::ValueAsDouble(idx, i)); }

// ---- pick(data, index, axis, keepdims, mode): data's element at index along axis ----

struct PickParam : mxplug::Parameter<PickParam> {
  std::optional<int> axis;
  bool keepdims;
  int mode;
  MXPLUG_DECLARE_PARAMETER(PickParam) {
    MXPLUG_DECLARE_FIELD(axis).set_default(-1).describe("The axis to pick along (None: flattened).");
    MXPLUG_DECLARE_FIELD(keepdims).set_default(false).describe("Keep the picked axis with size 1.");
    MXPLUG_DECLARE_FIELD(mode).set_default(mxplug_tensor::kIndexClip)
        .add_enum("clip", mxplug_tensor::kIndexClip).add_enum("wrap", mxplug_tensor::kIndexWrap).describe(
        "Out-of-range indices: clip to the range or wrap around.");
  }
};
MXPLUG_REGISTER_PARAMETER(PickParam);

class PickProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {"data", "index"}; }
  // -1: the flattened array (axis None).
  int Axis(int nd) const { return param_.axis ? mxplug::NormalizeAxis(*param_.axis, nd) : -1; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out, std::vector<TShape>*) const override {
    const TShape& d = (*in)[0];
    if (d.ndim() < 0) return false;
    const int axis = Axis(d.ndim());
    std::vector<int64_t> o;
    if (axis < 0) {
      o = {1};
    } else {
      o.assign(d.begin(), d.end());
      if (param_.keepdims) o[axis] = 1;
      else o.erase(o.begin() + axis);
    }
    if (o.empty()) o.push_back(1);
    const TShape want(o);
    TShape& idx = (*in)[1];
    if (idx.ndim() < 0) idx = want;
    if (idx.Size() != want.Size())
      throw std::invalid_argument("index has shape " + idx.ToString() + ", expected " + want.ToString() +
                                  " for data of shape " + d.ToString());
    (*out)[0] = want;
    return d.IsKnown();
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    return mxplug::InferTypeFromFirst(in, out);
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>&) const override {
    return {og[0], in[1]};
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    struct Kernel : mxplug::Operator {
      PickParam p;
      int axis = -1;  // set per call from p.axis and the data's rank
      void SetAxis(int nd) { axis = p.axis ? mxplug::NormalizeAxis(*p.axis, nd) : -1; }
      // Calls fn(out_index, data_index) for every picked element.
      void Walk(const TShape& d, const TBlob& idx, const std::function<void(int64_t, int64_t)>& fn) const {
        const int64_t outer = axis < 0 ? 1 : d.ProdShape(0, axis);
        const int64_t n = axis < 0 ? d.Size() : d[axis];
        const int64_t inner = axis < 0 ? 1 : d.ProdShape(axis + 1, d.ndim());
        for (int64_t a = 0; a < outer; ++a)
          for (int64_t b = 0; b < inner; ++b) {
            const int64_t k = mxplug_tensor::ResolveIndex(IndexAt(idx, a * inner + b), n, p.mode, axis);
            fn(a * inner + b, (a * n + k) * inner + b);
          }
      }
      void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
        if (req[0] == mxplug::kNullOp) return;
        SetAxis(in[0].ndim());
        mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
          using T = decltype(zero);
          const T* x = in[0].dptr<T>();
          T* o = out[0].dptr<T>();
          Walk(in[0].shape_, in[1], [&](int64_t oi, int64_t xi) { Assign(o[oi], req[0], x[xi]); });
        });
      }
      void Backward(const mxplug::OpContext&, const std::vector<TBlob>& og, const std::vector<TBlob>& in,
                    const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& ig, const std::vector<TBlob>&) override {
        WriteZeroGradient(ig[1], req[1]);
        if (req[0] == mxplug::kNullOp) return;
        SetAxis(ig[0].ndim());
        mxplug::TypeSwitch(og[0].type_flag_, [&](auto zero) {
          using T = decltype(zero);
          const T* g = og[0].dptr<T>();
          T* d = ig[0].dptr<T>();
          if (req[0] != mxplug::kAddTo) std::fill(d, d + ig[0].Size(), T(0));
          Walk(ig[0].shape_, in[1], [&](int64_t oi, int64_t xi) { d[xi] += g[oi]; });
        });
      }
    };
    auto* k = new Kernel();
    k->p = param_;
    return k;
  }

 private:
  PickParam param_;
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
    MXPLUG_DECLARE_FIELD(dtype).set_default(kMXPFloat32).add_dtype_enum().describe("Output data type.");
  }
};
MXPLUG_REGISTER_PARAMETER(OneHotParam);

class OneHotProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {"indices"}; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out, std::vector<TShape>*) const override {
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
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    struct Kernel : mxplug::Operator {
      OneHotParam p;
      void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
        if (req[0] == mxplug::kNullOp) return;
        mxplug::TypeSwitch(out[0].type_flag_, [&](auto zero) {
          using T = decltype(zero);
          T* o = out[0].dptr<T>();
          for (int64_t i = 0; i < in[0].Size(); ++i) {
            const int64_t k = IndexAt(in[0], i);
            for (int64_t j = 0; j < p.depth; ++j)  // an index out of [0, depth) gives a row of off
              Assign(o[i * p.depth + j], req[0], static_cast<T>(j == k ? p.on_value : p.off_value));
          }
        });
      }
      void Backward(const mxplug::OpContext&, const std::vector<TBlob>&, const std::vector<TBlob>&,
                    const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& ig, const std::vector<TBlob>&) override {
        WriteZeroGradient(ig[0], req[0]);
      }
    };
    auto* k = new Kernel();
    k->p = param_;
    return k;
  }

 private:
  OneHotParam param_;
};

// ---- where(condition, x, y): x where condition is nonzero, else y ----

class WhereProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {"condition", "x", "y"}; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out, std::vector<TShape>*) const override {
    TShape& c = (*in)[0];
    TShape& x = (*in)[1];
    TShape& y = (*in)[2];
    const TShape& known = x.ndim() >= 0 ? x : y;
    if (known.ndim() < 0 || c.ndim() < 0) return false;
    if (x.ndim() < 0) x = known;
    if (y.ndim() < 0) y = known;
    if (x != y)
      throw std::invalid_argument("x has shape " + x.ToString() + " but y has shape " + y.ToString());
    if (c != x && !(c.ndim() == 1 && x.ndim() >= 1 && c[0] == x[0]))
      throw std::invalid_argument("condition has shape " + c.ToString() + "; expected " + x.ToString() +
                                  " or (" + std::to_string(x.ndim() ? x[0] : 0) + ",)");
    (*out)[0] = x;
    return x.IsKnown() && c.IsKnown();
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    int t = (*in)[1] != kMXPUnknownDType ? (*in)[1] : (*in)[2];
    if (t == kMXPUnknownDType) return false;
    if ((*in)[0] == kMXPUnknownDType) (*in)[0] = t;
    for (int i = 1; i < 3; ++i) {
      if ((*in)[i] != kMXPUnknownDType && (*in)[i] != t)
        throw std::invalid_argument("x and y must have one dtype, got " + mxplug::DTypeName((*in)[1]) +
                                    " and " + mxplug::DTypeName((*in)[2]));
      (*in)[i] = t;
    }
    (*out)[0] = t;
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>&) const override {
    return {og[0], in[0]};
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    struct Kernel : mxplug::Operator {
      // Calls fn(i, taken_from_x) for every element.
      static void Walk(const TBlob& cond, int64_t size, const std::function<void(int64_t, bool)>& fn) {
        const int64_t per = cond.Size() == size ? 1 : size / std::max<int64_t>(cond.Size(), 1);
        mxplug::TypeSwitch(cond.type_flag_, [&](auto zero) {
          using C = decltype(zero);
          const C* c = cond.dptr<C>();
          for (int64_t i = 0; i < size; ++i) fn(i, c[i / per] != C(0));
        });
      }
      void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
        if (req[0] == mxplug::kNullOp) return;
        mxplug::TypeSwitch(out[0].type_flag_, [&](auto zero) {
          using T = decltype(zero);
          const T* x = in[1].dptr<T>();
          const T* y = in[2].dptr<T>();
          T* o = out[0].dptr<T>();
          Walk(in[0], out[0].Size(), [&](int64_t i, bool from_x) { Assign(o[i], req[0], from_x ? x[i] : y[i]); });
        });
      }
      void Backward(const mxplug::OpContext&, const std::vector<TBlob>& og, const std::vector<TBlob>& in,
                    const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& ig, const std::vector<TBlob>&) override {
        WriteZeroGradient(ig[0], req[0]);
        mxplug::TypeSwitch(og[0].type_flag_, [&](auto zero) {
          using T = decltype(zero);
          const T* g = og[0].dptr<T>();
          T* gx = req[1] != mxplug::kNullOp ? ig[1].dptr<T>() : nullptr;
          T* gy = req[2] != mxplug::kNullOp ? ig[2].dptr<T>() : nullptr;
          Walk(in[0], og[0].Size(), [&](int64_t i, bool from_x) {
            if (gx) Assign(gx[i], req[1], from_x ? g[i] : T(0));
            if (gy) Assign(gy[i], req[2], from_x ? T(0) : g[i]);
          });
        });
      }
    };
    return new Kernel();
  }

 private:
  mxplug_tensor::NoParam param_;
};

[[maybe_unused]] const bool registered = [] {
  using mxplug_tensor::Register;
  Register<PickProp>("pick", "Picks elements from data at the indices given along an axis.",
                     {{"data", "The input array."}, {"index", "The index array."}}, PickParam::Fields());
  Register<OneHotProp>("one_hot", "One-hot encoding of the indices.", {{"indices", "Array of indices."}},
                       OneHotParam::Fields());
  Register<WhereProp>("where", "Elements of x where condition is nonzero, of y elsewhere.",
                      {{"condition", "The condition array."}, {"x", "Values where true."},
                       {"y", "Values where false."}});
  return true;
}();

}  // namespace
