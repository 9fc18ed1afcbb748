// CUDA kernels of the optimizer updates (sgd_update, adam_update...): each rule's step is the
// one in the definition header (plugins/optimizer/update.h), run one thread per element.
#include "launch.cuh"
#include "optimizer/update.h"

namespace mxplug_cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
  mxplug_optimizer::UpdateKernels<CudaLoop>{kGpuDevice}.RegisterAll();
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
