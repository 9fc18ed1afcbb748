// The CPU kernels of the array creation ops and Cast (definitions in init.h).
#include <vector>

#include "init.h"

namespace {

using mxplug::Assign;
using mxplug::OpReqType;
using mxplug_tensor::TBlob;

template <class Gen>
class FillCpu : public mxplug::Operator {
 public:
  FillCpu(const mxplug::KwArgs& kwargs, mxplug::Context) : gen_(kwargs) {}

  void Forward(const mxplug::OpContext&, const std::vector<TBlob>&,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    Gen gen = gen_;
    gen.Bind(out[0].shape_);
    mxplug::TypeSwitch(out[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      T* o = out[0].dptr<T>();
      const int64_t n = out[0].Size();
      for (int64_t i = 0; i < n; ++i)
        Assign(o[i], req[0], mxplug_tensor::ConvertElement<T>(gen(i)));
    });
  }
  // zeros_like, ones_like: no gradient flows to the input.
  void Backward(const mxplug::OpContext&, const std::vector<TBlob>&, const std::vector<TBlob>&,
                const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                const std::vector<TBlob>& in_grad, const std::vector<TBlob>&) override {
    for (size_t i = 0; i < in_grad.size(); ++i) mxplug::WriteZeroGradient(in_grad[i], req[i]);
  }

 private:
  Gen gen_;
};

void Convert(const TBlob& from, const TBlob& to, OpReqType req) {
  if (req == mxplug::kNullOp) return;
  mxplug::TypeSwitch(from.type_flag_, [&](auto a) {
    using S = decltype(a);
    mxplug::TypeSwitch(to.type_flag_, [&](auto b) {
      using D = decltype(b);
      const S* s = from.dptr<S>();
      D* d = to.dptr<D>();
      for (int64_t i = 0; i < to.Size(); ++i)
        Assign(d[i], req, mxplug_tensor::ConvertElement<D>(s[i]));
    });
  });
}

class CastCpu : public mxplug::Operator {
 public:
  CastCpu(const mxplug::KwArgs&, mxplug::Context) {}
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

[[maybe_unused]] const bool registered = [] {
  mxplug_tensor::InitKernels<FillCpu, CastCpu>{kDLCPU}.RegisterAll();
  return true;
}();

}  // namespace
