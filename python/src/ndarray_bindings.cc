// mxplug._core.NDArray and the imperative entry points (invoke, creation from NumPy). The
// Python package adds MXNet's API on top (python/mxplug/ndarray); what runs per operation
// (arithmetic operators, invoke) is here, in C++, to keep per-op overhead low.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bindings.h"
#include "mxplug/engine.h"
#include "mxplug/error.h"
#include "mxplug/imperative.h"
#include "mxplug/ndarray.h"
#include "mxplug/ndarray_file.h"
#include "mxplug/resource.h"
#include "mxplug/runtime.h"

namespace py = pybind11;

namespace mxplug::python {

py::tuple ShapeTuple(const TShape& s) {
  py::tuple t(s.ndim() < 0 ? 0 : s.ndim());
  for (int i = 0; i < s.ndim(); ++i) t[i] = py::int_(s[i]);
  return t;
}

TShape ToShape(const py::handle& obj) {
  if (py::isinstance<py::int_>(obj)) return TShape{obj.cast<int64_t>()};
  std::vector<int64_t> dims;
  for (const py::handle& d : obj) dims.push_back(d.cast<int64_t>());
  return TShape(std::move(dims));
}

int DTypeFlagOf(const std::string& name) {
  size_t n = 0;
  const DTypeInfo* table = DTypeTable(&n);
  for (size_t i = 0; i < n; ++i)
    if (name == table[i].name) return table[i].flag;
  throw Error("unknown dtype '" + name + "'", kMXPInvalidArgument);
}

// MXNet's Python frontend passes every keyword argument as str(value); the same conventions
// here: True/False, "(2, 3)" for tuples and lists, a dtype by its NumPy name.
std::string KwargString(const std::string& key, const py::handle& value) {
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>() ? "True" : "False";
  if (py::isinstance<py::list>(value)) return py::str(py::tuple(value.cast<py::list>()));
  if (value.is_none() || py::isinstance<py::int_>(value) || py::isinstance<py::float_>(value) ||
      py::isinstance<py::tuple>(value))
    return py::str(value);
  if (key == "dtype" || py::isinstance<py::type>(value) || py::hasattr(value, "itemsize")) {
    py::object np = py::module_::import("numpy");
    return np.attr("dtype")(value).attr("name").cast<std::string>();
  }
  return py::str(value);
}

KwArgs ToKwArgs(const py::dict& kwargs) {
  KwArgs out;
  out.reserve(kwargs.size());
  for (const auto& [k, v] : kwargs) {
    std::string key = k.cast<std::string>();
    out.emplace_back(key, KwargString(key, v));
  }
  return out;
}

Context ToContext(const py::handle& ctx) {
  auto t = ctx.cast<std::pair<int32_t, int32_t>>();
  return Context{t.first, t.second};
}

std::vector<py::ssize_t> CStrides(const std::vector<py::ssize_t>& shape, size_t itemsize) {
  std::vector<py::ssize_t> strides(shape.size());
  py::ssize_t step = static_cast<py::ssize_t>(itemsize);
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = step;
    step *= shape[i];
  }
  return strides;
}

namespace {

// Note [NDArray's Python type]
// pybind11 finds the Python type of a C++ type by hashing its mangled name, on every cast in
// either direction and every py::isinstance: three to four lookups per `a + b`, about 3,000 of
// the call's 21,000 instructions. The hot paths (the arithmetic operators and an op's results)
// look NDArray's up once, and read or make instances through it.
const py::detail::type_info* NDArrayType() {
  static const py::detail::type_info* type = py::detail::get_type_info(typeid(NDArray), true);
  return type;
}

bool IsNDArray(py::handle h) { return PyObject_TypeCheck(h.ptr(), NDArrayType()->type) != 0; }

std::string TypeName(py::handle h) {
  return std::string(py::str(py::type::handle_of(h).attr("__name__")));
}

// The array inside `h`, which IsNDArray has checked.
const NDArray& NDArrayIn(py::handle h) {
  auto* instance = reinterpret_cast<py::detail::instance*>(h.ptr());
  void* value = instance->get_value_and_holder(NDArrayType()).value_ptr();
  if (!value) throw py::type_error("an NDArray whose __init__ never ran was passed to an op");
  return *static_cast<const NDArray*>(value);
}

// For a value that is no NDArray: a TypeError naming it (`what`: "__add__: self").
[[noreturn]] void ThrowNotNDArray(py::handle h, const std::string& what) {
  throw py::type_error(what + " is a " + TypeName(h) + ", expected an NDArray");
}

// A new Python NDArray holding `a`: what pybind11's cast of a moved value does (a new instance,
// registered, owning its value through the class's holder), less its search for a Python object
// already wrapping the C++ one (there is none for a new array) and its type lookup.
py::object Wrap(NDArray&& a) {
  using Holder = py::class_<NDArray>::holder_type;
  static_assert(std::is_same_v<Holder, std::unique_ptr<NDArray>>);
  const py::detail::type_info* type = NDArrayType();
  auto object = py::reinterpret_steal<py::object>(py::detail::make_new_instance(type->type));
  auto* instance = reinterpret_cast<py::detail::instance*>(object.ptr());
  py::detail::value_and_holder v = instance->get_value_and_holder(type);
  v.value_ptr() = new NDArray(std::move(a));
  instance->owned = true;
  py::detail::register_instance(instance, v.value_ptr(), type);
  v.set_instance_registered();
  new (std::addressof(v.holder<Holder>())) Holder(v.value_ptr<NDArray>());
  v.set_holder_constructed();
  return object;
}

py::object Visible(const ImperativeOp& op, std::vector<NDArray>&& outputs) {
  const size_t n = op.num_visible_outputs();
  if (n == 1) return Wrap(std::move(outputs[0]));
  py::list list(n);
  for (size_t i = 0; i < n; ++i) list[i] = Wrap(std::move(outputs[i]));
  return list;
}

// out=: an NDArray or a list of them, for the visible outputs; internal outputs are allocated.
// `outs` is empty, and stays so without out=.
void OutArrays(const ImperativeOp& op, const py::handle& out, std::vector<NDArray>* outputs) {
  std::vector<NDArray>& outs = *outputs;
  if (out.is_none()) return;
  outs.resize(op.num_outputs());
  if (py::isinstance<NDArray>(out)) {
    outs[0] = out.cast<NDArray>();
  } else {
    auto list = out.cast<std::vector<NDArray>>();
    if (list.size() > op.num_outputs())
      throw Error(op.name() + ": out= has " + std::to_string(list.size()) + " arrays, the op has " +
                      std::to_string(op.num_outputs()) + " outputs",
                  kMXPInvalidArgument);
    std::copy(list.begin(), list.end(), outs.begin());
  }
}

// Note [The GIL across a call]
// Pushing an op's call never waits for the engine, and a compiled op's inference and kernels call
// no Python, so the call keeps the GIL: releasing and taking it back cost a tenth of a 1-element
// call. An op of the Python plugin (Custom) is called without it: its property calls Python while
// it holds the op's lock, which another thread may hold while it waits for the GIL.
// `inputs` as an rvalue: its arrays move into the call (ImperativeOp::Invoke).
template <typename Inputs>
void InvokeOp(const ImperativeOp& op, Inputs&& inputs, std::vector<NDArray>* outputs,
              bool is_train = false, const Context* no_input_ctx = nullptr) {
  if (op.property().op().plugin != "python")
    return op.Invoke(std::forward<Inputs>(inputs), outputs, is_train, {}, no_input_ctx);
  py::gil_scoped_release release;
  op.Invoke(std::forward<Inputs>(inputs), outputs, is_train, {}, no_input_ctx);
}

// Note [Argument lists]
// An op's input and output lists are std::vectors (ImperativeOp's interface). Made and freed on
// every call, they were two of a 1-element add's eight heap blocks. Each thread keeps one pair,
// emptied after each call but with its room, for its next call; a call made while the pair is in
// use (a kernel of the Python plugin calling ops) makes lists of its own.
class ArgLists {
 public:
  ArgLists() : pair_(&ThreadPair()) {
    if (pair_->busy)
      pair_ = &own_;
    else
      pair_->busy = true;
  }
  ~ArgLists() {
    pair_->inputs.clear();
    pair_->outputs.clear();
    pair_->busy = false;
  }
  ArgLists(const ArgLists&) = delete;
  ArgLists& operator=(const ArgLists&) = delete;

  std::vector<NDArray>& inputs() { return pair_->inputs; }
  std::vector<NDArray>& outputs() { return pair_->outputs; }

 private:
  struct Pair {
    std::vector<NDArray> inputs, outputs;
    bool busy = false;
  };
  static Pair& ThreadPair() {
    thread_local Pair pair;
    return pair;
  }
  Pair own_;
  Pair* pair_;
};

// Appends the arrays of a list or tuple of NDArrays to `arrays` (without pybind11's per-element
// type lookup, Note [NDArray's Python type]).
void AppendArraysOf(const std::string& op, const py::handle& seq, std::vector<NDArray>* arrays) {
  if (!PyList_Check(seq.ptr()) && !PyTuple_Check(seq.ptr()))
    throw py::type_error(op + ": the inputs must be a list or tuple of NDArrays, got " +
                         TypeName(seq));
  const py::sequence items = py::reinterpret_borrow<py::sequence>(seq);
  arrays->reserve(arrays->size() + items.size());
  for (const py::handle item : items) {
    if (!IsNDArray(item)) ThrowNotNDArray(item, op + ": input " + std::to_string(arrays->size()));
    arrays->push_back(NDArrayIn(item));
  }
}

// Runs one op: positional inputs, then keyword inputs by argument name; the rest are kwargs.
// all_outputs: (the inputs in the op's order, every output with the internal ones, how many of them
// are visible) instead of the visible outputs: what mx.autograd records.
py::object Invoke(const std::string& name, const py::handle& args, py::dict kwargs,
                  const py::handle& out, const py::handle& ctx, bool is_train, bool all_outputs) {
  py::dict params;
  std::vector<std::pair<std::string, NDArray>> named;
  for (const auto& [k, v] : kwargs) {
    if (IsNDArray(v))
      named.emplace_back(k.cast<std::string>(), NDArrayIn(v));
    else if (!v.is_none() || k.cast<std::string>() != "name")
      params[k] = v;
  }
  std::shared_ptr<const ImperativeOp> op = ImperativeOp::Get(name, ToKwArgs(params));
  ArgLists lists;
  std::vector<NDArray>& inputs = lists.inputs();
  AppendArraysOf(name, args, &inputs);
  if (!named.empty()) {
    const auto& names = op->input_names();
    if (inputs.size() < names.size()) inputs.resize(names.size());
    for (auto& [key, array] : named) {
      auto it = std::find(names.begin(), names.end(), key);
      if (it == names.end())
        throw Error(
            name + ": no input named '" + key + "'; inputs are: " +
                [&] {
                  std::string s;
                  for (auto& n : names) s += (s.empty() ? "" : ", ") + n;
                  return s;
                }(),
            kMXPInvalidArgument);
      const size_t i = static_cast<size_t>(it - names.begin());
      if (!inputs[i].is_none())
        throw Error(name + ": input '" + key + "' given twice", kMXPInvalidArgument);
      inputs[i] = std::move(array);
    }
  }
  std::vector<NDArray>& outputs = lists.outputs();
  OutArrays(*op, out, &outputs);
  // Ops without inputs (zeros, random sampling) run on the context asked for, else on that of
  // `out`, else on the CPU (ImperativeOp::Invoke).
  const std::optional<Context> where =
      ctx.is_none() ? std::nullopt : std::optional<Context>(ToContext(ctx));
  const Context* no_input_ctx = where ? &*where : nullptr;
  if (all_outputs) {
    InvokeOp(*op, inputs, &outputs, is_train, no_input_ctx);
    return py::make_tuple(inputs, outputs, op->num_visible_outputs());
  }
  InvokeOp(*op, std::move(inputs), &outputs, is_train, no_input_ctx);
  if (!out.is_none()) return py::reinterpret_borrow<py::object>(out);
  return Visible(*op, std::move(outputs));
}

// Note [Autograd state]
// autograd.record()'s flags are per thread, as MXNet's are, and live here rather than in Python
// so that the arithmetic operators below read them without a Python call: a 1-element `a + b`
// outside record() costs a few thousand instructions, and a Python wrapper around it as many
// again. Inside record(), an operator calls the Python function autograd records instead
// (mx.nd.add for __add__), which the package hands over with _set_recorded_arithmetic.
thread_local bool tls_recording = false;
thread_local bool tls_training = false;

// dunder name ("__add__", "__radd__") -> the Python function to call inside record(); never
// destroyed, as it may outlive the interpreter's finalisation of this module.
py::dict& RecordedArithmetic() {
  static auto* functions = new py::dict();
  return *functions;
}

// a <op> b for arrays and scalars, as MXNet's _ufunc_helper: array-array uses the
// same-shape op when shapes match and the broadcasting op otherwise; a scalar on either side
// uses the scalar op (or its reversed form).
struct BinaryOps {
  const char* same_shape;
  const char* broadcast;
  const char* scalar;
  const char* rscalar;  // scalar <op> array
};

// Inside record(): what the function autograd records gives, or null when there is none for
// this operator (comparisons and in-place forms are not recorded, as before).
// What run_op calls inside record() (autograd._invoke_recorded); never destroyed, as
// RecordedArithmetic.
py::object& RecordedInvoke() {
  static auto* function = new py::object();
  return *function;
}

py::object Recorded(const char* dunder, const py::handle& self, const py::handle& other,
                    bool reflected) {
  if (!tls_recording) return py::object();
  py::dict& functions = RecordedArithmetic();
  if (!functions.contains(dunder)) return py::object();
  static auto* number = new py::object(py::module_::import("numbers").attr("Number"));
  if (!IsNDArray(other) && !py::isinstance(other, *number))
    return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  py::object fn = functions[dunder];
  return reflected ? fn(other, self) : fn(self, other);
}

// The op of an operator between two arrays (no kwargs), looked up once: ops are never replaced once
// registered. Under the GIL.
const ImperativeOp& OpNamed(const char* name) {
  static auto* ops = new std::unordered_map<const char*, std::shared_ptr<const ImperativeOp>>();
  auto it = ops->find(name);
  if (it == ops->end()) it = ops->emplace(name, ImperativeOp::Get(name, {})).first;
  return *it->second;
}

py::object Binary(const BinaryOps& ops, const NDArray& lhs, const py::handle& rhs, bool reflected,
                  const NDArray* out) {
  ArgLists lists;
  std::vector<NDArray>& outs = lists.outputs();
  std::vector<NDArray>& inputs = lists.inputs();
  if (out) outs.push_back(*out);
  std::shared_ptr<const ImperativeOp> scalar_op;
  const ImperativeOp* op;
  if (IsNDArray(rhs)) {
    const NDArray& r = NDArrayIn(rhs);
    op = &OpNamed(lhs.shape() == r.shape() ? ops.same_shape : ops.broadcast);
    inputs.reserve(2);  // not a braced list: it would copy each array twice
    inputs.push_back(reflected ? r : lhs);
    inputs.push_back(reflected ? lhs : r);
  } else if (py::isinstance<py::int_>(rhs) || py::isinstance<py::float_>(rhs) ||
             py::hasattr(rhs, "__float__")) {
    const bool is_int = py::isinstance<py::int_>(rhs) && !py::isinstance<py::bool_>(rhs);
    std::string value =
        is_int ? std::string(py::str(rhs))
               : std::string(py::str(py::float_(py::reinterpret_borrow<py::object>(rhs))));
    scalar_op =
        ImperativeOp::Get(reflected ? ops.rscalar : ops.scalar,
                          {{"scalar", std::move(value)}, {"is_int", is_int ? "True" : "False"}});
    op = scalar_op.get();
    inputs = {lhs};
  } else {
    return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  }
  InvokeOp(*op, std::move(inputs), &outs);
  if (out) return py::cast(*out);
  return Wrap(std::move(outs[0]));
}

// a.__add__(b), or with `reflected` b.__radd__(a) as self.__radd__(other): what autograd records
// inside record(), else the op.
py::object Arithmetic(const BinaryOps& ops, const char* dunder, py::handle self, py::handle other,
                      bool reflected) {
  if (py::object r = Recorded(dunder, self, other, reflected)) return r;
  if (!IsNDArray(self)) ThrowNotNDArray(self, std::string(dunder) + ": self");
  return Binary(ops, NDArrayIn(self), other, reflected, nullptr);
}

// Note [Arithmetic slots]
// `a + b` reaches NDArray.__add__ through CPython's slot for +, which looks the method up by name
// and calls it through pybind11's dispatcher (its argument lists and casts): together a tenth of
// a 1-element add. The type's number slots call the operators directly instead; the methods stay,
// for a.__add__(b). A C++ exception becomes the Python exception pybind11's translators make, as
// it would in a method.
struct ArithmeticSlot {
  BinaryOps ops;
  std::string dunder, rdunder;  // "__add__", "__radd__" (for Recorded, which keeps the pointer)
};

ArithmeticSlot& SlotOf(int k) {
  static ArithmeticSlot slots[6];
  return slots[k];
}

template <typename Body>
PyObject* AsSlot(Body&& body) {
  try {
    return body().release().ptr();
  } catch (...) {
    if (py::detail::apply_exception_translators(
            py::detail::get_local_internals().registered_exception_translators) ||
        py::detail::apply_exception_translators(
            py::detail::get_internals().registered_exception_translators))
      return nullptr;
    PyErr_SetString(PyExc_SystemError, "mxplug: an exception escaped the exception translators");
    return nullptr;
  }
}

// a <op> b where a, or else b, is an NDArray.
template <int K>
PyObject* BinarySlot(PyObject* a, PyObject* b) {
  const ArithmeticSlot& s = SlotOf(K);
  return AsSlot([&] {
    if (IsNDArray(a)) return Arithmetic(s.ops, s.dunder.c_str(), a, b, false);
    return Arithmetic(s.ops, s.rdunder.c_str(), b, a, true);
  });
}

// a <op>= b: the op writes into a, which stays the result (MXNet's __iadd__ returns self).
template <int K>
PyObject* InPlaceSlot(PyObject* a, PyObject* b) {
  if (!IsNDArray(a)) Py_RETURN_NOTIMPLEMENTED;
  return AsSlot([&] {
    const NDArray& self = NDArrayIn(a);
    py::object r = Binary(SlotOf(K).ops, self, b, false, &self);
    if (r.ptr() == Py_NotImplemented) return r;
    return py::reinterpret_borrow<py::object>(a);
  });
}

// ** takes a third operand (pow's modulus), which NDArray does not.
template <PyObject* (*Slot)(PyObject*, PyObject*)>
PyObject* PowerSlot(PyObject* a, PyObject* b, PyObject* modulus) {
  if (modulus != Py_None) Py_RETURN_NOTIMPLEMENTED;
  return Slot(a, b);
}

template <int K>
void DefineBinary(py::class_<NDArray>& cls, const char* name, BinaryOps ops) {
  ArithmeticSlot& slot = SlotOf(K);
  slot = {ops, "__" + std::string(name) + "__", "__r" + std::string(name) + "__"};
  cls.def(
      slot.dunder.c_str(),
      [&slot](py::handle self, py::handle b) {
        return Arithmetic(slot.ops, slot.dunder.c_str(), self, b, false);
      },
      py::is_operator());
  cls.def(
      slot.rdunder.c_str(),
      [&slot](py::handle self, py::handle b) {
        return Arithmetic(slot.ops, slot.rdunder.c_str(), self, b, true);
      },
      py::is_operator());
  cls.def(("__i" + std::string(name) + "__").c_str(),
          [ops](NDArray& a, py::handle b) { return Binary(ops, a, b, false, &a); },
          py::is_operator());
}

// After the methods: defining a method resets its slot.
void SetArithmeticSlots(py::class_<NDArray>& cls) {
  PyNumberMethods* n = reinterpret_cast<PyTypeObject*>(cls.ptr())->tp_as_number;
  n->nb_add = &BinarySlot<0>;
  n->nb_subtract = &BinarySlot<1>;
  n->nb_multiply = &BinarySlot<2>;
  n->nb_true_divide = &BinarySlot<3>;
  n->nb_remainder = &BinarySlot<4>;
  n->nb_power = &PowerSlot<&BinarySlot<5>>;
  n->nb_inplace_add = &InPlaceSlot<0>;
  n->nb_inplace_subtract = &InPlaceSlot<1>;
  n->nb_inplace_multiply = &InPlaceSlot<2>;
  n->nb_inplace_true_divide = &InPlaceSlot<3>;
  n->nb_inplace_remainder = &InPlaceSlot<4>;
  n->nb_inplace_power = &PowerSlot<&InPlaceSlot<5>>;
  PyType_Modified(reinterpret_cast<PyTypeObject*>(cls.ptr()));
}

py::array AsNumPy(const NDArray& a) {
  py::object np = py::module_::import("numpy");
  py::dtype dt(DTypeName(a.dtype()));
  std::vector<py::ssize_t> shape(a.shape().begin(), a.shape().end());
  py::array result(dt, shape, CStrides(shape, DTypeSize(a.dtype())));
  void* dst = result.mutable_data();
  const size_t n = a.bytes();
  {
    py::gil_scoped_release release;  // waiting on the engine must not hold the GIL
    a.SyncCopyToCPU(dst, n);
  }
  return result;
}

void CopyFromNumPy(const NDArray& a, const py::array& src) {
  py::array c = py::array::ensure(src, py::array::c_style | py::array::forcecast);
  // The size as NumPy says it: Debian's pybind11 (2.10) reads the item size from the dtype's C
  // struct, whose layout NumPy 2 changed (a wheel's venv gets NumPy 2 from PyPI).
  if (c.attr("nbytes").cast<size_t>() != a.bytes() ||
      DTypeName(a.dtype()) != std::string(py::str(c.dtype())))
    throw Error("NDArray: cannot copy a NumPy array of shape " +
                    std::string(py::str(src.attr("shape"))) + " and dtype " +
                    std::string(py::str(c.dtype())) + " into an array of shape " +
                    a.shape().ToString() + " and dtype " + DTypeName(a.dtype()),
                kMXPInvalidArgument);
  const void* data = c.data();
  const size_t n = a.bytes();
  py::gil_scoped_release release;
  a.SyncCopyFromCPU(data, n);
}

NDArrayFile ToFile(const py::handle& data) {
  NDArrayFile file;
  if (py::isinstance<NDArray>(data)) {
    file.arrays.push_back(data.cast<NDArray>());
  } else if (py::isinstance<py::dict>(data)) {
    for (const auto& [k, v] : data.cast<py::dict>()) {
      if (!py::isinstance<py::str>(k) || !py::isinstance<NDArray>(v))
        throw Error("save: a dict must map str to NDArray", kMXPInvalidArgument);
      file.names.push_back(k.cast<std::string>());
      file.arrays.push_back(v.cast<NDArray>());
    }
  } else if (py::isinstance<py::list>(data) || py::isinstance<py::tuple>(data)) {
    for (const py::handle& v : data) {
      if (!py::isinstance<NDArray>(v))
        throw Error("save: a list must hold only NDArrays", kMXPInvalidArgument);
      file.arrays.push_back(v.cast<NDArray>());
    }
  } else {
    throw Error("save: data must be an NDArray, a list of NDArrays or a dict of str to NDArray",
                kMXPInvalidArgument);
  }
  return file;
}

py::object FromFile(NDArrayFile&& file) {
  auto value = [](NDArray& a) { return a.is_none() ? py::none() : py::cast(std::move(a)); };
  if (file.names.empty()) {
    py::list out;
    for (NDArray& a : file.arrays) out.append(value(a));
    return out;
  }
  py::dict out;
  for (size_t i = 0; i < file.arrays.size(); ++i)
    out[py::str(file.names[i])] = value(file.arrays[i]);
  return out;
}

}  // namespace

void DefineNDArray(py::module_& m) {
  // dynamic_attr: mx.autograd keeps an array's gradient and the op that made it on the array,
  // so that a recorded graph lives as long as the arrays that reach it, as in MXNet.
  py::class_<NDArray> cls(m, "NDArray", py::dynamic_attr(),
                          "An n-dimensional array on a device (MXNet's NDArray).");
  cls.def_property_readonly("shape", [](const NDArray& a) { return ShapeTuple(a.shape()); })
      .def_property_readonly("size", [](const NDArray& a) { return a.size(); })
      .def_property_readonly("ndim", [](const NDArray& a) { return a.shape().ndim(); })
      .def_property_readonly("_dtype_name", [](const NDArray& a) { return DTypeName(a.dtype()); })
      .def_property_readonly(
          "_ctx", [](const NDArray& a) { return std::make_pair(a.ctx().dev_type, a.ctx().dev_id); })
      .def("_is_none", &NDArray::is_none)
      .def_property_readonly("writable", &NDArray::writable,
                             "False for a read-only array (a view of an iterator's data set).")
      .def("_check_writable",
           [](const NDArray& a, const std::string& what) {
             // MXNet raises ValueError for an assignment to a read-only NDArray.
             try {
               a.CheckWritable(what);
             } catch (const Error& e) {
               throw py::value_error(e.what());
             }
           })
      .def(
          "wait_to_read",
          [](const NDArray& a) {
            py::gil_scoped_release release;
            a.WaitToRead();
          },
          "Waits until pending writes to this array have finished; raises their error, if any.")
      .def("_wait_to_write",
           [](const NDArray& a) {
             py::gil_scoped_release release;
             a.WaitToWrite();
           })
      .def("asnumpy", &AsNumPy, "A NumPy copy of the array (waits for pending writes).")
      .def("_sync_copyfrom", &CopyFromNumPy)
      .def("_copyto", [](const NDArray& a, const NDArray& to) { NDArray::Copy(a, to); })
      .def("_copy_to_ctx",
           [](const NDArray& a, const py::handle& ctx) { return a.CopyTo(ToContext(ctx)); })
      .def("_reshape_view",
           [](const NDArray& a, const py::handle& shape) { return a.Reshape(ToShape(shape)); })
      .def("_slice", &NDArray::Slice)
      .def("_at", &NDArray::At)
      .def("_shares_storage", &NDArray::SharesStorageWith)
      .def("_data_address", [](const NDArray& a) { return reinterpret_cast<uintptr_t>(a.data()); });
  DefineDLPack(m, cls);

  m.def("is_recording", [] { return tls_recording; });
  m.def("is_training", [] { return tls_training; });
  m.def("set_recording", [](bool on) { return std::exchange(tls_recording, on); });
  m.def("set_training", [](bool on) { return std::exchange(tls_training, on); });
  m.def(
      "_set_recorded_arithmetic",
      [](const py::dict& functions) { RecordedArithmetic() = functions; },
      "dunder name -> the function an arithmetic operator calls inside autograd.record()");
  DefineBinary<0>(cls, "add", {"elemwise_add", "broadcast_add", "_plus_scalar", "_plus_scalar"});
  DefineBinary<1>(cls, "sub", {"elemwise_sub", "broadcast_sub", "_minus_scalar", "_rminus_scalar"});
  DefineBinary<2>(cls, "mul", {"elemwise_mul", "broadcast_mul", "_mul_scalar", "_mul_scalar"});
  DefineBinary<3>(cls, "truediv", {"elemwise_div", "broadcast_div", "_div_scalar", "_rdiv_scalar"});
  DefineBinary<4>(cls, "mod", {"broadcast_mod", "broadcast_mod", "_mod_scalar", "_rmod_scalar"});
  DefineBinary<5>(cls, "pow",
                  {"broadcast_power", "broadcast_power", "_power_scalar", "_rpower_scalar"});
  SetArithmeticSlots(cls);
  // Comparisons: no reflected or in-place forms (Python swaps the operands itself).
  for (auto [name, bcast, scalar] :
       {std::tuple{"eq", "broadcast_equal", "_equal_scalar"},
        std::tuple{"ne", "broadcast_not_equal", "_not_equal_scalar"},
        std::tuple{"gt", "broadcast_greater", "_greater_scalar"},
        std::tuple{"ge", "broadcast_greater_equal", "_greater_equal_scalar"},
        std::tuple{"lt", "broadcast_lesser", "_lesser_scalar"},
        std::tuple{"le", "broadcast_lesser_equal", "_lesser_equal_scalar"}}) {
    BinaryOps ops{bcast, bcast, scalar, nullptr};
    cls.def(("__" + std::string(name) + "__").c_str(),
            [ops](const NDArray& a, py::handle b) { return Binary(ops, a, b, false, nullptr); },
            py::is_operator());
  }

  m.def(
      "empty",
      [](const py::handle& shape, const py::handle& ctx, const std::string& dtype) {
        return NDArray(ToShape(shape), ToContext(ctx), DTypeFlagOf(dtype));
      },
      py::arg("shape"), py::arg("ctx"), py::arg("dtype"));
  m.def("invoke", &Invoke, py::arg("name"), py::arg("args"), py::arg("kwargs"),
        py::arg("out") = py::none(), py::arg("ctx") = py::none(), py::arg("is_train") = false,
        py::arg("all_outputs") = false,
        "Runs a registered op imperatively; returns its visible outputs (all_outputs: the inputs\n"
        "in the op's order and every output, internal ones too).");
  m.def(
      "run_op",
      [](const std::string& name, const py::handle& args, py::dict kwargs, const py::handle& out,
         const py::handle& ctx) -> py::object {
        if (tls_recording && RecordedInvoke())
          return RecordedInvoke()(name, args, kwargs, out, ctx);
        return Invoke(name, args, std::move(kwargs), out, ctx, tls_training, false);
      },
      "What mx.nd's functions call: invoke in training mode inside train_mode() or record(), and\n"
      "inside record() the function _set_recorded_invoke gave, which records the call too.");
  m.def(
      "_set_recorded_invoke", [](py::object fn) { RecordedInvoke() = std::move(fn); },
      "run_op's function inside autograd.record(): (name, args, kwargs, out, ctx) -> outputs");
  m.def("op_inputs", [](const std::string& name, py::dict kwargs) {
    return ImperativeOp::Get(name, ToKwArgs(kwargs))->input_names();
  });
  m.def(
      "invoke_backward",
      [](const std::string& name, py::dict kwargs, const std::vector<NDArray>& inputs,
         const std::vector<NDArray>& outputs, const std::vector<NDArray>& out_grads) {
        std::shared_ptr<const ImperativeOp> op = ImperativeOp::Get(name, ToKwArgs(kwargs));
        std::vector<NDArray> all_outputs = outputs, all_grads = out_grads;
        all_outputs.resize(op->num_outputs());
        all_grads.resize(op->num_outputs());
        std::vector<NDArray> in_grads;
        {
          py::gil_scoped_release release;
          op->Backward(all_grads, inputs, all_outputs, &in_grads);
        }
        return in_grads;
      },
      "Gradients of an op's arguments from its inputs, outputs and output gradients (for tests and "
      "autograd).");
  m.def(
      "invoke_train",
      [](const std::string& name, const std::vector<NDArray>& inputs, py::dict kwargs) {
        std::shared_ptr<const ImperativeOp> op = ImperativeOp::Get(name, ToKwArgs(kwargs));
        std::vector<NDArray> outputs;
        {
          py::gil_scoped_release release;
          op->Invoke(inputs, &outputs, /*is_train=*/true);
        }
        return outputs;
      },
      "Runs an op in training mode; returns every output, internal ones included.");
  m.def(
      "infer_shapes",
      [](const std::string& name, py::dict kwargs, const py::list& in_shapes) {
        std::shared_ptr<const ImperativeOp> op = ImperativeOp::Get(name, ToKwArgs(kwargs));
        std::vector<TShape> in, out, aux;
        for (const py::handle& s : in_shapes) in.push_back(ToShape(s));
        const std::vector<TShape> given = in;
        if (!op->property().InferShape(&in, &out, &aux))
          throw Error(name + ": cannot infer output shapes from input shapes", kMXPInvalidArgument);
        py::list result;
        for (const TShape& s : out) result.append(ShapeTuple(s));
        return result;
      },
      "Output shapes of an op for input shapes (what Symbol.infer_shape builds on).");
  m.def(
      "op_info",
      [](const std::string& name) {
        std::shared_ptr<const OpEntry> op = Runtime::Get().GetOp(name);
        py::dict d;
        d["name"] = op->name;
        d["doc"] = op->doc;
        d["plugin"] = op->plugin;
        py::list args, params;
        for (const ArgumentInfo& a : op->arguments)
          args.append(py::make_tuple(a.name, a.type_text, a.doc));
        for (const ParamInfo& p : op->params)
          params.append(py::make_tuple(p.name, p.Summary(), p.doc, p.default_value.has_value()));
        d["arguments"] = args;
        d["params"] = params;
        return d;
      },
      py::arg("name"), "An op's documentation: arguments and parameters with their summaries.");
  m.def(
      "save",
      [](const std::string& fname, const py::handle& data) {
        NDArrayFile file = ToFile(data);
        py::gil_scoped_release release;
        SaveNDArrayFile(fname, file);
      },
      py::arg("fname"), py::arg("data"));
  m.def(
      "load",
      [](const std::string& fname) {
        NDArrayFile file;
        {
          py::gil_scoped_release release;
          file = LoadNDArrayFile(fname);
        }
        return FromFile(std::move(file));
      },
      py::arg("fname"));
  m.def(
      "load_frombuffer",
      [](const py::bytes& buf) {
        std::string bytes = buf;
        NDArrayFile file;
        {
          py::gil_scoped_release release;
          file = LoadNDArrays(bytes);
        }
        return FromFile(std::move(file));
      },
      py::arg("buf"));
  m.def("save_tobuffer", [](const py::handle& data) {
    NDArrayFile file = ToFile(data);
    std::string bytes;
    {
      py::gil_scoped_release release;
      bytes = SaveNDArrays(file);
    }
    return py::bytes(bytes);
  });
  m.def(
      "waitall",
      [] {
        py::gil_scoped_release release;
        Engine::Get()->WaitForAll();
      },
      "Waits for all pushed work; raises the first stored error and clears them all.");
  m.def("engine_finish_at_exit", &Engine::FinishAtExit, py::call_guard<py::gil_scoped_release>(),
        "Finishes the pushed work as the interpreter exits (Engine::FinishAtExit).");
  m.def(
      "random_seed",
      [](uint64_t seed, const py::handle& ctx) {
        if (ctx.is_none())
          Resources::Seed(seed);
        else
          Resources::Seed(seed, ToContext(ctx));
      },
      py::arg("seed"), py::arg("ctx") = py::none());
}

}  // namespace mxplug::python
