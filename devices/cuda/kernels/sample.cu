// GPU kernels of the samplers (_random_uniform, _random_normal, _random_randint,
// _sample_multinomial): the definition header's element functions (plugins/random/sample.h), one
// thread per element, each computing its own Philox draws, so a GPU samples the CPU's numbers for
// the same seed. And _shuffle: the host draws the CPU's permutation, the device moves the rows.
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

[[maybe_unused]] const bool registered = [] {
  mxplug_random::ForEachSampler(mxplug_random::SamplerKernels<CudaLoop>{kGpuDevice});
  mxplug_random::RegisterShuffleKernel<CudaLoop, DevicePermutation>(kGpuDevice);
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
