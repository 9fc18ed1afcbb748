// CUDA kernels of the array creation ops and Cast. The value of each element is the generator or
// conversion of the ops' definition header (plugins/tensor/init.h), the same code the CPU kernels
// run (plugins/tensor/init_cpu.cc).
#include <cuda_runtime.h>

#include <vector>

#include "launch.cuh"
#include "tensor/init.h"

namespace mxplug_cuda {
namespace {

using mxplug::OpContext;
using mxplug::OpReqType;
using mxplug::TBlob;

template <class Gen, class T>
struct FillElements {
  Gen gen;
  T* out;
  int req;
  __device__ void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    Store<C>(out[i], req, static_cast<C>(mxplug_tensor::ConvertElement<T>(gen(i))));
  }
};

template <class Gen>
class FillCuda : public mxplug::Operator {
 public:
  FillCuda(const mxplug::KwArgs& kwargs, mxplug::Context) : gen_(kwargs) {}

  void Forward(const OpContext& ctx, const std::vector<TBlob>&, const std::vector<OpReqType>& req,
               const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    Gen gen = gen_;
    gen.Bind(out[0].shape_);
    mxplug::TypeSwitch(out[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      ForEach(out[0].Size(), StreamOf(ctx), FillElements<Gen, T>{gen, out[0].dptr<T>(), req[0]});
    });
  }
  // zeros_like, ones_like: no gradient flows to the input.
  void Backward(const OpContext& ctx, const std::vector<TBlob>&, const std::vector<TBlob>&,
                const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                const std::vector<TBlob>& in_grad, const std::vector<TBlob>&) override {
    for (size_t i = 0; i < in_grad.size(); ++i) ZeroGradient(in_grad[i], req[i], StreamOf(ctx));
  }

 private:
  Gen gen_;
};

template <class S, class D>
struct ConvertElements {
  const S* in;
  D* out;
  int req;
  __device__ void operator()(int64_t i) const {
    using C = mxplug::ComputeType<D>;
    Store<C>(out[i], req, static_cast<C>(mxplug_tensor::ConvertElement<D>(in[i])));
  }
};

void Convert(const TBlob& from, const TBlob& to, OpReqType req, cudaStream_t stream) {
  if (req == mxplug::kNullOp) return;
  mxplug::TypeSwitch(from.type_flag_, [&](auto a) {
    using S = decltype(a);
    mxplug::TypeSwitch(to.type_flag_, [&](auto b) {
      using D = decltype(b);
      ForEach(to.Size(), stream, ConvertElements<S, D>{from.dptr<S>(), to.dptr<D>(), req});
    });
  });
}

class CastCuda : public mxplug::Operator {
 public:
  CastCuda(const mxplug::KwArgs&, mxplug::Context) {}
  void Forward(const OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    Convert(in[0], out[0], req[0], StreamOf(ctx));
  }
  void Backward(const OpContext& ctx, const std::vector<TBlob>& out_grad, const std::vector<TBlob>&,
                const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                const std::vector<TBlob>& in_grad, const std::vector<TBlob>&) override {
    Convert(out_grad[0], in_grad[0], req[0], StreamOf(ctx));
  }
};

[[maybe_unused]] const bool registered = [] {
  mxplug_tensor::InitKernels<FillCuda, CastCuda>{kDLCUDA}.RegisterAll();
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
