// The CPU kernels of the reductions (definitions in reduce.h); argmax/argmin run reduce.h's
// ArgKernel on mxplug::CpuLoop.
#include <vector>

#include "reduce.h"

namespace {

using mxplug::Assign;
using mxplug::OpReqType;
using mxplug_tensor::ReduceKind;
using mxplug_tensor::ReduceSpec;
using mxplug_tensor::TBlob;
using mxplug_tensor::TShape;

// Calls fn(i, j) for every element i of an array of shape `in`, with j the element of the
// kept-dims result (`kept`) it reduces into.
template <class Fn>
void ForEachReduced(const TShape& in, const TShape& kept, Fn&& fn) {
  const std::vector<int64_t> zero_strides(in.ndim(), 0);
  mxplug_tensor::ForEachBroadcast(in, zero_strides, mxplug_tensor::BroadcastStrides(kept, in),
                                  [&](int64_t i, int64_t, int64_t j) { fn(i, j); });
}

template <ReduceKind K>
class ReduceCpu : public mxplug::Operator {
 public:
  ReduceCpu(const mxplug::KwArgs& kwargs, mxplug::Context) : spec_(K, kwargs) {}

  void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const TShape& is = in[0].shape_;
    const TShape kept = mxplug_tensor::KeptShape(is, ReducedAxes(spec_.axes, is.ndim()));
    const int64_t n = kept.Size();
    const int64_t count = n ? is.Size() / n : 0;
    spec_.template Visit<K>([&](auto reducer) {
      using R = decltype(reducer);
      mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
        using T = decltype(zero);
        using A = mxplug_tensor::AccumulatorOf<R::kKind, T>;
        using C = mxplug::ComputeType<T>;
        const T* x = in[0].dptr<T>();
        T* o = out[0].dptr<T>();
        std::vector<A> acc(n, R::template Init<A>());
        ForEachReduced(is, kept, [&](int64_t i, int64_t j) {
          R::Merge(acc[j], R::Element(static_cast<A>(static_cast<C>(x[i]))));
        });
        for (int64_t j = 0; j < n; ++j)
          Assign(o[j], req[0], static_cast<T>(static_cast<C>(R::Finish(acc[j], count))));
      });
    });
  }

  void Backward(const mxplug::OpContext&, const std::vector<TBlob>& og,
                const std::vector<TBlob>& in, const std::vector<TBlob>& out,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const TShape& is = ig[0].shape_;
    const TShape kept = mxplug_tensor::KeptShape(is, ReducedAxes(spec_.axes, is.ndim()));
    const int64_t count = kept.Size() ? is.Size() / kept.Size() : 0;
    spec_.template Visit<K>([&](auto reducer) {
      using R = decltype(reducer);
      mxplug::TypeSwitch(og[0].type_flag_, [&](auto zero) {
        using T = decltype(zero);
        using C = mxplug::ComputeType<T>;
        const T* g = og[0].dptr<T>();
        const T* x = R::kGradReadsData ? in[0].dptr<T>() : nullptr;
        const T* y = R::kGradReadsData ? out[0].dptr<T>() : nullptr;
        T* d = ig[0].dptr<T>();
        ForEachReduced(is, kept, [&](int64_t i, int64_t j) {
          const C v = R::Grad(C(g[j]), x ? C(x[i]) : C(0), y ? C(y[j]) : C(0), count);
          Assign(d[i], req[0], T(v));
        });
      });
    });
  }

 private:
  ReduceSpec spec_;
};

[[maybe_unused]] const bool registered = [] {
  mxplug_tensor::ReduceKernels<ReduceCpu, mxplug::CpuLoop>{kDLCPU}.RegisterAll();
  return true;
}();

}  // namespace
