// The Custom op: MXNet's operators written in Python (mx.operator.CustomOp, CustomOpProp and
// register), as an op of a plugin that lives in this extension module ("python"), registered
// when mxplug is imported (Note [Python custom ops]).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "bindings.h"
#include "mxplug/ndarray.h"
#include "mxplug/plugin.hpp"
#include "mxplug/version.h"

namespace py = pybind11;

MXPLUG_PLUGIN("python", MXPLUG_VERSION_STRING, "mxplug")

namespace mxplug::python {
namespace {

/*!
 * Note [Python custom ops]
 * MXNet's Custom op runs a CustomOpProp and its CustomOp, classes the user wrote in Python and
 * registered under an op_type. Here it is an op like any other, of a plugin whose
 * registration lives in this module: mxplug/__init__.py loads the module's own file as a plugin
 * (it exports mxplug_init), so Custom nodes go through shape and type inference, the executor,
 * autograd and the engine as every op does. Its property and kernel call the functions
 * `_custom_*` of mxplug/operator.py, which hold the Python objects.
 * - The Python objects stay in Python, in a table keyed by an id: this side holds ids, so a
 *   property or kernel freed on an engine thread needs no GIL; the ids of those freed are handed
 *   back to Python at its next call.
 * - The kernel is asynchronous (Note [Asynchronous kernels]): the Python forward pushes ops and
 *   waits for them, which an engine worker could not do without waiting for itself. The worker
 *   hands the call to a thread of this module's pool (MXNet's custom-op threads,
 *   MXNET_CUSTOM_OP_NUM_THREADS of them at most, 16 unless set) and is free at once; the call
 *   completes after the Python code's writes to the outputs have finished. A thread that
 *   already holds the GIL (the naive engine runs ops on the pushing thread) runs it there.
 * - The tensors reach Python as NDArrays over the call's memory, valid until the call ends, as
 *   in MXNet; a tensor that backward does not read is None.
 * - Kernels exist for the CPU only: on a GPU the engine would also have to order the Python
 *   code's work with the streams.
 */

std::mutex released_mu;
std::vector<int64_t>& Released() {
  static auto* ids = new std::vector<int64_t>();
  return *ids;
}

// Calls operator.py's `function` with the GIL, after handing back the ids freed since the last
// call; a Python exception becomes a C++ one with its text.
template <typename... Args>
py::object CallPython(const char* function, Args&&... args) {
  if (!Py_IsInitialized()) throw std::runtime_error("Custom: the Python interpreter has ended");
  py::gil_scoped_acquire gil;
  try {
    py::module_ bridge = py::module_::import("mxplug.operator");
    std::vector<int64_t> freed;
    {
      std::lock_guard<std::mutex> lock(released_mu);
      freed.swap(Released());
    }
    if (!freed.empty()) bridge.attr("_custom_release")(freed);
    return bridge.attr(function)(std::forward<Args>(args)...);
  } catch (py::error_already_set& e) {
    throw std::invalid_argument(e.what());
  }
}

void Release(int64_t id) {
  std::lock_guard<std::mutex> lock(released_mu);
  Released().push_back(id);
}

// The custom-op threads: one more is started when a call finds none idle, up to the limit.
class CustomOpThreads {
 public:
  static CustomOpThreads& Get() {
    static auto* pool = new CustomOpThreads();  // never destroyed: threads may outlive main
    return *pool;
  }

  void Submit(std::function<void()> work) {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(work));
    if (idle_ == 0 && threads_ < limit_) {
      ++threads_;
      std::thread([this] { Loop(); }).detach();
    }
    cv_.notify_one();
  }

 private:
  CustomOpThreads() {
    const char* env = std::getenv("MXNET_CUSTOM_OP_NUM_THREADS");
    limit_ = env && std::atoi(env) > 0 ? std::atoi(env) : 16;
  }

  void Loop() {
    for (;;) {
      std::function<void()> work;
      {
        std::unique_lock<std::mutex> lock(mu_);
        ++idle_;
        cv_.wait(lock, [&] { return !queue_.empty(); });
        --idle_;
        work = std::move(queue_.front());
        queue_.pop_front();
      }
      work();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  int idle_ = 0, threads_ = 0, limit_ = 16;
};

// One Python object of operator.py's table, released with its owner.
class PythonHandle {
 public:
  explicit PythonHandle(int64_t id) : id_(id) {}
  ~PythonHandle() { Release(id_); }
  PythonHandle(const PythonHandle&) = delete;
  PythonHandle& operator=(const PythonHandle&) = delete;
  int64_t id() const { return id_; }

 private:
  int64_t id_;
};

struct CustomParam : public Parameter<CustomParam> {
  std::string op_type;
  MXPLUG_DECLARE_PARAMETER(CustomParam) {
    MXPLUG_DECLARE_FIELD(op_type).describe(
        "Name of the custom operator. This is the name that is passed to `mx.operator.register` "
        "to register the operator.");
  }
};

py::list Arrays(const std::vector<TBlob>& blobs) {
  py::list out;
  for (const TBlob& b : blobs) {
    if (!b.dptr_) {
      out.append(py::none());
      continue;
    }
    const Context ctx{b.dev_.device_type, b.dev_.device_id};
    out.append(py::cast(NDArray::FromExternal(b.dptr_, b.shape_, b.type_flag_, ctx, nullptr)));
  }
  return out;
}

// The device, shapes and dtypes of the inputs: what the Python operator is made for (a tensor
// that backward does not read still has them).
py::tuple Signature(const std::vector<TBlob>& in_data) {
  py::list shapes, flags;
  for (const TBlob& b : in_data) {
    shapes.append(py::cast(std::vector<int64_t>(b.shape_.begin(), b.shape_.end())));
    flags.append(b.type_flag_);
  }
  const DLDevice dev = in_data.empty() ? DLDevice{kDLCPU, 0} : in_data[0].dev_;
  return py::make_tuple(py::make_tuple(static_cast<int>(dev.device_type), dev.device_id), shapes,
                        flags);
}

std::vector<int> Requests(const std::vector<OpReqType>& req) {
  return std::vector<int>(req.begin(), req.end());
}

class CustomKernel : public Operator {
 public:
  explicit CustomKernel(std::shared_ptr<PythonHandle> prop) : prop_(std::move(prop)) {}

  void Forward(const OpContext& ctx, const std::vector<TBlob>& in_data,
               const std::vector<OpReqType>& req, const std::vector<TBlob>& out_data,
               const std::vector<TBlob>& aux) override {
    Start(ctx, [=, prop = prop_, is_train = ctx.is_train] {
      py::gil_scoped_acquire gil;
      py::tuple sig = Signature(in_data);
      CallPython("_custom_forward", prop->id(), sig[0], sig[1], sig[2], is_train, Requests(req),
                 Arrays(in_data), Arrays(out_data), Arrays(aux));
    });
  }

  void Backward(const OpContext& ctx, const std::vector<TBlob>& out_grad,
                const std::vector<TBlob>& in_data, const std::vector<TBlob>& out_data,
                const std::vector<OpReqType>& req, const std::vector<TBlob>& in_grad,
                const std::vector<TBlob>& aux) override {
    Start(ctx, [=, prop = prop_] {
      py::gil_scoped_acquire gil;
      py::tuple sig = Signature(in_data);
      CallPython("_custom_backward", prop->id(), sig[0], sig[1], sig[2], Requests(req),
                 Arrays(out_grad), Arrays(in_data), Arrays(out_data), Arrays(in_grad), Arrays(aux));
    });
  }

 private:
  // Runs `call` on a custom-op thread (here when this thread holds the GIL) and completes the
  // kernel call with its outcome.
  static void Start(const OpContext& ctx, std::function<void()> call) {
    if (!ctx.async_on_complete)
      throw std::logic_error("Custom: the host ran the asynchronous kernel synchronously");
    auto work = [call = std::move(call), done = ctx.async_on_complete] {
      std::exception_ptr error;
      try {
        call();
      } catch (...) {
        error = std::current_exception();
      }
      done(error);
    };
    if (Py_IsInitialized() && PyGILState_Check())
      work();
    else
      CustomOpThreads::Get().Submit(std::move(work));
  }

  std::shared_ptr<PythonHandle> prop_;
};

class CustomProperty : public OperatorProperty {
 public:
  void Init(const KwArgs& kwargs) override {
    std::map<std::string, std::string> attrs(kwargs.begin(), kwargs.end());
    if (!attrs.count("op_type"))
      throw std::invalid_argument("Custom: Required parameter op_type of string is not presented");
    py::gil_scoped_acquire gil;
    py::tuple made = CallPython("_custom_create", attrs);
    prop_ = std::make_shared<PythonHandle>(made[0].cast<int64_t>());
    arguments_ = made[1].cast<std::vector<std::string>>();
    outputs_ = made[2].cast<std::vector<std::string>>();
    aux_ = made[3].cast<std::vector<std::string>>();
  }

  std::vector<std::string> ListArguments() const override { return arguments_; }
  std::vector<std::string> ListOutputs() const override { return outputs_; }
  std::vector<std::string> ListAuxiliaryStates() const override { return aux_; }

  // As MXNet 1.x's Custom: the Python functions are asked whatever is known, in MXNet's legacy
  // form (an unknown shape is (), an unknown dimension 0; an unknown type None), and what they
  // return in that form stays unknown.
  bool InferShape(std::vector<TShape>* in_shape, std::vector<TShape>* out_shape,
                  std::vector<TShape>* aux_shape) const override {
    std::vector<std::vector<int64_t>> ins;
    for (size_t i = 0; i < arguments_.size(); ++i) {
      const TShape& s = in_shape->at(i);
      std::vector<int64_t> dims;
      for (int k = 0; k < s.ndim(); ++k) dims.push_back(s[k] < 0 ? 0 : s[k]);
      ins.push_back(std::move(dims));
    }
    py::gil_scoped_acquire gil;
    py::tuple got = CallPython("_custom_infer_shape", prop_->id(), ins);
    bool known = true;
    auto put = [&](const py::handle& shapes, std::vector<TShape>* into) {
      auto lists = shapes.cast<std::vector<std::vector<int64_t>>>();
      for (size_t i = 0; i < into->size(); ++i) {
        if (!lists.at(i).empty()) {
          for (int64_t& d : lists[i]) d = d == 0 ? -1 : d;
          into->at(i) = TShape(lists[i]);
        }
        known = known && into->at(i).IsKnown();
      }
    };
    put(got[0], in_shape);
    put(got[1], out_shape);
    put(got[2], aux_shape);
    return known;
  }

  bool InferType(std::vector<int>* in_type, std::vector<int>* out_type,
                 std::vector<int>* aux_type) const override {
    std::vector<int> ins(in_type->begin(), in_type->begin() + arguments_.size());
    py::gil_scoped_acquire gil;
    py::tuple got = CallPython("_custom_infer_type", prop_->id(), ins);
    bool known = true;
    auto put = [&](const py::handle& types, std::vector<int>* into) {
      auto list = types.cast<std::vector<int>>();
      for (size_t i = 0; i < into->size(); ++i) {
        if (list.at(i) >= 0) into->at(i) = list[i];
        known = known && into->at(i) >= 0;
      }
    };
    put(got[0], in_type);
    put(got[1], out_type);
    put(got[2], aux_type);
    return known;
  }

  std::vector<int> DeclareBackwardDependency(const std::vector<int>& out_grad,
                                             const std::vector<int>& in_data,
                                             const std::vector<int>& out_data) const override {
    py::gil_scoped_acquire gil;
    return CallPython("_custom_backward_dependency", prop_->id(), out_grad, in_data, out_data)
        .cast<std::vector<int>>();
  }

  Operator* CreateOperator(Context) const override { return new CustomKernel(prop_); }

 private:
  std::shared_ptr<PythonHandle> prop_;
  std::vector<std::string> arguments_, outputs_, aux_;
};

MXPLUG_REGISTER_OP_PROPERTY(Custom, CustomProperty)
    .describe(
        "Apply a custom operator implemented in a frontend language (like Python).\n\n"
        "Custom operators should override required methods like `forward` and `backward`. The "
        "custom operator must be registered before it can be used (mx.operator.register).")
    .add_arguments(CustomParam::Fields())
    .add_kernel(kDLCPU, sdk::KernelRun::kAsync);

}  // namespace
}  // namespace mxplug::python
