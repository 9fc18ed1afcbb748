// Reductions on the device, shared by the reduction ops (reduce.cu) and the gradients of
// broadcasting ops (elementwise.cu): ReduceIndex maps (output j, reduced element r) to an element
// of the reduced array, and ReduceEach reduces every output's elements with a Reducer's Merge
// (plugins/tensor/reduce.h). The order of the merges depends only on the shapes, never on timing,
// so results are the same from run to run.
#ifndef MXPLUG_DEVICES_CUDA_KERNELS_REDUCE_CUH_
#define MXPLUG_DEVICES_CUDA_KERNELS_REDUCE_CUH_

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "launch.cuh"

namespace mxplug_cuda {

/*! \brief An array of some shape split into the axes kept (one output each) and the axes reduced,
 * adjacent axes of the same kind merged and size-1 axes dropped. Passed to kernels by value. */
struct ReduceIndex {
  int64_t n_out = 1;  // outputs: the product of the kept extents
  int64_t count = 1;  // elements reduced into each output
  int nkept = 0, nreduced = 0;
  int64_t kept_extent[kMaxDims] = {}, kept_stride[kMaxDims] = {};
  int64_t reduced_extent[kMaxDims] = {}, reduced_stride[kMaxDims] = {};

  /*! \brief The element where output j's elements start. */
  __device__ int64_t KeptOffset(int64_t j) const {
    return Offset(j, nkept, kept_extent, kept_stride);
  }
  /*! \brief The offset of an output's r-th reduced element from where its elements start. */
  __device__ int64_t ReducedOffset(int64_t r) const {
    return Offset(r, nreduced, reduced_extent, reduced_stride);
  }
  /*! \brief Whether consecutive reduced elements are adjacent in memory. */
  bool Contiguous() const { return nreduced > 0 && reduced_stride[nreduced - 1] == 1; }

 private:
  __device__ static int64_t Offset(int64_t k, int n, const int64_t* extent, const int64_t* stride) {
    if (n == 1) return k * stride[0];
    int64_t off = 0;
    for (int d = n - 1; d >= 0; --d) {
      off += (k % extent[d]) * stride[d];
      k /= extent[d];
    }
    return off;
  }
};

/*! \brief The index of a row-major array of shape `shape` reduced along the axes marked in
 * `reduced`. \throws std::invalid_argument past kMaxDims kept or reduced axes (after merging). */
inline ReduceIndex MakeReduceIndex(const mxplug::TShape& shape, const std::vector<bool>& reduced) {
  ReduceIndex ix;
  std::vector<int64_t> stride(shape.ndim());
  int64_t s = 1;
  for (int d = shape.ndim() - 1; d >= 0; --d) stride[d] = s, s *= shape[d];
  int last = -1;  // kind of the previous axis kept in the lists: 0 kept, 1 reduced
  for (int d = 0; d < shape.ndim(); ++d) {
    if (shape[d] == 1) continue;  // adds nothing to either side, and lets its neighbours merge
    const int kind = reduced[d] ? 1 : 0;
    int& n = kind ? ix.nreduced : ix.nkept;
    int64_t* extent = kind ? ix.reduced_extent : ix.kept_extent;
    int64_t* st = kind ? ix.reduced_stride : ix.kept_stride;
    (kind ? ix.count : ix.n_out) *= shape[d];
    if (kind == last) {  // row-major: the previous axis of this kind is just outside this one
      extent[n - 1] *= shape[d];
      st[n - 1] = stride[d];
      continue;
    }
    if (n == kMaxDims)
      throw std::invalid_argument(std::string("reducing on ") + kGpuName + " supports up to " +
                                  std::to_string(kMaxDims) +
                                  " separate kept or reduced axes; shape " + shape.ToString());
    extent[n] = shape[d], st[n] = stride[d], ++n;
    last = kind;
  }
  return ix;
}

template <class R, class A, class Load, class Out>
__global__ void ReduceThreadPerOutput(ReduceIndex ix, A init, Load load, Out out) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < ix.n_out;
       j += step) {
    const int64_t base = ix.KeptOffset(j);
    A acc = init;
    for (int64_t r = 0; r < ix.count; ++r) R::Merge(acc, load(j, base + ix.ReducedOffset(r)));
    out(j, acc);
  }
}

template <class R, class A, class Load, class Out>
__global__ void ReduceBlockPerOutput(ReduceIndex ix, A init, Load load, Out out) {
  extern __shared__ __align__(16) unsigned char shared[];
  A* partial = reinterpret_cast<A*>(shared);
  for (int64_t j = blockIdx.x; j < ix.n_out; j += gridDim.x) {
    const int64_t base = ix.KeptOffset(j);
    A acc = init;
    for (int64_t r = threadIdx.x; r < ix.count; r += blockDim.x)
      R::Merge(acc, load(j, base + ix.ReducedOffset(r)));
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {  // a fixed tree: deterministic
      if (threadIdx.x < s) R::Merge(partial[threadIdx.x], partial[threadIdx.x + s]);
      __syncthreads();
    }
    if (threadIdx.x == 0) out(j, partial[0]);
    __syncthreads();  // partial is reused by the next output
  }
}

/*! \brief For every output j of `ix`: acc = init, R::Merge(acc, load(j, i)) over the elements i
 * that reduce into j, then out(j, acc). A block of threads shares an output when its elements
 * are many and adjacent (or the outputs are few); otherwise each thread takes an output, so that
 * neighbouring threads read neighbouring memory. */
template <class R, class A, class Load, class Out>
void ReduceEach(const ReduceIndex& ix, A init, cudaStream_t stream, const Load& load,
                const Out& out) {
  if (ix.n_out <= 0) return;
  const bool block_per_output = ix.count >= 128 && (ix.Contiguous() || ix.n_out < 8192);
  if (block_per_output) {
    const int64_t blocks = std::min<int64_t>(ix.n_out, kMaxBlocks);
    ReduceBlockPerOutput<R>
        <<<static_cast<unsigned>(blocks), kThreads, kThreads * sizeof(A), stream>>>(ix, init, load,
                                                                                    out);
  } else {
    const int64_t blocks = std::min<int64_t>((ix.n_out + kThreads - 1) / kThreads, kMaxBlocks);
    ReduceThreadPerOutput<R>
        <<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(ix, init, load, out);
  }
  Check(cudaGetLastError(), ("launching a reduction of " + std::to_string(ix.count) +
                             " elements into each of " + std::to_string(ix.n_out) + " outputs")
                                .c_str());
}

/*! \brief ReduceEach's load of element i of an array, in its compute type. */
template <class T>
struct LoadElement {
  const T* in;
  __device__ mxplug::ComputeType<T> operator()(int64_t, int64_t i) const {
    return static_cast<mxplug::ComputeType<T>>(in[i]);
  }
};

/*! \brief ReduceEach's store of output j, written as req says. */
template <class T>
struct StoreReduced {
  T* out;
  int req;
  __device__ void operator()(int64_t j, mxplug::ComputeType<T> acc) const {
    mxplug::StoreAs<mxplug::ComputeType<T>>(out[j], req, acc);
  }
};

}  // namespace mxplug_cuda

#endif  // MXPLUG_DEVICES_CUDA_KERNELS_REDUCE_CUH_
