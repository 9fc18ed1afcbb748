// CUDA primitives of the layout ops' kernels (Reshape, transpose, slice, take, broadcast_to...).
// The kernels themselves, what each op gathers, scatters or sums, are written once in the ops'
// definition headers (plugins/tensor/shape.h, and join.h for concat, split, tile, repeat, flip...);
// this file gives them CudaLayout and registers them.

#include <map>
#include <string>
#include <vector>

#include "atomic.cuh"
#include "launch.cuh"
#include "reduce.cuh"
#include "tensor/join.h"
#include "tensor/reduce.h"
#include "tensor/shape.h"

namespace mxplug_cuda {
namespace {

using mxplug::ComputeType;
using mxplug::OpContext;
using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;
using mxplug_tensor::StridedWalk;

/*! \brief A StridedWalk passed to kernels by value. */
struct DeviceWalk {
  int ndim = 0;
  int64_t shape[kMaxDims] = {}, stride[kMaxDims] = {};
  int64_t offset = 0;
  /*! \brief The element of the walked array that element o of the walk's shape is. */
  __device__ int64_t At(int64_t o) const {
    int64_t i = offset;
    for (int d = ndim - 1; d >= 0; --d) {
      i += (o % shape[d]) * stride[d];
      o /= shape[d];
    }
    return i;
  }
};

DeviceWalk ToDevice(const StridedWalk& walk) {
  const StridedWalk w = mxplug_tensor::Simplified(walk);
  if (w.shape.ndim() > kMaxDims)
    throw std::invalid_argument(std::string("layout ops on ") + kGpuName + " support up to " +
                                std::to_string(kMaxDims) + " axes, not " +
                                std::to_string(w.shape.ndim()));
  DeviceWalk d;
  d.ndim = w.shape.ndim();
  for (int i = 0; i < d.ndim; ++i) d.shape[i] = w.shape[i], d.stride[i] = w.stride[i];
  d.offset = w.offset;
  return d;
}

// dst[o] = src[walk(o)] (a gather), or dst[walk(o)] = src[o] (kScatter), as req says.
template <class T, bool kScatter>
struct MoveElements {
  DeviceWalk w;
  const T* src;
  T* dst;
  int req;
  __device__ void operator()(int64_t o) const {
    const int64_t i = w.At(o);
    mxplug::StoreAs<ComputeType<T>>(dst[kScatter ? i : o], req,
                                    static_cast<ComputeType<T>>(src[kScatter ? o : i]));
  }
};

template <bool kScatter>
void Move(const OpContext& ctx, const StridedWalk& w, const TBlob& src, const TBlob& dst,
          OpReqType req) {
  if (req == mxplug::kNullOp) return;
  mxplug::TypeSwitch(src.type_flag_, [&](auto zero) {
    using T = decltype(zero);
    ForEach(w.shape.Size(), StreamOf(ctx),
            MoveElements<T, kScatter>{ToDevice(w), src.dptr<T>(), dst.dptr<T>(), req});
  });
}

template <class T>
struct FillElements {
  DeviceWalk w;
  T value;
  T* dst;
  __device__ void operator()(int64_t o) const { dst[w.At(o)] = value; }
};

/*! \brief A slice's region passed to kernels by value (InRegion's arguments). */
struct DeviceRegion {
  int ndim = 0;
  int64_t full[kMaxDims] = {}, start[kMaxDims] = {}, step[kMaxDims] = {}, len[kMaxDims] = {};
};

DeviceRegion ToDevice(const mxplug_tensor::Region& r, const TShape& full) {
  if (full.ndim() > kMaxDims)
    throw std::invalid_argument(std::string("slices on ") + kGpuName + " support up to " +
                                std::to_string(kMaxDims) + " axes, not " +
                                std::to_string(full.ndim()));
  DeviceRegion d;
  d.ndim = full.ndim();
  for (int i = 0; i < d.ndim; ++i)
    d.full[i] = full[i], d.start[i] = r.start[i], d.step[i] = r.step[i], d.len[i] = r.shape[i];
  return d;
}

template <class T>
struct CopyOutsideElements {
  DeviceRegion r;
  const T* src;
  T* dst;
  int req;
  __device__ void operator()(int64_t i) const {
    using C = ComputeType<T>;
    const bool in = mxplug_tensor::InRegion(i, r.ndim, r.full, r.start, r.step, r.len);
    mxplug::StoreAs<C>(dst[i], req, in ? C(0) : static_cast<C>(src[i]));
  }
};

template <class T>
struct AddElements {
  const T* src;
  T* dst;
  __device__ void operator()(int64_t i) const {
    mxplug::StoreAs<ComputeType<T>>(dst[i], mxplug::kAddTo, static_cast<ComputeType<T>>(src[i]));
  }
};

using mxplug_tensor::TakeGeometry;

// take's mode 'raise', as MXNet's GPU kernel does it: a kernel finds the first index out of
// [-n, n), the host reads back where it is (the stream waits for it), and the op fails with the
// CPU's message; valid negative indices then count from the end, which is mode 'wrap' on them.
template <class I>
struct FirstOutOfRange {
  const I* idx;
  int64_t n;
  unsigned long long* first;  // the smallest position whose index is out of range
  __device__ void operator()(int64_t j) const {
    const int64_t k = mxplug_tensor::IndexValue(idx[j]);
    if (k < -n || k >= n) atomicMin(first, static_cast<unsigned long long>(j));
  }
};

void CheckIndicesInRange(const TBlob& idx, int64_t n, int axis, cudaStream_t stream) {
  // One word per engine worker thread and device: the thread waits for it before reusing it.
  thread_local std::map<int, unsigned long long*> words;
  int dev = 0;
  Check(cudaGetDevice(&dev), "cudaGetDevice");
  unsigned long long*& first = words[dev];
  if (!first) Check(cudaMalloc(&first, sizeof(*first)), "take: cudaMalloc");
  const unsigned long long none = idx.Size();
  Check(cudaMemcpyAsync(first, &none, sizeof(none), cudaMemcpyHostToDevice, stream),
        "take: checking the indices");
  mxplug::TypeSwitch(idx.type_flag_, [&](auto zero) {
    using I = decltype(zero);
    ForEach(idx.Size(), stream, FirstOutOfRange<I>{idx.dptr<I>(), n, first});
  });
  unsigned long long at = none;
  Check(cudaMemcpyAsync(&at, first, sizeof(at), cudaMemcpyDeviceToHost, stream),
        "take: checking the indices");
  Check(cudaStreamSynchronize(stream), "take: checking the indices");
  if (at == none) return;
  mxplug::TypeSwitch(idx.type_flag_, [&](auto zero) {
    using I = decltype(zero);
    I bad{};
    Check(cudaMemcpy(&bad, idx.dptr<I>() + at, sizeof(I), cudaMemcpyDeviceToHost),
          "take: reading the index out of range");
    mxplug_tensor::ResolveIndex(mxplug_tensor::IndexValue(bad), n, mxplug_tensor::kIndexRaise,
                                axis);  // throws the CPU's std::out_of_range
  });
}

TakeGeometry MakeTakeGeometry(const TShape& a, const TBlob& idx, int axis, int mode,
                              cudaStream_t stream) {
  if (mode == mxplug_tensor::kIndexRaise) {
    CheckIndicesInRange(idx, a[axis], axis, stream);
    mode = mxplug_tensor::kIndexWrap;
  }
  return TakeGeometry{a[axis], a.ProdShape(axis + 1, a.ndim()), idx.Size(), mode};
}

template <class T, class I>
struct TakeGradElements {
  TakeGeometry geo;
  const T* og;
  const I* idx;
  T* grad;
  __device__ void operator()(int64_t o) const { AtomicAdd(&grad[geo.Source(o, idx)], og[o]); }
};

struct CudaLayout {
  static void Copy(const OpContext& ctx, const TBlob& src, const TBlob& dst, OpReqType req) {
    if (req == mxplug::kNullOp || src.Size() == 0) return;
    if (req == mxplug::kAddTo) {
      mxplug::TypeSwitch(src.type_flag_, [&](auto zero) {
        using T = decltype(zero);
        ForEach(src.Size(), StreamOf(ctx), AddElements<T>{src.dptr<T>(), dst.dptr<T>()});
      });
      return;
    }
    if (src.dptr_ == dst.dptr_) return;  // in place: already there
    Check(cudaMemcpyAsync(dst.dptr_, src.dptr_, src.Size() * mxplug::DTypeSize(src.type_flag_),
                          cudaMemcpyDeviceToDevice, StreamOf(ctx)),
          "copying an array");
  }
  static void Zero(const OpContext& ctx, const TBlob& dst, OpReqType req) {
    ZeroGradient(dst, req, StreamOf(ctx));
  }
  static void Gather(const OpContext& ctx, const StridedWalk& w, const TBlob& src, const TBlob& dst,
                     OpReqType req) {
    Move<false>(ctx, w, src, dst, req);
  }
  static void Scatter(const OpContext& ctx, const StridedWalk& w, const TBlob& src,
                      const TBlob& dst, OpReqType req) {
    Move<true>(ctx, w, src, dst, req);
  }
  static void Fill(const OpContext& ctx, const StridedWalk& w, double value, const TBlob& dst) {
    mxplug::TypeSwitch(dst.type_flag_, [&](auto zero) {
      using T = decltype(zero);
      const T v = static_cast<T>(static_cast<ComputeType<T>>(value));
      ForEach(w.shape.Size(), StreamOf(ctx), FillElements<T>{ToDevice(w), v, dst.dptr<T>()});
    });
  }
  static void CopyOutside(const OpContext& ctx, const mxplug_tensor::Region& r, const TBlob& src,
                          const TBlob& dst, OpReqType req) {
    if (req == mxplug::kNullOp) return;
    const DeviceRegion region = ToDevice(r, dst.shape_);
    mxplug::TypeSwitch(src.type_flag_, [&](auto zero) {
      using T = decltype(zero);
      ForEach(dst.Size(), StreamOf(ctx),
              CopyOutsideElements<T>{region, src.dptr<T>(), dst.dptr<T>(), req});
    });
  }
  static void SumBroadcast(const OpContext& ctx, const TBlob& src, const TBlob& dst,
                           OpReqType req) {
    if (req == mxplug::kNullOp) return;
    const TShape& os = src.shape_;
    std::vector<bool> reduced(os.ndim());
    for (int d = 0; d < os.ndim(); ++d) {
      const int j = dst.ndim() - os.ndim() + d;
      reduced[d] = (j < 0 || dst.shape_[j] == 1) && os[d] != 1;
    }
    mxplug::TypeSwitch(src.type_flag_, [&](auto zero) {
      using T = decltype(zero);
      ReduceEach<mxplug_tensor::Reducer<mxplug_tensor::ReduceKind::kSum>>(
          MakeReduceIndex(os, reduced), ComputeType<T>(0), StreamOf(ctx),
          LoadElement<T>{src.dptr<T>()}, StoreReduced<T>{dst.dptr<T>(), req});
    });
  }
  static void Take(const OpContext& ctx, const TBlob& a, const TBlob& idx, const TBlob& out,
                   OpReqType req, int axis, int mode) {
    if (req == mxplug::kNullOp) return;
    const TakeGeometry geo = MakeTakeGeometry(a.shape_, idx, axis, mode, StreamOf(ctx));
    mxplug_tensor::TypeSwitch2(a.type_flag_, idx.type_flag_, [&](auto zero, auto index_zero) {
      using T = decltype(zero);
      using I = decltype(index_zero);
      ForEach(out.Size(), StreamOf(ctx),
              mxplug_tensor::GatherByIndex<TakeGeometry, T, I>{geo, a.dptr<T>(), idx.dptr<I>(),
                                                               out.dptr<T>(), req});
    });
  }
  static void TakeGrad(const OpContext& ctx, const TBlob& og, const TBlob& idx, const TBlob& grad,
                       OpReqType req, int axis, int mode) {
    if (req == mxplug::kNullOp) return;
    const TakeGeometry geo = MakeTakeGeometry(grad.shape_, idx, axis, mode, StreamOf(ctx));
    ZeroGradient(grad, req, StreamOf(ctx));
    mxplug::TypeSwitch(og.type_flag_, [&](auto zero) {
      using T = decltype(zero);
      if constexpr (!kHasAtomicAdd<T>) {
        throw std::invalid_argument("take: the gradient of an " + mxplug::DTypeName(og.type_flag_) +
                                    " array is not available on " + kGpuName + " (no atomic add)");
      } else {
        mxplug::TypeSwitch(idx.type_flag_, [&](auto izero) {
          using I = decltype(izero);
          ForEach(og.Size(), StreamOf(ctx),
                  TakeGradElements<T, I>{geo, og.dptr<T>(), idx.dptr<I>(), grad.dptr<T>()});
        });
      }
    });
  }
};

[[maybe_unused]] const bool registered = [] {
  const mxplug_tensor::LayoutKernels<CudaLayout> kernels{kGpuDevice};
  mxplug_tensor::ForEachLayoutOp(kernels);
  mxplug_tensor::ForEachJoinOp(kernels);
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
