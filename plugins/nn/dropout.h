// Definition of Dropout (MXNet's p, mode, axes), and its kernel written once over a device's
// element loop. The mask is drawn from the device's Philox stream: mask element m is
// UniformFloat(draw m) < 1 - p, whichever device and thread computes it, so the CPU and a GPU
// drop the same elements for the same seed. dropout.cc registers the definition and the CPU
// kernel, devices/cuda/kernels/dropout.cu the CUDA kernel.
#ifndef MXPLUG_PLUGINS_NN_DROPOUT_H_
#define MXPLUG_PLUGINS_NN_DROPOUT_H_

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "mxplug/plugin.hpp"

namespace mxplug_nn {

using mxplug::OpReqType;
using mxplug::TBlob;
using mxplug::TShape;

enum DropoutMode { kTraining, kAlways };

struct DropoutParam : mxplug::Parameter<DropoutParam> {
  float p;
  int mode;
  TShape axes;
  std::optional<bool> cudnn_off;
  MXPLUG_DECLARE_PARAMETER(DropoutParam) {
    MXPLUG_DECLARE_FIELD(p).set_default(0.5f).set_range(0, 1).describe(
        "Fraction of the input that gets dropped out during training time.");
    MXPLUG_DECLARE_FIELD(mode)
        .set_default(kTraining)
        .add_enum("training", kTraining)
        .add_enum("always", kAlways)
        .describe("Whether to only turn on dropout during training or always.");
    MXPLUG_DECLARE_FIELD(axes)
        .set_default(TShape(std::vector<int64_t>{}))
        .describe("Axes along which the same mask is shared (variational dropout).");
    MXPLUG_DECLARE_FIELD(cudnn_off)
        .set_default(std::nullopt)
        .describe("Accepted for compatibility.");
  }
};

// In place both ways: each element is read before it is written.
class DropoutProp : public mxplug::FirstInPlace<> {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListOutputs() const override { return {"output", "mask"}; }
  int NumVisibleOutputs() const override { return 1; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    const TShape& d = (*in)[0];
    if (d.ndim() < 0) return false;
    for (int64_t a : param_.axes)
      if (a < -d.ndim() || a >= d.ndim())
        throw std::out_of_range("axes " + param_.axes.ToString() + " is out of range for data " +
                                d.ToString());
    (*out)[0] = (*out)[1] = d;
    return d.IsKnown();
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>&,
                                             const std::vector<int>& out) const override {
    return {og[0], out[1]};
  }
  std::vector<mxplug::ResourceRequest> ForwardResource(const std::vector<TShape>&) const override {
    return {mxplug::ResourceRequest::kRandom};
  }

 private:
  DropoutParam param_;
};

/*! \brief Which mask element each data element uses: the mask has the data's shape with the
 * shared axes collapsed to 1, and is broadcast along them. */
struct MaskIndex {
  static constexpr int kMaxDims = 8;
  int ndim = 0;  // 0: no shared axes, element i uses mask element i
  int64_t shape[kMaxDims] = {};
  int64_t stride[kMaxDims] = {};  // the mask's strides, 0 along shared axes
  MXPLUG_XINLINE int64_t operator()(int64_t i) const {
    if (ndim == 0) return i;
    int64_t m = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      m += (i % shape[d]) * stride[d];
      i /= shape[d];
    }
    return m;
  }
};

/*! \brief The mask index of data of shape s with `axes` shared, and the mask's size. */
inline MaskIndex MakeMaskIndex(const TShape& s, const TShape& axes, int64_t* mask_size) {
  MaskIndex ix;
  *mask_size = s.Size();
  if (axes.ndim() <= 0) return ix;
  if (s.ndim() > MaskIndex::kMaxDims)
    throw std::invalid_argument("Dropout with axes supports up to " +
                                std::to_string(MaskIndex::kMaxDims) + " axes, not " +
                                std::to_string(s.ndim()));
  std::vector<int64_t> md(s.begin(), s.end());
  for (int64_t a : axes) md[a < 0 ? a + s.ndim() : a] = 1;
  ix.ndim = s.ndim();
  int64_t st = 1;
  for (int d = s.ndim() - 1; d >= 0; --d) {
    ix.shape[d] = s[d];
    ix.stride[d] = md[d] == 1 ? 0 : st;
    st *= md[d];
  }
  *mask_size = st;
  return ix;
}

/*! \brief y = x * mask and the mask, at element i; the mask element is 1 / (1 - p) where its
 * draw falls below 1 - p, else 0 (and 1 everywhere when dropout is off). */
template <class T>
struct DropoutForward {
  const T* x;
  T* y;
  T* mask;
  MaskIndex index;
  bool active;
  uint64_t key, counter;
  float keep;
  double scale;  // 1 / keep
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    C m = C(1);
    if (active) {
      const float u = mxplug::UniformFloatOf(mxplug::PhiloxDraw(key, counter, index(i)));
      m = u < keep ? static_cast<C>(scale) : C(0);
    }
    const C v = static_cast<C>(x[i]) * m;  // x[i] is read before y[i], maybe the same, is written
    mxplug::StoreAs<C>(y[i], req, v);
    mask[i] = static_cast<T>(m);
  }
};

template <class T>
struct DropoutBackward {
  const T* og;
  const T* mask;
  T* dx;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    mxplug::StoreAs<C>(dx[i], req, static_cast<C>(og[i]) * static_cast<C>(mask[i]));
  }
};

/*! \brief Dropout on a device whose element loop is Loop. */
template <class Loop>
class DropoutKernel : public mxplug::Operator {
 public:
  DropoutKernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    const bool active = (ctx.is_train || p_.mode == kAlways) && p_.p > 0;
    int64_t mask_size = 0;
    const MaskIndex index = MakeMaskIndex(in[0].shape_, p_.axes, &mask_size);
    uint64_t key = 0, counter = 0;
    if (active) {
      const mxplug::RandomStream r = ctx.requested[0].get_random(static_cast<uint64_t>(mask_size));
      key = r.key(), counter = r.counter();
    }
    const float keep = 1.0f - p_.p;
    mxplug::RealTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(ctx, in[0].Size(),
                DropoutForward<T>{in[0].dptr<T>(), out[0].dptr<T>(), out[1].dptr<T>(), index,
                                  active, key, counter, keep, 1.0 / double(keep), req[0]});
    });
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<TBlob>& og,
                const std::vector<TBlob>&, const std::vector<TBlob>& out,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& ig,
                const std::vector<TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    mxplug::RealTypeSwitch(og[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(ctx, ig[0].Size(),
                DropoutBackward<T>{og[0].dptr<T>(), out[1].dptr<T>(), ig[0].dptr<T>(), req[0]});
    });
  }

 private:
  DropoutParam p_;
};

}  // namespace mxplug_nn

#endif  // MXPLUG_PLUGINS_NN_DROPOUT_H_
