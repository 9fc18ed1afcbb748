// The kernels of the elementwise ops (unary.h, binary.h) that are the same on every device, and
// their registration from the definitions' own lists: a map (elementwise.h) runs over an array
// with the device's element loop; an op of two arrays runs with the device's BinaryKernel<Op>,
// whose broadcasting gradients differ per device. elementwise_cpu.cc and
// devices/cuda/kernels/elementwise.cu each register once.
#ifndef MXPLUG_PLUGINS_TENSOR_ELEMENTWISE_KERNELS_H_
#define MXPLUG_PLUGINS_TENSOR_ELEMENTWISE_KERNELS_H_

#include <string>
#include <type_traits>
#include <vector>

#include "binary.h"
#include "mxplug/plugin.hpp"
#include "unary.h"

namespace mxplug_tensor {

// ---- One array: out[i] = m(x[i]), in[i] gradient = m.Grad(og[i], x[i], y[i]) ----

template <class Map, class T>
struct MapForward {
  Map map;
  const T* x;
  T* out;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = typename Map::template Compute<T>;
    mxplug::StoreAs<C>(out[i], req, map(static_cast<C>(x[i])));
  }
};

template <class Map, class T>
struct MapBackward {
  Map map;
  const T* og;
  const T* x;  // x and y: null when the map's Grad does not read them
  const T* y;
  T* grad;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = typename Map::template Compute<T>;
    // og[i] is read before grad[i], which may share its memory, is written.
    const C g = map.Grad(static_cast<C>(og[i]), x ? static_cast<C>(x[i]) : C(0),
                         y ? static_cast<C>(y[i]) : C(0));
    mxplug::StoreAs<C>(grad[i], req, g);
  }
};

/*! \brief Whether a map's gradient reads the output's gradient: its kReadsGrad, true by default. */
template <class Map, class = void>
struct ReadsGrad : std::true_type {};
template <class Map>
struct ReadsGrad<Map, std::void_t<decltype(Map::kReadsGrad)>>
    : std::bool_constant<Map::kReadsGrad> {};

/*! \brief The kernel of a map (a unary, scalar or clip op) on a device whose element loop is Loop
 * (mxplug::CpuLoop, the CUDA plugin's CudaLoop). */
template <class Map, class Loop>
class MapKernel : public mxplug::Operator {
 public:
  MapKernel(const mxplug::KwArgs& kwargs, mxplug::Context) : map_(kwargs) {}

  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<mxplug::OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(ctx, out[0].Size(),
                MapForward<Map, T>{map_, in[0].dptr<T>(), out[0].dptr<T>(), req[0]});
    });
  }

  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& out_grad,
                const std::vector<TBlob>& in_data, const std::vector<TBlob>& out_data,
                const std::vector<mxplug::OpReqType>& req, const std::vector<TBlob>& in_grad,
                const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    if constexpr (!ReadsGrad<Map>::value) {  // a zero gradient: the output's gradient is not kept
      Loop::Zero(ctx, in_grad[0], req[0]);
      return;
    }
    mxplug::TypeSwitch(out_grad[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      const T* x = Map::kReadsX ? in_data[0].dptr<T>() : nullptr;
      const T* y = Map::kReadsY ? out_data[0].dptr<T>() : nullptr;
      Loop::Run(
          ctx, out_grad[0].Size(),
          MapBackward<Map, T>{map_, out_grad[0].dptr<T>(), x, y, in_grad[0].dptr<T>(), req[0]});
    });
  }

 private:
  Map map_;
};

/*! \brief Registers the kernels of every elementwise op on one device: maps run by MapKernel
 * over the device's Loop, ops of two arrays by the device's BinaryKernel<Op>. */
template <class Loop, template <class> class BinaryKernel>
struct ElementwiseKernels {
  DLDeviceType device;

  template <class F, bool kNoGrad>
  void Unary(const char* name, const char*) const {
    mxplug::sdk::RegisterKernel<MapKernel<UnaryMap<F, kNoGrad>, Loop>>(name, device);
  }
  template <class Op, bool kBroadcast>
  void Binary(const std::string& name, const std::string&) const {
    mxplug::sdk::RegisterKernel<BinaryKernel<Op>>(name.c_str(), device);
  }
  template <class Op, bool kReversed>
  void Scalar(const std::string& name, const std::string&) const {
    mxplug::sdk::RegisterKernel<MapKernel<ScalarMap<Op, kReversed>, Loop>>(name.c_str(), device);
  }

  void RegisterAll() const {
    ForEachUnaryOp(*this);
    ForEachBinaryOp(*this);
    mxplug::sdk::RegisterKernel<MapKernel<ClipMap, Loop>>("clip", device);
    mxplug::sdk::RegisterKernel<MapKernel<HardSigmoidMap, Loop>>("hard_sigmoid", device);
  }
};

}  // namespace mxplug_tensor

#endif  // MXPLUG_PLUGINS_TENSOR_ELEMENTWISE_KERNELS_H_
