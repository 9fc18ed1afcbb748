// The CPU kernels of the elementwise ops (definitions in unary.h and binary.h): BinaryCpu runs
// the ops of two arrays; the maps (unary, scalar, clip) run on TeamLoop, CpuLoop's loop split
// across an OpenMP team for large arrays.
#include <omp.h>
#if defined(__x86_64__)
#include <dlfcn.h>
#include <immintrin.h>
#endif

#include <type_traits>
#include <vector>

#include "elementwise_kernels.h"

// `omp simd` asks for vectorized loops; a map whose function has no vector form (lgamma, the
// C library's scalar calls) stays a scalar loop, which clang reports once per op and type.
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wpass-failed"
#endif

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

// Note [Vector math]
// The float32 maps of exp, log, sigmoid, tanh and the other functions of the C library below are
// computed 8 elements at a time by glibc's vector math library (libmvec's AVX2 variants,
// _ZGVdN8v_expf and so on), as PyTorch's are by SLEEF: the scalar expf, one element at a time,
// took 2.96x PyTorch's time on 16M floats (docs/performance.md), 17.1 ms against 21.7 on libmvec.
// The functions are looked up at run time (dlsym in libmvec.so.1): most came with glibc 2.35, and
// a plugin linked against them would not load on an older glibc (RHEL 9 has 2.34); where one is
// missing, and without AVX2, for the tail of a range and in float64, the scalar loop runs.
// libmvec's results are within 4 ulp of the exact ones (the gtest
// Ops.Float32VectorMathIsWithinFourUlpAndKeepsSpecialValues measures each against double) and
// keep the special values (inf, NaN, overflow to inf, underflow to 0). sigmoid is
// 1 / (1 + exp(-x)) on the vector exp, as its scalar form.
#if defined(__x86_64__)
using VectorFn = __m256 (*)(__m256);

// libmvec's AVX2 variant of a float function (its vector ABI name), or null.
VectorFn LibmvecFunction(const char* name) {
  if (!__builtin_cpu_supports("avx2")) return nullptr;
  static void* const lib = dlopen("libmvec.so.1", RTLD_NOW | RTLD_LOCAL);
  return lib ? reinterpret_cast<VectorFn>(dlsym(lib, name)) : nullptr;
}

// The libmvec function of a unary op's float32 forward (none: the scalar loop).
template <class Op>
constexpr const char* kLibmvecName = nullptr;
#define MXPLUG_LIBMVEC(Op, function) \
  template <>                        \
  constexpr const char* kLibmvecName<mxplug_tensor::Op> = "_ZGVdN8v_" #function;
MXPLUG_LIBMVEC(Exp, expf)
MXPLUG_LIBMVEC(Sigmoid, expf)  // 1 / (1 + exp(-x))
MXPLUG_LIBMVEC(Log, logf)
MXPLUG_LIBMVEC(Log2, log2f)
MXPLUG_LIBMVEC(Log10, log10f)
MXPLUG_LIBMVEC(Log1p, log1pf)
MXPLUG_LIBMVEC(Expm1, expm1f)
MXPLUG_LIBMVEC(Sin, sinf)
MXPLUG_LIBMVEC(Cos, cosf)
MXPLUG_LIBMVEC(Tan, tanf)
MXPLUG_LIBMVEC(Arcsin, asinf)
MXPLUG_LIBMVEC(Arccos, acosf)
MXPLUG_LIBMVEC(Arctan, atanf)
MXPLUG_LIBMVEC(Sinh, sinhf)
MXPLUG_LIBMVEC(Cosh, coshf)
MXPLUG_LIBMVEC(Tanh, tanhf)
MXPLUG_LIBMVEC(Arcsinh, asinhf)
MXPLUG_LIBMVEC(Arccosh, acoshf)
MXPLUG_LIBMVEC(Arctanh, atanhf)
MXPLUG_LIBMVEC(Cbrt, cbrtf)
MXPLUG_LIBMVEC(Erf, erff)
#undef MXPLUG_LIBMVEC

// y = fn(x) (kSigmoid: 1 / (1 + fn(-x))), or y += it, over whole vectors of 8 from the start of
// [0, n); returns how many elements it computed.
template <bool kSigmoid>
__attribute__((target("avx2"))) int64_t MapAvx2(VectorFn fn, const float* x, float* y, int64_t n,
                                                bool add) {
  const __m256 one = _mm256_set1_ps(1.0f), sign = _mm256_set1_ps(-0.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_loadu_ps(x + i);
    if constexpr (kSigmoid) {
      v = _mm256_div_ps(one, _mm256_add_ps(one, fn(_mm256_xor_ps(v, sign))));
    } else {
      v = fn(v);
    }
    if (add) v = _mm256_add_ps(v, _mm256_loadu_ps(y + i));
    _mm256_storeu_ps(y + i, v);
  }
  return i;
}
#endif

#if defined(__x86_64__)
// floor, ceil, trunc and rint in float32 on SSE4.1's roundps, 4 elements at a time: exact, as
// the C library's functions, which x86-64's baseline (SSE2) makes calls per element (floor of 16M
// floats: 18.3 ms against PyTorch's 7.6). rint rounds in the current mode, as nearbyint.
template <class Op>
constexpr int kRoundMode = -1;
template <>
constexpr int kRoundMode<mxplug_tensor::Floor> = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
template <>
constexpr int kRoundMode<mxplug_tensor::Ceil> = _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC;
template <>
constexpr int kRoundMode<mxplug_tensor::Trunc> = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;
template <>
constexpr int kRoundMode<mxplug_tensor::Rint> = _MM_FROUND_CUR_DIRECTION | _MM_FROUND_NO_EXC;

// y = round(x) (or y += it) over whole vectors of 4 from the start of [0, n); returns how many
// elements it computed.
template <int kMode>
__attribute__((target("sse4.1"))) int64_t RoundSse41(const float* x, float* y, int64_t n,
                                                     bool add) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    __m128 v = _mm_round_ps(_mm_loadu_ps(x + i), kMode);
    if (add) v = _mm_add_ps(v, _mm_loadu_ps(y + i));
    _mm_storeu_ps(y + i, v);
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
    Each(n, f);
  }
  // A map's forward and gradient (unary, scalar and clip ops).
  template <class Map, class T>
  static void Run(const mxplug::OpContext&, int64_t n, const mxplug_tensor::MapForward<Map, T>& f) {
    Forward(f, 0, n);
  }
  template <class Map, class T>
  static void Run(const mxplug::OpContext&, int64_t n,
                  const mxplug_tensor::MapBackward<Map, T>& f) {
    // The kernel passes x and y exactly when the map reads them (elementwise_kernels.h).
    using C = typename Map::template Compute<T>;
    const Map& map = f.map;
    const T *og = f.og, *x = f.x, *y = f.y;
    T* grad = f.grad;
    if (f.req == mxplug::kNullOp) return;
    const bool add = f.req == mxplug::kAddTo;
    ForRange(n, [&](int64_t b, int64_t e) {
      Store<C>(grad, add, b, e, [&](int64_t i) {
        return map.Grad(static_cast<C>(og[i]), Map::kReadsX ? static_cast<C>(x[i]) : C(0),
                        Map::kReadsY ? static_cast<C>(y[i]) : C(0));
      });
    });
  }
#if defined(__x86_64__)
  // A unary op's float32 forward: on libmvec where it has the function (Note [Vector math]),
  // on SSE4.1's rounding for floor, ceil, trunc and rint.
  template <class Op, bool kNoGrad>
  static void Run(const mxplug::OpContext&, int64_t n,
                  const mxplug_tensor::MapForward<mxplug_tensor::UnaryMap<Op, kNoGrad>, float>& f) {
    if constexpr (kRoundMode<Op> >= 0) {
      static const bool sse41 = __builtin_cpu_supports("sse4.1");
      VectorsThenScalar(f, n, [](const float* x, float* y, int64_t m, bool add) {
        return sse41 ? RoundSse41<kRoundMode<Op>>(x, y, m, add) : 0;
      });
    } else if constexpr (kLibmvecName<Op> == nullptr) {
      Forward(f, 0, n);
    } else {
      static const VectorFn fn = LibmvecFunction(kLibmvecName<Op>);
      constexpr bool kSigmoid = std::is_same_v<Op, mxplug_tensor::Sigmoid>;
      VectorsThenScalar(f, n, [](const float* x, float* y, int64_t m, bool add) {
        return fn ? MapAvx2<kSigmoid>(fn, x, y, m, add) : 0;
      });
    }
  }

  // f over [0, n), split over the team when large: vectors(x, y, count, add) computes the whole
  // vectors at the start of each range and returns how many elements it did; the rest is scalar.
  template <class Map, class Vectors>
  static void VectorsThenScalar(const mxplug_tensor::MapForward<Map, float>& f, int64_t n,
                                const Vectors& vectors) {
    const bool add = f.req == mxplug::kAddTo;
    ForRange(n, [&](int64_t begin, int64_t end) {
      Forward(f, begin + vectors(f.x + begin, f.out + begin, end - begin, add), end);
    });
  }
#endif

 private:
  // f over [begin, end), split over the team when large. The request is read once, not per
  // element as f(i) reads it, so that the compiler vectorizes the loop (abs of 16M floats with
  // random signs: 67 ms element by element, a branch mispredicted on every other one).
  template <class Map, class T>
  static void Forward(const mxplug_tensor::MapForward<Map, T>& f, int64_t begin, int64_t end) {
    using C = typename Map::template Compute<T>;
    const Map& map = f.map;
    const T* x = f.x;
    T* out = f.out;
    if (f.req == mxplug::kNullOp) return;
    const bool add = f.req == mxplug::kAddTo;
    ForRange(end - begin, [&](int64_t b, int64_t e) {
      Store<C>(out, add, begin + b, begin + e,
               [&](int64_t i) { return map(static_cast<C>(x[i])); });
    });
  }

  // out[i] = value(i) (add: out[i] += it, in C) over [b, e), vectorized where value allows.
  template <class C, class T, class Value>
  static void Store(T* out, bool add, int64_t b, int64_t e, const Value& value) {
    if (add) {
#pragma omp simd
      for (int64_t i = b; i < e; ++i) out[i] = static_cast<T>(static_cast<C>(out[i]) + value(i));
    } else {
#pragma omp simd
      for (int64_t i = b; i < e; ++i) out[i] = static_cast<T>(value(i));
    }
  }

  template <typename F>
  static void Each(int64_t n, const F& f) {
    ForRange(n, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) f(i);
    });
  }
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
