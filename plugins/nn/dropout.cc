// Dropout (MXNet's p, mode, axes) and Embedding (input_dim, output_dim).
#include <algorithm>
#include <optional>
#include <string>

#include "mxplug/plugin.hpp"

namespace {

using mxplug::Assign;
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
    MXPLUG_DECLARE_FIELD(mode).set_default(kTraining).add_enum("training", kTraining)
        .add_enum("always", kAlways).describe("Whether to only turn on dropout during training or always.");
    MXPLUG_DECLARE_FIELD(axes).set_default(TShape(std::vector<int64_t>{})).describe(
        "Axes along which the same mask is shared (variational dropout).");
    MXPLUG_DECLARE_FIELD(cudnn_off).set_default(std::nullopt).describe("Accepted for compatibility.");
  }
};
MXPLUG_REGISTER_PARAMETER(DropoutParam);

// In place both ways: each element is read before it is written.
class DropoutProp : public mxplug::FirstInPlace<> {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListOutputs() const override { return {"output", "mask"}; }
  int NumVisibleOutputs() const override { return 1; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out, std::vector<TShape>*) const override {
    const TShape& d = (*in)[0];
    if (d.ndim() < 0) return false;
    for (int64_t a : param_.axes)
      if (a < -d.ndim() || a >= d.ndim())
        throw std::out_of_range("axes " + param_.axes.ToString() + " is out of range for data " + d.ToString());
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
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    struct Kernel : mxplug::Operator {
      DropoutParam p;
      void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
        const bool active = (ctx.is_train || p.mode == kAlways) && p.p > 0;
        const TShape& s = in[0].shape_;
        // The mask has the data's shape with the shared axes collapsed to 1; it is broadcast.
        std::vector<int64_t> md(s.begin(), s.end());
        for (int64_t a : p.axes) md[a < 0 ? a + s.ndim() : a] = 1;
        const TShape ms(md);
        std::vector<double> mask(static_cast<size_t>(ms.Size()), 1.0);
        if (active) {
          mxplug::RandomStream r = ctx.requested[0].get_random(static_cast<uint64_t>(ms.Size()));
          const double keep = 1.0 - p.p;
          for (double& m : mask) m = r.UniformFloat() < keep ? 1.0 / keep : 0.0;
        }
        std::vector<int64_t> strides(s.ndim(), 0);
        int64_t st = 1;
        for (int i = s.ndim() - 1; i >= 0; --i) {
          strides[i] = md[i] == 1 ? 0 : st;
          st *= md[i];
        }
        mxplug::RealTypeSwitch(in[0].type_flag_, "", [&](auto zero) {
          using T = decltype(zero);
          const T* x = in[0].dptr<T>();
          T* y = out[0].dptr<T>();
          T* m = out[1].dptr<T>();
          std::vector<int64_t> idx(s.ndim(), 0);
          for (int64_t i = 0; i < s.Size(); ++i) {
            int64_t mi = 0;
            for (int d = 0; d < s.ndim(); ++d) mi += idx[d] * strides[d];
            Assign(y[i], req[0], static_cast<T>(double(x[i]) * mask[mi]));
            m[i] = static_cast<T>(mask[mi]);
            for (int d = s.ndim() - 1; d >= 0; --d) {
              if (++idx[d] < s[d]) break;
              idx[d] = 0;
            }
          }
        });
      }
      void Backward(const mxplug::OpContext&, const std::vector<TBlob>& og, const std::vector<TBlob>&,
                    const std::vector<TBlob>& out, const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& ig, const std::vector<TBlob>&) override {
        if (req[0] == mxplug::kNullOp) return;
        mxplug::RealTypeSwitch(og[0].type_flag_, "", [&](auto zero) {
          using T = decltype(zero);
          const T* g = og[0].dptr<T>();
          const T* m = out[1].dptr<T>();
          T* dx = ig[0].dptr<T>();
          for (int64_t i = 0; i < ig[0].Size(); ++i) Assign(dx[i], req[0], static_cast<T>(g[i] * m[i]));
        });
      }
    };
    auto* k = new Kernel();
    k->p = param_;
    return k;
  }

 private:
  DropoutParam param_;
};

// ---- Embedding: out[..., :] = weight[data[...], :] ----

struct EmbeddingParam : mxplug::Parameter<EmbeddingParam> {
  int64_t input_dim, output_dim;
  int dtype;
  bool sparse_grad;
  MXPLUG_DECLARE_PARAMETER(EmbeddingParam) {
    MXPLUG_DECLARE_FIELD(input_dim).set_lower_bound(1).describe("Vocabulary size of the input indices.");
    MXPLUG_DECLARE_FIELD(output_dim).set_lower_bound(1).describe("Dimension of the embedding vectors.");
    MXPLUG_DECLARE_FIELD(dtype).set_default(kMXPFloat32).add_dtype_enum().describe("Data type of weight.");
    MXPLUG_DECLARE_FIELD(sparse_grad).set_default(false).describe("Accepted for compatibility (dense gradient).");
  }
};
MXPLUG_REGISTER_PARAMETER(EmbeddingParam);

class EmbeddingProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return {"data", "weight"}; }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out, std::vector<TShape>*) const override {
    const TShape& d = (*in)[0];
    mxplug::InferParameterShape(&(*in)[1], TShape{param_.input_dim, param_.output_dim}, "weight", d);
    if (d.ndim() < 0) return false;
    std::vector<int64_t> o(d.begin(), d.end());
    o.push_back(param_.output_dim);
    (*out)[0] = TShape(o);
    return d.IsKnown();
  }
  bool InferType(std::vector<int>* in, std::vector<int>* out, std::vector<int>*) const override {
    const int wt = (*in)[1] != kMXPUnknownDType ? (*in)[1] : param_.dtype;
    (*in)[1] = wt;
    if ((*in)[0] == kMXPUnknownDType) (*in)[0] = wt;
    (*out)[0] = wt;
    return true;
  }
  std::vector<int> DeclareBackwardDependency(const std::vector<int>& og, const std::vector<int>& in,
                                             const std::vector<int>&) const override {
    return {og[0], in[0]};
  }
  mxplug::Operator* CreateOperator(mxplug::Context) const override {
    struct Kernel : mxplug::Operator {
      int64_t rows, dim;
      int64_t Row(const TBlob& idx, int64_t i) const {
        const auto k = static_cast<int64_t>(mxplug::ValueAsDouble(idx, i));
        return std::clamp<int64_t>(k, 0, rows - 1);  // MXNet clips out-of-range indices
      }
      void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out, const std::vector<TBlob>&) override {
        if (req[0] == mxplug::kNullOp) return;
        mxplug::TypeSwitch(in[1].type_flag_, [&](auto zero) {
          using T = decltype(zero);
          const T* w = in[1].dptr<T>();
          T* o = out[0].dptr<T>();
          for (int64_t i = 0; i < in[0].Size(); ++i) {
            const int64_t r = Row(in[0], i);
            for (int64_t j = 0; j < dim; ++j) Assign(o[i * dim + j], req[0], w[r * dim + j]);
          }
        });
      }
      void Backward(const mxplug::OpContext&, const std::vector<TBlob>& og, const std::vector<TBlob>& in,
                    const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& ig, const std::vector<TBlob>&) override {
        mxplug::TypeSwitch(og[0].type_flag_, [&](auto zero) {
          using T = decltype(zero);
          mxplug::WriteZeroGradient(ig[0], req[0]);  // indices get no gradient
          if (req[1] == mxplug::kNullOp) return;
          const T* g = og[0].dptr<T>();
          T* dw = ig[1].dptr<T>();
          if (req[1] != mxplug::kAddTo) std::fill(dw, dw + ig[1].Size(), T(0));
          for (int64_t i = 0; i < in[0].Size(); ++i) {
            const int64_t r = Row(in[0], i);
            for (int64_t j = 0; j < dim; ++j) dw[r * dim + j] += g[i * dim + j];
          }
        });
      }
    };
    auto* k = new Kernel();
    k->rows = param_.input_dim, k->dim = param_.output_dim;
    return k;
  }

 private:
  EmbeddingParam param_;
};

[[maybe_unused]] const bool registered = [] {
  mxplug::RegisterOpProperty<DropoutProp>("Dropout")
      .describe("Sets elements to zero with probability p during training, scaling the rest by 1/(1-p); "
                "identity at prediction time unless mode='always'.")
      .add_argument("data", "NDArray-or-Symbol", "Input array to which dropout will be applied.")
      .add_arguments(DropoutParam::Fields()).add_kernel(kDLCPU);
  mxplug::RegisterOpProperty<EmbeddingProp>("Embedding")
      .describe("Maps integer indices to vector representations (rows of weight).")
      .add_argument("data", "NDArray-or-Symbol", "The input array to the embedding operator.")
      .add_argument("weight", "NDArray-or-Symbol", "The embedding weight matrix.")
      .add_arguments(EmbeddingParam::Fields()).add_kernel(kDLCPU);
  return true;
}();

}  // namespace
