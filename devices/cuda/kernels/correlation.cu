// GPU kernel of Correlation (plugins/nn/correlation.h): a thread per output element forward, a
// thread per input element backward.
#include "launch.cuh"
#include "nn/correlation.h"

namespace mxplug_cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
  mxplug_nn::RegisterCorrelationKernels<CudaLoop>(kGpuDevice);
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
