// mxplug._core.RecordWriter / RecordReader: MXNet's RecordIO files (python/mxplug/recordio.py
// gives them MXRecordIO's face). Reads and writes run without the GIL.
#include <pybind11/pybind11.h>

#include <string>

#include "bindings.h"
#include "mxplug/recordio.h"

namespace py = pybind11;

namespace mxplug::python {

void DefineRecordIO(py::module_& m) {
  py::class_<RecordWriter>(m, "RecordWriter", "Writes the records of a new RecordIO file.")
      .def(py::init<const std::string&>(), py::arg("path"))
      .def(
          "write",
          [](RecordWriter& w, const py::bytes& record) {
            const std::string_view bytes = record;
            py::gil_scoped_release release;
            w.Write(bytes.data(), bytes.size());
          },
          py::arg("record"))
      .def("tell", &RecordWriter::Tell)
      .def("close", &RecordWriter::Close);
  py::class_<RecordReader>(m, "RecordReader", "Reads the records of a RecordIO file.")
      .def(py::init<const std::string&>(), py::arg("path"))
      .def(
          "read",
          [](RecordReader& r) -> py::object {
            std::string record;
            bool got;
            {
              py::gil_scoped_release release;
              got = r.Next(&record);
            }
            if (!got) return py::none();
            return py::bytes(record);
          },
          "The next record's bytes; None at the end of the file.")
      .def("seek", &RecordReader::Seek, py::arg("offset"))
      .def("tell", &RecordReader::Tell)
      .def_property_readonly("size", &RecordReader::size);
}

}  // namespace mxplug::python
