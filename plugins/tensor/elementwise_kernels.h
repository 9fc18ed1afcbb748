// Registers the kernels of every elementwise op (unary.h, binary.h) on one device, from the
// definitions' own lists, given the device's two kernel templates: MapKernel<Map>, which runs a
// map (elementwise.h) over an array, and BinaryKernel<Op>, which runs a functor of two arrays
// with broadcasting. elementwise_cpu.cc and devices/cuda/kernels/elementwise.cu each call it once.
#ifndef MXPLUG_PLUGINS_TENSOR_ELEMENTWISE_KERNELS_H_
#define MXPLUG_PLUGINS_TENSOR_ELEMENTWISE_KERNELS_H_

#include <string>

#include "binary.h"
#include "mxplug/plugin.hpp"
#include "unary.h"

namespace mxplug_tensor {

template <template <class> class MapKernel, template <class> class BinaryKernel>
struct ElementwiseKernels {
  DLDeviceType device;

  template <class F, bool kNoGrad>
  void Unary(const char* name, const char*) const {
    mxplug::sdk::RegisterKernel<MapKernel<UnaryMap<F, kNoGrad>>>(name, device);
  }
  template <class Op, bool kBroadcast>
  void Binary(const std::string& name, const std::string&) const {
    mxplug::sdk::RegisterKernel<BinaryKernel<Op>>(name.c_str(), device);
  }
  template <class Op, bool kReversed>
  void Scalar(const std::string& name, const std::string&) const {
    mxplug::sdk::RegisterKernel<MapKernel<ScalarMap<Op, kReversed>>>(name.c_str(), device);
  }

  void RegisterAll() const {
    ForEachUnaryOp(*this);
    ForEachBinaryOp(*this);
    mxplug::sdk::RegisterKernel<MapKernel<ClipMap>>("clip", device);
  }
};

}  // namespace mxplug_tensor

#endif  // MXPLUG_PLUGINS_TENSOR_ELEMENTWISE_KERNELS_H_
