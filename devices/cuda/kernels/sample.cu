// CUDA kernels of the samplers (_random_uniform, _random_normal, _random_randint,
// _sample_multinomial): the definition header's element functions (plugins/random/sample.h), one
// thread per element, each computing its own Philox draws, so a GPU samples the CPU's numbers for
// the same seed.
#include "launch.cuh"
#include "random/sample.h"

namespace mxplug_cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
  mxplug_random::ForEachSampler(mxplug_random::SamplerKernels<CudaLoop>{kGpuDevice});
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
