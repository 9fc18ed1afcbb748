// Definitions of the spatial transformer family (Jaderberg et al.), as MXNet 1.9.1's:
//   GridGenerator: a sampling grid (N, 2, H, W) of x and y in [-1, 1] from affine parameters
//     (N, 6): theta (2 x 3) times (x_t, y_t, 1) over target_shape (H, W); or from a flow field
//     (N, 2, H, W) ('warp'): (flow + the pixel's position) normalized to [-1, 1].
//   BilinearSampler: data (N, C, H, W) sampled at a grid (N, 2, Ho, Wo) bilinearly, the grid
//     mapping [-1, 1] onto the pixel centres 0 .. size - 1, and 0 outside the image.
//   SpatialTransformer: GridGenerator('affine') of loc then BilinearSampler, in one op.
// Gradients reach the data (added into the four pixels each sample read: atomically on a GPU)
// and the grid, hence the affine parameters or the flow. grid_sampling.cc registers the
// definitions and the CPU kernels, devices/cuda/kernels/grid_sampling.cu the GPU ones.
#ifndef MXPLUG_PLUGINS_NN_GRID_SAMPLING_H_
#define MXPLUG_PLUGINS_NN_GRID_SAMPLING_H_

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "elements.h"
#include "mxplug/plugin.hpp"

namespace mxplug_nn {

using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;

enum GridTransform { kAffine = 0, kWarp = 1 };

struct GridGeneratorParam : mxplug::Parameter<GridGeneratorParam> {
  int transform_type = kAffine;
  TShape target_shape;
  MXPLUG_DECLARE_PARAMETER(GridGeneratorParam) {
    MXPLUG_DECLARE_FIELD(transform_type)
        .add_enum("affine", kAffine)
        .add_enum("warp", kWarp)
        .describe(
            "The type of transformation. For `affine`, input data should be an affine matrix of "
            "size (batch, 6). For `warp`, input data should be an optical flow of size (batch, "
            "2, h, w).");
    MXPLUG_DECLARE_FIELD(target_shape)
        .set_default(TShape{0, 0})
        .describe(
            "Specifies the output shape (H, W). This is required if transformation type is "
            "`affine`. If transformation type is `warp`, this parameter is ignored.");
  }
};

struct BilinearSamplerParam : mxplug::Parameter<BilinearSamplerParam> {
  std::optional<bool> cudnn_off;
  MXPLUG_DECLARE_PARAMETER(BilinearSamplerParam) {
    MXPLUG_DECLARE_FIELD(cudnn_off).set_default(std::nullopt).describe("whether to turn cudnn off");
  }
};

struct SpatialTransformerParam : mxplug::Parameter<SpatialTransformerParam> {
  TShape target_shape;
  int transform_type = kAffine;
  int sampler_type = 0;
  std::optional<bool> cudnn_off;
  MXPLUG_DECLARE_PARAMETER(SpatialTransformerParam) {
    MXPLUG_DECLARE_FIELD(target_shape)
        .set_default(TShape{0, 0})
        .describe("output shape(h, w) of spatial transformer: (y, x)");
    MXPLUG_DECLARE_FIELD(transform_type)
        .add_enum("affine", kAffine)
        .describe("transformation type");
    MXPLUG_DECLARE_FIELD(sampler_type).add_enum("bilinear", 0).describe("sampling type");
    MXPLUG_DECLARE_FIELD(cudnn_off).set_default(std::nullopt).describe("whether to turn cudnn off");
  }
};

inline void CheckTarget(const TShape& t, const char* op) {
  if (t.ndim() != 2 || t[0] < 1 || t[1] < 1)
    throw std::invalid_argument(std::string(op) + ": target_shape is " + t.ToString() +
                                ", expected (height, width) of positive sizes");
}

class GridGeneratorProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& d = (*in)[0];
    if (d.ndim() < 0) return false;
    if (param_.transform_type == kAffine) {
      if (d.ndim() != 2 || d[1] != 6)
        throw std::invalid_argument("incorrect data shape " + d.ToString() +
                                    ": affine parameters are (batch, 6)");
      CheckTarget(param_.target_shape, "GridGenerator");
      (*out)[0] = TShape{d[0], 2, param_.target_shape[0], param_.target_shape[1]};
    } else {
      if (d.ndim() != 4 || d[1] != 2)
        throw std::invalid_argument("incorrect data shape " + d.ToString() +
                                    ": a flow field is (batch, 2, height, width)");
      (*out)[0] = d;
    }
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return {og[0]};
  }

 private:
  GridGeneratorParam param_;
};

class BilinearSamplerProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {"data", "grid"}; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape &d = (*in)[0], &g = (*in)[1];
    if (d.ndim() < 0 || g.ndim() < 0) return false;
    if (d.ndim() != 4)
      throw std::invalid_argument("data has shape " + d.ToString() +
                                  ", expected (batch, channel, height, width)");
    if (g.ndim() != 4 || g[0] != d[0] || g[1] != 2)
      throw std::invalid_argument("grid has shape " + g.ToString() + ", expected (" +
                                  std::to_string(d[0]) + ", 2, height, width) for data " +
                                  d.ToString());
    (*out)[0] = TShape{d[0], d[1], g[2], g[3]};
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>&) const override {
    return {og[0], in[0], in[1]};
  }

 private:
  BilinearSamplerParam param_;
};

class SpatialTransformerProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override {
    param_.Init(kwargs);
    CheckTarget(param_.target_shape, "SpatialTransformer");
  }
  std::vector<std::string> ListArguments() const override { return {"data", "loc"}; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape &d = (*in)[0], &l = (*in)[1];
    if (d.ndim() < 0 || l.ndim() < 0) return false;  // loc is not inferred, as in MXNet
    if (d.ndim() != 4)
      throw std::invalid_argument("data has shape " + d.ToString() +
                                  ", expected (batch, channel, height, width)");
    if (l != TShape{d[0], 6})
      throw std::invalid_argument("loc has shape " + l.ToString() + ", expected (" +
                                  std::to_string(d[0]) + ", 6) for data " + d.ToString());
    (*out)[0] = TShape{d[0], d[1], param_.target_shape[0], param_.target_shape[1]};
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>&) const override {
    return {og[0], in[0], in[1]};
  }
  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override {
    return {mxplug::ResourceRequest::kTempSpace};
  }
  std::vector<mxplug::ResourceRequest> BackwardResource(const std::vector<TShape>&) const override {
    return {mxplug::ResourceRequest::kTempSpace};
  }

 private:
  SpatialTransformerParam param_;
};

// ---- Element functions ----

MXPLUG_XINLINE double UnitToPixel(double u, int64_t size) { return (u + 1) * double(size - 1) / 2; }
MXPLUG_XINLINE double AxisCoordinate(int64_t i, int64_t size) {  // linspace(-1, 1, size)[i]
  return size > 1 ? -1.0 + 2.0 * double(i) / double(size - 1) : -1.0;
}

/*! \brief Grid element i (n, k, h, w) from affine parameters theta (N, 6). */
template <class T, class G>
struct AffineGrid {
  const T* theta;
  int64_t height, width;
  G* grid;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    const int64_t w = i % width, h = i / width % height, k = i / width / height % 2,
                  n = i / width / height / 2;
    const T* t = theta + n * 6 + k * 3;
    const double v = AsDouble(t[0]) * AxisCoordinate(w, width) +
                     AsDouble(t[1]) * AxisCoordinate(h, height) + AsDouble(t[2]);
    using C = mxplug::ComputeType<G>;
    mxplug::StoreAs<C>(grid[i], req, C(v));
  }
};

/*! \brief d theta[n, k, j] = the sum over the grid of d grid[n, k] times (x, y, 1)[j]. */
template <class T, class G>
struct AffineGridGradient {
  const G* og;
  int64_t height, width;
  T* dtheta;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    const int64_t j = i % 3, k = i / 3 % 2, n = i / 6;
    const G* g = og + (n * 2 + k) * height * width;
    double sum = 0;
    for (int64_t h = 0; h < height; ++h)
      for (int64_t w = 0; w < width; ++w)
        sum += AsDouble(g[h * width + w]) * (j == 0   ? AxisCoordinate(w, width)
                                             : j == 1 ? AxisCoordinate(h, height)
                                                      : 1.0);
    using C = mxplug::ComputeType<T>;
    mxplug::StoreAs<C>(dtheta[i], req, C(sum));
  }
};

/*! \brief Grid element i from a flow (N, 2, H, W): its position plus the flow, normalized. */
template <class T>
struct WarpGrid {
  const T* flow;
  int64_t height, width;
  T* grid;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    const int64_t w = i % width, h = i / width % height, k = i / width / height % 2;
    const int64_t size = k == 0 ? width : height;
    const double v = (AsDouble(flow[i]) + double(k == 0 ? w : h)) * 2.0 / double(size - 1) - 1.0;
    using C = mxplug::ComputeType<T>;
    mxplug::StoreAs<C>(grid[i], req, C(v));
  }
};

template <class T>
struct WarpGridGradient {
  const T* og;
  int64_t height, width;
  T* dflow;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    const int64_t k = i / width / height % 2;
    using C = mxplug::ComputeType<T>;
    mxplug::StoreAs<C>(dflow[i], req,
                       C(AsDouble(og[i]) * 2.0 / double((k == 0 ? width : height) - 1)));
  }
};

/*! \brief Where a grid point samples: the top-left pixel and the weights of the top row and the
 * left column. */
struct Corners {
  int64_t x0, y0;
  double wx, wy;
  MXPLUG_XINLINE Corners(double gx, double gy, int64_t height, int64_t width) {
    const double x = UnitToPixel(gx, width), y = UnitToPixel(gy, height);
    x0 = static_cast<int64_t>(std::floor(x));
    y0 = static_cast<int64_t>(std::floor(y));
    wx = 1 - (x - double(x0));
    wy = 1 - (y - double(y0));
  }
};

/*! \brief Pixel (y, x) of a plane, 0 outside it. */
template <class T>
MXPLUG_XINLINE double PixelOr0(const T* plane, int64_t y, int64_t x, int64_t height,
                               int64_t width) {
  return y >= 0 && y < height && x >= 0 && x < width ? AsDouble(plane[y * width + x]) : 0.0;
}

/*! \brief Output element i (n, c, h, w): data[n, c] sampled at grid[n, :, h, w]. */
template <class T, class G>
struct SampleBilinear {
  const T* data;
  const G* grid;
  int64_t channels, height, width, out_h, out_w;
  T* out;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    const int64_t p = i % (out_h * out_w), c = i / (out_h * out_w) % channels,
                  n = i / (out_h * out_w) / channels;
    const G* g = grid + n * 2 * out_h * out_w + p;
    const Corners k(AsDouble(g[0]), AsDouble(g[out_h * out_w]), height, width);
    const T* plane = data + (n * channels + c) * height * width;
    const double v = PixelOr0(plane, k.y0, k.x0, height, width) * k.wy * k.wx +
                     PixelOr0(plane, k.y0, k.x0 + 1, height, width) * k.wy * (1 - k.wx) +
                     PixelOr0(plane, k.y0 + 1, k.x0, height, width) * (1 - k.wy) * k.wx +
                     PixelOr0(plane, k.y0 + 1, k.x0 + 1, height, width) * (1 - k.wy) * (1 - k.wx);
    using C = mxplug::ComputeType<T>;
    mxplug::StoreAs<C>(out[i], req, C(v));
  }
};

/*! \brief Output element i's gradient added into the four pixels it read. */
template <class T, class G, class Loop>
struct SampleBilinearDataGradient {
  const T* og;
  const G* grid;
  int64_t channels, height, width, out_h, out_w;
  T* dx;
  MXPLUG_XINLINE void Add(T* plane, int64_t y, int64_t x, double v) const {
    if (y >= 0 && y < height && x >= 0 && x < width)
      Loop::AddTo(plane + y * width + x, T(mxplug::ComputeType<T>(v)));
  }
  MXPLUG_XINLINE void operator()(int64_t i) const {
    const int64_t p = i % (out_h * out_w), c = i / (out_h * out_w) % channels,
                  n = i / (out_h * out_w) / channels;
    const G* g = grid + n * 2 * out_h * out_w + p;
    const Corners k(AsDouble(g[0]), AsDouble(g[out_h * out_w]), height, width);
    T* plane = dx + (n * channels + c) * height * width;
    const double d = AsDouble(og[i]);
    Add(plane, k.y0, k.x0, d * k.wy * k.wx);
    Add(plane, k.y0, k.x0 + 1, d * k.wy * (1 - k.wx));
    Add(plane, k.y0 + 1, k.x0, d * (1 - k.wy) * k.wx);
    Add(plane, k.y0 + 1, k.x0 + 1, d * (1 - k.wy) * (1 - k.wx));
  }
};

/*! \brief Grid point i (n, h, w): the gradient of its x and y, summed over the channels. */
template <class T, class G>
struct SampleBilinearGridGradient {
  const T* og;
  const T* data;
  const G* grid;
  int64_t channels, height, width, out_h, out_w;
  G* dgrid;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    const int64_t hw = out_h * out_w, p = i % hw, n = i / hw;
    const G* g = grid + n * 2 * hw + p;
    const Corners k(AsDouble(g[0]), AsDouble(g[hw]), height, width);
    double gx = 0, gy = 0;
    for (int64_t c = 0; c < channels; ++c) {
      const T* plane = data + (n * channels + c) * height * width;
      const double tl = PixelOr0(plane, k.y0, k.x0, height, width),
                   tr = PixelOr0(plane, k.y0, k.x0 + 1, height, width),
                   bl = PixelOr0(plane, k.y0 + 1, k.x0, height, width),
                   br = PixelOr0(plane, k.y0 + 1, k.x0 + 1, height, width);
      const double d = AsDouble(og[(n * channels + c) * hw + p]);
      gx += d * (k.wy * (tr - tl) + (1 - k.wy) * (br - bl));
      gy += d * (k.wx * (bl - tl) + (1 - k.wx) * (br - tr));
    }
    using C = mxplug::ComputeType<G>;
    mxplug::StoreAs<C>(dgrid[n * 2 * hw + p], req, C(gx * double(width - 1) / 2));
    mxplug::StoreAs<C>(dgrid[n * 2 * hw + hw + p], req, C(gy * double(height - 1) / 2));
  }
};

// ---- Kernels ----

template <class Loop>
struct Sampling {
  template <class T, class G>
  static void Forward(const mxplug::OpContext& ctx, const TBlob& data, const G* grid, int64_t out_h,
                      int64_t out_w, const TBlob& out, OpReqType req) {
    const TShape& d = data.shape_;
    Loop::Run(ctx, out.Size(),
              SampleBilinear<T, G>{data.dptr<T>(), grid, d[1], d[2], d[3], out_h, out_w,
                                   out.dptr<T>(), req});
  }
  // The gradients of the data (req_data) and the grid (into dgrid, req_grid).
  template <class T, class G>
  static void Backward(const mxplug::OpContext& ctx, const TBlob& og, const TBlob& data,
                       const G* grid, int64_t out_h, int64_t out_w, const TBlob& ddata,
                       OpReqType req_data, G* dgrid, OpReqType req_grid) {
    const TShape& d = data.shape_;
    if (req_data != mxplug::kNullOp) {
      if (req_data != mxplug::kAddTo) Loop::Zero(ctx, ddata, mxplug::kWriteTo);
      if constexpr (Loop::template CanAdd<T>())
        Loop::Run(ctx, og.Size(),
                  SampleBilinearDataGradient<T, G, Loop>{og.dptr<T>(), grid, d[1], d[2], d[3],
                                                         out_h, out_w, ddata.dptr<T>()});
      else
        throw std::invalid_argument("bilinear sampling: no atomic add for this dtype here");
    }
    if (req_grid != mxplug::kNullOp)
      Loop::Run(ctx, d[0] * out_h * out_w,
                SampleBilinearGridGradient<T, G>{og.dptr<T>(), data.dptr<T>(), grid, d[1], d[2],
                                                 d[3], out_h, out_w, dgrid, req_grid});
  }
};

template <class Loop>
class GridGeneratorKernel : public mxplug::Operator {
 public:
  GridGeneratorKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const TShape& o = out[0].shape_;
    mxplug::FloatTypeSwitch(in[0].type_flag_, "GridGenerator", [&](auto zero) {
      using T = decltype(zero);
      if (p_.transform_type == kAffine)
        Loop::Run(ctx, out[0].Size(),
                  AffineGrid<T, T>{in[0].dptr<T>(), o[2], o[3], out[0].dptr<T>(), req[0]});
      else
        Loop::Run(ctx, out[0].Size(),
                  WarpGrid<T>{in[0].dptr<T>(), o[2], o[3], out[0].dptr<T>(), req[0]});
    });
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                const std::vector<TBlob>&, const std::vector<TBlob>&,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const TShape& o = og[0].shape_;
    mxplug::FloatTypeSwitch(og[0].type_flag_, "GridGenerator", [&](auto zero) {
      using T = decltype(zero);
      if (p_.transform_type == kAffine)
        Loop::Run(ctx, ig[0].Size(),
                  AffineGridGradient<T, T>{og[0].dptr<T>(), o[2], o[3], ig[0].dptr<T>(), req[0]});
      else
        Loop::Run(ctx, ig[0].Size(),
                  WarpGridGradient<T>{og[0].dptr<T>(), o[2], o[3], ig[0].dptr<T>(), req[0]});
    });
  }

 private:
  GridGeneratorParam p_;
};

template <class Loop>
class BilinearSamplerKernel : public mxplug::Operator {
 public:
  BilinearSamplerKernel(const mxplug::KwArgs&, mxplug::Context) {}
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const TShape& g = in[1].shape_;
    mxplug::FloatTypeSwitch(in[0].type_flag_, "BilinearSampler", [&](auto zero) {
      using T = decltype(zero);
      Sampling<Loop>::template Forward<T, T>(ctx, in[0], in[1].dptr<T>(), g[2], g[3], out[0],
                                             req[0]);
    });
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                const std::vector<TBlob>& in, const std::vector<TBlob>&,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    const TShape& g = in[1].shape_;
    mxplug::FloatTypeSwitch(in[0].type_flag_, "BilinearSampler", [&](auto zero) {
      using T = decltype(zero);
      Sampling<Loop>::template Backward<T, T>(ctx, og[0], in[0], in[1].dptr<T>(), g[2], g[3], ig[0],
                                              req[0], ig[1].dptr<T>(), req[1]);
    });
  }
};

template <class Loop>
class SpatialTransformerKernel : public mxplug::Operator {
 public:
  SpatialTransformerKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    mxplug::FloatTypeSwitch(in[0].type_flag_, "SpatialTransformer", [&](auto zero) {
      using T = decltype(zero);
      Sampling<Loop>::template Forward<T, double>(ctx, in[0], Grid<T>(ctx, in[1]), H(), W(), out[0],
                                                  req[0]);
    });
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                const std::vector<TBlob>& in, const std::vector<TBlob>&,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    mxplug::FloatTypeSwitch(in[0].type_flag_, "SpatialTransformer", [&](auto zero) {
      using T = decltype(zero);
      const int64_t points = in[0].shape_[0] * 2 * H() * W();
      double* grid = Grid<T>(ctx, in[1], points);
      double* dgrid = grid + points;
      Sampling<Loop>::template Backward<T, double>(ctx, og[0], in[0], grid, H(), W(), ig[0], req[0],
                                                   dgrid, mxplug::kWriteTo);
      if (req[1] != mxplug::kNullOp)
        Loop::Run(ctx, ig[1].Size(),
                  AffineGridGradient<T, double>{dgrid, H(), W(), ig[1].dptr<T>(), req[1]});
    });
  }

 private:
  int64_t H() const { return p_.target_shape[0]; }
  int64_t W() const { return p_.target_shape[1]; }
  // The affine grid of loc, in double scratch (with room for as many more doubles as `extra`).
  template <class T>
  double* Grid(const mxplug::OpContext& ctx, const TBlob& loc, int64_t extra = 0) const {
    const int64_t points = loc.shape_[0] * 2 * H() * W();
    double* grid = ctx.requested[0].get_space_typed<double>(static_cast<size_t>(points + extra));
    Loop::Run(ctx, points, AffineGrid<T, double>{loc.dptr<T>(), H(), W(), grid, mxplug::kWriteTo});
    return grid;
  }
  SpatialTransformerParam p_;
};

template <class Loop>
void RegisterGridSamplingKernels(DLDeviceType device) {
  mxplug::sdk::RegisterKernel<GridGeneratorKernel<Loop>>("GridGenerator", device);
  mxplug::sdk::RegisterKernel<BilinearSamplerKernel<Loop>>("BilinearSampler", device);
  mxplug::sdk::RegisterKernel<SpatialTransformerKernel<Loop>>("SpatialTransformer", device);
}

}  // namespace mxplug_nn

#endif  // MXPLUG_PLUGINS_NN_GRID_SAMPLING_H_
