// Registers every image operator's kernels (image.h, image_color.h, image_resize.h) over one
// device's element loop: image.cc for the CPU, devices/cuda/kernels/image.cu for GPUs.
#ifndef MXPLUG_PLUGINS_TENSOR_IMAGE_KERNELS_H_
#define MXPLUG_PLUGINS_TENSOR_IMAGE_KERNELS_H_

#include "image.h"
#include "image_color.h"
#include "image_resize.h"

namespace mxplug_tensor {
namespace image {

template <class Loop>
struct ImageKernels {
  DLDeviceType device;
  template <ImageOp K>
  void Op(const char* name, const char*) const {
    mxplug::sdk::RegisterKernel<ImageKernel<K, Loop>>(name, device);
  }
  template <ColorOp K>
  void Op(const char* name, const char*) const {
    mxplug::sdk::RegisterKernel<ColorKernel<K, Loop>>(name, device);
  }
};

template <class Loop>
void RegisterImageKernels(DLDeviceType device) {
  ForEachImageOp(ImageKernels<Loop>{device});
  ForEachColorOp(ImageKernels<Loop>{device});
  mxplug::sdk::RegisterKernel<ResizeKernel<Loop>>("_image_resize", device);
}

}  // namespace image
}  // namespace mxplug_tensor

#endif  // MXPLUG_PLUGINS_TENSOR_IMAGE_KERNELS_H_
