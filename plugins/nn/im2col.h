// im2col and col2im (MXNet's names and parameters): im2col unfolds the sliding blocks of a batch
// of images (N, C, spatial...) into columns (N, C * prod(kernel), blocks), as a convolution reads
// them; col2im folds columns back, summing where blocks overlap. Each is the other's gradient.
// The definitions, registered by im2col.cc, and the computation as per-element gathers every
// device runs (no atomics: a folded pixel sums the column entries that read it); CUDA's and
// HIP's in devices/cuda/kernels/im2col.cu.
#ifndef MXPLUG_PLUGINS_NN_IM2COL_H_
#define MXPLUG_PLUGINS_NN_IM2COL_H_

#include <stdexcept>
#include <string>
#include <vector>

#include "mxplug/plugin.hpp"

namespace mxplug_nn {

using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;

// The sliding-block fields both ops share, inside MXPLUG_DECLARE_PARAMETER.
#define MXPLUG_DECLARE_BLOCK_FIELDS()                                                       \
  MXPLUG_DECLARE_FIELD(kernel).describe("Sliding kernel size: (w,), (h, w) or (d, h, w)."); \
  MXPLUG_DECLARE_FIELD(stride)                                                              \
      .set_default(TShape(std::vector<int64_t>{}))                                          \
      .describe(                                                                            \
          "The stride between adjacent sliding blocks in spatial dimension: (w,), (h, "     \
          "w) or (d, h, w). Defaults to 1 for each dimension.");                            \
  MXPLUG_DECLARE_FIELD(dilate)                                                              \
      .set_default(TShape(std::vector<int64_t>{}))                                          \
      .describe(                                                                            \
          "The spacing between adjacent kernel points: (w,), (h, w) or (d, h, w). "         \
          "Defaults to 1 for each dimension.");                                             \
  MXPLUG_DECLARE_FIELD(pad)                                                                 \
      .set_default(TShape(std::vector<int64_t>{}))                                          \
      .describe(                                                                            \
          "The zero-value padding size on both sides of spatial dimension: (w,), (h, "      \
          "w) or (d, h, w). Defaults to no padding.")

struct Im2colParam : mxplug::Parameter<Im2colParam> {
  TShape kernel, stride, dilate, pad;
  MXPLUG_DECLARE_PARAMETER(Im2colParam) { MXPLUG_DECLARE_BLOCK_FIELDS(); }
};

struct Col2imParam : mxplug::Parameter<Col2imParam> {
  TShape output_size, kernel, stride, dilate, pad;
  MXPLUG_DECLARE_PARAMETER(Col2imParam) {
    MXPLUG_DECLARE_FIELD(output_size)
        .describe("The spatial dimension of image array: (w,), (h, w) or (d, h, w).");
    MXPLUG_DECLARE_BLOCK_FIELDS();
  }
};

constexpr int kMaxBlockDims = 3;

/*! \brief Where the blocks of images of `image` spatial size are: per spatial axis the image's
 * size, the blocks' count, the kernel, stride, dilation and padding; and the totals. */
struct BlockGeometry {
  int nd = 0;
  int64_t image[kMaxBlockDims] = {}, blocks[kMaxBlockDims] = {}, k[kMaxBlockDims] = {},
          s[kMaxBlockDims] = {}, d[kMaxBlockDims] = {}, p[kMaxBlockDims] = {};
  int64_t channels = 0, kernel_size = 1, block_count = 1, image_size = 1;

  /*! \throws std::invalid_argument naming the op where the parameters do not fit. */
  template <class P>
  BlockGeometry(const P& param, const TShape& spatial, int64_t c, const char* op) {
    nd = param.kernel.ndim();
    if (nd < 1 || nd > kMaxBlockDims)
      throw std::invalid_argument(std::string(op) + ": kernel must have 1 to 3 dimensions, got " +
                                  param.kernel.ToString());
    auto check = [&](const TShape& t, const char* name) {
      if (t.ndim() != 0 && t.ndim() != nd)
        throw std::invalid_argument(std::string(op) + ": " + name + " " + t.ToString() +
                                    " must have the kernel's " + std::to_string(nd) +
                                    " dimensions");
    };
    check(param.stride, "stride"), check(param.dilate, "dilate"), check(param.pad, "pad");
    channels = c;
    for (int i = 0; i < nd; ++i) {
      image[i] = spatial[i], k[i] = param.kernel[i];
      s[i] = param.stride.ndim() ? param.stride[i] : 1;
      d[i] = param.dilate.ndim() ? param.dilate[i] : 1;
      p[i] = param.pad.ndim() ? param.pad[i] : 0;
      if (k[i] < 1 || s[i] < 1 || d[i] < 1 || p[i] < 0)
        throw std::invalid_argument(std::string(op) + ": kernel, stride and dilate must be " +
                                    "positive and pad not negative");
      const int64_t span = d[i] * (k[i] - 1) + 1, padded = image[i] + 2 * p[i];
      if (span > padded)
        throw std::invalid_argument(std::string(op) +
                                    ": kernel size exceed input: the dilated "
                                    "kernel spans " +
                                    std::to_string(span) + " of a padded " +
                                    std::to_string(padded));
      blocks[i] = (padded - span) / s[i] + 1;
      kernel_size *= k[i], block_count *= blocks[i], image_size *= image[i];
    }
  }

  /*! \brief Image element offset (within a channel) read by kernel point kp of block b, or -1
   * where that falls in the padding. */
  MXPLUG_XINLINE int64_t ImageOffset(int64_t kp, int64_t b) const {
    int64_t offset = 0, kr = kp, br = b, scale = 1;
    for (int i = nd - 1; i >= 0; --i) {
      const int64_t ki = kr % k[i], bi = br % blocks[i];
      kr /= k[i], br /= blocks[i];
      const int64_t x = bi * s[i] - p[i] + ki * d[i];
      if (x < 0 || x >= image[i]) return -1;
      offset += x * scale;
      scale *= image[i];
    }
    return offset;
  }
};

// Column element o of (N, C * K, L): image element (n, c, position of kernel point and block).
template <class T>
struct Unfold {
  BlockGeometry g;
  const T* image;
  T* cols;
  int req;
  MXPLUG_XINLINE void operator()(int64_t o) const {
    const int64_t b = o % g.block_count, row = o / g.block_count;  // row = (n * C + c) * K + kp
    const int64_t kp = row % g.kernel_size, nc = row / g.kernel_size;
    const int64_t at = g.ImageOffset(kp, b);
    using C = mxplug::ComputeType<T>;
    mxplug::StoreAs<C>(cols[o], req, at < 0 ? C(0) : static_cast<C>(image[nc * g.image_size + at]));
  }
};

// Image element o of (N, C, spatial): the sum of the column entries that read it.
template <class T>
struct Fold {
  BlockGeometry g;
  const T* cols;
  T* image;
  int req;
  MXPLUG_XINLINE void operator()(int64_t o) const {
    const int64_t nc = o / g.image_size, at = o % g.image_size;
    using C = mxplug::ComputeType<T>;
    C sum = 0;
    // Every kernel point kp reads this pixel from at most one block: solve for it per axis.
    for (int64_t kp = 0; kp < g.kernel_size; ++kp) {
      int64_t kr = kp, rest = at, b = 0, scale = 1;
      bool hit = true;
      for (int i = g.nd - 1; i >= 0 && hit; --i) {
        const int64_t ki = kr % g.k[i], x = rest % g.image[i];
        kr /= g.k[i], rest /= g.image[i];
        const int64_t start = x + g.p[i] - ki * g.d[i];  // block i's origin times its stride
        hit = start >= 0 && start % g.s[i] == 0 && start / g.s[i] < g.blocks[i];
        b += (start / g.s[i]) * scale;
        scale *= g.blocks[i];
      }
      if (hit) sum += static_cast<C>(cols[(nc * g.kernel_size + kp) * g.block_count + b]);
    }
    mxplug::StoreAs<C>(image[o], req, sum);
  }
};

/*! \brief im2col (kFold false) or col2im (kFold true) on a device whose element loop is Loop:
 * forward unfolds (folds), backward folds (unfolds) the output's gradient. */
template <class Param, bool kFold>
class BlockProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& x = (*in)[0];
    if (!x.IsKnown()) return false;
    const int nd = param_.kernel.ndim();
    const char* op = kFold ? "col2im" : "im2col";
    if constexpr (kFold) {
      if (x.ndim() != 3)
        throw std::invalid_argument("col2im: data must be (N, C * prod(kernel), blocks), got " +
                                    x.ToString());
      if (param_.output_size.ndim() != nd)
        throw std::invalid_argument("col2im: output_size " + param_.output_size.ToString() +
                                    " must have the kernel's dimensions");
      const BlockGeometry g(param_, param_.output_size, 0, op);
      if (x[1] % g.kernel_size != 0)
        throw std::invalid_argument("col2im: data's axis 1 (" + std::to_string(x[1]) +
                                    ") must be a multiple of the kernel's size " +
                                    std::to_string(g.kernel_size));
      if (x[2] != g.block_count)
        throw std::invalid_argument(
            "col2im: output size does not match convolution parameters: " + std::to_string(x[2]) +
            " blocks given, " + std::to_string(g.block_count) + " expected");
      std::vector<int64_t> dims{x[0], x[1] / g.kernel_size};
      dims.insert(dims.end(), param_.output_size.begin(), param_.output_size.end());
      (*out)[0] = TShape(dims);
    } else {
      if (x.ndim() != nd + 2)
        throw std::invalid_argument("im2col: data must be (N, C) and the kernel's " +
                                    std::to_string(nd) + " spatial axes, got " + x.ToString());
      const BlockGeometry g(param_, Spatial(x), x[1], op);
      (*out)[0] = TShape{x[0], x[1] * g.kernel_size, g.block_count};
    }
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return {og[0]};
  }

  static TShape Spatial(const TShape& x) {
    return TShape(std::vector<int64_t>(x.begin() + 2, x.end()));
  }

 private:
  Param param_;
};

using Im2colProp = BlockProp<Im2colParam, false>;
using Col2imProp = BlockProp<Col2imParam, true>;

template <class Param, bool kFold, class Loop>
class BlockKernel : public mxplug::Operator {
 public:
  BlockKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { param_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    Move(ctx, in[0], out[0], req[0], kFold);
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                const std::vector<TBlob>&, const std::vector<TBlob>&,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    Move(ctx, og[0], ig[0], req[0], !kFold);
  }

 private:
  // Folds `from` (columns) into `to` (images), or unfolds `from` (images) into `to`.
  void Move(const mxplug::OpContext& ctx, const TBlob& from, const TBlob& to, OpReqType req,
            bool fold) const {
    if (req == mxplug::kNullOp || to.Size() == 0) return;
    const TBlob& image = fold ? to : from;
    const BlockGeometry g(param_, BlockProp<Param, kFold>::Spatial(image.shape_), image.shape_[1],
                          kFold ? "col2im" : "im2col");
    mxplug::FloatTypeSwitch(from.type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      if (fold)
        Loop::Run(ctx, to.Size(), Fold<T>{g, from.dptr<T>(), to.dptr<T>(), req});
      else
        Loop::Run(ctx, to.Size(), Unfold<T>{g, from.dptr<T>(), to.dptr<T>(), req});
    });
  }
  Param param_;
};

template <class Loop>
void RegisterIm2colKernels(DLDeviceType device) {
  mxplug::sdk::RegisterKernel<BlockKernel<Im2colParam, false, Loop>>("im2col", device);
  mxplug::sdk::RegisterKernel<BlockKernel<Col2imParam, true, Loop>>("col2im", device);
}

}  // namespace mxplug_nn

#endif  // MXPLUG_PLUGINS_NN_IM2COL_H_
