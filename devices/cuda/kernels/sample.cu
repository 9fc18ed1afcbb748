// GPU kernels of the samplers (_random_<x>, _random_<x>_like, _sample_<x>, _sample_multinomial):
// the definition header's element functions (plugins/random/sample.h), one thread per element,
// each computing its own Philox draws, so a GPU samples the CPU's numbers for the same seed. And
// _shuffle: the host draws the CPU's permutation, the device moves the rows; and
// _sample_unique_zipfian: the host draws the CPU's rows, which are copied to the device.
#include "launch.cuh"
#include "random/sample.h"

namespace mxplug_cuda {
namespace {

/*! \brief The permutation copied into the op's temp space on the call's stream. The copy is from
 * pageable memory, which the runtime stages before it returns, so `perm` may go at once. */
struct DevicePermutation {
  static const int64_t* Upload(const mxplug::OpContext& ctx, const std::vector<int64_t>& perm) {
    int64_t* device =
        ctx.resource(mxplug::ResourceRequest::kTempSpace).get_space_typed<int64_t>(perm.size());
    Check(cudaMemcpyAsync(device, perm.data(), perm.size() * sizeof(int64_t),
                          cudaMemcpyHostToDevice, StreamOf(ctx)),
          "cudaMemcpyAsync of _shuffle's permutation");
    return device;
  }
};

/*! \brief _sample_unique_zipfian's rows, drawn on the host, copied into the output on the call's
 * stream (from pageable memory, staged before the call returns, as above). */
struct DeviceStore {
  static void Store(const mxplug::OpContext& ctx, const std::vector<int64_t>& v, int64_t* out) {
    Check(cudaMemcpyAsync(out, v.data(), v.size() * sizeof(int64_t), cudaMemcpyHostToDevice,
                          StreamOf(ctx)),
          "cudaMemcpyAsync of _sample_unique_zipfian's samples");
  }
};

[[maybe_unused]] const bool registered = [] {
  mxplug_random::ForEachSampler(mxplug_random::SamplerKernels<CudaLoop>{kGpuDevice});
  mxplug_random::RegisterShuffleKernel<CudaLoop, DevicePermutation>(kGpuDevice);
  mxplug_random::RegisterUniqueZipfianKernel<DeviceStore>(kGpuDevice);
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
