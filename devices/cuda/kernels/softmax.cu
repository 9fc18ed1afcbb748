// CUDA kernels of softmax, log_softmax and SoftmaxOutput: cuDNN's softmax where it takes the call
// (cudnn_layers.h: temperature 1, not in place; Note [cuDNN layers]), else the definition header's
// line functions (plugins/nn/softmax.h), one thread per line along the softmax axis.
#if !defined(MXPLUG_HIP)
#include "cudnn_layers.h"
#endif
#include "launch.cuh"
#include "nn/softmax.h"

namespace mxplug_cuda {
namespace {

using mxplug::OpContext;
using mxplug::OpReqType;
using mxplug::TBlob;

struct CudnnSoftmax {  // none under HIP or with the portable kernels
  static bool Forward(const OpContext& ctx, const TBlob& data, int axis, bool log, const TBlob& out,
                      OpReqType req) {
#if defined(MXPLUG_HIP)
    return false;
#else
    return !UsePortableKernels() && CudnnSoftmaxForward(ctx, data, axis, log, out, req);
#endif
  }
  static bool Backward(const OpContext& ctx, const TBlob& out_grad, const TBlob& out, int axis,
                       bool log, const TBlob& data_grad, OpReqType req) {
#if defined(MXPLUG_HIP)
    return false;
#else
    return !UsePortableKernels() &&
           CudnnSoftmaxBackward(ctx, out_grad, out, axis, log, data_grad, req);
#endif
  }
};

[[maybe_unused]] const bool registered = [] {
  mxplug_nn::RegisterSoftmaxKernels<CudaLoop, CudnnSoftmax>(kGpuDevice);
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
