// A custom-op library in MXNet 1.9's lib_api form (library version 11), for the tests that load
// it into mxplug (through plugins/mxnet_lib) and into MXNet 1.9.1 and compare the two:
//   scaled_gemm       stateless: C = alpha * A B, with backward; uses the host's CPU allocator
//   stateful_gemm     stateful: the same product, alpha and the shapes fixed at state creation
//   running_average   stateless with a mutated input (an auxiliary state): out = data and
//                     avg <- momentum * avg + (1 - momentum) * data
//   refuses_to_run    a forward that fails with a message of its own
#include <cmath>
#include <string>
#include <vector>

#include "lib_api_min.h"

namespace {

using minlib::Attrs;
using minlib::Shape;
using minlib::Tensor;

float FloatAttr(const Attrs& attrs, const char* key, float fallback) {
  auto it = attrs.find(key);
  return it == attrs.end() ? fallback : std::stof(it->second);
}

bool TwoInOneOut(const Attrs& attrs, int* num_in, int* num_out) {
  for (const auto& kv : attrs)
    if (kv.first != "alpha" && kv.first.rfind("__", 0) != 0)
      return minlib::Fail("unknown argument '" + kv.first + "'");
  *num_in = 2;
  *num_out = 1;
  return true;
}

bool GemmShape(const Attrs&, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& a = (*in)[0];
  const Shape& b = (*in)[1];
  if (a.size() != 2 || b.size() != 2) return minlib::Fail("gemm takes two matrices");
  if (a[1] != b[0])
    return minlib::Fail("gemm: A has " + std::to_string(a[1]) + " columns but B has " +
                        std::to_string(b[0]) + " rows");
  (*out)[0] = {a[0], b[1]};
  return true;
}

bool SameFloatType(const Attrs&, std::vector<int>* in, std::vector<int>* out) {
  // An input not known yet (-1) takes the type of the first known one, as MXNet asks.
  int t = -1;
  for (int u : *in)
    if (t == -1)
      t = u;
    else if (u != -1 && u != t)
      return minlib::Fail("the inputs must have one dtype");
  for (int& u : *in) u = t;
  if (t != minlib::kFloat32 && t != minlib::kFloat64)
    return minlib::Fail("float32 or float64 only, got type " + std::to_string(t));
  for (int& u : *out) u = t;
  return true;
}

// C[n, m] = alpha * sum_k A'[n, k] B'[k, m], where A' is A or its transpose (ta) and so is B'.
template <typename T>
void Gemm(const T* a, const T* b, T* c, int64_t n, int64_t k, int64_t m, bool ta, bool tb,
          T alpha) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      T sum = 0;
      for (int64_t p = 0; p < k; ++p)
        sum += (ta ? a[p * n + i] : a[i * k + p]) * (tb ? b[j * k + p] : b[p * m + j]);
      c[i * m + j] = alpha * sum;
    }
}

template <typename T>
bool GemmForwardT(float alpha, std::vector<Tensor>* in, std::vector<Tensor>* out,
                  const minlib::Resource& res) {
  const Tensor& a = (*in)[0];
  const Tensor& b = (*in)[1];
  const int64_t n = a.shape[0], k = a.shape[1], m = b.shape[1];
  // B's transpose goes through the host's allocator, as a library's scratch buffers do.
  T* bt = static_cast<T*>(res.AllocCpu(static_cast<int>(sizeof(T) * k * m)));
  if (!bt) return minlib::Fail("the host gave no scratch memory");
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < m; ++j) bt[j * k + p] = b.Ptr<T>()[p * m + j];
  Gemm<T>(a.Ptr<T>(), bt, (*out)[0].Ptr<T>(), n, k, m, false, true, static_cast<T>(alpha));
  return true;
}

bool GemmForward(float alpha, std::vector<Tensor>* in, std::vector<Tensor>* out,
                 const minlib::Resource& res) {
  return (*in)[0].dtype == minlib::kFloat64 ? GemmForwardT<double>(alpha, in, out, res)
                                            : GemmForwardT<float>(alpha, in, out, res);
}

// Inputs: dC, A, B, C; outputs: dA = alpha dC B^T, dB = alpha A^T dC.
template <typename T>
bool GemmBackwardT(float alpha, std::vector<Tensor>* in, std::vector<Tensor>* out) {
  const Tensor& dc = (*in)[0];
  const Tensor& a = (*in)[1];
  const Tensor& b = (*in)[2];
  const int64_t n = a.shape[0], k = a.shape[1], m = b.shape[1];
  Gemm<T>(dc.Ptr<T>(), b.Ptr<T>(), (*out)[0].Ptr<T>(), n, m, k, false, true, static_cast<T>(alpha));
  Gemm<T>(a.Ptr<T>(), dc.Ptr<T>(), (*out)[1].Ptr<T>(), k, n, m, true, false, static_cast<T>(alpha));
  return true;
}

bool GemmBackward(float alpha, std::vector<Tensor>* in, std::vector<Tensor>* out) {
  return (*in)[1].dtype == minlib::kFloat64 ? GemmBackwardT<double>(alpha, in, out)
                                            : GemmBackwardT<float>(alpha, in, out);
}

bool ScaledGemmForward(const Attrs& attrs, std::vector<Tensor>* in, std::vector<Tensor>* out,
                       const minlib::Resource& res) {
  return GemmForward(FloatAttr(attrs, "alpha", 1.0f), in, out, res);
}
bool ScaledGemmBackward(const Attrs& attrs, std::vector<Tensor>* in, std::vector<Tensor>* out,
                        const minlib::Resource&) {
  return GemmBackward(FloatAttr(attrs, "alpha", 1.0f), in, out);
}

class GemmState : public minlib::StatefulOp {
 public:
  GemmState(float alpha, std::vector<Shape> shapes) : alpha_(alpha), shapes_(std::move(shapes)) {}
  bool Forward(std::vector<Tensor>* in, std::vector<Tensor>* out,
               const minlib::Resource& res) override {
    for (size_t i = 0; i < shapes_.size(); ++i) {
      const std::vector<int64_t>& s = (*in)[i].shape;
      if (Shape(s.begin(), s.end()) != shapes_[i])
        return minlib::Fail("stateful_gemm: input " + std::to_string(i) +
                            " changed shape since the state was created");
    }
    return GemmForward(alpha_, in, out, res);
  }
  bool Backward(std::vector<Tensor>* in, std::vector<Tensor>* out,
                const minlib::Resource&) override {
    return GemmBackward(alpha_, in, out);
  }

 private:
  float alpha_;
  std::vector<Shape> shapes_;
};

bool CreateGemmState(const Attrs& attrs, const std::string& dev_type,
                     const std::vector<Shape>& in_shapes, const std::vector<int>&,
                     minlib::StatefulOp** state) {
  if (dev_type != "cpu") return minlib::Fail("stateful_gemm runs on the CPU only");
  if (in_shapes.size() != 2 || in_shapes[0].size() != 2)
    return minlib::Fail("stateful_gemm: the state needs the input shapes");
  *state = new GemmState(FloatAttr(attrs, "alpha", 1.0f), in_shapes);
  return true;
}

bool AverageParse(const Attrs&, int* num_in, int* num_out) {
  *num_in = 2;
  *num_out = 1;
  return true;
}
bool AverageShape(const Attrs&, std::vector<Shape>* in, std::vector<Shape>* out) {
  if ((*in)[0] != (*in)[1]) return minlib::Fail("running_average: data and avg differ in shape");
  (*out)[0] = (*in)[0];
  return true;
}
bool AverageMutates(const Attrs&, std::vector<int>* mutated) {
  *mutated = {1};
  return true;
}
bool AverageForward(const Attrs& attrs, std::vector<Tensor>* in, std::vector<Tensor>* out,
                    const minlib::Resource&) {
  if ((*in)[0].dtype != minlib::kFloat32) return minlib::Fail("running_average: float32 only");
  const float momentum = FloatAttr(attrs, "momentum", 0.9f);
  const float* data = (*in)[0].Ptr<float>();
  float* avg = (*in)[1].Ptr<float>();
  float* y = (*out)[0].Ptr<float>();
  for (int64_t i = 0; i < (*in)[0].Size(); ++i) {
    y[i] = data[i];
    avg[i] = momentum * avg[i] + (1 - momentum) * data[i];
  }
  return true;
}

bool RefuseParse(const Attrs&, int* num_in, int* num_out) {
  *num_in = 1;
  *num_out = 1;
  return true;
}
bool RefuseShape(const Attrs&, std::vector<Shape>* in, std::vector<Shape>* out) {
  (*out)[0] = (*in)[0];
  return true;
}
bool RefuseForward(const Attrs&, std::vector<Tensor>*, std::vector<Tensor>*,
                   const minlib::Resource&) {
  return minlib::Fail("refuses_to_run was asked to run, and refuses");
}

}  // namespace

namespace {
minlib::OpDef Op(const char* name, minlib::ParseFn parse, minlib::ShapeFn shape) {
  minlib::OpDef op;
  op.name = name;
  op.parse = parse;
  op.shape = shape;
  op.type = SameFloatType;
  return op;
}
}  // namespace

void minlib::RegisterOps() {
  OpDef gemm = Op("scaled_gemm", TwoInOneOut, GemmShape);
  gemm.forward_ctx = gemm.backward_ctx = {"cpu"};
  gemm.forward = {ScaledGemmForward};
  gemm.backward = {ScaledGemmBackward};
  Ops().push_back(gemm);

  OpDef stateful = Op("stateful_gemm", TwoInOneOut, GemmShape);
  stateful.create_ctx = {"cpu"};
  stateful.create = {CreateGemmState};
  Ops().push_back(stateful);

  OpDef average = Op("running_average", AverageParse, AverageShape);
  average.mutate = AverageMutates;
  average.forward_ctx = {"cpu"};
  average.forward = {AverageForward};
  Ops().push_back(average);

  OpDef refuse = Op("refuses_to_run", RefuseParse, RefuseShape);
  refuse.forward_ctx = {"cpu"};
  refuse.forward = {RefuseForward};
  Ops().push_back(refuse);
}
