// mxplug._core.KVStore: the core's KVStore with Python keys as strings (python/mxplug/kvstore.py
// maps MXNet's int keys) and a Python callable as the updater. Calls keep the GIL: they only
// push work, and the updater they call is Python.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "mxplug/kvstore.h"

namespace py = pybind11;

namespace mxplug::python {

void DefineKVStore(py::module_& m) {
  py::class_<KVStore, std::unique_ptr<KVStore>>(m, "KVStore",
                                                "A key-value store of arrays (MXNet's KVStore).")
      .def(py::init([](const std::string& type) { return KVStore::Create(type); }), py::arg("type"))
      .def_property_readonly("type", &KVStore::type)
      .def_property_readonly("rank", &KVStore::rank)
      .def_property_readonly("num_workers", &KVStore::num_workers)
      .def("init", &KVStore::Init, py::arg("keys"), py::arg("values"))
      .def("push", &KVStore::Push, py::arg("keys"), py::arg("values"), py::arg("priority") = 0)
      .def("pull", &KVStore::Pull, py::arg("keys"), py::arg("outs"), py::arg("priority") = 0)
      .def(
          "set_updater",
          [](KVStore& kv, py::object fn) {
            if (fn.is_none()) {
              kv.SetUpdater(nullptr);
              return;
            }
            // The callable is kept by the store; called with the GIL held (pushes keep it).
            kv.SetUpdater([fn](const std::string& key, const NDArray& recv, NDArray* stored) {
              py::gil_scoped_acquire gil;
              fn(key, recv, *stored);
            });
          },
          py::arg("updater"), "updater(key, recv, stored), or None for none.")
      .def("barrier", &KVStore::Barrier, py::call_guard<py::gil_scoped_release>())
      .def(
          "send_command_to_servers",
          [](KVStore& kv, int head, const py::bytes& body) {
            std::string text = body;
            py::gil_scoped_release release;
            kv.SendCommandToServers(head, text);
          },
          py::arg("head"), py::arg("body"));
  // A server process's life, and a worker's last act (python/mxplug/kvstore_server.py).
  m.def(
      "kvstore_run_server",
      [](const py::object& controller, const py::object& updater) {
        // The callables are captured by reference (they outlive the call): copies of the
        // functions made without the GIL then never touch a Python reference count.
        py::gil_scoped_release release;
        KVStore::RunServer(
            [&controller](int server_rank, int head, const std::string& body) {
              py::gil_scoped_acquire gil;
              controller(server_rank, head, py::bytes(body));
            },
            [&updater](const std::string& key, const NDArray& recv, NDArray* stored) {
              py::gil_scoped_acquire gil;
              updater(key, recv, *stored);
            });
      },
      py::arg("controller"), py::arg("updater"));
  m.def("kvstore_finish", &KVStore::FinishDistributed, py::call_guard<py::gil_scoped_release>());
  m.def("kvstore_abandon", &KVStore::AbandonDistributed, py::arg("message"));
}

}  // namespace mxplug::python
