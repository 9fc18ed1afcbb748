// The CPU kernels of the unary elementwise ops and clip (definitions in unary.h).
#include <algorithm>

#include "unary.h"

namespace {

using mxplug::Assign;
using mxplug::OpReqType;
using mxplug_tensor::ClipParam;
using mxplug_tensor::MathType;
using mxplug_tensor::TBlob;

template <class Op, bool kNoGrad>
class UnaryCpu : public mxplug::Operator {
 public:
  UnaryCpu(const mxplug::KwArgs&, mxplug::Context) {}

  void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    mxplug_tensor::MapForward<MathType>(in[0], out[0], req[0], [](auto x) { return Op::F(x); });
  }

  void Backward(const mxplug::OpContext&, const std::vector<TBlob>& out_grad,
                const std::vector<TBlob>& in_data, const std::vector<TBlob>& out_data,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& in_grad,
                const std::vector<TBlob>&) override {
    using mxplug_tensor::kX;
    using mxplug_tensor::kY;
    mxplug_tensor::MapBackward<MathType>(out_grad[0], (Op::kUses & kX) ? &in_data[0] : nullptr,
                                         (Op::kUses & kY) ? &out_data[0] : nullptr, in_grad[0],
                                         req[0], [](auto x, auto y) {
                                           using C = decltype(x);
                                           return kNoGrad ? C(0) : Op::D(x, y);
                                         });
  }
};

class ClipCpu : public mxplug::Operator {
 public:
  ClipCpu(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }
  void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      using C = MathType<T>;
      const T* x = in[0].dptr<T>();
      T* o = out[0].dptr<T>();
      for (int64_t i = 0; i < out[0].Size(); ++i)
        Assign(o[i], req[0], static_cast<T>(std::min(std::max(C(x[i]), C(p_.a_min)), C(p_.a_max))));
    });
  }
  void Backward(const mxplug::OpContext&, const std::vector<TBlob>& out_grad,
                const std::vector<TBlob>& in_data, const std::vector<TBlob>&,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& in_grad,
                const std::vector<TBlob>&) override {
    mxplug::TypeSwitch(out_grad[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      using C = MathType<T>;
      const T* og = out_grad[0].dptr<T>();
      const T* x = in_data[0].dptr<T>();
      T* g = in_grad[0].dptr<T>();
      for (int64_t i = 0; i < out_grad[0].Size(); ++i) {
        const bool inside = C(x[i]) > C(p_.a_min) && C(x[i]) < C(p_.a_max);
        Assign(g[i], req[0], inside ? og[i] : T(0));
      }
    });
  }

 private:
  ClipParam p_;
};

struct RegisterUnaryCpu {
  template <class F, bool kNoGrad>
  void Unary(const char* name, const char*) const {
    mxplug::sdk::RegisterKernel<UnaryCpu<F, kNoGrad>>(name, kDLCPU);
  }
};

[[maybe_unused]] const bool registered = [] {
  mxplug_tensor::ForEachUnaryOp(RegisterUnaryCpu{});
  mxplug::sdk::RegisterKernel<ClipCpu>("clip", kDLCPU);
  return true;
}();

}  // namespace
