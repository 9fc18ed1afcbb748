// CUDA kernels of Activation and LeakyReLU: each activation's math is the definition header's
// (plugins/nn/activation.h), run one thread per element, after cuDNN's relu where it takes the
// call (cudnn_layers.h; Note [cuDNN layers] says why relu alone).
#if !defined(MXPLUG_HIP)
#include "cudnn_layers.h"
#endif
#include "launch.cuh"
#include "nn/activation.h"

namespace mxplug_cuda {
namespace {

using mxplug::OpContext;
using mxplug::OpReqType;
using mxplug::TBlob;

struct CudnnActivation {  // none under HIP or with the portable kernels
  static bool Forward(const OpContext& ctx, int act_type, const TBlob& data, const TBlob& out,
                      OpReqType req) {
#if defined(MXPLUG_HIP)
    return false;
#else
    return !UsePortableKernels() && CudnnActivationForward(ctx, act_type, data, out, req);
#endif
  }
  static bool Backward(const OpContext& ctx, int act_type, const TBlob& out_grad, const TBlob& out,
                       const TBlob& data_grad, OpReqType req) {
#if defined(MXPLUG_HIP)
    return false;
#else
    return !UsePortableKernels() &&
           CudnnActivationBackward(ctx, act_type, out_grad, out, data_grad, req);
#endif
  }
};

[[maybe_unused]] const bool registered = [] {
  mxplug_nn::RegisterActivationKernels<CudaLoop, CudnnActivation>(kGpuDevice);
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
