// CUDA kernels of SequenceMask, SequenceLast and SequenceReverse: the definition header's element
// functions (plugins/tensor/sequence.h), one thread per element.
#include "launch.cuh"
#include "tensor/sequence.h"

namespace mxplug_cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
  mxplug_tensor::ForEachSequenceOp(mxplug_tensor::LayoutKernels<CudaLoop>{kGpuDevice});
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
