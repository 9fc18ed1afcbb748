// The CPU kernels of the elementwise ops (definitions in unary.h and binary.h): BinaryCpu runs
// the ops of two arrays; the maps (unary, scalar, clip) run on TeamLoop, CpuLoop's loop split
// across an OpenMP team for large arrays.
#include <omp.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <vector>

#include "elementwise_kernels.h"

namespace {

// Elements from which an elementwise loop runs on an OpenMP team.
constexpr int64_t kParallelElements = int64_t{1} << 20;

// body(begin, end) over [0, n): split across an OpenMP team from kParallelElements elements, else
// called here. Not a parallel region with an `if` clause: libgomp enters one even when the clause
// is false, about 1,500 instructions, 7% of a 1-element add's whole call from Python.
template <class Body>
void ForRange(int64_t n, const Body& body) {
  if (n < kParallelElements) return body(int64_t{0}, n);
#pragma omp parallel
  {
    const int64_t teams = omp_get_num_threads(), t = omp_get_thread_num();
    body(n * t / teams, n * (t + 1) / teams);
  }
}

// Note [Vector exp]
// exp in float32 is computed 8 elements at a time by glibc's vector math library (libmvec's
// AVX2 _ZGVdN8v_expf), as PyTorch's is by SLEEF: the C library's scalar expf, one element at a
// time, took 2.96x PyTorch's time on 16M floats (docs/performance.md). Its results are within 3
// ulp of the exact ones (max relative error 2.2e-7 measured over [-87, 88]) and keep the special
// values (inf, -inf, NaN, overflow to inf, underflow to 0). Without AVX2 (none of the project's
// machines), for the tail, and in float64 the scalar loop runs.
#if defined(__x86_64__)
extern "C" __attribute__((target("avx2"))) __m256 _ZGVdN8v_expf(__m256);  // NOLINT: libmvec's

// The elements of [0, n) it computed: whole vectors of 8.
__attribute__((target("avx2"))) int64_t ExpAvx2(const float* x, float* y, int64_t n, bool add) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _ZGVdN8v_expf(_mm256_loadu_ps(x + i));
    if (add) v = _mm256_add_ps(v, _mm256_loadu_ps(y + i));
    _mm256_storeu_ps(y + i, v);
  }
  return i;
}
#endif

// The maps' element loop (unary, scalar and clip ops, elementwise_kernels.h: element i reads
// index i of its inputs and writes index i of its output, and nothing adds into one place):
// mxplug::CpuLoop's, split across an OpenMP team from kParallelElements elements as the ops of
// two arrays are.
struct TeamLoop : mxplug::CpuLoop {
  template <typename F>
  static void Run(const mxplug::OpContext&, int64_t n, const F& f) {
    ForRange(n, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) f(i);
    });
  }
#if defined(__x86_64__)
  // exp's float32 forward on libmvec (Note [Vector exp]).
  template <bool kNoGrad>
  static void Run(
      const mxplug::OpContext&, int64_t n,
      const mxplug_tensor::MapForward<mxplug_tensor::UnaryMap<mxplug_tensor::Exp, kNoGrad>, float>&
          f) {
    static const bool avx2 = __builtin_cpu_supports("avx2");
    const bool add = f.req == mxplug::kAddTo;
    ForRange(n, [&](int64_t begin, int64_t end) {
      const int64_t done = avx2 ? ExpAvx2(f.x + begin, f.out + begin, end - begin, add) : 0;
      for (int64_t i = begin + done; i < end; ++i) f(i);
    });
  }
#endif
};

using mxplug::Assign;
using mxplug::ComputeType;
using mxplug::OpReqType;
using mxplug_tensor::TBlob;
using mxplug_tensor::TShape;

// ---- Two arrays, broadcasting (the same-shape ops are the special case sa == sb == 1) ----

template <class Op>
class BinaryCpu : public mxplug::Operator {
 public:
  BinaryCpu(const mxplug::KwArgs&, mxplug::Context) {}

  void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const TShape& os = out[0].shape_;
    mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      using C = ComputeType<T>;
      const T* a = in[0].dptr<T>();
      const T* b = in[1].dptr<T>();
      T* o = out[0].dptr<T>();
      if (in[0].shape_ == os && in[1].shape_ == os) {
        const int64_t n = out[0].Size();
        const OpReqType r = req[0];  // not kNullOp (returned above)
        // A large array is memory-bound: one core's bandwidth is about half of two cores', so an
        // OpenMP team splits it (small ones stay serial: a team's start costs microseconds).
        if (r == mxplug::kAddTo) {
          ForRange(n, [&](int64_t begin, int64_t end) {
#pragma omp simd
            for (int64_t i = begin; i < end; ++i) o[i] = T(C(o[i]) + C(T(Op::F(C(a[i]), C(b[i])))));
          });
        } else {  // the write loop alone, which the compiler vectorizes
          ForRange(n, [&](int64_t begin, int64_t end) {
#pragma omp simd
            for (int64_t i = begin; i < end; ++i) o[i] = T(Op::F(C(a[i]), C(b[i])));
          });
        }
        return;
      }
      mxplug_tensor::ForEachBroadcast(os, mxplug_tensor::BroadcastStrides(in[0].shape_, os),
                                      mxplug_tensor::BroadcastStrides(in[1].shape_, os),
                                      [&](int64_t io, int64_t ia, int64_t ib) {
                                        Assign(o[io], req[0], T(Op::F(C(a[ia]), C(b[ib]))));
                                      });
    });
  }

  // Each input's gradient sums the output gradient over the axes it was broadcast along.
  void Backward(const mxplug::OpContext&, const std::vector<TBlob>& out_grad,
                const std::vector<TBlob>& in_data, const std::vector<TBlob>& out_data,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& in_grad,
                const std::vector<TBlob>&) override {
    const TShape& os = out_grad[0].shape_;
    mxplug::TypeSwitch(out_grad[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      using C = ComputeType<T>;
      const T* og = out_grad[0].dptr<T>();
      const T* a = Op::kReadsInputs ? in_data[0].dptr<T>() : nullptr;
      const T* b = Op::kReadsInputs ? in_data[1].dptr<T>() : nullptr;
      const T* y = Op::kReadsInputs ? out_data[0].dptr<T>() : nullptr;
      T* ga = req[0] != mxplug::kNullOp ? in_grad[0].dptr<T>() : nullptr;
      T* gb = req[1] != mxplug::kNullOp ? in_grad[1].dptr<T>() : nullptr;
      const bool same = in_grad[0].shape_ == os && in_grad[1].shape_ == os;
      if (same) {
        ForRange(out_grad[0].Size(), [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) {
            const C g = C(og[i]);  // read first: ga may share og's memory
            const C av = a ? C(a[i]) : C(0), bv = b ? C(b[i]) : C(0), yv = y ? C(y[i]) : C(0);
            if (gb) Assign(gb[i], req[1], T(g * Op::DB(av, bv, yv)));
            if (ga) Assign(ga[i], req[0], T(g * Op::DA(av, bv, yv)));
          }
        });
        return;
      }
      // Accumulate in the compute type, then write with the request.
      std::vector<C> acc_a(ga ? in_grad[0].Size() : 0), acc_b(gb ? in_grad[1].Size() : 0);
      mxplug_tensor::ForEachBroadcast(os, mxplug_tensor::BroadcastStrides(in_grad[0].shape_, os),
                                      mxplug_tensor::BroadcastStrides(in_grad[1].shape_, os),
                                      [&](int64_t io, int64_t ia, int64_t ib) {
                                        const C g = C(og[io]);
                                        const C av = a ? C(a[ia]) : C(0), bv = b ? C(b[ib]) : C(0),
                                                yv = y ? C(y[io]) : C(0);
                                        if (ga) acc_a[ia] += g * Op::DA(av, bv, yv);
                                        if (gb) acc_b[ib] += g * Op::DB(av, bv, yv);
                                      });
      for (size_t i = 0; i < acc_a.size(); ++i) Assign(ga[i], req[0], T(acc_a[i]));
      for (size_t i = 0; i < acc_b.size(); ++i) Assign(gb[i], req[1], T(acc_b[i]));
    });
  }
};

[[maybe_unused]] const bool registered = [] {
  mxplug_tensor::ElementwiseKernels<TeamLoop, BinaryCpu>{kDLCPU}.RegisterAll();
  return true;
}();

}  // namespace
