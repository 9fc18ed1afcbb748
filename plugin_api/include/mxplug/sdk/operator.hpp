/*!
 * \file mxplug/sdk/operator.hpp
 * \brief The kernel side of an op, as in the seeds: Operator::Forward / Backward over TBlobs,
 * with OpContext, RunContext, OpReqType and requested resources.
 */
#ifndef MXPLUG_SDK_OPERATOR_HPP_
#define MXPLUG_SDK_OPERATOR_HPP_

#include <cstdint>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "mxplug/abi/host.h"
#include "mxplug/abi/op.h"
#include "mxplug/sdk/context.hpp"
#include "mxplug/sdk/dtype.hpp"
#include "mxplug/sdk/random.hpp"
#include "mxplug/sdk/tshape.hpp"
#include "mxplug/sdk/xinline.hpp"

#if defined(__CUDACC__)
#include <cuda_fp16.h>
#elif defined(__HIPCC__)
#include <hip/hip_fp16.h>
#endif

namespace mxplug {

/*! \brief How an output is written. */
enum OpReqType {
  kNullOp = kMXPNullOp,
  kWriteTo = kMXPWriteTo,
  kWriteInplace = kMXPWriteInplace,
  kAddTo = kMXPAddTo
};

/*! \brief A resource an op asks for in ForwardResource / BackwardResource. */
struct ResourceRequest {
  enum Type { kRandom, kTempSpace };
  Type type;
  ResourceRequest(Type t) : type(t) {}  // NOLINT: implicit, as MXNet's
};

/*! \brief A granted resource. */
struct Resource {
  ResourceRequest::Type type = ResourceRequest::kTempSpace;
  const MXPResource* raw = nullptr;
  const MXPHostApi* host = nullptr;
  /*! \brief Scratch memory on the kernel's device, valid until the kernel call returns. */
  void* get_space(size_t bytes) const {
    void* ptr = nullptr;
    if (MXPStatus* status = host->temp_space(raw, bytes, &ptr)) {
      std::string msg = host->status_message(status);
      host->status_free(status);
      throw std::runtime_error(msg);
    }
    return ptr;
  }
  template <typename T>
  T* get_space_typed(size_t count) const {
    return static_cast<T*>(get_space(count * sizeof(T)));
  }
  /*!
   * \brief The next `draws` 32-bit values of the device's random stream (a kRandom resource).
   * Reserve what the call may use: rejection sampling needs an upper bound (see RandomStream).
   */
  RandomStream get_random(uint64_t draws) const {
    if (type != ResourceRequest::kRandom)
      throw std::logic_error("get_random on a resource that is not ResourceRequest::kRandom");
    if (!MXP_HAS_FIELD(host, MXPHostApi, random_philox))
      throw std::runtime_error("the host is too old for random resources (needs plugin ABI 1.1)");
    uint64_t key = 0, counter = 0;
    if (MXPStatus* status = host->random_philox(raw, (draws + 3) / 4, &key, &counter)) {
      std::string msg = host->status_message(status);
      host->status_free(status);
      throw std::runtime_error(msg);
    }
    return RandomStream(key, counter, draws);
  }
};

/*! \brief The state of one kernel call (the seeds: OpContext). */
struct OpContext {
  bool is_train = false;
  RunContext run_ctx;
  std::vector<Resource> requested;
  /*!
   * \brief Set for an asynchronous kernel (OpRegistration::add_kernel(device, KernelRun::kAsync)):
   * Forward or Backward starts the work and returns; the work calls this exactly once, from any
   * thread, when it has ended, with the exception it failed with or none. The tensors stay valid
   * until then. A Forward or Backward that throws has started nothing and must not call it.
   */
  std::function<void(std::exception_ptr)> async_on_complete;

  /*! \brief The requested resource of `type`. An op that asks for several kinds finds them here:
   * the host grants each kind once and in its own order, not the order ForwardResource listed. */
  const Resource& resource(ResourceRequest::Type type) const {
    for (const Resource& r : requested)
      if (r.type == type) return r;
    throw std::logic_error(std::string("the op did not request a ") +
                           (type == ResourceRequest::kRandom ? "random" : "temp space") +
                           " resource");
  }
};

#if defined(__CUDACC__) || defined(__HIPCC__)
/*! \brief In CUDA and HIP sources the float16 element type is the toolkit's __half, which device
 * code can compute with; it has the same IEEE binary16 layout as _Float16 below. */
using half_t = __half;
#define MXPLUG_HAVE_HALF 1
#elif defined(__FLT16_MANT_DIG__)
/*! \brief The float16 element type, where the compiler has one (GCC >= 12 and Clang >= 15 on
 * x86-64 and AArch64). Arithmetic on it is done in float by the compiler. */
using half_t = _Float16;
#define MXPLUG_HAVE_HALF 1
#endif

/*! \brief The type flag (MXPDType) of a C++ element type. */
template <typename T>
constexpr int DTypeFlag() {
  if constexpr (std::is_same_v<T, float>) return kMXPFloat32;
#if MXPLUG_HAVE_HALF
  else if constexpr (std::is_same_v<T, half_t>)
    return kMXPFloat16;
#endif
  else if constexpr (std::is_same_v<T, double>)
    return kMXPFloat64;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return kMXPUint8;
  else if constexpr (std::is_same_v<T, int8_t>)
    return kMXPInt8;
  else if constexpr (std::is_same_v<T, int32_t>)
    return kMXPInt32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return kMXPInt64;
  else if constexpr (std::is_same_v<T, int16_t>)
    return kMXPInt16;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return kMXPUint16;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return kMXPUint32;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return kMXPUint64;
  else
    return kMXPUnknownDType;
}

/*! \brief A compact tensor view over a DLTensor (MXNet's TBlob). */
class TBlob {
 public:
  TBlob() = default;
  explicit TBlob(const DLTensor& t)
      : dptr_(static_cast<char*>(t.data) + t.byte_offset),
        shape_(t.shape, t.shape + t.ndim),
        type_flag_(FromDLDataType(t.dtype)),
        dev_(t.device) {}

  /*!
   * \brief The data as T*; throws when T is not the blob's element type. An absent tensor (one
   * that DeclareBackwardDependency did not ask for) gives nullptr whatever T is.
   */
  template <typename T>
  T* dptr() const {
    if (dptr_ == nullptr) return nullptr;
    if (DTypeFlag<T>() != type_flag_)
      throw std::invalid_argument("tensor holds " + DTypeName(type_flag_) + ", not " +
                                  DTypeName(DTypeFlag<T>()));
    return static_cast<T*>(dptr_);
  }
  int64_t Size() const { return shape_.Size(); }
  int ndim() const { return shape_.ndim(); }

  void* dptr_ = nullptr;
  TShape shape_;
  int type_flag_ = kMXPUnknownDType;
  DLDevice dev_{kDLCPU, 0};
};

namespace detail {
// RealTypeSwitch and FloatTypeSwitch: the floating-point types, float16 among them or not.
template <bool kWithHalf, typename Fn>
void FloatingPointSwitch(int type_flag, const std::string& what, Fn&& fn) {
  switch (type_flag) {
    case kMXPFloat32:
      return (void)fn(float{});
    case kMXPFloat64:
      return (void)fn(double{});
#if MXPLUG_HAVE_HALF
    case kMXPFloat16:
      if constexpr (kWithHalf) return (void)fn(half_t{});
      break;
#endif
    default:
      break;
  }
  throw std::invalid_argument("dtype " + DTypeName(type_flag) + " is not supported" +
                              (what.empty() ? "" : " by " + what) + "; expected " +
                              (kWithHalf ? "float16, " : "") + "float32 or float64");
}
}  // namespace detail

/*!
 * \brief Calls `fn(T{})` with T the C++ type of a floating-point flag (float32 or float64).
 * \throws std::invalid_argument for other types (naming `what` when given; kernels pass ""
 * since the host already names the op).
 */
template <typename Fn>
void RealTypeSwitch(int type_flag, const std::string& what, Fn&& fn) {
  detail::FloatingPointSwitch<false>(type_flag, what, std::forward<Fn>(fn));
}

/*!
 * \brief Calls `fn(T{})` with T the C++ type of a floating-point flag: float32, float64 or float16
 * (half_t, where the compiler has it; compute in ComputeType<T>).
 * \throws std::invalid_argument for other types, as RealTypeSwitch.
 */
template <typename Fn>
void FloatTypeSwitch(int type_flag, const std::string& what, Fn&& fn) {
  detail::FloatingPointSwitch<true>(type_flag, what, std::forward<Fn>(fn));
}

/*!
 * \brief Calls `fn(T{})` with T the C++ type of any array dtype MXNet has: float32, float64,
 * float16 (where the compiler has it), uint8, int8, int32, int64, and bool (as uint8).
 */
template <typename Fn>
void TypeSwitch(int type_flag, Fn&& fn) {
  switch (type_flag) {
    case kMXPFloat32:
      fn(float{});
      break;
    case kMXPFloat64:
      fn(double{});
      break;
#if MXPLUG_HAVE_HALF
    case kMXPFloat16:
      fn(half_t{});
      break;
#endif
    case kMXPUint8:
      fn(uint8_t{});
      break;
    case kMXPInt8:
      fn(int8_t{});
      break;
    case kMXPInt32:
      fn(int32_t{});
      break;
    case kMXPInt64:
      fn(int64_t{});
      break;
    default:
      throw std::invalid_argument("dtype " + DTypeName(type_flag) + " is not supported");
  }
}

/*! \brief The type to compute T in: float for float16, T otherwise (integers stay exact). */
template <typename T>
using ComputeType =
    std::conditional_t<std::is_floating_point_v<T> || std::is_integral_v<T>, T, float>;

/*! \brief Writes `value`, computed in C, to `out` as `req` says (kNullOp: nothing; kAddTo:
 * accumulate in C, rounding once). The same on the host and in device code. */
template <typename C, typename T>
MXPLUG_XINLINE void StoreAs(T& out, int req, C value) {
  if (req == kAddTo)
    out = static_cast<T>(static_cast<C>(out) + value);
  else if (req != kNullOp)
    out = static_cast<T>(value);
}

/*! \brief Writes `value` to `out` as `req` says (kNullOp: nothing; kAddTo: accumulate in
 * ComputeType<T>, as HIP's __half has no host arithmetic). */
template <typename T>
inline void Assign(T& out, OpReqType req, T value) {
  if (req == kAddTo)
    out = static_cast<T>(static_cast<ComputeType<T>>(out) + static_cast<ComputeType<T>>(value));
  else if (req != kNullOp)
    out = value;
}

/*! \brief dst (op)= src element by element, any dtype, as `req` says (identity kernels). */
inline void AssignBlob(const TBlob& src, const TBlob& dst, OpReqType req) {
  if (req == kNullOp) return;
  TypeSwitch(src.type_flag_, [&](auto zero) {
    using T = decltype(zero);
    const T* s = src.dptr<T>();
    T* d = dst.dptr<T>();
    if (s == d && req != kAddTo) return;  // in place: already there
    for (int64_t i = 0; i < dst.Size(); ++i) Assign(d[i], req, s[i]);
  });
}

/*! \brief Element i of a blob of any dtype, as a double (indices, labels). */
inline double ValueAsDouble(const TBlob& blob, int64_t i) {
  double v = 0;
  TypeSwitch(blob.type_flag_,
             [&](auto zero) { v = static_cast<double>(blob.dptr<decltype(zero)>()[i]); });
  return v;
}

/*! \brief The gradient of an input that has none (indices, labels): zeros, as MXNet writes. */
inline void WriteZeroGradient(const TBlob& grad, OpReqType req) {
  if (req == kNullOp || req == kAddTo) return;
  TypeSwitch(grad.type_flag_, [&](auto zero) {
    using T = decltype(zero);
    T* d = grad.dptr<T>();
    for (int64_t i = 0; i < grad.Size(); ++i) d[i] = T(0);
  });
}

/*!
 * \brief The CPU's element loop, for kernels written once over a device's loop: Loop::Run(ctx, n,
 * f) calls f(i) for every i < n (f's call operator is MXPLUG_XINLINE), and Loop::Zero(ctx, grad,
 * req) writes a zero gradient. The CUDA plugin's CudaLoop runs a thread per element on the
 * call's stream. Kernels whose elements add into one place use Loop::AddTo(p, v) (atomic on a
 * GPU; here the elements run in turn) where Loop::CanAdd<T>() says the device can.
 */
struct CpuLoop {
  template <typename F>
  static void Run(const OpContext&, int64_t n, const F& f) {
    for (int64_t i = 0; i < n; ++i) f(i);
  }
  static void Zero(const OpContext&, const TBlob& grad, OpReqType req) {
    WriteZeroGradient(grad, req);
  }
  template <class T>
  static constexpr bool CanAdd() {
    return true;
  }
  template <class T>
  static void AddTo(T* p, T v) {
    using C = ComputeType<T>;
    *p = static_cast<T>(static_cast<C>(*p) + static_cast<C>(v));
  }
};

/*!
 * \brief An op's computation on one device (the seeds' Operator). Made by
 * OperatorProperty::CreateOperator or registered directly with MXPLUG_REGISTER_KERNEL.
 */
class Operator {
 public:
  virtual ~Operator() = default;
  virtual void Forward(const OpContext& ctx, const std::vector<TBlob>& in_data,
                       const std::vector<OpReqType>& req, const std::vector<TBlob>& out_data,
                       const std::vector<TBlob>& aux_states) = 0;
  /*! \brief Gradients of the inputs; the default says the op has none. */
  virtual void Backward(const OpContext& ctx, const std::vector<TBlob>& out_grad,
                        const std::vector<TBlob>& in_data, const std::vector<TBlob>& out_data,
                        const std::vector<OpReqType>& req, const std::vector<TBlob>& in_grad,
                        const std::vector<TBlob>& aux_states) {
    (void)ctx, (void)out_grad, (void)in_data, (void)out_data, (void)req, (void)in_grad,
        (void)aux_states;
    throw std::logic_error("this operator has no backward");
  }
};

}  // namespace mxplug

#endif  // MXPLUG_SDK_OPERATOR_HPP_
