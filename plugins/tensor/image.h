// Definitions of MXNet 1.9.1's deterministic image operators (mx.nd.image / mx.sym.image), on
// (H, W, C) images or (N, H, W, C) batches, channels last as decoded:
//   _image_to_tensor        (.., H, W, C) of any dtype, values in [0, 255], to float32
//                           (.., C, H, W) in [0, 1];
//   _image_normalize        (.., C, H, W): (x - mean[c]) / std[c], mean and std of 1 or C values;
//   _image_flip_left_right  the image mirrored (the W axis reversed), (H, W, C) only;
//   _image_flip_top_bottom  upside down (the H axis reversed), (H, W, C) only;
//   _image_crop             the (width, height) window at column x, row y.
// Each output element reads one input element, so forward and backward are one element loop
// each over a device's Loop (image.cc registers the CPU's, devices/cuda/kernels/image.cu the
// GPU's). The gradients are the maps' adjoints; MXNet 1.9.1's flips pass the gradient through
// unflipped and its to_tensor has none, both departures not copied (docs/python.md).
#ifndef MXPLUG_PLUGINS_TENSOR_IMAGE_H_
#define MXPLUG_PLUGINS_TENSOR_IMAGE_H_

#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "mxplug/plugin.hpp"

namespace mxplug_tensor {
namespace image {

using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;

enum class ImageOp { kToTensor, kNormalize, kFlipLeftRight, kFlipTopBottom, kCrop };

struct NormalizeParam : mxplug::Parameter<NormalizeParam> {
  std::vector<float> mean, std;
  MXPLUG_DECLARE_PARAMETER(NormalizeParam) {
    MXPLUG_DECLARE_FIELD(mean)
        .set_default(std::vector<float>{0, 0, 0, 0})
        .describe("Sequence of means for each channel. Default value is 0.");
    MXPLUG_DECLARE_FIELD(std)
        .set_default(std::vector<float>{1, 1, 1, 1})
        .describe("Sequence of standard deviations for each channel. Default value is 1.");
  }
};

struct CropParam : mxplug::Parameter<CropParam> {
  int x = 0, y = 0, width = 0, height = 0;
  MXPLUG_DECLARE_PARAMETER(CropParam) {
    MXPLUG_DECLARE_FIELD(x).describe("Left boundary of the cropping area.");
    MXPLUG_DECLARE_FIELD(y).describe("Top boundary of the cropping area.");
    MXPLUG_DECLARE_FIELD(width).describe("Width of the cropping area.");
    MXPLUG_DECLARE_FIELD(height).describe("Height of the cropping area.");
  }
};

struct NoParam : mxplug::Parameter<NoParam> {
  MXPLUG_DECLARE_PARAMETER(NoParam) {}
};

template <ImageOp K>
using ParamOf = std::conditional_t<K == ImageOp::kNormalize, NormalizeParam,
                                   std::conditional_t<K == ImageOp::kCrop, CropParam, NoParam>>;

/*! \brief Where output element i of an op reads its input: the shapes (4-d, a single image as
 * a batch of one) and what the op needs of its parameters. */
struct ImageMap {
  static constexpr int kMaxChannels = 4;
  ImageOp op = ImageOp::kToTensor;
  int64_t N = 1, H = 0, W = 0, C = 0;  // the input's, channels last (normalize: (N, C, H, W))
  int64_t x = 0, y = 0, w = 0, h = 0;  // crop's window
  float mean[kMaxChannels] = {}, inv_std[kMaxChannels] = {};
  int64_t mean_count = 1, std_count = 1;

  /*! \brief The input element output element i reads. */
  MXPLUG_XINLINE int64_t Source(int64_t i) const {
    switch (op) {
      case ImageOp::kToTensor: {  // out (N, C, H, W) from in (N, H, W, C)
        const int64_t v = i % W, u = (i / W) % H, c = (i / (W * H)) % C, n = i / (W * H * C);
        return ((n * H + u) * W + v) * C + c;
      }
      case ImageOp::kNormalize:
        return i;
      case ImageOp::kFlipLeftRight: {
        const int64_t c = i % C, v = (i / C) % W, rest = i / (C * W);
        return (rest * W + (W - 1 - v)) * C + c;
      }
      case ImageOp::kFlipTopBottom: {
        const int64_t inner = W * C, u = (i / inner) % H, n = i / (inner * H);
        return (n * H + (H - 1 - u)) * inner + i % inner;
      }
      default: {  // crop: out (N, h, w, C)
        const int64_t c = i % C, v = (i / C) % w, u = (i / (C * w)) % h, n = i / (C * w * h);
        return ((n * H + y + u) * W + x + v) * C + c;
      }
    }
  }
  /*! \brief The factor output element i scales its input by. */
  MXPLUG_XINLINE float Scale(int64_t i) const {
    if (op == ImageOp::kToTensor) return 1.0f / 255.0f;
    if (op == ImageOp::kNormalize) {
      const int64_t c = (i / (W * H)) % C;
      return inv_std[std_count == 1 ? 0 : c];
    }
    return 1.0f;
  }
  MXPLUG_XINLINE float Shift(int64_t i) const {
    if (op != ImageOp::kNormalize) return 0.0f;
    const int64_t c = (i / (W * H)) % C;
    return -mean[mean_count == 1 ? 0 : c] * inv_std[std_count == 1 ? 0 : c];
  }
};

inline std::string Describe(const std::vector<float>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

/*! \brief The map of op K for input shape s (checked: the names of MXNet's messages). */
template <ImageOp K>
ImageMap MakeImageMap(const ParamOf<K>& p, const TShape& s) {
  ImageMap m;
  m.op = K;
  const bool normalize = K == ImageOp::kNormalize;
  if (s.ndim() != 3 && s.ndim() != 4)
    throw std::invalid_argument(
        std::string("data has shape ") + s.ToString() + "; expected " +
        (normalize ? "(C, H, W) or (N, C, H, W)" : "(H, W, C) or (N, H, W, C)"));
  if ((K == ImageOp::kFlipLeftRight || K == ImageOp::kFlipTopBottom) && s.ndim() != 3)
    throw std::invalid_argument("Input image must have shape (height, width, channels), but got " +
                                s.ToString());
  const int b = s.ndim() == 4 ? 1 : 0;
  m.N = b ? s[0] : 1;
  if constexpr (K == ImageOp::kNormalize) {
    m.C = s[b], m.H = s[b + 1], m.W = s[b + 2];
    for (const auto* v : {&p.mean, &p.std})
      if (v->size() != 1 && static_cast<int64_t>(v->size()) != m.C)
        throw std::invalid_argument(std::string("Invalid ") + (v == &p.mean ? "mean" : "std") +
                                    " for input with shape " + s.ToString() + ". " +
                                    (v == &p.mean ? "mean" : "std") + " must have either 1 or " +
                                    std::to_string(m.C) + " elements, but got " + Describe(*v));
    if (m.C > ImageMap::kMaxChannels && (p.mean.size() > 1 || p.std.size() > 1))
      throw std::invalid_argument("normalize takes one mean and std per channel for up to " +
                                  std::to_string(ImageMap::kMaxChannels) + " channels, not " +
                                  std::to_string(m.C));
    m.mean_count = static_cast<int64_t>(p.mean.size());
    m.std_count = static_cast<int64_t>(p.std.size());
    for (size_t c = 0; c < p.mean.size(); ++c) m.mean[c] = p.mean[c];
    for (size_t c = 0; c < p.std.size(); ++c) {
      if (p.std[c] == 0) throw std::invalid_argument("std " + Describe(p.std) + " has a 0");
      m.inv_std[c] = 1.0f / p.std[c];
    }
  } else {
    m.H = s[b], m.W = s[b + 1], m.C = s[b + 2];
  }
  if constexpr (K == ImageOp::kCrop) {
    m.x = p.x, m.y = p.y, m.w = p.width, m.h = p.height;
    if (p.x < 0 || p.y < 0 || p.width < 1 || p.height < 1 || p.x + p.width > m.W ||
        p.y + p.height > m.H)
      throw std::invalid_argument(
          "the window x=" + std::to_string(p.x) + ", y=" + std::to_string(p.y) +
          ", width=" + std::to_string(p.width) + ", height=" + std::to_string(p.height) +
          " does not fit in the " + std::to_string(m.W) + "x" + std::to_string(m.H) + " image");
  }
  return m;
}

template <ImageOp K>
TShape OutputShape(const ImageMap& m, int ndim) {
  std::vector<int64_t> d;
  if (ndim == 4) d.push_back(m.N);
  if (K == ImageOp::kToTensor)
    d.insert(d.end(), {m.C, m.H, m.W});
  else if (K == ImageOp::kCrop)
    d.insert(d.end(), {m.h, m.w, m.C});
  else if (K == ImageOp::kNormalize)
    d.insert(d.end(), {m.C, m.H, m.W});
  else
    d.insert(d.end(), {m.H, m.W, m.C});
  return TShape(d);
}

/*! \brief What every image op's property shares: one input and one output, parameters of
 * type Param, an output shape from the known input shape (OutputShape, which checks it), the
 * input's dtype unless OutputType says otherwise, and a gradient that reads only the head
 * gradient. */
template <class Param>
class ImageOpProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& s = (*in)[0];
    if (s.ndim() < 0 || !s.IsKnown()) return false;
    (*out)[0] = OutputShape(s);
    return true;
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    if ((*in)[0] == kMXPUnknownDType) return false;
    (*out)[0] = OutputType((*in)[0]);
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>&,
                                             const std::vector<int>&) const override {
    return {og[0]};
  }

 protected:
  virtual TShape OutputShape(const TShape& s) const = 0;
  virtual int OutputType(int in) const { return in; }
  Param param_;
};

template <ImageOp K>
class ImageProp : public ImageOpProp<ParamOf<K>> {
 public:
  // Scratch for a gradient that is not written whole (crop's, or any added to).
  std::vector<mxplug::ResourceRequest> BackwardResource(const std::vector<TShape>&) const override {
    return {mxplug::ResourceRequest::kTempSpace};
  }

 protected:
  TShape OutputShape(const TShape& s) const override {
    return image::OutputShape<K>(MakeImageMap<K>(this->param_, s), s.ndim());
  }
  int OutputType(int in) const override {
    if (K == ImageOp::kNormalize && in != kMXPFloat16 && in != kMXPFloat32 && in != kMXPFloat64)
      throw std::invalid_argument("data has dtype " + mxplug::DTypeName(in) +
                                  "; normalize takes float16, float32 or float64");
    return K == ImageOp::kToTensor ? kMXPFloat32 : in;
  }
};

template <class In, class Out>
struct ImageForward {
  const In* in;
  Out* out;
  ImageMap map;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<Out>;
    const C v = static_cast<C>(static_cast<mxplug::ComputeType<In>>(in[map.Source(i)]));
    mxplug::StoreAs<C>(out[i], req, v * C(map.Scale(i)) + C(map.Shift(i)));
  }
};

/*! \brief The gradient: every op reads each input element at most once, so the input gradient
 * is the output gradient scattered back (zero where nothing read it: crop's outside). */
template <class G, class T>
struct ImageBackward {
  const G* og;
  T* grad;
  ImageMap map;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    grad[map.Source(i)] = static_cast<T>(static_cast<C>(og[i]) * C(map.Scale(i)));
  }
};

/*! \brief to = from (req): a gradient computed in scratch, onto its array. */
template <class T>
struct ImageStore {
  const T* from;
  T* to;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    mxplug::StoreAs<mxplug::ComputeType<T>>(to[i], req, mxplug::ComputeType<T>(from[i]));
  }
};

template <class T>
struct ImageZeroFill {
  T* to;
  MXPLUG_XINLINE void operator()(int64_t i) const { to[i] = T(0); }
};

template <ImageOp K, class Loop>
class ImageKernel : public mxplug::Operator {
 public:
  ImageKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const ImageMap m = MakeImageMap<K>(p_, in[0].shape_);
    mxplug::TypeSwitch(in[0].type_flag_, [&](auto in_zero) {
      using In = std::decay_t<decltype(in_zero)>;
      mxplug::TypeSwitch(out[0].type_flag_, [&](auto out_zero) {
        using Out = std::decay_t<decltype(out_zero)>;
        if constexpr (K == ImageOp::kToTensor || std::is_same_v<In, Out>)
          Loop::Run(ctx, out[0].Size(),
                    ImageForward<In, Out>{in[0].dptr<In>(), out[0].dptr<Out>(), m, req[0]});
      });
    });
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                const std::vector<TBlob>&, const std::vector<TBlob>&,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const ImageMap m = MakeImageMap<K>(p_, ig[0].shape_);
    const int t = ig[0].type_flag_;
    if (t != kMXPFloat16 && t != kMXPFloat32 && t != kMXPFloat64) {
      Loop::Zero(ctx, ig[0], req[0]);  // an integer image has no gradient
      return;
    }
    mxplug::FloatTypeSwitch(t, "", [&](auto zero) {
      using T = decltype(zero);
      mxplug::FloatTypeSwitch(og[0].type_flag_, "", [&](auto g_zero) {
        using G = decltype(g_zero);
        // Crop leaves elements no output read: the gradient goes through scratch (zeroed) unless
        // it may be written whole in place.
        const bool whole = K != ImageOp::kCrop;
        T* target = ig[0].dptr<T>();
        const bool direct = whole && req[0] != mxplug::kAddTo;
        if (!direct) {
          target = ctx.resource(mxplug::ResourceRequest::kTempSpace)
                       .get_space_typed<T>(static_cast<size_t>(ig[0].Size()));
          Loop::Run(ctx, ig[0].Size(), ImageZeroFill<T>{target});
        }
        Loop::Run(ctx, og[0].Size(), ImageBackward<G, T>{og[0].dptr<G>(), target, m});
        if (!direct) Loop::Run(ctx, ig[0].Size(), ImageStore<T>{target, ig[0].dptr<T>(), req[0]});
      });
    });
  }

 private:
  ParamOf<K> p_;
};

/*! \brief Calls visit.template Op<K>(name, doc) for every image op: the one list the definitions
 * and each device's kernels register from. */
template <class Visitor>
void ForEachImageOp(Visitor&& visit) {
  visit.template Op<ImageOp::kToTensor>(
      "_image_to_tensor",
      "Converts (H, W, C) or (N, H, W, C) images in [0, 255] to float32 (C, H, W) or "
      "(N, C, H, W) tensors in [0, 1].");
  visit.template Op<ImageOp::kNormalize>(
      "_image_normalize",
      "Normalizes (C, H, W) or (N, C, H, W) tensors per channel: (x - mean[c]) / std[c].");
  visit.template Op<ImageOp::kFlipLeftRight>("_image_flip_left_right",
                                             "Mirrors (H, W, C) images left to right.");
  visit.template Op<ImageOp::kFlipTopBottom>("_image_flip_top_bottom",
                                             "Turns (H, W, C) images upside down.");
  visit.template Op<ImageOp::kCrop>("_image_crop",
                                    "The (width, height) window at column x, row y of (H, W, C) "
                                    "images.");
}

}  // namespace image
}  // namespace mxplug_tensor

#endif  // MXPLUG_PLUGINS_TENSOR_IMAGE_H_
