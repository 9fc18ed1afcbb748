// GPU kernel of khatri_rao: the per-element product of its definition header
// (plugins/nn/khatri_rao.h), one thread per output element.
#include "launch.cuh"
#include "nn/khatri_rao.h"

namespace mxplug_cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
  mxplug_nn::RegisterKhatriRaoKernel<CudaLoop>(kGpuDevice);
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
