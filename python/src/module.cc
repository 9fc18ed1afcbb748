// mxplug._core: the pybind11 bridge to the core. The Python package on top (python/mxplug)
// gives it MXNet's names.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>

#include "bindings.h"
#include "mxplug/profiler.h"
#include "mxplug/runtime.h"
#include "mxplug/version.h"

namespace py = pybind11;

namespace {

py::dict RecordDict(const mxplug::PluginRecord& r) {
  py::dict d;
  d["path"] = r.path;
  d["source"] = r.source;
  d["state"] = r.loaded() ? "loaded" : "refused";
  d["reason"] = r.reason;
  d["name"] = r.name;
  d["version"] = r.version;
  d["vendor"] = r.vendor;
  d["abi"] = py::make_tuple(r.abi_major, r.abi_minor_built, r.abi_minor_min);
  d["ops"] = r.ops;
  d["kernels"] = r.kernels;
  d["devices"] = r.devices;
  d["warnings"] = r.warnings;
  return d;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "mxplug core bindings";
  m.attr("__version__") = MXPLUG_VERSION_STRING;
  // Named as MXNet names it, so that tracebacks and `type(e).__name__` read as MXNet users know;
  // mxplug.MXPlugError is the same class.
  static py::exception<mxplug::Error> error(m, "MXNetError");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const mxplug::Error& e) {
      // PyErr_SetString rather than error(...): the call operator is deprecated from pybind11
      // 2.12 on (py::set_error, which Debian's 2.10 lacks), and this builds with both. A message
      // that says "IndexError: " is raised as Python's IndexError, as MXNet raises it (its
      // errors name their Python class in the message the same way).
      const bool index_error = std::strstr(e.what(), "IndexError: ") != nullptr;
      PyErr_SetString(index_error ? PyExc_IndexError : error.ptr(), e.what());
    }
  });

  mxplug::python::DefineNDArray(m);
  mxplug::python::DefineSymbol(m);
  mxplug::python::DefineKVStore(m);
  mxplug::python::DefineDataIter(m);
  mxplug::python::DefineRecordIO(m);
  mxplug::python::DefineImage(m);
  mxplug::python::DefineFiles(m);

  m.def(
      "load_default_plugins",
      [] {
        mxplug::LoadOptions options;
        options.isolate_new_files = true;  // a crashing plugin costs a probe, not the interpreter
        py::gil_scoped_release release;
        mxplug::Runtime::Get().EnsureDefaultPluginsLoaded(options);
      },
      "Loads the default plugin folder and MXPLUG_PLUGIN_PATH, once.");
  m.def(
      "load_library",
      [](const std::string& path, bool probe) {
        mxplug::PluginRecord r;
        {
          py::gil_scoped_release release;
          mxplug::LoadOptions options;
          options.isolate_new_files = probe;
          r = mxplug::Runtime::Get().LoadLibrary(path, options);
        }
        return RecordDict(r);
      },
      py::arg("path"), py::arg("probe") = true,
      "Loads one plugin file, probed in a child process first unless probe=False; raises "
      "MXPlugError with the reason when refused.");
  m.def(
      "plugins",
      [] {
        py::list out;
        for (const auto& r : mxplug::Runtime::Get().Plugins()) out.append(RecordDict(r));
        return out;
      },
      "Every plugin file seen: loaded or refused, with versions and what it registered.");
  py::module_ prof = m.def_submodule("profiler", "the engine profiler");
  prof.def(
      "set_config",
      [](const std::string& filename) { mxplug::Profiler::Get().SetConfig(filename); },
      py::arg("filename"));
  prof.def(
      "set_state", [](bool running) { mxplug::Profiler::Get().SetState(running); },
      py::arg("running"));
  prof.def("running", [] { return mxplug::Profiler::Get().running(); });
  prof.def("dump", [] { mxplug::Profiler::Get().Dump(); });
  prof.def("dumps", [] { return mxplug::Profiler::Get().AggregateTable(); });
  prof.def("clear", [] { mxplug::Profiler::Get().Clear(); });
  prof.def("dumps_json", [] { return mxplug::Profiler::Get().AggregateJson(); });
  prof.def(
      "now", [] { return mxplug::Profiler::Get().Now(); }, "Microseconds since the epoch.");
  prof.def(
      "record_span",
      [](const std::string& name, const std::string& category, int64_t start_us, int64_t end_us) {
        mxplug::Profiler::Get().RecordSpan(name, category, start_us, end_us);
      },
      py::arg("name"), py::arg("category"), py::arg("start_us"), py::arg("end_us"));
  prof.def(
      "record_counter",
      [](const std::string& name, const std::string& category, double value) {
        mxplug::Profiler::Get().RecordCounter(name, category, value);
      },
      py::arg("name"), py::arg("category"), py::arg("value"));
  prof.def(
      "record_instant",
      [](const std::string& name, const std::string& category, char scope) {
        mxplug::Profiler::Get().RecordInstant(name, category, scope);
      },
      py::arg("name"), py::arg("category"), py::arg("scope"));

  m.def(
      "device_types",
      [] {
        std::vector<int32_t> types;
        for (const auto& d : mxplug::Runtime::Get().devices().List())
          types.push_back(d->device_type);
        return types;
      },
      "DLPack device types that have a backend.");
  m.def(
      "device_type_of",
      [](const std::string& name) {
        for (const auto& d : mxplug::Runtime::Get().devices().List())
          if (d->name == name) return d->device_type;
        return -1;
      },
      py::arg("name"), "The DLPack device type of the backend registered as `name`, or -1.");
  m.def(
      "device_names",
      [] {
        std::vector<std::string> names;
        for (const auto& d : mxplug::Runtime::Get().devices().List()) names.push_back(d->name);
        return names;
      },
      "The names of the loaded device backends.");
  m.def(
      "device_count",
      [](int32_t type) {
        for (const auto& d : mxplug::Runtime::Get().devices().List())
          if (d->device_type == type) return d->Count();
        return 0;
      },
      py::arg("device_type"));
  m.def(
      "memory_info",
      [](int32_t type, int32_t id) {
        mxplug::Runtime& rt = mxplug::Runtime::Get();
        rt.CheckContext(mxplug::Context{type, id});
        const auto [free_bytes, total_bytes] = rt.GetDevice(type)->MemoryInfo(id);
        return py::make_tuple(free_bytes, total_bytes);
      },
      py::arg("device_type"), py::arg("device_id"),
      "(free, total) bytes of a device's memory, as its backend reports them.");
  m.def(
      "device_attributes",
      [](int32_t type, int32_t id) {
        mxplug::Runtime& rt = mxplug::Runtime::Get();
        rt.CheckContext(mxplug::Context{type, id});
        const MXPDeviceAttributes a = rt.GetDevice(type)->Attributes(id);
        py::dict d;
        d["compute_capability"] =
            py::make_tuple(a.compute_capability_major, a.compute_capability_minor);
        d["multiprocessor_count"] = a.multiprocessor_count;
        d["warp_size"] = a.warp_size;
        d["max_threads_per_block"] = a.max_threads_per_block;
        d["total_memory"] = a.total_memory;
        d["shared_memory_per_block"] = a.shared_memory_per_block;
        return d;
      },
      py::arg("device_type"), py::arg("device_id"),
      "What a device's backend says of it (0 where it does not say).");

  m.def(
      "operators",
      [] {
        py::list out;
        const mxplug::Runtime& rt = mxplug::Runtime::Get();
        for (const auto& op : rt.ops().List()) {
          std::vector<std::string> devices;
          std::vector<int32_t> device_types;  // DLPack's, as Context._dl() names a device
          for (const auto& k : rt.KernelsOf(op->name)) {
            devices.push_back(mxplug::DeviceTypeName(k->device_type));
            device_types.push_back(k->device_type);
          }
          py::dict d;
          d["name"] = op->name;
          d["plugin"] = op->plugin;
          d["devices"] = devices;
          d["device_types"] = device_types;
          out.append(d);
        }
        return out;
      },
      "Every registered operator with its plugin and the devices that have kernels (names and\n"
      "DLPack device types).");
}
