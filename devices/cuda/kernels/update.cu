// CUDA kernels of the optimizer updates (sgd_update, adam_update...) and the aggregated ones
// (multi_sgd_update...): each rule's step is the one in the definition headers
// (plugins/optimizer/update.h, multi_update.h), run one thread per element; the sums of squares
// add a chunk per thread atomically.
#include "atomic.cuh"
#include "launch.cuh"
#include "optimizer/multi_update.h"
#include "optimizer/update.h"

namespace mxplug_cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
  mxplug_optimizer::UpdateKernels<CudaLoop>{kGpuDevice}.RegisterAll();
  mxplug_optimizer::MultiUpdateKernels<CudaAddLoop>{kGpuDevice}.RegisterAll();
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
