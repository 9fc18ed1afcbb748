// The first operator slice, run through plugins on real tensors: FullyConnected against a naive
// loop, every op's backward against central finite differences in float64, OpReqType handling,
// and the errors for bad shapes, arity and dtypes.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <iterator>
#include <random>

#include "mxplug/op_runner.h"
#include "mxplug/runtime.h"
#include "test_errors.h"

namespace mxplug {
namespace {

class Ops : public ::testing::Test {
 protected:
  void SetUp() override { Runtime::Get().EnsureDefaultPluginsLoaded(); }
};

template <typename T>
std::vector<T> Random(size_t n, uint32_t seed, T lo = -1, T hi = 1) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(dist(gen));
  return v;
}

template <typename T>
Tensor Make(const std::vector<T>& v, const TShape& s) {
  return Tensor::FromVector<T>(v, s);
}

// out[m, n] = sum_k data[m, k] * w[n, k] + b[n], written independently of the plugin.
template <typename T>
std::vector<T> NaiveFullyConnected(const std::vector<T>& x, const std::vector<T>& w,
                                   const std::vector<T>* b, int64_t m, int64_t n, int64_t k) {
  std::vector<T> out(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = b ? (*b)[j] : 0.0;
      for (int64_t p = 0; p < k; ++p) acc += double(x[i * k + p]) * w[j * k + p];
      out[i * n + j] = static_cast<T>(acc);
    }
  return out;
}

template <typename T>
void ExpectNear(const std::vector<T>& got, const std::vector<T>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol * (1 + std::fabs(double(want[i])))) << "at " << i;
}

TEST_F(Ops, FullyConnectedForwardMatchesNaiveLoop) {
  struct Case {
    TShape data;
    bool flatten, no_bias;
    int64_t m, k;
    TShape out;
  };
  for (const Case& c : {Case{TShape{5, 7}, true, false, 5, 7, TShape{5, 3}},
                        Case{TShape{2, 3, 4}, true, false, 2, 12, TShape{2, 3}},
                        Case{TShape{2, 3, 4}, false, false, 6, 4, TShape{2, 3, 3}},
                        Case{TShape{4, 6}, true, true, 4, 6, TShape{4, 3}}}) {
    const int64_t n = 3;
    auto x = Random<float>(c.data.Size(), 1), w = Random<float>(n * c.k, 2),
         b = Random<float>(n, 3);
    KwArgs kw{{"num_hidden", "3"},
              {"flatten", c.flatten ? "true" : "false"},
              {"no_bias", c.no_bias ? "1" : "0"}};
    OpRunner fc("FullyConnected", kw);
    std::vector<Tensor> in{Make(x, c.data), Make(w, TShape{n, c.k})};
    if (!c.no_bias) in.push_back(Make(b, TShape{n}));
    std::vector<Tensor> out = fc.Forward(in);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape(), c.out);
    ExpectNear(out[0].ToVector<float>(),
               NaiveFullyConnected(x, w, c.no_bias ? nullptr : &b, c.m, n, c.k), 1e-5);
  }
}

TEST_F(Ops, FullyConnectedInfersWeightAndBiasShapes) {
  OpRunner fc("FullyConnected", {{"num_hidden", "10"}});
  std::vector<TShape> in{TShape{100, 100}, TShape(), TShape()}, out, aux;
  EXPECT_TRUE(fc.property().InferShape(&in, &out, &aux));
  EXPECT_EQ(in[1], (TShape{10, 100}));  // the seeds' fc1_weight
  EXPECT_EQ(in[2], (TShape{10}));
  EXPECT_EQ(out[0], (TShape{100, 10}));
  auto deps = fc.property().DeclareBackwardDependency();
  EXPECT_EQ(deps.out_data, std::vector<bool>{false});  // the output is not kept for backward
  EXPECT_EQ(deps.in_data, (std::vector<bool>{true, true, false}));
}

// Central differences of L = sum(out * R) with respect to each input, in float64.
std::vector<std::vector<double>> NumericGradients(const std::string& op, const KwArgs& kw,
                                                  std::vector<std::vector<double>> inputs,
                                                  const std::vector<TShape>& shapes,
                                                  const std::vector<double>& r) {
  OpRunner runner(op, kw);
  auto loss = [&]() {
    std::vector<Tensor> in;
    for (size_t i = 0; i < inputs.size(); ++i) in.push_back(Make(inputs[i], shapes[i]));
    std::vector<double> out = runner.Forward(in)[0].ToVector<double>();
    double l = 0;
    for (size_t i = 0; i < out.size(); ++i) l += out[i] * r[i];
    return l;
  };
  const double eps = 1e-6;
  std::vector<std::vector<double>> grads;
  for (auto& v : inputs) {
    std::vector<double> g(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      double keep = v[i];
      v[i] = keep + eps;
      double up = loss();
      v[i] = keep - eps;
      double down = loss();
      v[i] = keep;
      g[i] = (up - down) / (2 * eps);
    }
    grads.push_back(g);
  }
  return grads;
}

void CheckBackward(const std::string& op, const KwArgs& kw, const std::vector<TShape>& shapes,
                   double lo = -1, double hi = 1) {
  SCOPED_TRACE(op);
  std::vector<std::vector<double>> values;
  std::vector<Tensor> in;
  for (size_t i = 0; i < shapes.size(); ++i) {
    values.push_back(Random<double>(shapes[i].Size(), 10 + i, lo, hi));
    in.push_back(Make(values.back(), shapes[i]));
  }
  OpRunner runner(op, kw);
  std::vector<Tensor> out = runner.Forward(in);
  std::vector<double> r = Random<double>(out[0].size(), 99);
  // The loss reads output 0; hidden outputs (LRN's tmp_norm) get a zero gradient.
  std::vector<Tensor> out_grads{Make(r, out[0].shape())};
  for (size_t i = 1; i < out.size(); ++i)
    out_grads.push_back(Make(std::vector<double>(out[i].size(), 0.0), out[i].shape()));
  std::vector<Tensor> grads = runner.Backward(out_grads, in, out);
  auto numeric = NumericGradients(op, kw, values, shapes, r);
  for (size_t i = 0; i < grads.size(); ++i)
    ExpectNear(grads[i].ToVector<double>(), numeric[i], 1e-6);

  // kAddTo accumulates onto what is there; kNullOp leaves it alone.
  std::vector<Tensor> acc;
  std::vector<std::vector<double>> before;
  for (const TShape& s : shapes) {
    before.push_back(Random<double>(s.Size(), 7));
    acc.push_back(Make(before.back(), s));
  }
  std::vector<OpReqType> req(shapes.size(), kAddTo);
  req.back() = kNullOp;
  runner.BackwardInto(out_grads, in, out, acc, req);
  for (size_t i = 0; i < acc.size(); ++i) {
    std::vector<double> want = before[i];
    if (req[i] == kAddTo)
      for (size_t j = 0; j < want.size(); ++j) want[j] += numeric[i][j];
    ExpectNear(acc[i].ToVector<double>(), want, 1e-6);
  }
}

TEST_F(Ops, FullyConnectedBackwardMatchesFiniteDifferences) {
  CheckBackward("FullyConnected", {{"num_hidden", "4"}}, {TShape{3, 5}, TShape{4, 5}, TShape{4}});
  CheckBackward("FullyConnected", {{"num_hidden", "2"}, {"flatten", "false"}},
                {TShape{2, 3, 5}, TShape{2, 5}, TShape{2}});
  CheckBackward("FullyConnected", {{"num_hidden", "3"}, {"no_bias", "true"}},
                {TShape{4, 2, 3}, TShape{3, 6}});
}

TEST_F(Ops, ElementwiseBackwardMatchesFiniteDifferences) {
  for (const char* op : {"elemwise_add", "elemwise_sub", "elemwise_mul"})
    CheckBackward(op, {}, {TShape{3, 4}, TShape{3, 4}});
  CheckBackward("elemwise_div", {}, {TShape{3, 4}, TShape{3, 4}}, 0.5, 2.0);  // away from zero
  for (const char* op :
       {"_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar"})
    CheckBackward(op, {{"scalar", "2.5"}}, {TShape{2, 5}});
  CheckBackward("_rdiv_scalar", {{"scalar", "2.5"}}, {TShape{2, 5}}, 0.5, 2.0);
}

TEST_F(Ops, ElementwiseForwardMatchesDirectArithmetic) {
  auto a = Random<float>(6, 1), b = Random<float>(6, 2, 0.5f, 2.0f);
  std::vector<std::pair<const char*, std::function<float(float, float)>>> binary{
      {"elemwise_add", std::plus<float>()},
      {"elemwise_sub", std::minus<float>()},
      {"elemwise_mul", std::multiplies<float>()},
      {"elemwise_div", std::divides<float>()}};
  for (auto& [op, f] : binary) {
    auto out = OpRunner(op, {})
                   .Forward({Make(a, TShape{2, 3}), Make(b, TShape{2, 3})})[0]
                   .ToVector<float>();
    for (size_t i = 0; i < out.size(); ++i) EXPECT_FLOAT_EQ(out[i], f(a[i], b[i])) << op;
  }
  const float s = 3.0f;
  std::vector<std::pair<const char*, std::function<float(float)>>> scalar{
      {"_plus_scalar", [&](float x) { return x + s; }},
      {"_minus_scalar", [&](float x) { return x - s; }},
      {"_rminus_scalar", [&](float x) { return s - x; }},
      {"_mul_scalar", [&](float x) { return x * s; }},
      {"_div_scalar", [&](float x) { return x / s; }},
      {"_rdiv_scalar", [&](float x) { return s / x; }}};
  for (auto& [op, f] : scalar) {
    auto out = OpRunner(op, {{"scalar", "3"}}).Forward({Make(b, TShape{6})})[0].ToVector<float>();
    for (size_t i = 0; i < out.size(); ++i) EXPECT_FLOAT_EQ(out[i], f(b[i])) << op;
  }
  // The scalar defaults to 1, as in MXNet.
  auto plus_one = OpRunner("_plus_scalar", {}).Forward({Make(a, TShape{6})})[0].ToVector<float>();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_FLOAT_EQ(plus_one[i], a[i] + 1.0f);
}

TEST_F(Ops, ForwardHonoursAddToAndNullOp) {
  auto a = Random<float>(4, 1), b = Random<float>(4, 2), c = Random<float>(4, 3);
  OpRunner add("elemwise_add", {});
  Tensor out = Make(c, TShape{4});
  add.ForwardInto({Make(a, TShape{4}), Make(b, TShape{4})}, {out}, {kAddTo});
  auto got = out.ToVector<float>();
  for (size_t i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(got[i], c[i] + a[i] + b[i]);
  add.ForwardInto({Make(a, TShape{4}), Make(b, TShape{4})}, {out}, {kNullOp});
  EXPECT_EQ(out.ToVector<float>(), got);
}

using test::ErrorText;

TEST_F(Ops, BadInputGivesErrorsThatNameOpArgumentAndExpectation) {
  auto t = [](TShape s, int dtype = kMXPFloat32) { return Tensor::Empty(s, dtype); };
  EXPECT_EQ(ErrorText([&] {
              OpRunner("elemwise_add", {}).Forward({t({2, 3}), t({3, 2})});
            }),
            "elemwise_add: lhs has shape (2, 3) but rhs has shape (3, 2); they must be equal "
            "(use broadcast ops for broadcasting)");
  EXPECT_EQ(
      ErrorText([&] {
        OpRunner("FullyConnected", {{"num_hidden", "4"}}).Forward({t({2, 3}), t({4, 5}), t({4})});
      }),
      "FullyConnected: weight has shape (4, 5), expected (4, 3) for data of shape (2, 3)");
  EXPECT_EQ(ErrorText([&] {
              OpRunner("FullyConnected", {{"num_hidden", "4"}}).Forward({t({2, 3}), t({4, 3})});
            }),
            "FullyConnected: expected 3 inputs (data, weight, bias), got 2");
  EXPECT_EQ(ErrorText([&] {
              OpRunner("FullyConnected", {{"num_hidden", "4"}})
                  .Forward({t({2, 3}, kMXPInt32), t({4, 3}, kMXPInt32), t({4}, kMXPInt32)});
            }),
            "FullyConnected: data has dtype int32; expected float16, float32 or float64");
  EXPECT_EQ(
      ErrorText([&] {
        OpRunner("elemwise_add", {}).Forward({t({2}), t({2}, kMXPFloat64)});
      }),
      "elemwise_add: argument 'rhs' has dtype float64, expected float32 like the other inputs");
  EXPECT_EQ(ErrorText([&] { OpRunner("QuantumTeleporter", {}); }),
            "operator 'QuantumTeleporter' is not registered");
  EXPECT_EQ(ErrorText([&] {
              Tensor::Empty(TShape{2}, kMXPFloat32, Context{kDLVulkan, 0});
            }),
            "no device backend for vulkan is loaded (see `mxplug devices` and `mxplug plugins`)");
  EXPECT_EQ(ErrorText([&] { Tensor::Empty(TShape{2}, kMXPFloat32, Context::CPU(8)); }),
            "context cpu(8) does not exist: cpu has 8 device(s)");
}

}  // namespace
}  // namespace mxplug

namespace mxplug {
namespace {

TEST_F(Ops, UnaryBackwardMatchesFiniteDifferences) {
  for (const char* op : {"negative", "exp", "expm1", "square", "sin", "cos", "tan", "arctan",
                         "sinh", "cosh", "tanh", "sigmoid", "softsign", "erf", "cbrt", "_copy"})
    CheckBackward(op, {}, {TShape{3, 4}});
  // Positive inputs, away from kinks and poles.
  for (const char* op :
       {"log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "abs", "relu"})
    CheckBackward(op, {}, {TShape{3, 4}}, 0.5, 2.0);
  for (const char* op : {"arcsin", "arccos"}) CheckBackward(op, {}, {TShape{5}}, -0.8, 0.8);
  CheckBackward("clip", {{"a_min", "-0.5"}, {"a_max", "0.6"}}, {TShape{4, 3}});
}

TEST_F(Ops, BroadcastBackwardSumsOverBroadcastAxes) {
  for (const char* op : {"broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_maximum",
                         "broadcast_minimum", "broadcast_hypot"}) {
    CheckBackward(op, {}, {TShape{3, 1, 4}, TShape{2, 4}});
    CheckBackward(op, {}, {TShape{2, 3}, TShape{2, 3}});
  }
  CheckBackward("broadcast_div", {}, {TShape{3, 1}, TShape{1, 4}}, 0.5, 2.0);
  CheckBackward("broadcast_power", {}, {TShape{2, 3}, TShape{3}}, 0.5, 2.0);
  for (const char* op : {"_power_scalar", "_rpower_scalar", "_maximum_scalar", "_minimum_scalar",
                         "_hypot_scalar", "_mod_scalar"})
    CheckBackward(op, {{"scalar", "1.7"}}, {TShape{2, 5}}, 0.5, 2.0);
}

TEST_F(Ops, ReductionAndShapeBackwardMatchFiniteDifferences) {
  for (const char* op : {"sum", "mean", "prod", "max", "min"}) {
    CheckBackward(op, {{"axis", "1"}}, {TShape{3, 4, 2}});
    CheckBackward(op, {{"axis", "(0, 2)"}, {"keepdims", "True"}}, {TShape{3, 4, 2}});
    CheckBackward(op, {{"axis", "1"}, {"exclude", "True"}}, {TShape{3, 4, 2}});
    CheckBackward(op, {}, {TShape{5}});
  }
  CheckBackward("transpose", {{"axes", "(2, 0, 1)"}}, {TShape{2, 3, 4}});
  CheckBackward("Reshape", {{"shape", "(-1, 0)"}, {"reverse", "True"}}, {TShape{2, 3, 4}});
  CheckBackward("slice", {{"begin", "(1, None)"}, {"end", "(None, 1)"}, {"step", "(1, -2)"}},
                {TShape{3, 5}});
  CheckBackward("broadcast_to", {{"shape", "(2, 0, 3)"}}, {TShape{4, 1}});
  CheckBackward("expand_dims", {{"axis", "-1"}}, {TShape{2, 3}});
}

TEST_F(Ops, ReshapeSpecialValuesFollowMXNet) {
  // The examples of MXNet's Reshape documentation.
  auto out = [](const char* shape, const TShape& in, bool reverse = false) {
    OpRunner r("Reshape", {{"shape", shape}, {"reverse", reverse ? "True" : "False"}});
    std::vector<TShape> i{in}, o, a;
    r.property().InferShape(&i, &o, &a);
    return o[0];
  };
  EXPECT_EQ(out("(4, 0, 2)", TShape{2, 3, 4}), (TShape{4, 3, 2}));
  EXPECT_EQ(out("(2, 0, 0)", TShape{2, 3, 4}), (TShape{2, 3, 4}));
  EXPECT_EQ(out("(6, 1, -1)", TShape{2, 3, 4}), (TShape{6, 1, 4}));
  EXPECT_EQ(out("(3, -1, 8)", TShape{2, 3, 4}), (TShape{3, 1, 8}));
  EXPECT_EQ(out("(-1,)", TShape{2, 3, 4}), (TShape{24}));
  EXPECT_EQ(out("(-2,)", TShape{2, 3, 4}), (TShape{2, 3, 4}));
  EXPECT_EQ(out("(2, -2)", TShape{2, 3, 4}), (TShape{2, 3, 4}));
  EXPECT_EQ(out("(-2, 1, 1)", TShape{2, 3, 4}), (TShape{2, 3, 4, 1, 1}));
  EXPECT_EQ(out("(-3, 4)", TShape{2, 3, 4}), (TShape{6, 4}));
  EXPECT_EQ(out("(-3, -3)", TShape{2, 3, 4, 5}), (TShape{6, 20}));
  EXPECT_EQ(out("(0, -3)", TShape{2, 3, 4}), (TShape{2, 12}));
  EXPECT_EQ(out("(-3, -2)", TShape{2, 3, 4}), (TShape{6, 4}));
  EXPECT_EQ(out("(-4, 1, 2, -2)", TShape{2, 3, 4}), (TShape{1, 2, 3, 4}));
  EXPECT_EQ(out("(2, -4, -1, 3, -2)", TShape{2, 3, 4}), (TShape{2, 1, 3, 4}));
  EXPECT_EQ(out("(10, 5, 4)", TShape{10, 5, 4}, true), (TShape{10, 5, 4}));
  EXPECT_EQ(out("(-1, 0)", TShape{10, 5, 4}, true), (TShape{50, 4}));
  EXPECT_EQ(out("(-1, 0)", TShape{10, 5, 4}), (TShape{40, 5}));
  EXPECT_THROW(out("(5, -1)", TShape{2, 3}), Error);
}

}  // namespace
}  // namespace mxplug

namespace mxplug {
namespace {

TEST_F(Ops, JoinAndRepeatBackwardMatchFiniteDifferences) {
  CheckBackward("Concat", {{"num_args", "3"}, {"dim", "1"}},
                {TShape{2, 3}, TShape{2, 1}, TShape{2, 2}});
  CheckBackward("Concat", {{"num_args", "2"}, {"dim", "-1"}}, {TShape{2, 2, 3}, TShape{2, 2, 2}});
  CheckBackward("stack", {{"num_args", "2"}, {"axis", "1"}}, {TShape{2, 3}, TShape{2, 3}});
  CheckBackward("add_n", {{"num_args", "3"}}, {TShape{4}, TShape{4}, TShape{4}});
  CheckBackward("slice_axis", {{"axis", "1"}, {"begin", "-3"}, {"end", "None"}}, {TShape{2, 4}});
  CheckBackward("tile", {{"reps", "(2, 1, 3)"}}, {TShape{2, 2}});
  CheckBackward("repeat", {{"repeats", "3"}, {"axis", "0"}}, {TShape{2, 2}});
  CheckBackward("repeat", {{"repeats", "2"}}, {TShape{2, 3}});
  CheckBackward("flip", {{"axis", "(0, 1)"}}, {TShape{3, 2}});
  CheckBackward("squeeze", {{"axis", "(0,)"}}, {TShape{1, 3}});
}

TEST_F(Ops, SplitIsConcatInverse) {
  auto x = Random<double>(24, 5);
  OpRunner split("SliceChannel", {{"num_outputs", "3"}, {"axis", "1"}});
  std::vector<Tensor> parts = split.Forward({Make(x, TShape{2, 6, 2})});
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[1].shape(), (TShape{2, 2, 2}));
  OpRunner concat("Concat", {{"num_args", "3"}, {"dim", "1"}});
  EXPECT_EQ(concat.Forward(parts)[0].ToVector<double>(), x);
  // Split's backward joins the output gradients: the inverse again.
  std::vector<Tensor> inputs{Make(x, TShape{2, 6, 2})};
  std::vector<Tensor> grads = split.Backward(parts, inputs, parts);
  EXPECT_EQ(grads[0].ToVector<double>(), x);
}

}  // namespace
}  // namespace mxplug

namespace mxplug {
namespace {

TEST_F(Ops, IndexingAndNormBackwardMatchFiniteDifferences) {
  // Index inputs hold non-integers in (0.1, 2.9): a small perturbation never changes the index
  // they truncate to, so their numeric gradient is zero, as the op's is.
  CheckBackward("pick", {{"axis", "1"}}, {TShape{4, 3}, TShape{4}}, 0.1, 2.9);
  CheckBackward("pick", {{"axis", "0"}, {"keepdims", "True"}}, {TShape{3, 2}, TShape{1, 2}}, 0.1,
                2.9);
  CheckBackward("where", {}, {TShape{3, 2}, TShape{3, 2}, TShape{3, 2}});
  CheckBackward("where", {}, {TShape{3}, TShape{3, 2}, TShape{3, 2}});
  CheckBackward("one_hot", {{"depth", "4"}, {"dtype", "float64"}}, {TShape{5}}, 0.1, 2.9);
  CheckBackward("argmax", {{"axis", "1"}}, {TShape{3, 4}});
  CheckBackward("argmin", {}, {TShape{3, 4}});
  CheckBackward("norm", {}, {TShape{3, 4}});
  CheckBackward("norm", {{"ord", "1"}, {"axis", "(0,)"}, {"keepdims", "True"}}, {TShape{3, 4}});
  CheckBackward("norm", {{"axis", "-1"}}, {TShape{2, 3, 4}});
}

}  // namespace
}  // namespace mxplug

namespace mxplug {
namespace {

TEST_F(Ops, DotBackwardMatchesFiniteDifferencesForEveryTransposition) {
  for (const char* ta : {"False", "True"})
    for (const char* tb : {"False", "True"}) {
      SCOPED_TRACE(std::string("transpose_a=") + ta + " transpose_b=" + tb);
      const bool a = std::string(ta) == "True", b = std::string(tb) == "True";
      KwArgs kw{{"transpose_a", ta}, {"transpose_b", tb}};
      CheckBackward("dot", kw, {a ? TShape{4, 3} : TShape{3, 4}, b ? TShape{5, 4} : TShape{4, 5}});
      CheckBackward("batch_dot", kw,
                    {a ? TShape{2, 4, 3} : TShape{2, 3, 4}, b ? TShape{2, 5, 4} : TShape{2, 4, 5}});
    }
  CheckBackward("dot", {}, {TShape{2, 3, 4}, TShape{4, 2}});  // N-d lhs
  CheckBackward("dot", {}, {TShape{4}, TShape{4}});           // vector dot
}

}  // namespace
}  // namespace mxplug

namespace mxplug {
namespace {

TEST_F(Ops, ActivationsBackwardMatchFiniteDifferences) {
  for (const char* act : {"relu", "sigmoid", "tanh", "softrelu", "softsign"})
    CheckBackward("Activation", {{"act_type", act}}, {TShape{3, 4}}, 0.1, 2.0);
  CheckBackward("Activation", {{"act_type", "tanh"}}, {TShape{3, 4}});
  for (const char* act : {"leaky", "elu", "selu", "gelu"}) {
    CheckBackward("LeakyReLU", {{"act_type", act}, {"slope", "0.3"}}, {TShape{3, 4}}, -2.0, -0.1);
    CheckBackward("LeakyReLU", {{"act_type", act}}, {TShape{3, 4}}, 0.1, 2.0);
  }
  CheckBackward("LeakyReLU", {{"act_type", "prelu"}}, {TShape{2, 3, 2}, TShape{3}}, -2.0, -0.1);
  for (const char* op : {"softmax", "log_softmax"}) {
    CheckBackward(op, {}, {TShape{3, 5}});
    CheckBackward(op, {{"axis", "0"}, {"temperature", "2.5"}}, {TShape{3, 2, 2}});
  }
  CheckBackward("Embedding", {{"input_dim", "3"}, {"output_dim", "4"}}, {TShape{5}, TShape{3, 4}},
                0.1, 2.9);
}

// Loss layers ignore the incoming gradient: their backward is the loss gradient itself.
TEST_F(Ops, OutputLayersBackwardIsTheLossGradient) {
  const std::vector<double> x{0.2, -1.0, 0.5, 2.0, 0.1, -0.3};
  const std::vector<double> label{2, 0};
  OpRunner so("SoftmaxOutput", {{"grad_scale", "2"}, {"normalization", "batch"}});
  std::vector<Tensor> in{Make(x, TShape{2, 3}), Make(label, TShape{2})};
  std::vector<Tensor> out = so.Forward(in);
  std::vector<double> y = out[0].ToVector<double>();
  for (int r = 0; r < 2; ++r) {
    double z = 0;
    for (int j = 0; j < 3; ++j) z += std::exp(x[r * 3 + j]);
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(y[r * 3 + j], std::exp(x[r * 3 + j]) / z, 1e-12);
  }
  std::vector<Tensor> junk{Make(std::vector<double>(6, 123.0), TShape{2, 3})};
  std::vector<double> g = so.Backward(junk, in, out)[0].ToVector<double>();
  for (int r = 0; r < 2; ++r)
    for (int j = 0; j < 3; ++j)
      EXPECT_NEAR(g[r * 3 + j], (y[r * 3 + j] - (j == label[r] ? 1 : 0)) * 2 / 2, 1e-12);

  const std::vector<double> t{1, 2, 3, 4, 5, 6};
  for (const char* op :
       {"LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput"}) {
    SCOPED_TRACE(op);
    OpRunner r(op, {{"grad_scale", "3"}});
    std::vector<Tensor> rin{Make(x, TShape{2, 3}), Make(t, TShape{2, 3})};
    std::vector<Tensor> rout = r.Forward(rin);
    std::vector<double> ry = rout[0].ToVector<double>(),
                        rg = r.Backward(junk, rin, rout)[0].ToVector<double>();
    for (size_t i = 0; i < x.size(); ++i) {
      const bool logistic = std::string(op) == "LogisticRegressionOutput";
      EXPECT_NEAR(ry[i], logistic ? 1 / (1 + std::exp(-x[i])) : x[i], 1e-12);
      const double diff = ry[i] - t[i];
      const double d = std::string(op) == "MAERegressionOutput" ? (diff > 0) - (diff < 0) : diff;
      EXPECT_NEAR(rg[i], 3.0 / 3.0 * d, 1e-12);  // scale / num_output (3 per instance)
    }
  }
  OpRunner loss("MakeLoss",
                {{"grad_scale", "0.5"}, {"normalization", "valid"}, {"valid_thresh", "0.15"}});
  std::vector<Tensor> lin{Make(x, TShape{2, 3})};
  std::vector<Tensor> lout = loss.Forward(lin);
  EXPECT_EQ(lout[0].ToVector<double>(), x);
  std::vector<double> lg = loss.Backward(junk, lin, lout)[0].ToVector<double>();
  for (double v : lg) EXPECT_NEAR(v, 0.5 / 3, 1e-12);  // 3 elements exceed 0.15
}

}  // namespace
}  // namespace mxplug

namespace mxplug {
namespace {

TEST_F(Ops, TakeAndSliceAssignBackwardMatchFiniteDifferences) {
  // Index inputs hold non-integers in (0.1, 2.9), as in the pick test above.
  CheckBackward("take", {{"axis", "1"}}, {TShape{2, 3, 2}, TShape{2, 2}}, 0.1, 2.9);
  CheckBackward("take", {{"axis", "0"}, {"mode", "wrap"}}, {TShape{3, 2}, TShape{4}}, 0.1, 2.9);
  CheckBackward("_slice_assign", {{"begin", "(1, None)"}, {"end", "(3, None)"}, {"step", "(1, 2)"}},
                {TShape{4, 3}, TShape{2, 2}});
  CheckBackward("_slice_assign_scalar", {{"begin", "(0,)"}, {"end", "(2,)"}, {"scalar", "4"}},
                {TShape{3, 2}});
}

}  // namespace
}  // namespace mxplug

namespace mxplug {
namespace {

TEST_F(Ops, ConvolutionPoolingAndFriendsBackwardMatchFiniteDifferences) {
  CheckBackward(
      "Convolution",
      {{"kernel", "(3, 3)"}, {"num_filter", "2"}, {"pad", "(1, 0)"}, {"stride", "(2, 1)"}},
      {TShape{2, 3, 5, 4}, TShape{2, 3, 3, 3}, TShape{2}});
  CheckBackward("Convolution",
                {{"kernel", "(2,)"}, {"num_filter", "4"}, {"num_group", "2"}, {"dilate", "(2,)"}},
                {TShape{2, 4, 6}, TShape{4, 2, 2}, TShape{4}});
  CheckBackward("Convolution", {{"kernel", "(1, 1)"}, {"num_filter", "3"}, {"no_bias", "true"}},
                {TShape{2, 2, 3, 3}, TShape{3, 2, 1, 1}});
  CheckBackward("Deconvolution",
                {{"kernel", "(3, 2)"},
                 {"num_filter", "2"},
                 {"stride", "(2, 2)"},
                 {"pad", "(1, 0)"},
                 {"adj", "(1, 1)"},
                 {"no_bias", "false"}},
                {TShape{2, 3, 3, 2}, TShape{3, 2, 3, 2}, TShape{2}});
  CheckBackward("Deconvolution", {{"kernel", "(3,)"}, {"num_filter", "4"}, {"num_group", "2"}},
                {TShape{1, 2, 4}, TShape{2, 2, 3}});
  for (const char* type : {"max", "avg", "sum"})
    CheckBackward(
        "Pooling",
        {{"kernel", "(3, 2)"}, {"stride", "(2, 1)"}, {"pad", "(1, 1)"}, {"pool_type", type}},
        {TShape{2, 2, 5, 4}});
  CheckBackward("Pooling",
                {{"kernel", "(2,)"},
                 {"pool_type", "avg"},
                 {"pooling_convention", "full"},
                 {"stride", "(2,)"},
                 {"count_include_pad", "false"}},
                {TShape{2, 2, 5}});
  CheckBackward("Pooling", {{"kernel", "(2, 2)"}, {"pool_type", "lp"}, {"p_value", "3"}},
                {TShape{1, 2, 3, 3}}, 0.2, 1.5);
  CheckBackward("Pooling", {{"global_pool", "true"}, {"pool_type", "max"}},
                {TShape{2, 3, 2, 2, 2}});
  CheckBackward("LRN", {{"nsize", "3"}, {"alpha", "0.5"}, {"knorm", "1.5"}}, {TShape{2, 4, 2, 3}});
  CheckBackward("broadcast_like", {}, {TShape{2, 1, 3}, TShape{2, 4, 3}});
  CheckBackward("broadcast_like", {{"lhs_axes", "(0,)"}, {"rhs_axes", "(-1,)"}},
                {TShape{1, 3}, TShape{2, 5}});
  CheckBackward("UpSampling", {{"scale", "2"}, {"sample_type", "nearest"}, {"num_args", "2"}},
                {TShape{2, 1, 2, 2}, TShape{2, 2, 1, 1}});
}

}  // namespace
}  // namespace mxplug

namespace mxplug {
namespace {

template <typename To, typename From>
std::vector<To> Convert(const std::vector<From>& v) {
  return std::vector<To>(v.begin(), v.end());
}

// The float32 kernels (oneDNN's where the build has it, Note [oneDNN]) against the float64
// plain loops, which the test above checks against finite differences: forward, backward, and
// kAddTo / kNullOp on both, which oneDNN's path meets through reorders that add.
void CheckFloat32AgainstFloat64(const std::string& op, const KwArgs& kw,
                                const std::vector<TShape>& shapes) {
  SCOPED_TRACE(op);
  std::vector<std::vector<double>> values;
  std::vector<Tensor> in64, in32;
  for (size_t i = 0; i < shapes.size(); ++i) {
    values.push_back(Random<double>(shapes[i].Size(), 30 + i));
    for (double& v : values.back()) v = static_cast<float>(v);  // the same inputs in both types
    in64.push_back(Make(values.back(), shapes[i]));
    in32.push_back(Make(Convert<float>(values.back()), shapes[i]));
  }
  OpRunner runner(op, kw);
  std::vector<Tensor> out64 = runner.Forward(in64), out32 = runner.Forward(in32);
  const std::vector<double> y = out64[0].ToVector<double>();
  ExpectNear(Convert<double>(out32[0].ToVector<float>()), y, 1e-5);

  const std::vector<double> r = Random<double>(out64[0].size(), 77);
  std::vector<Tensor> og64{Make(r, out64[0].shape())},
      og32{Make(Convert<float>(r), out64[0].shape())};
  for (size_t i = 1; i < out64.size(); ++i) {
    og64.push_back(Make(std::vector<double>(out64[i].size(), 0.0), out64[i].shape()));
    og32.push_back(Make(std::vector<float>(out64[i].size(), 0.0f), out64[i].shape()));
  }
  std::vector<Tensor> g64 = runner.Backward(og64, in64, out64),
                      g32 = runner.Backward(og32, in32, out32);
  for (size_t i = 0; i < g64.size(); ++i)
    ExpectNear(Convert<double>(g32[i].ToVector<float>()), g64[i].ToVector<double>(), 1e-4);

  // kAddTo onto what is there, kNullOp on the last input's gradient (of several).
  std::vector<Tensor> acc;
  std::vector<std::vector<double>> before;
  for (const TShape& s : shapes) {
    before.push_back(Random<double>(s.Size(), 8));
    acc.push_back(Make(Convert<float>(before.back()), s));
  }
  std::vector<OpReqType> req(shapes.size(), kAddTo);
  if (req.size() > 1) req.back() = kNullOp;
  runner.BackwardInto(og32, in32, out32, acc, req);
  for (size_t i = 0; i < acc.size(); ++i) {
    std::vector<double> want = before[i];
    if (req[i] == kAddTo) {
      const std::vector<double> g = g64[i].ToVector<double>();
      for (size_t j = 0; j < want.size(); ++j) want[j] += g[j];
    }
    ExpectNear(Convert<double>(acc[i].ToVector<float>()), want, 1e-4);
  }
  std::vector<float> base = Convert<float>(Random<double>(out64[0].size(), 9));
  std::vector<Tensor> outs{Make(base, out64[0].shape())};
  std::vector<OpReqType> out_req{kAddTo};
  for (size_t i = 1; i < out64.size(); ++i) {
    outs.push_back(Make(std::vector<float>(out64[i].size(), 0.0f), out64[i].shape()));
    out_req.push_back(kWriteTo);
  }
  runner.ForwardInto(in32, outs, out_req);
  std::vector<double> want = Convert<double>(base);
  for (size_t j = 0; j < want.size(); ++j) want[j] += y[j];
  ExpectNear(Convert<double>(outs[0].ToVector<float>()), want, 1e-5);
}

TEST_F(Ops, Float32KernelsMatchTheFloat64Loops) {
  CheckFloat32AgainstFloat64("Convolution",
                             {{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"pad", "(1, 1)"}},
                             {TShape{2, 3, 6, 5}, TShape{4, 3, 3, 3}, TShape{4}});
  CheckFloat32AgainstFloat64(
      "Convolution",
      {{"kernel", "(2,)"}, {"num_filter", "4"}, {"num_group", "2"}, {"stride", "(2,)"}},
      {TShape{2, 4, 7}, TShape{4, 2, 2}, TShape{4}});
  for (const char* type : {"max", "avg"})
    CheckFloat32AgainstFloat64(
        "Pooling",
        {{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}, {"pad", "(1, 1)"}, {"pool_type", type}},
        {TShape{2, 3, 7, 6}});
  CheckFloat32AgainstFloat64("LRN", {{"nsize", "3"}, {"alpha", "0.5"}, {"knorm", "1.5"}},
                             {TShape{2, 5, 3, 2}});
  for (const char* op : {"softmax", "log_softmax"})
    CheckFloat32AgainstFloat64(op, {{"axis", "1"}}, {TShape{3, 4, 2}});
}

// Note [Scratch lifetimes]: on oneDNN a convolution's backward reorders the output gradient and
// the data into oneDNN's blocked layout and writes the data gradient in it before reordering it
// back. The data gradient's copy is done with before the data's is needed, so the call asks for
// about two activations of temp space, not three; its gradients still match the float64 loops.
TEST_F(Ops, ConvolutionBackwardOnOneDnnReusesScratchBetweenItsSteps) {
  const KwArgs kw{{"kernel", "(3, 3)"}, {"num_filter", "32"}, {"pad", "(1, 1)"}, {"no_bias", "1"}};
  const TShape data{4, 32, 16, 16}, weight{32, 32, 3, 3};
  const size_t activation = data.Size() * sizeof(float);
  std::vector<double> x = Random<double>(data.Size(), 41), w = Random<double>(weight.Size(), 42),
                      r = Random<double>(data.Size(), 43);
  for (auto* v : {&x, &w, &r})
    for (double& e : *v) e = static_cast<float>(e);  // the same values in both types
  OpRunner conv32("Convolution", kw), conv64("Convolution", kw);
  std::vector<Tensor> in32{Make(Convert<float>(x), data), Make(Convert<float>(w), weight)},
      in64{Make(x, data), Make(w, weight)};
  std::vector<Tensor> out32 = conv32.Forward(in32), out64 = conv64.Forward(in64);
  std::vector<Tensor> g32 = conv32.Backward({Make(Convert<float>(r), data)}, in32, out32),
                      g64 = conv64.Backward({Make(r, data)}, in64, out64);
  for (size_t i = 0; i < g64.size(); ++i)
    ExpectNear(Convert<double>(g32[i].ToVector<float>()), g64[i].ToVector<double>(), 1e-4);
  const size_t bytes = conv32.temp_space_bytes();
  if (bytes < activation)
    GTEST_SKIP() << "this build runs the float32 convolution without reorders into oneDNN's "
                    "blocked layout (asked for "
                 << bytes << " bytes of temp space): no scratch to share";
  EXPECT_LT(bytes, 2 * activation + activation / 2)
      << "three blocked activations at once: the data gradient's scratch is not reused";
}

// The float32 map `op` over x into a copy of `base`, with kWriteTo and then kAddTo: calls
// check(req, got) with each result.
template <class Check>
void ForwardWithEachRequest(const char* op_name, const std::vector<float>& x,
                            const std::vector<float>& base, const Check& check) {
  const int64_t n = static_cast<int64_t>(x.size());
  OpRunner op(op_name, {});
  for (OpReqType req : {kWriteTo, kAddTo}) {
    SCOPED_TRACE(req == kAddTo ? "kAddTo" : "kWriteTo");
    std::vector<Tensor> out{Make(base, TShape{n})};
    op.ForwardInto({Make(x, TShape{n})}, out, {req});
    check(req, out[0].ToVector<float>());
  }
}

// Note [Vector math]: the float32 maps on glibc's vector math library, over an OpenMP team for
// this many elements, against the function in double: within 4 ulp of the exact value (rounded
// once to float), the special values kept, kWriteTo and kAddTo, and the elements past the last
// whole vector of each thread's range. Each op's domain is where it is finite and not tiny.
TEST_F(Ops, Float32VectorMathIsWithinFourUlpAndKeepsSpecialValues) {
  struct Case {
    const char* op;
    double (*exact)(double);
    double lo, hi;
  };
  const Case cases[] = {
      {"exp", [](double x) { return std::exp(x); }, -87, 88},
      {"sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }, -80, 80},
      {"log", [](double x) { return std::log(x); }, 1e-30, 1e30},
      {"log2", [](double x) { return std::log2(x); }, 1e-30, 1e30},
      {"log10", [](double x) { return std::log10(x); }, 1e-30, 1e30},
      {"log1p", [](double x) { return std::log1p(x); }, -0.99, 1e6},
      {"expm1", [](double x) { return std::expm1(x); }, -80, 88},
      {"sin", [](double x) { return std::sin(x); }, -1e4, 1e4},
      {"cos", [](double x) { return std::cos(x); }, -1e4, 1e4},
      {"tan", [](double x) { return std::tan(x); }, -1.5, 1.5},
      {"arcsin", [](double x) { return std::asin(x); }, -1, 1},
      {"arccos", [](double x) { return std::acos(x); }, -1, 1},
      {"arctan", [](double x) { return std::atan(x); }, -1e4, 1e4},
      {"sinh", [](double x) { return std::sinh(x); }, -88, 88},
      {"cosh", [](double x) { return std::cosh(x); }, -88, 88},
      {"tanh", [](double x) { return std::tanh(x); }, -20, 20},
      {"arcsinh", [](double x) { return std::asinh(x); }, -1e4, 1e4},
      {"arccosh", [](double x) { return std::acosh(x); }, 1, 1e4},
      {"arctanh", [](double x) { return std::atanh(x); }, -0.999, 0.999},
      {"cbrt", [](double x) { return std::cbrt(x); }, -1e30, 1e30},
      {"erf", [](double x) { return std::erf(x); }, -5, 5},
  };
  const int64_t n = (int64_t{1} << 20) + 13;
  const float specials[] = {INFINITY, -INFINITY, NAN, 100.0f, -200.0f, 0.0f, -0.0f, 88.7f};
  const std::vector<float> base = Convert<float>(Random<double>(static_cast<size_t>(n), 52));
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    std::vector<double> xd = Random<double>(static_cast<size_t>(n), 51, c.lo, c.hi);
    if (c.lo > 0 && c.hi / c.lo > 1e6)  // log-uniform over wide positive domains
      for (double& v : xd)
        v = std::exp(std::log(c.lo) +
                     (v - c.lo) / (c.hi - c.lo) * (std::log(c.hi) - std::log(c.lo)));
    std::vector<float> x = Convert<float>(xd);
    for (size_t k = 0; k < 8; ++k) x[static_cast<size_t>(n) - 1 - k] = specials[k];
    ForwardWithEachRequest(c.op, x, base, [&](OpReqType req, const std::vector<float>& got) {
      for (int64_t i = 0; i < n; ++i) {
        const float e = static_cast<float>(c.exact(double(x[i])));  // exact, rounded once
        const float want = req == kAddTo ? base[i] + e : e;
        if (std::isnan(want) || std::isinf(want)) {
          ASSERT_EQ(std::isnan(got[i]), std::isnan(want)) << "at " << i << ", x " << x[i];
          if (std::isinf(want)) {
            ASSERT_EQ(got[i], want) << "at " << i << ", x " << x[i];
          }
          continue;
        }
        // Four ulp of the exact value, and (kAddTo) an ulp of the sum, rounded after it.
        auto ulp = [](float v) {
          v = std::fabs(v);
          return std::nextafter(v, INFINITY) - v;
        };
        const float tol = 4 * ulp(e) + (req == kAddTo ? ulp(want) : 0.0f);
        ASSERT_NEAR(got[i], want, tol) << "at " << i << ", x " << x[i];
      }
    });
  }
}

// floor, ceil, trunc and rint in float32 on SSE4.1's rounding: exactly the C library's values,
// halves, the signs of zeros, infinities and NaN included, with kWriteTo and kAddTo, past the
// last whole vector of each range.
TEST_F(Ops, Float32RoundingEqualsTheCLibrary) {
  struct Case {
    const char* op;
    float (*exact)(float);
  };
  const Case cases[] = {{"floor", [](float x) { return std::floor(x); }},
                        {"ceil", [](float x) { return std::ceil(x); }},
                        {"trunc", [](float x) { return std::trunc(x); }},
                        {"fix", [](float x) { return std::trunc(x); }},
                        {"rint", [](float x) { return std::nearbyint(x); }}};
  const int64_t n = (int64_t{1} << 20) + 7;
  std::vector<float> x = Convert<float>(Random<double>(static_cast<size_t>(n), 61, -1e3, 1e3));
  const float specials[] = {INFINITY, -INFINITY, NAN,   0.0f, -0.0f, 0.5f,   -0.5f,
                            1.5f,     2.5f,      -2.5f, 3e9f, -3e9f, 1e-30f, -1e-30f};
  for (size_t k = 0; k < std::size(specials); ++k) x[k * 3] = specials[k];  // inside whole vectors
  for (size_t k = 0; k < 7; ++k) x[static_cast<size_t>(n) - 1 - k] = specials[k];  // the tail
  const std::vector<float> base = Convert<float>(Random<double>(static_cast<size_t>(n), 62));
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    ForwardWithEachRequest(c.op, x, base, [&](OpReqType req, const std::vector<float>& got) {
      for (int64_t i = 0; i < n; ++i) {
        const float want = req == kAddTo ? base[i] + c.exact(x[i]) : c.exact(x[i]);
        if (std::isnan(want)) {
          ASSERT_TRUE(std::isnan(got[i])) << "at " << i << ", x " << x[i];
          continue;
        }
        ASSERT_EQ(got[i], want) << "at " << i << ", x " << x[i];
        ASSERT_EQ(std::signbit(got[i]), std::signbit(want)) << "at " << i << ", x " << x[i];
      }
    });
  }
}

}  // namespace
}  // namespace mxplug
