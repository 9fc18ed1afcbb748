// mxplug._core.Symbol and mxplug._core.Executor. The Python package (python/mxplug/symbol,
// executor.py) gives them MXNet's names, argument conventions and naming scopes.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "bindings.h"
#include "mxplug/error.h"
#include "mxplug/executor.h"
#include "mxplug/symbol.h"

namespace py = pybind11;

namespace mxplug::python {
namespace {

// Unknown dims as -1, unknown shapes as None: the package turns them into MXNet's 0 and ().
py::object ShapeOrNone(const TShape& s) {
  if (s.ndim() < 0) return py::none();
  return ShapeTuple(s);
}

py::list ShapeList(const std::vector<TShape>& shapes) {
  py::list out;
  for (const TShape& s : shapes) out.append(ShapeOrNone(s));
  return out;
}

py::list TypeList(const std::vector<int>& types) {
  py::list out;
  for (int t : types) out.append(t);
  return out;
}

std::vector<NDArray> Arrays(const py::list& list) {
  std::vector<NDArray> out;
  for (const py::handle& a : list) out.push_back(a.is_none() ? NDArray() : a.cast<NDArray>());
  return out;
}

py::list ArrayList(const std::vector<NDArray>& arrays) {
  py::list out;
  for (const NDArray& a : arrays) out.append(a.is_none() ? py::none() : py::cast(a));
  return out;
}

GradReq ToGradReq(const std::string& req) {
  if (req == "null") return GradReq::kNull;
  if (req == "write" || req == "inplace") return GradReq::kWrite;
  if (req == "add") return GradReq::kAdd;
  throw Error("grad_req '" + req + "' is not one of 'write', 'add', 'null'", kMXPInvalidArgument);
}

Symbol::Attrs ToAttrs(const py::dict& attrs) {
  Symbol::Attrs out;
  for (const auto& [k, v] : attrs) {
    const std::string key = k.cast<std::string>();
    out[key] = KwargString(key, v);
  }
  return out;
}

// {input name: value} from Python for Symbol::InferShape/InferType.
template <typename T, typename Convert>
std::map<std::string, T> Known(const py::dict& known, Convert convert) {
  std::map<std::string, T> given;
  for (const auto& [k, v] : known) given[k.template cast<std::string>()] = convert(v);
  return given;
}

// (arguments, outputs, auxiliary states, complete), each list made by `list`.
template <typename T, typename List>
py::tuple Inferred(const Symbol::Inferred<T>& r, List list) {
  return py::make_tuple(list(r.arguments), list(r.outputs), list(r.aux_states), r.complete);
}

}  // namespace

void DefineSymbol(py::module_& m) {
  py::class_<Symbol>(m, "Symbol")
      .def_static(
          "variable",
          [](const std::string& name, const py::dict& attrs) {
            return Symbol::Variable(name, ToAttrs(attrs));
          },
          py::arg("name"), py::arg("attrs"))
      .def_static(
          "create_op",
          [](const std::string& op, const std::string& name, const py::dict& attrs) {
            return Symbol::CreateOp(op, name, ToAttrs(attrs));
          },
          py::arg("op"), py::arg("name"), py::arg("attrs"))
      .def_static("group", &Symbol::Group)
      .def_static("load_json", &Symbol::FromJSON)
      .def("copy", &Symbol::Copy)
      .def("compose",
           [](Symbol& s, const std::vector<Symbol>& args, const py::dict& kwargs,
              const std::string& name) {
             std::vector<std::pair<std::string, Symbol>> named;
             for (const auto& [k, v] : kwargs)
               named.emplace_back(k.cast<std::string>(), v.cast<Symbol>());
             s.Compose(args, named, name);
           })
      .def_property_readonly("num_outputs", &Symbol::num_outputs)
      .def("output", [](const Symbol& s, size_t i) { return s[i]; })
      .def("get_internals", &Symbol::GetInternals)
      .def("get_children", &Symbol::GetChildren)
      .def("list_arguments", &Symbol::ListArguments)
      .def("list_outputs", &Symbol::ListOutputs)
      .def("list_auxiliary_states", &Symbol::ListAuxiliaryStates)
      .def("list_inputs", &Symbol::ListInputs)
      .def_property_readonly("name", &Symbol::name)
      .def("attr", &Symbol::GetAttr)
      .def("list_attr", &Symbol::ListAttr)
      .def("attr_dict", &Symbol::AttrDict)
      .def("set_attr", &Symbol::SetAttr)
      .def("tojson", &Symbol::ToJSON)
      .def("infer_shape",
           [](const Symbol& s, const py::dict& known) {
             return Inferred(s.InferShape(Known<TShape>(known, ToShape)), ShapeList);
           })
      .def("infer_type", [](const Symbol& s, const py::dict& known) {
        return Inferred(
            s.InferType(Known<int>(known, [](const py::handle& v) { return v.cast<int>(); })),
            TypeList);
      });

  py::class_<Executor>(m, "Executor")
      .def(py::init([](const Symbol& symbol, const py::handle& ctx, const py::list& args,
                       const py::list& grads, const std::vector<std::string>& grad_req,
                       const py::list& aux, bool plan_memory, const py::dict& group2ctx) {
             std::vector<GradReq> req;
             for (const std::string& r : grad_req) req.push_back(ToGradReq(r));
             ExecutorOptions options;
             options.plan_memory = plan_memory;
             for (const auto& [group, c] : group2ctx)
               options.group2ctx[group.cast<std::string>()] = ToContext(c);
             return std::make_unique<Executor>(symbol, ToContext(ctx), Arrays(args), Arrays(grads),
                                               req, Arrays(aux), options);
           }),
           py::arg("symbol"), py::arg("ctx"), py::arg("args"), py::arg("args_grad"),
           py::arg("grad_req"), py::arg("aux_states"), py::arg("plan_memory") = true,
           py::arg("group2ctx") = py::dict())
      .def(
          "forward",
          [](Executor& e, bool is_train, const py::list& reading) {
            std::vector<NDArray> arrays = Arrays(reading);
            py::gil_scoped_release release;
            e.Forward(is_train, arrays);
          },
          py::arg("is_train"), py::arg("reading") = py::list())
      .def(
          "backward",
          [](Executor& e, const py::list& out_grads, bool is_train) {
            std::vector<NDArray> grads = Arrays(out_grads);
            py::gil_scoped_release release;
            e.Backward(grads, is_train);
          },
          py::arg("out_grads"), py::arg("is_train") = true)
      .def("set_monitor", &Executor::SetMonitor, py::arg("on"), py::arg("monitor_all"))
      .def("take_monitored", &Executor::TakeMonitored)
      .def_property_readonly("outputs", [](const Executor& e) { return ArrayList(e.outputs()); })
      .def_property_readonly("arg_arrays",
                             [](const Executor& e) { return ArrayList(e.arg_arrays()); })
      .def_property_readonly("grad_arrays",
                             [](const Executor& e) { return ArrayList(e.grad_arrays()); })
      .def_property_readonly("aux_arrays",
                             [](const Executor& e) { return ArrayList(e.aux_arrays()); })
      .def_property_readonly("memory",
                             [](const Executor& e) {
                               py::dict d;
                               d["planned"] = e.memory().planned;
                               d["naive"] = e.memory().naive;
                               d["inplace"] = e.memory().inplace;
                               d["shared"] = e.memory().shared;
                               return d;
                             })
      .def("debug_str", &Executor::DebugStr);
}

}  // namespace mxplug::python
