// GPU kernel of RNN (plugins/nn/rnn.h, Note [RNN kernel]): the GEMMs on the GPU's BLAS
// (gpu_blas.cuh), the gates a thread per element on the call's stream.
#include "gpu_blas.cuh"
#include "nn/rnn.h"

namespace mxplug_cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
  WithBlas([](auto blas) { mxplug_nn::RegisterRNNKernels<CudaLoop, decltype(blas)>(kGpuDevice); });
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
