// Good plugin with ops whose behaviour tests need to observe from outside:
// test.FailForward (its kernel always throws: errors must surface at the next sync point),
// test.FailOnNegative (copies a float array, and throws when it holds a negative number: the same
// executor must run again once its input is good), test.Hang (never returns) and
// test.Reverse (reverses a 1-D float array; not safe in place, and it does not declare in-place,
// so a call whose output aliases its input must go through a temporary) and test.AsyncDouble
// (an asynchronous kernel, ABI 1.5: doubles a float array on a thread of its own, 20 ms after the
// call returned, and ends with an error on a negative element).
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "mxplug/plugin.hpp"
#include "same_shape_prop.h"

namespace {

using mxplug::TBlob;

using test_plugins::SameShapeProp;

class FailForward : public mxplug::Operator {
 public:
  FailForward(const mxplug::KwArgs&, mxplug::Context) {}
  void Forward(const mxplug::OpContext&, const std::vector<TBlob>&,
               const std::vector<mxplug::OpReqType>&, const std::vector<TBlob>&,
               const std::vector<TBlob>&) override {
    throw std::runtime_error("deliberate failure in the kernel");
  }
};

class FailOnNegative : public mxplug::Operator {
 public:
  FailOnNegative(const mxplug::KwArgs&, mxplug::Context) {}
  void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in,
               const std::vector<mxplug::OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    const float* x = in[0].dptr<float>();
    float* y = out[0].dptr<float>();
    for (int64_t i = 0; i < in[0].Size(); ++i) {
      if (x[i] < 0) throw std::runtime_error("negative input at element " + std::to_string(i));
      mxplug::Assign(y[i], req[0], x[i]);
    }
  }
};

// Never returns: what interpreter exit must not wait for forever.
class Hang : public mxplug::Operator {
 public:
  Hang(const mxplug::KwArgs&, mxplug::Context) {}
  void Forward(const mxplug::OpContext&, const std::vector<TBlob>&,
               const std::vector<mxplug::OpReqType>&, const std::vector<TBlob>&,
               const std::vector<TBlob>&) override {
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  }
};

class Reverse : public mxplug::Operator {
 public:
  Reverse(const mxplug::KwArgs&, mxplug::Context) {}
  void Forward(const mxplug::OpContext&, const std::vector<TBlob>& in,
               const std::vector<mxplug::OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    const float* x = in[0].dptr<float>();
    float* y = out[0].dptr<float>();
    const int64_t n = in[0].Size();
    for (int64_t i = 0; i < n; ++i) mxplug::Assign(y[i], req[0], x[n - 1 - i]);
  }
};

class AsyncDouble : public mxplug::Operator {
 public:
  void Forward(const mxplug::OpContext& ctx, const std::vector<TBlob>& in,
               const std::vector<mxplug::OpReqType>& req, const std::vector<TBlob>& out,
               const std::vector<TBlob>&) override {
    if (!ctx.async_on_complete) throw std::logic_error("run synchronously");
    std::thread([x = in[0], y = out[0], r = req[0], done = ctx.async_on_complete] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      for (int64_t i = 0; i < x.Size(); ++i) {
        if (x.dptr<float>()[i] < 0) {
          done(std::make_exception_ptr(
              std::runtime_error("negative input at element " + std::to_string(i))));
          return;
        }
        mxplug::Assign(y.dptr<float>()[i], r, 2 * x.dptr<float>()[i]);
      }
      done(nullptr);
    }).detach();
  }
};

class AsyncDoubleProp : public SameShapeProp {
 public:
  mxplug::Operator* CreateOperator(mxplug::Context) const override { return new AsyncDouble(); }
};

}  // namespace

MXPLUG_REGISTER_OP_PROPERTY_AS(AsyncDoubleOp, "test.AsyncDouble", AsyncDoubleProp)
    .describe("Doubles its input on a thread of its own, after the kernel returned.")
    .add_kernel(kDLCPU, mxplug::sdk::KernelRun::kAsync);
MXPLUG_REGISTER_OP_PROPERTY_AS(FailForwardOp, "test.FailForward", SameShapeProp)
    .describe("Always fails in its kernel.");
MXPLUG_REGISTER_KERNEL_AS(FailForwardKernel, "test.FailForward", kDLCPU, FailForward);
MXPLUG_REGISTER_OP_PROPERTY_AS(FailOnNegativeOp, "test.FailOnNegative", SameShapeProp)
    .describe("Copies its input; fails in its kernel on a negative element.");
MXPLUG_REGISTER_KERNEL_AS(FailOnNegativeKernel, "test.FailOnNegative", kDLCPU, FailOnNegative);
MXPLUG_REGISTER_OP_PROPERTY_AS(HangOp, "test.Hang", SameShapeProp)
    .describe("Never returns from its kernel.");
MXPLUG_REGISTER_KERNEL_AS(HangKernel, "test.Hang", kDLCPU, Hang);
MXPLUG_REGISTER_OP_PROPERTY_AS(ReverseOp, "test.Reverse", SameShapeProp)
    .describe("Reverses a 1-D array; not in-place safe.");
MXPLUG_REGISTER_KERNEL_AS(ReverseKernel, "test.Reverse", kDLCPU, Reverse);

MXPLUG_PLUGIN("faulty_ops", "1.0.0", "tests")
