// Definition of Pooling_v1: MXNet 0.x's 2-d pooling, kept (deprecated) by MXNet 1.9.1 for old
// models. It differs from Pooling where the window meets the padding: the input is padded with
// zeros that take part, so a max over a window that reaches into the padding is at least 0; an
// average always divides by the whole kernel's area. Windows that run past the padded input
// (the 'full' convention) are cut there. Its gradient is MXNet's too: a max's goes to every
// element equal to the maximum. pooling.cc registers the definition and the CPU kernel,
// devices/cuda/kernels/pooling.cu the GPU's; backward gathers per input element.
#ifndef MXPLUG_PLUGINS_NN_POOLING_V1_H_
#define MXPLUG_PLUGINS_NN_POOLING_V1_H_

#include <stdexcept>
#include <string>
#include <vector>

#include "mxplug/plugin.hpp"

namespace mxplug_nn {

enum PoolV1Type { kPoolV1Max, kPoolV1Avg, kPoolV1Sum };
enum PoolV1Convention { kPoolV1Valid, kPoolV1Full };

struct PoolingV1Param : mxplug::Parameter<PoolingV1Param> {
  mxplug::TShape kernel, stride, pad;
  int pool_type = kPoolV1Max, pooling_convention = kPoolV1Valid;
  bool global_pool = false;
  MXPLUG_DECLARE_PARAMETER(PoolingV1Param) {
    MXPLUG_DECLARE_FIELD(kernel)
        .set_default(mxplug::TShape(std::vector<int64_t>{}))
        .describe("pooling kernel size: (y, x) or (d, y, x)");
    MXPLUG_DECLARE_FIELD(pool_type)
        .set_default(kPoolV1Max)
        .add_enum("max", kPoolV1Max)
        .add_enum("avg", kPoolV1Avg)
        .add_enum("sum", kPoolV1Sum)
        .describe("Pooling type to be applied.");
    MXPLUG_DECLARE_FIELD(global_pool)
        .set_default(false)
        .describe("Ignore kernel size, do global pooling based on current input feature map. ");
    MXPLUG_DECLARE_FIELD(pooling_convention)
        .set_default(kPoolV1Valid)
        .add_enum("full", kPoolV1Full)
        .add_enum("valid", kPoolV1Valid)
        .describe("Pooling convention to be applied.");
    MXPLUG_DECLARE_FIELD(stride)
        .set_default(mxplug::TShape(std::vector<int64_t>{}))
        .describe("stride: for pooling (y, x) or (d, y, x)");
    MXPLUG_DECLARE_FIELD(pad)
        .set_default(mxplug::TShape(std::vector<int64_t>{}))
        .describe("pad for pooling: (y, x) or (d, y, x)");
  }
};

/*! \brief One call's window: the input (N, C, H, W), kernel, stride, pad and output size. */
struct PoolV1Window {
  int64_t N = 0, C = 0, H = 0, W = 0, kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, oh = 0,
          ow = 0;
  int type = kPoolV1Max;

  PoolV1Window(const PoolingV1Param& p, const mxplug::TShape& d)
      : N(d[0]), C(d[1]), H(d[2]), W(d[3]), type(p.pool_type) {
    if (p.global_pool) {
      kh = H, kw = W;
    } else {
      kh = p.kernel[0], kw = p.kernel[1];
      if (p.stride.ndim() == 2) sh = p.stride[0], sw = p.stride[1];
      if (p.pad.ndim() == 2) ph = p.pad[0], pw = p.pad[1];
    }
    const bool full = p.pooling_convention == kPoolV1Full && !p.global_pool;
    oh = Size(H + 2 * ph, kh, sh, full);
    ow = Size(W + 2 * pw, kw, sw, full);
  }
  static int64_t Size(int64_t padded, int64_t k, int64_t s, bool full) {
    const int64_t span = padded - k;
    return 1 + (full ? (span + s - 1) / s : span / s);
  }
  MXPLUG_XINLINE int64_t PaddedH() const { return H + 2 * ph; }
  MXPLUG_XINLINE int64_t PaddedW() const { return W + 2 * pw; }
};

inline void CheckPoolingV1(const PoolingV1Param& p) {
  if (p.global_pool) return;
  if (p.kernel.ndim() != 2)
    throw std::invalid_argument(
        "kernel " + p.kernel.ToString() +
        ": Pooling_v1 takes a 2-d kernel (y, x) (MXNet 0.x's models pool 2-d images)");
  for (const mxplug::TShape* t : {&p.stride, &p.pad})
    if (t->ndim() != 0 && t->ndim() != 2)
      throw std::invalid_argument("stride and pad must have 2 values like the kernel " +
                                  p.kernel.ToString() + ", not " + t->ToString());
  for (int i = 0; i < p.stride.ndim(); ++i)
    if (p.stride[i] < 1)
      throw std::invalid_argument("stride " + p.stride.ToString() + " must be at least 1");
}

class PoolingV1Prop : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override {
    param_.Init(kwargs);
    CheckPoolingV1(param_);
  }
  bool InferShape(std::vector<mxplug::TShape>* in, std::vector<mxplug::TShape>* out,
                  std::vector<mxplug::TShape>*) const override {
    const mxplug::TShape& d = (*in)[0];
    if (d.ndim() < 0) return false;
    if (d.ndim() != 4)
      throw std::invalid_argument("data has shape " + d.ToString() +
                                  "; Pooling_v1 expects (batch, channel, height, width)");
    if (!d.IsKnown()) return false;
    const PoolV1Window w(param_, d);
    if (w.kh > w.PaddedH() || w.kw > w.PaddedW() || w.kh < 1 || w.kw < 1)
      throw std::invalid_argument("kernel (" + std::to_string(w.kh) + ", " + std::to_string(w.kw) +
                                  ") does not fit data " + d.ToString() + " padded by (" +
                                  std::to_string(w.ph) + ", " + std::to_string(w.pw) + ")");
    (*out)[0] = mxplug::TShape{w.N, w.C, w.oh, w.ow};
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>& out) const override {
    return {og[0], in[0], out[0]};
  }

 private:
  PoolingV1Param param_;
};

/*! \brief Element (n, c, y, x) of the zero-padded input, in padded coordinates. */
template <class T>
MXPLUG_XINLINE mxplug::ComputeType<T> PoolV1At(const T* x, const PoolV1Window& w, int64_t nc,
                                               int64_t y, int64_t v) {
  y -= w.ph, v -= w.pw;
  if (y < 0 || y >= w.H || v < 0 || v >= w.W) return 0;
  return mxplug::ComputeType<T>(x[(nc * w.H + y) * w.W + v]);
}

template <class T>
struct PoolV1Forward {
  const T* x;
  T* out;
  PoolV1Window w;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    const int64_t j = i % w.ow, r = (i / w.ow) % w.oh, nc = i / (w.ow * w.oh);
    const int64_t y0 = r * w.sh, x0 = j * w.sw;
    const int64_t y1 = y0 + w.kh < w.PaddedH() ? y0 + w.kh : w.PaddedH();
    const int64_t x1 = x0 + w.kw < w.PaddedW() ? x0 + w.kw : w.PaddedW();
    C acc = 0;
    bool first = true;
    for (int64_t y = y0; y < y1; ++y)
      for (int64_t v = x0; v < x1; ++v) {
        const C e = PoolV1At(x, w, nc, y, v);
        if (w.type == kPoolV1Max)
          acc = first || e > acc ? e : acc;
        else
          acc += e;
        first = false;
      }
    if (w.type == kPoolV1Avg) acc /= C(w.kh * w.kw);
    mxplug::StoreAs<C>(out[i], req, acc);
  }
};

/*! \brief The gradient of input element i: from every window that holds it. */
template <class T>
struct PoolV1Backward {
  const T *x, *out, *og;
  T* grad;
  PoolV1Window w;
  int req;
  MXPLUG_XINLINE void operator()(int64_t i) const {
    using C = mxplug::ComputeType<T>;
    const int64_t v = i % w.W, y = (i / w.W) % w.H, nc = i / (w.W * w.H);
    const int64_t Y = y + w.ph, X = v + w.pw;
    // Windows r with r sh <= Y < r sh + kh, and likewise along x.
    const int64_t r0 = Y - w.kh + 1 > 0 ? (Y - w.kh + w.sh) / w.sh : 0;
    const int64_t j0 = X - w.kw + 1 > 0 ? (X - w.kw + w.sw) / w.sw : 0;
    const C self = C(x[i]);
    C sum = 0;
    for (int64_t r = r0; r <= Y / w.sh && r < w.oh; ++r)
      for (int64_t j = j0; j <= X / w.sw && j < w.ow; ++j) {
        const int64_t o = (nc * w.oh + r) * w.ow + j;
        if (w.type == kPoolV1Max)
          sum += C(out[o]) == self ? C(og[o]) : C(0);
        else
          sum += C(og[o]);
      }
    if (w.type == kPoolV1Avg) sum /= C(w.kh * w.kw);
    mxplug::StoreAs<C>(grad[i], req, sum);
  }
};

template <class Loop>
class PoolingV1Kernel : public mxplug::Operator {
 public:
  PoolingV1Kernel(const mxplug::KwArgs& kwargs, mxplug::Context) { p_.Init(kwargs); }
  void Forward(const mxplug::OpContext& ctx, const std::vector<mxplug::TBlob>& in,
               const std::vector<mxplug::OpReqType>& req, const std::vector<mxplug::TBlob>& out,
               const std::vector<mxplug::TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const PoolV1Window w(p_, in[0].shape_);
    mxplug::FloatTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(ctx, out[0].Size(), PoolV1Forward<T>{in[0].dptr<T>(), out[0].dptr<T>(), w, req[0]});
    });
  }
  void Backward(const mxplug::OpContext& ctx, const std::vector<mxplug::TBlob>& og,
                const std::vector<mxplug::TBlob>& in, const std::vector<mxplug::TBlob>& out,
                const std::vector<mxplug::OpReqType>& req, const std::vector<mxplug::TBlob>& ig,
                const std::vector<mxplug::TBlob>&) override {
    if (req[0] == mxplug::kNullOp) return;
    const PoolV1Window w(p_, in[0].shape_);
    mxplug::FloatTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      Loop::Run(ctx, ig[0].Size(),
                PoolV1Backward<T>{in[0].dptr<T>(), out[0].dptr<T>(), og[0].dptr<T>(),
                                  ig[0].dptr<T>(), w, req[0]});
    });
  }

 private:
  PoolingV1Param p_;
};

template <class Loop>
void RegisterPoolingV1Kernels(DLDeviceType device) {
  mxplug::sdk::RegisterKernel<PoolingV1Kernel<Loop>>("Pooling_v1", device);
}

}  // namespace mxplug_nn

#endif  // MXPLUG_PLUGINS_NN_POOLING_V1_H_
