// mxplug._core.DataIter: the core's data iterators (python/mxplug/io/native.py gives them
// MXNet's MXDataIter face). next() waits for a background thread without the GIL.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>

#include "bindings.h"
#include "mxplug/io.h"

namespace py = pybind11;

namespace mxplug::python {
namespace {

py::list Shapes(const std::vector<DataShape>& shapes) {
  py::list out;
  for (const DataShape& s : shapes)
    out.append(py::make_tuple(s.name, ShapeTuple(s.shape), DTypeName(s.dtype)));
  return out;
}

}  // namespace

void DefineDataIter(py::module_& m) {
  py::class_<DataIter, std::unique_ptr<DataIter>>(
      m, "DataIter", "A core data iterator (MNISTIter, CSVIter, ImageRecordIter).")
      .def(py::init([](const std::string& name, const py::dict& kwargs) {
             std::map<std::string, std::string> args;
             for (const auto& [key, value] : kwargs) {
               const std::string k = py::str(key);
               args[k] = KwargString(k, value);
             }
             py::gil_scoped_release release;  // reading and decoding the files
             return DataIter::Create(name, args);
           }),
           py::arg("name"), py::arg("kwargs"))
      .def("reset", &DataIter::BeforeFirst, py::call_guard<py::gil_scoped_release>())
      .def("next", &DataIter::Next, py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("data", [](const DataIter& it) { return it.Value().data; })
      .def_property_readonly("label", [](const DataIter& it) { return it.Value().label; })
      .def_property_readonly("pad", [](const DataIter& it) { return it.Value().pad; })
      .def_property_readonly(
          "index",
          [](const DataIter& it) {
            // A NumPy array made here: the index of every batch, a list of ints would cost more.
            const std::vector<uint64_t>& index = it.Value().index;
            std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(index.size())};
            return py::array_t<uint64_t>(shape, CStrides(shape, sizeof(uint64_t)), index.data());
          })
      .def_property_readonly("data_shapes",
                             [](const DataIter& it) { return Shapes(it.DataShapes()); })
      .def_property_readonly("label_shapes",
                             [](const DataIter& it) { return Shapes(it.LabelShapes()); });
  m.def("list_data_iters", &DataIter::List, "Names of the core's data iterators.");
}

}  // namespace mxplug::python
