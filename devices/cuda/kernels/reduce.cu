// CUDA kernels of the reductions. The math is the Reducer of the ops' definition header
// (plugins/tensor/reduce.h), the same code the CPU kernels run (plugins/tensor/reduce_cpu.cc);
// this file only spreads it over threads. argmax/argmin run reduce.h's ArgKernel on CudaLoop.

#include <vector>

#include "launch.cuh"
#include "reduce.cuh"
#include "tensor/reduce.h"

namespace mxplug_cuda {
namespace {

using mxplug::OpContext;
using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug_tensor::ReduceKind;
using mxplug_tensor::ReduceSpec;

template <class R, class T, class A>
struct LoadElement {
  const T* x;
  __device__ A operator()(int64_t, int64_t i) const {
    return R::Element(static_cast<A>(static_cast<mxplug::ComputeType<T>>(x[i])));
  }
};

template <class R, class T, class A>
struct StoreResult {
  T* out;
  int req;
  int64_t count;
  __device__ void operator()(int64_t j, A acc) const {
    using C = mxplug::ComputeType<T>;
    mxplug::StoreAs<C>(out[j], req, static_cast<C>(R::Finish(acc, count)));
  }
};

// One thread per input element i, with j the output element it reduced into.
template <class R, class T>
struct ReduceGradient {
  const T* og;
  const T* x;  // x and y: null when R's gradient does not read them
  const T* y;
  T* grad;
  int req;
  int64_t count;
  BroadcastIndex to_out;  // input element -> output element
  __device__ void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    int64_t j, unused;
    to_out.Map(i, &j, &unused);
    const C v = R::Grad(static_cast<C>(og[j]), x ? static_cast<C>(x[i]) : C(0),
                        y ? static_cast<C>(y[j]) : C(0), count);
    mxplug::StoreAs<C>(grad[i], req, v);
  }
};

template <ReduceKind K>
class ReduceCuda : public mxplug::Operator {
 public:
  ReduceCuda(const mxplug::KwArgs& kwargs, mxplug::Context) : spec_(K, kwargs) {}

  void Forward(const OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const mxplug::TShape& is = in[0].shape_;
    const ReduceIndex ix = MakeReduceIndex(is, ReducedAxes(spec_.axes, is.ndim()));
    spec_.template Visit<K>([&](auto reducer) {
      using R = decltype(reducer);
      mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
        using T = decltype(zero);
        using A = mxplug_tensor::AccumulatorOf<R::kKind, T>;
        ReduceEach<R>(ix, R::template Init<A>(), StreamOf(ctx),
                      LoadElement<R, T, A>{in[0].dptr<T>()},
                      StoreResult<R, T, A>{out[0].dptr<T>(), req[0], ix.count});
      });
    });
  }

  void Backward(const OpContext& ctx, const std::vector<TBlob>& og, const std::vector<TBlob>& in,
                const std::vector<TBlob>& out, const std::vector<OpReqType>& req,
                const std::vector<TBlob>& ig, const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const mxplug::TShape& is = ig[0].shape_;
    const mxplug::TShape kept = mxplug_tensor::KeptShape(is, ReducedAxes(spec_.axes, is.ndim()));
    const int64_t count = kept.Size() ? is.Size() / kept.Size() : 0;
    const BroadcastIndex to_out = MakeBroadcastIndex(is, kept, kept);
    spec_.template Visit<K>([&](auto reducer) {
      using R = decltype(reducer);
      mxplug::TypeSwitch(og[0].type_flag_, [&](auto zero) {
        using T = decltype(zero);
        const T* x = R::kGradReadsData ? in[0].dptr<T>() : nullptr;
        const T* y = R::kGradReadsData ? out[0].dptr<T>() : nullptr;
        ForEach(
            is.Size(), StreamOf(ctx),
            ReduceGradient<R, T>{og[0].dptr<T>(), x, y, ig[0].dptr<T>(), req[0], count, to_out});
      });
    });
  }

 private:
  ReduceSpec spec_;
};

[[maybe_unused]] const bool registered = [] {
  mxplug_tensor::ReduceKernels<ReduceCuda, CudaLoop>{kGpuDevice}.RegisterAll();
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
