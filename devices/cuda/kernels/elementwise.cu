// CUDA kernels of the elementwise ops. The math is the functors and maps of the ops' definition
// headers (plugins/tensor/unary.h, binary.h), the same code the CPU kernels run; the maps (unary,
// scalar, clip) run on CudaLoop through plugins/tensor/elementwise_kernels.h, and this file holds
// the ops of two arrays, whose broadcast gradients are reductions (ReduceEach).

#include <string>
#include <vector>

#include "launch.cuh"
#include "reduce.cuh"
#include "tensor/elementwise_kernels.h"
#include "tensor/reduce.h"

namespace mxplug_cuda {
namespace {

using mxplug::ComputeType;
using mxplug::OpContext;
using mxplug::OpReqType;
using mxplug::TBlob;

// ---- Two arrays ----

template <class Op, class T>
struct BinaryForward {
  const T* a;
  const T* b;
  T* out;
  int req;
  BroadcastIndex ix;
  bool same;  // same shapes: no index arithmetic
  __device__ void operator()(int64_t o) const {
    using C = ComputeType<T>;
    int64_t ia = o, ib = o;
    if (!same) ix.Map(o, &ia, &ib);
    mxplug::StoreAs<C>(out[o], req, Op::F(static_cast<C>(a[ia]), static_cast<C>(b[ib])));
  }
};

// Same shapes: one thread per element writes both gradients.
template <class Op, class T>
struct BinaryBackwardSame {
  const T* og;
  const T* a;  // a, b, y: null when Op's derivatives do not read them
  const T* b;
  const T* y;
  T* ga;  // null: not wanted
  T* gb;
  int req_a, req_b;
  __device__ void operator()(int64_t i) const {
    using C = ComputeType<T>;
    const C g = static_cast<C>(og[i]);  // read first: ga may share og's memory
    const C av = a ? static_cast<C>(a[i]) : C(0), bv = b ? static_cast<C>(b[i]) : C(0),
            yv = y ? static_cast<C>(y[i]) : C(0);
    if (gb) mxplug::StoreAs<C>(gb[i], req_b, g * Op::DB(av, bv, yv));
    if (ga) mxplug::StoreAs<C>(ga[i], req_a, g * Op::DA(av, bv, yv));
  }
};

// Broadcast: a gradient element sums the output gradient, times the op's derivative, over the
// output elements that read it: a reduction of the output's shape onto the input's
// (ReduceEach). kFirst: the gradient of a (DA), else of b.
template <class Op, class T, bool kFirst>
struct BroadcastGradTerm {
  const T* og;
  const T* self;  // this input, the other input and y: null when Op does not read them
  const T* other;
  const T* y;
  BroadcastIndex to_inputs;  // output element -> (this input's, the other input's) elements
  __device__ ComputeType<T> operator()(int64_t, int64_t o) const {
    using C = ComputeType<T>;
    int64_t is, io;
    to_inputs.Map(o, &is, &io);
    const C sv = self ? static_cast<C>(self[is]) : C(0);
    const C ov = other ? static_cast<C>(other[io]) : C(0);
    const C yv = y ? static_cast<C>(y[o]) : C(0);
    const C g = static_cast<C>(og[o]);
    return kFirst ? g * Op::DA(sv, ov, yv) : g * Op::DB(ov, sv, yv);
  }
};

// The gradient of input `self` (of shape `self_shape`, broadcast to `out`) of a broadcasting op.
template <class Op, class T, bool kFirst>
void BroadcastGradient(const mxplug::TShape& out, const mxplug::TShape& self_shape,
                       const mxplug::TShape& other_shape, const T* og, const T* self,
                       const T* other, const T* y, T* grad, int req, cudaStream_t stream) {
  std::vector<bool> reduced(out.ndim());
  for (int d = 0; d < out.ndim(); ++d) {
    const int j = self_shape.ndim() - out.ndim() + d;
    reduced[d] = (j < 0 || self_shape[j] == 1) && out[d] != 1;
  }
  using C = ComputeType<T>;
  ReduceEach<mxplug_tensor::Reducer<mxplug_tensor::ReduceKind::kSum>>(
      MakeReduceIndex(out, reduced), C(0), stream,
      BroadcastGradTerm<Op, T, kFirst>{og, self, other, y,
                                       MakeBroadcastIndex(out, self_shape, other_shape)},
      StoreReduced<T>{grad, req});
}

template <class Op>
class BinaryCuda : public mxplug::Operator {
 public:
  BinaryCuda(const mxplug::KwArgs&, mxplug::Context) {}

  void Forward(const OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const bool same = in[0].shape_ == out[0].shape_ && in[1].shape_ == out[0].shape_;
    const BroadcastIndex ix =
        same ? BroadcastIndex{} : MakeBroadcastIndex(out[0].shape_, in[0].shape_, in[1].shape_);
    mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      ForEach(out[0].Size(), StreamOf(ctx),
              BinaryForward<Op, T>{in[0].dptr<T>(), in[1].dptr<T>(), out[0].dptr<T>(), req[0], ix,
                                   same});
    });
  }

  void Backward(const OpContext& ctx, const std::vector<TBlob>& out_grad,
                const std::vector<TBlob>& in_data, const std::vector<TBlob>& out_data,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& in_grad,
                const std::vector<TBlob>&) override {
    const mxplug::TShape& os = out_grad[0].shape_;
    mxplug::TypeSwitch(out_grad[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      const T* og = out_grad[0].dptr<T>();
      const T* a = Op::kReadsInputs ? in_data[0].dptr<T>() : nullptr;
      const T* b = Op::kReadsInputs ? in_data[1].dptr<T>() : nullptr;
      const T* y = Op::kReadsInputs ? out_data[0].dptr<T>() : nullptr;
      T* ga = req[0] != mxplug::kNullOp ? in_grad[0].dptr<T>() : nullptr;
      T* gb = req[1] != mxplug::kNullOp ? in_grad[1].dptr<T>() : nullptr;
      cudaStream_t stream = StreamOf(ctx);
      if (in_grad[0].shape_ == os && in_grad[1].shape_ == os) {
        ForEach(os.Size(), stream, BinaryBackwardSame<Op, T>{og, a, b, y, ga, gb, req[0], req[1]});
        return;
      }
      if (gb)
        BroadcastGradient<Op, T, false>(os, in_grad[1].shape_, in_grad[0].shape_, og, b, a, y, gb,
                                        req[1], stream);
      if (ga)
        BroadcastGradient<Op, T, true>(os, in_grad[0].shape_, in_grad[1].shape_, og, a, b, y, ga,
                                       req[0], stream);
    });
  }
};

[[maybe_unused]] const bool registered = [] {
  mxplug_tensor::ElementwiseKernels<CudaLoop, BinaryCuda>{kGpuDevice}.RegisterAll();
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
