// Definition of ROIPooling (Fast R-CNN's region of interest max pooling), as MXNet 1.9.1's:
// each roi (batch index, x1, y1, x2, y2), scaled by spatial_scale and rounded, is split into
// pooled_size (h, w) bins, and each bin of each channel gives its maximum (0 for a bin outside the
// image). The position of each maximum goes into a hidden second output, so that backward adds
// the output's gradient there (atomically on a GPU: bins of different rois overlap).
// roi_pooling.cc registers the definition and the CPU kernel, devices/cuda/kernels/roi_pooling.cu
// the GPU one.
#ifndef MXPLUG_PLUGINS_NN_ROI_POOLING_H_
#define MXPLUG_PLUGINS_NN_ROI_POOLING_H_

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "elements.h"
#include "mxplug/plugin.hpp"

namespace mxplug_nn {

using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;

struct ROIPoolingParam : mxplug::Parameter<ROIPoolingParam> {
  TShape pooled_size;
  float spatial_scale = 0;
  MXPLUG_DECLARE_PARAMETER(ROIPoolingParam) {
    MXPLUG_DECLARE_FIELD(pooled_size).describe("ROI pooling output shape (h,w) ");
    MXPLUG_DECLARE_FIELD(spatial_scale)
        .set_range(0, 1)
        .describe(
            "Ratio of input feature map height (or w) to raw image height (or w). Equals the "
            "reciprocal of total stride in convolutional layers");
  }
};

class ROIPoolingProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override {
    param_.Init(kwargs);
    if (param_.pooled_size.ndim() != 2 || param_.pooled_size[0] < 1 || param_.pooled_size[1] < 1)
      throw std::invalid_argument("pooled_size is " + param_.pooled_size.ToString() +
                                  ", expected (h, w) of positive sizes");
  }
  std::vector<std::string> ListArguments() const override { return {"data", "rois"}; }
  std::vector<std::string> ListOutputs() const override { return {"output", "maxidx"}; }
  int NumVisibleOutputs() const override { return 1; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape &d = (*in)[0], &r = (*in)[1];
    if (d.ndim() < 0 || r.ndim() < 0) return false;
    if (d.ndim() != 4)
      throw std::invalid_argument("data should be a 4D tensor, not of shape " + d.ToString());
    if (r.ndim() != 2 || r[1] != 5)
      throw std::invalid_argument("rois should be a 2D tensor of shape [batch, 5], not " +
                                  r.ToString());
    (*out)[0] = (*out)[1] = TShape{r[0], d[1], param_.pooled_size[0], param_.pooled_size[1]};
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>& out) const override {
    return {og[0], in[1], out[1]};  // the rois say which image each maximum is in
  }

 private:
  ROIPoolingParam param_;
};

/*! \brief Output element i (roi, channel, ph, pw): its bin's maximum and where it is. */
template <class T>
struct RoiMaxPool {
  const T* data;
  const T* rois;
  int64_t batch, channels, height, width, ph_size, pw_size;
  float scale;
  T* out;
  T* argmax;  // the maximum's index in its channel's plane, -1 for an empty bin
  MXPLUG_XINLINE void operator()(int64_t i) const {
    const int64_t pw = i % pw_size, ph = i / pw_size % ph_size,
                  c = i / pw_size / ph_size % channels, n = i / pw_size / ph_size / channels;
    const T* roi = rois + n * 5;
    int64_t b = static_cast<int64_t>(AsDouble(roi[0]));
    const bool bad = b < 0 || b >= batch;
    if (bad) b = 0;
    const int64_t x1 = static_cast<int64_t>(std::round(AsDouble(roi[1]) * scale)),
                  y1 = static_cast<int64_t>(std::round(AsDouble(roi[2]) * scale)),
                  x2 = static_cast<int64_t>(std::round(AsDouble(roi[3]) * scale)),
                  y2 = static_cast<int64_t>(std::round(AsDouble(roi[4]) * scale));
    const int64_t roi_h = y2 - y1 + 1 > 1 ? y2 - y1 + 1 : 1,
                  roi_w = x2 - x1 + 1 > 1 ? x2 - x1 + 1 : 1;
    const float bin_h = static_cast<float>(roi_h) / static_cast<float>(ph_size),
                bin_w = static_cast<float>(roi_w) / static_cast<float>(pw_size);
    auto clamp = [](int64_t v, int64_t hi) { return v < 0 ? 0 : v > hi ? hi : v; };
    const int64_t hstart = clamp(static_cast<int64_t>(std::floor(ph * bin_h)) + y1, height),
                  hend = clamp(static_cast<int64_t>(std::ceil((ph + 1) * bin_h)) + y1, height),
                  wstart = clamp(static_cast<int64_t>(std::floor(pw * bin_w)) + x1, width),
                  wend = clamp(static_cast<int64_t>(std::ceil((pw + 1) * bin_w)) + x1, width);
    const T* plane = data + (b * channels + c) * height * width;
    double best = 0;
    int64_t at = -1;
    if (!bad)
      for (int64_t h = hstart; h < hend; ++h)
        for (int64_t w = wstart; w < wend; ++w) {
          const double v = AsDouble(plane[h * width + w]);
          if (at < 0 || v > best) best = v, at = h * width + w;
        }
    out[i] = static_cast<T>(at < 0 ? 0.0 : best);
    argmax[i] = static_cast<T>(static_cast<double>(at));
  }
};

/*! \brief Adds output element i's gradient where its maximum was. */
template <class T, class Loop>
struct RoiPoolGradient {
  const T* og;
  const T* argmax;
  const T* rois;
  int64_t batch, channels, plane, pooled;
  T* dx;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    const int64_t at = static_cast<int64_t>(AsDouble(argmax[i]));
    if (at < 0) return;
    const int64_t c = i / pooled % channels, n = i / pooled / channels;
    const int64_t b = static_cast<int64_t>(AsDouble(rois[n * 5]));
    Loop::AddTo(dx + (b * channels + c) * plane + at, og[i]);
  }
};

template <class Loop>
class ROIPoolingKernel : public mxplug::Operator {
 public:
  ROIPoolingKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>&, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    const TShape& d = in[0].shape_;
    mxplug::FloatTypeSwitch(in[0].type_flag_, "ROIPooling", [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(
          ctx, out[0].Size(),
          RoiMaxPool<T>{in[0].dptr<T>(), in[1].dptr<T>(), d[0], d[1], d[2], d[3], p_.pooled_size[0],
                        p_.pooled_size[1], p_.spatial_scale, out[0].dptr<T>(), out[1].dptr<T>()});
    });
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                const std::vector<TBlob>& in, const std::vector<TBlob>& out,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    if (ig.size() > 1) Loop::Zero(ctx, ig[1], req[1]);  // the rois have no gradient
    if (req[0] == mxplug::kNullOp) return;
    if (req[0] != mxplug::kAddTo) Loop::Zero(ctx, ig[0], mxplug::kWriteTo);
    const TShape& d = ig[0].shape_;
    mxplug::FloatTypeSwitch(ig[0].type_flag_, "ROIPooling", [&](auto zero) {
      using T = decltype(zero);
      if constexpr (Loop::template CanAdd<T>())
        Loop::Run(ctx, out[1].Size(),
                  RoiPoolGradient<T, Loop>{og[0].dptr<T>(), out[1].dptr<T>(), in[1].dptr<T>(), d[0],
                                           d[1], d[2] * d[3], p_.pooled_size[0] * p_.pooled_size[1],
                                           ig[0].dptr<T>()});
      else
        throw std::invalid_argument("ROIPooling: no atomic add for this dtype on this device");
    });
  }

 private:
  ROIPoolingParam p_;
};

template <class Loop>
void RegisterROIPoolingKernel(DLDeviceType device) {
  mxplug::sdk::RegisterKernel<ROIPoolingKernel<Loop>>("ROIPooling", device);
}

}  // namespace mxplug_nn

#endif  // MXPLUG_PLUGINS_NN_ROI_POOLING_H_
