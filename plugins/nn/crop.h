// Definition of Crop (MXNet's legacy layer): a window of h rows and w columns of NCHW data, at
// `offset`, centred (center_crop), or the size of a second input (num_args 2, crop_like). The
// gradient goes to the window, zeros elsewhere and to crop_like. Kernels per element, written once
// over a device's loop: crop.cc registers the definition and the CPU kernel,
// devices/cuda/kernels/crop.cu the GPU one.
#ifndef MXPLUG_PLUGINS_NN_CROP_H_
#define MXPLUG_PLUGINS_NN_CROP_H_

#include <stdexcept>
#include <string>
#include <vector>

#include "mxplug/plugin.hpp"

namespace mxplug_nn {

struct CropParam : mxplug::Parameter<CropParam> {
  int num_args = 1;
  mxplug::TShape offset{0, 0}, h_w{0, 0};
  bool center_crop = false;
  MXPLUG_DECLARE_PARAMETER(CropParam) {
    MXPLUG_DECLARE_FIELD(num_args).set_range(1, 2).describe(
        "The number of inputs: 1 crops to h_w, 2 to the height and width of the second input "
        "(crop_like).");
    MXPLUG_DECLARE_FIELD(offset)
        .set_default(mxplug::TShape{0, 0})
        .describe("The crop's top-left corner (y, x), unless center_crop.");
    MXPLUG_DECLARE_FIELD(h_w)
        .set_default(mxplug::TShape{0, 0})
        .describe("The crop's height and width (h, w), with one input.");
    MXPLUG_DECLARE_FIELD(center_crop)
        .set_default(false)
        .describe("Centre the crop in the data instead of placing it at offset.");
  }
};

/*! \brief Where the window lies in a plane of H x W: h x w at (oy, ox). */
struct CropWindow {
  int64_t H = 0, W = 0, h = 0, w = 0, oy = 0, ox = 0;

  // The window of `data` (N, C, H, W) for a crop of (h, w), checked as MXNet checks it.
  static CropWindow Of(const CropParam& p, const mxplug::TShape& data, int64_t h, int64_t w) {
    CropWindow c;
    c.H = data[2], c.W = data[3], c.h = h, c.w = w;
    if (h < 1 || w < 1)
      throw std::invalid_argument("Crop: the crop's height and width (" + std::to_string(h) + ", " +
                                  std::to_string(w) +
                                  ") must be at least 1: give h_w or crop_like");
    if (h > c.H)
      throw std::invalid_argument("Crop: the crop height " + std::to_string(h) +
                                  " should be less than the input data's height " +
                                  std::to_string(c.H));
    if (w > c.W)
      throw std::invalid_argument("Crop: the crop width " + std::to_string(w) +
                                  " should be less than the input data's width " +
                                  std::to_string(c.W));
    if (p.center_crop) {
      c.oy = (c.H - h) / 2, c.ox = (c.W - w) / 2;
    } else {
      if (p.offset.ndim() != 2)
        throw std::invalid_argument("Crop: offset must be (y, x), got " + p.offset.ToString());
      c.oy = p.offset[0], c.ox = p.offset[1];
      if (c.oy < 0 || c.ox < 0 || c.oy > c.H - h || c.ox > c.W - w)
        throw std::invalid_argument("Crop: offset " + p.offset.ToString() + " puts the (" +
                                    std::to_string(h) + ", " + std::to_string(w) +
                                    ") crop outside the data's (" + std::to_string(c.H) + ", " +
                                    std::to_string(c.W) + ")");
    }
    return c;
  }
};

class CropProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override {
    param_.Init(kwargs);
    if (param_.num_args == 1 && param_.h_w.ndim() != 2)
      throw std::invalid_argument("Crop: h_w must be (h, w), got " + param_.h_w.ToString());
  }
  std::vector<std::string> ListArguments() const override {
    if (param_.num_args == 2) return {"data", "crop_like"};
    return {"data"};
  }
  bool InferShape(std::vector<mxplug::TShape>* in, std::vector<mxplug::TShape>* out,
                  std::vector<mxplug::TShape>*) const override {
    const mxplug::TShape& d = (*in)[0];
    if (d.ndim() < 0) return false;
    if (d.ndim() != 4)
      throw std::invalid_argument("Crop: data has shape " + d.ToString() +
                                  ", expected 4D data (batch, channel, y, x)");
    int64_t h = param_.h_w[0], w = param_.h_w[1];
    if (param_.num_args == 2) {
      const mxplug::TShape& like = (*in)[1];
      if (like.ndim() < 0) return false;
      if (like.ndim() != 4)
        throw std::invalid_argument("Crop: crop_like has shape " + like.ToString() +
                                    ", expected 4D (batch, channel, y, x)");
      h = like[2], w = like[3];
    }
    if (!d.IsKnown()) return false;
    CropWindow::Of(param_, d, h, w);
    (*out)[0] = mxplug::TShape{d[0], d[1], h, w};
    return true;
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    return mxplug::InferTypeFromFirst(in, out);
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return {og[0]};
  }

 private:
  CropParam param_;
};

// Output element o of the window.
template <class T>
struct CropForward {
  CropWindow c;
  const T* x;
  T* y;
  int req;
  MXPLUG_XINLINE void operator()(int64_t o) const {
    const int64_t plane = o / (c.h * c.w), r = o / c.w % c.h, col = o % c.w;
    using C = mxplug::ComputeType<T>;
    mxplug::StoreAs<C>(y[o], req, C(x[(plane * c.H + r + c.oy) * c.W + col + c.ox]));
  }
};

// Data element i: the window's gradient where i is in it, else 0.
template <class T>
struct CropBackward {
  CropWindow c;
  const T* og;
  T* dx;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    const int64_t plane = i / (c.H * c.W), r = i / c.W % c.H - c.oy, col = i % c.W - c.ox;
    using C = mxplug::ComputeType<T>;
    const bool inside = r >= 0 && r < c.h && col >= 0 && col < c.w;
    mxplug::StoreAs<C>(dx[i], req, inside ? C(og[(plane * c.h + r) * c.w + col]) : C(0));
  }
};

template <class Loop>
class CropKernel : public mxplug::Operator {
 public:
  CropKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<mxplug::TBlob>& in,
               const std::vector<mxplug::OpReqType>& req, const std::vector<mxplug::TBlob>& out,
               const std::vector<mxplug::TBlob>&) override {
    if (req[0] == mxplug::kNullOp || out[0].Size() == 0) return;
    const CropWindow c = Window(in[0].shape_, out[0].shape_);
    mxplug::TypeSwitch(in[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(ctx, out[0].Size(), CropForward<T>{c, in[0].dptr<T>(), out[0].dptr<T>(), req[0]});
    });
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<mxplug::TBlob>& og,
                const std::vector<mxplug::TBlob>&, const std::vector<mxplug::TBlob>&,
                const std::vector<mxplug::OpReqType>& req, const std::vector<mxplug::TBlob>& ig,
                const std::vector<mxplug::TBlob>&) override {
    if (ig.size() > 1) Loop::Zero(ctx, ig[1], req[1]);  // crop_like gives only its shape
    if (req[0] == mxplug::kNullOp || ig[0].Size() == 0) return;
    const CropWindow c = Window(ig[0].shape_, og[0].shape_);
    mxplug::TypeSwitch(ig[0].type_flag_, [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(ctx, ig[0].Size(), CropBackward<T>{c, og[0].dptr<T>(), ig[0].dptr<T>(), req[0]});
    });
  }

 private:
  CropWindow Window(const mxplug::TShape& data, const mxplug::TShape& cropped) const {
    return CropWindow::Of(p_, data, cropped[2], cropped[3]);
  }
  CropParam p_;
};

template <class Loop>
void RegisterCropKernel(DLDeviceType device) {
  mxplug::sdk::RegisterKernel<CropKernel<Loop>>("Crop", device);
}

}  // namespace mxplug_nn

#endif  // MXPLUG_PLUGINS_NN_CROP_H_
