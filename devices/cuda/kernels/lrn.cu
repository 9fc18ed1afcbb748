// GPU kernels of LRN: the per-element functors of its definition header (plugins/nn/lrn.h), one
// thread per element, each summing over its window of channels (a gather, so no atomics). On CUDA
// the backward is cuDNN's where it takes the call (cudnn_layers.h; the forward stays these
// kernels', which write tmp_norm in the same pass, Note [cuDNN layers]).
#if !defined(MXPLUG_HIP)
#include "cudnn_layers.h"
#endif
#include "launch.cuh"
#include "nn/lrn.h"

namespace mxplug_cuda {
namespace {

struct CudnnLrn {  // none under HIP or with the portable kernels
  static bool Backward(const mxplug::OpContext& ctx, const mxplug_nn::LRNParam& param,
                       const mxplug::TBlob& data, const mxplug::TBlob& out,
                       const mxplug::TBlob& out_grad, const mxplug::TBlob& data_grad,
                       mxplug::OpReqType req) {
#if defined(MXPLUG_HIP)
    return false;
#else
    return !UsePortableKernels() &&
           CudnnLrnBackward(ctx, param, data, out, out_grad, data_grad, req);
#endif
  }
};

[[maybe_unused]] const bool registered = [] {
  mxplug_nn::RegisterLrnKernels<CudaLoop, CudnnLrn>(kGpuDevice);
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
