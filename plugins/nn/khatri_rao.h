// khatri_rao(args...): the column-wise Kronecker product of matrices (I_k, R): out (prod I_k, R),
// row (i_1, ..., i_n) (the last input's index fastest) of column r the product of the inputs'
// elements (i_k, r). No gradient, as MXNet's. The definition, registered by khatri_rao.cc, and
// the per-element product every device runs (CUDA's and HIP's in
// devices/cuda/kernels/khatri_rao.cu).
#ifndef MXPLUG_PLUGINS_NN_KHATRI_RAO_H_
#define MXPLUG_PLUGINS_NN_KHATRI_RAO_H_

#include <stdexcept>
#include <string>
#include <vector>

#include "elements.h"
#include "mxplug/plugin.hpp"

namespace mxplug_nn {

using mxplug::TShape;

// The inputs travel to a device by value, in the functor.
constexpr int kMaxKhatriRaoInputs = 16;

struct KhatriRaoParam : mxplug::Parameter<KhatriRaoParam> {
  int num_args;
  MXPLUG_DECLARE_PARAMETER(KhatriRaoParam) {
    MXPLUG_DECLARE_FIELD(num_args)
        .set_lower_bound(1)
        .set_upper_bound(kMaxKhatriRaoInputs)
        .describe("Number of input matrices.");
  }
};

class KhatriRaoProp : public mxplug::OperatorProperty {
 public:
  void Init(const mxplug::KwArgs& kwargs) override { param_.Init(kwargs); }
  std::vector<std::string> ListArguments() const override { return ArgNames(param_.num_args); }
  bool InferShape(std::vector<TShape>* in, std::vector<TShape>* out,
                  std::vector<TShape>*) const override {
    int64_t rows = 1, columns = -1;
    for (const TShape& s : *in) {
      if (!s.IsKnown()) return false;
      if (s.ndim() != 2)
        throw std::invalid_argument("the inputs must be matrices, got " + s.ToString());
      if (columns >= 0 && s[1] != columns)
        throw std::invalid_argument("the inputs must have one number of columns, got " +
                                    std::to_string(columns) + " and " + std::to_string(s[1]));
      columns = s[1], rows *= s[0];
    }
    (*out)[0] = TShape{rows, columns};
    return true;
  }

 private:
  KhatriRaoParam param_;
};

template <class T>
struct KhatriRaoElements {
  const T* in[kMaxKhatriRaoInputs];
  int64_t rows[kMaxKhatriRaoInputs];
  int n;
  int64_t columns;
  T* out;
  int req;
  MXPLUG_XINLINE void operator()(int64_t o) const {
    using C = mxplug::ComputeType<T>;
    const int64_t r = o % columns;
    int64_t rest = o / columns;
    C product = 1;
    for (int k = n - 1; k >= 0; --k) {
      product *= static_cast<C>(in[k][(rest % rows[k]) * columns + r]);
      rest /= rows[k];
    }
    mxplug::StoreAs<C>(out[o], req, product);
  }
};

template <class Loop>
class KhatriRaoKernel : public mxplug::Operator {
 public:
  KhatriRaoKernel(const mxplug::KwArgs&, mxplug::Context) {}
  void Forward(const mxplug::OpContext& ctx, const std::vector<mxplug::TBlob>& in,
               const std::vector<mxplug::OpReqType>& req, const std::vector<mxplug::TBlob>& out,
               const std::vector<mxplug::TBlob>&) override {
    if (req[0] == mxplug::kNullOp || out[0].Size() == 0) return;
    mxplug::FloatTypeSwitch(out[0].type_flag_, "", [&](auto zero) {
      using T = decltype(zero);
      KhatriRaoElements<T> f{};
      f.n = static_cast<int>(in.size());
      for (int k = 0; k < f.n; ++k) f.in[k] = in[k].dptr<T>(), f.rows[k] = in[k].shape_[0];
      f.columns = out[0].shape_[1], f.out = out[0].dptr<T>(), f.req = req[0];
      Loop::Run(ctx, out[0].Size(), f);
    });
  }
};

template <class Loop>
void RegisterKhatriRaoKernel(DLDeviceType device) {
  mxplug::sdk::RegisterKernel<KhatriRaoKernel<Loop>>("khatri_rao", device);
}

}  // namespace mxplug_nn

#endif  // MXPLUG_PLUGINS_NN_KHATRI_RAO_H_
