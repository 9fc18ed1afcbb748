// mxplug._core.AtomicFile and write_file_atomically: the Python package writes its files (symbol
// JSON, optimizer states, RecordIO indexes, im2rec lists) through the core's atomic writer, so a
// kill at any moment leaves the previous file or the new one, whole (Note [Atomic files]).
#include <pybind11/pybind11.h>

#include <string>

#include "bindings.h"
#include "mxplug/atomic_file.h"

namespace py = pybind11;

namespace mxplug::python {

namespace {

// Text is written as UTF-8, bytes as they are.
std::string Bytes(const py::object& data) {
  if (py::isinstance<py::bytes>(data)) return data.cast<std::string>();
  if (py::isinstance<py::str>(data)) return data.cast<std::string>();
  return py::bytes(data).cast<std::string>();  // bytearray, memoryview
}

}  // namespace

void DefineFiles(py::module_& m) {
  py::class_<AtomicFile>(m, "AtomicFile",
                         "A file written whole or not at all: write, then close (commit). "
                         "Dropped without close, the previous file stays.")
      .def(py::init<std::string>(), py::arg("path"))
      .def(
          "write",
          [](AtomicFile& f, const py::object& data) {
            const std::string bytes = Bytes(data);
            f.Write(bytes);
            return bytes.size();
          },
          py::arg("data"))
      .def("tell", &AtomicFile::size)
      .def("close",
           [](AtomicFile& f) {
             if (f.open()) f.Commit();
           })
      .def("abandon", &AtomicFile::Abandon)
      .def_property_readonly("closed", [](const AtomicFile& f) { return !f.open(); })
      .def_property_readonly("name", &AtomicFile::path)
      .def(
          "__enter__", [](AtomicFile& f) -> AtomicFile& { return f; },
          py::return_value_policy::reference)
      .def("__exit__",
           [](AtomicFile& f, const py::object& type, const py::object&, const py::object&) {
             if (!type.is_none())
               f.Abandon();  // an exception inside the block: keep the old file
             else if (f.open())
               f.Commit();
             return false;
           });
  m.def(
      "write_file_atomically",
      [](const std::string& path, const py::object& data) {
        WriteFileAtomically(path, Bytes(data));
      },
      py::arg("path"), py::arg("data"),
      "Writes data (bytes or text) as the whole of path, atomically.");
}

}  // namespace mxplug::python
