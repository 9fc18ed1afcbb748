// cuDNN's convolutions for the CUDA plugin's Convolution and Deconvolution (convolution.cu calls
// them through the kernel's fused hook, Note [One convolution kernel per device]). Each returns
// false when cuDNN does not take the call (the op's cudnn_off, a build without cuDNN's
// convolution API, a configuration cuDNN reports it does not support), and the unrolled kernel
// runs instead. Note [cuDNN convolutions] in cudnn_convolution.cc says how algorithms are chosen.
#ifndef MXPLUG_DEVICES_CUDA_KERNELS_CUDNN_CONVOLUTION_H_
#define MXPLUG_DEVICES_CUDA_KERNELS_CUDNN_CONVOLUTION_H_

#include "mxplug/plugin.hpp"
#include "nn/matmul.h"   // LayerGrads
#include "nn/spatial.h"  // ConvShape

namespace mxplug_cuda {

/*! \brief Convolution's (deconv false) or Deconvolution's forward on cuDNN. */
bool CudnnConvolutionForward(bool deconv, const mxplug::OpContext& ctx,
                             const mxplug_nn::ConvShape& s, const mxplug::TBlob& data,
                             const mxplug::TBlob& weight, const mxplug::TBlob* bias,
                             const mxplug::TBlob& out, mxplug::OpReqType req);

/*! \brief Their backward: the gradients `grads` asks for, as its reqs say. */
bool CudnnConvolutionBackward(bool deconv, const mxplug::OpContext& ctx,
                              const mxplug_nn::ConvShape& s, const mxplug::TBlob& out_grad,
                              const mxplug::TBlob& data, const mxplug::TBlob& weight,
                              const mxplug_nn::LayerGrads& grads);

}  // namespace mxplug_cuda

#endif  // MXPLUG_DEVICES_CUDA_KERNELS_CUDNN_CONVOLUTION_H_
