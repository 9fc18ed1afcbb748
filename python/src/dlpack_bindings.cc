// DLPack exchange for NDArray: export as a "dltensor" capsule (to_dlpack_for_read/_write,
// __dlpack__, __dlpack_device__) and import any producer's (from_dlpack), without copies.
//
// Synchronisation: an export first waits on the engine (for pending writes when the consumer
// only reads, for pending reads and writes when it may write), so the consumer never sees stale
// data; the capsule holds the array's chunk, so the memory lives as long as the consumer's view.
// An import wraps the producer's memory in an NDArray whose last use releases the producer's
// DLManagedTensor through the engine, after every pushed function that uses it.
//
// Streams, for accelerator tensors: an export needs none, since the engine's wait means the
// array's stream work has completed (the wait synchronises the events of its last writer, and
// of its readers for a write: docs/engine.md), so any consumer stream may use it at once
// and __dlpack__'s stream argument asks nothing more. An import cannot know which of its
// streams the engine will run the array's readers on, and the producer's own stream (PyTorch's
// current stream, say) may still be writing it; so after taking the capsule it synchronises the
// device, which waits for every stream of the process on it (PyTorch's too: CUDA's runtimes share
// the device's primary context). MXNet 1.x did nothing here. A producer's stream given with the
// capsule could make this a wait on one event instead (not done: the DLPack import has no
// stream argument).
#include <dlpack/dlpack.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <vector>

#include "bindings.h"
#include "mxplug/error.h"
#include "mxplug/ndarray.h"
#include "mxplug/runtime.h"
#include "mxplug/sdk/dtype.hpp"

namespace py = pybind11;

namespace mxplug::python {
namespace {

constexpr const char* kCapsuleName = "dltensor";
constexpr const char* kUsedCapsuleName = "used_dltensor";

// What an exported DLManagedTensor owns: the array (its chunk keeps the memory) and the shape.
struct Exported {
  NDArray array;
  std::vector<int64_t> shape;
  DLManagedTensor managed{};
};

void DeleteExported(DLManagedTensor* t) { delete static_cast<Exported*>(t->manager_ctx); }

py::capsule Export(const NDArray& a, bool for_write) {
  if (a.is_none()) throw Error("to_dlpack: the array is empty (none)", kMXPInvalidArgument);
  // DLPack cannot say read-only, so a consumer could write (NumPy refuses __dlpack__ likewise).
  if (for_write) a.CheckWritable("to_dlpack_for_write / __dlpack__: the array");
  {
    py::gil_scoped_release release;
    if (for_write)
      a.WaitToWrite();
    else
      a.WaitToRead();
  }
  auto* e = new Exported{a, std::vector<int64_t>(a.shape().begin(), a.shape().end()), {}};
  e->managed.dl_tensor = a.ToDLTensor();
  // Pinned host memory goes out as CPU memory, as PyTorch exports its pinned tensors: every
  // consumer takes that (PyTorch refuses kDLCUDAHost).
  e->managed.dl_tensor.device = a.ctx().Compute().ToDLDevice();
  e->managed.dl_tensor.shape = e->shape.data();
  e->managed.manager_ctx = e;
  e->managed.deleter = &DeleteExported;
  // A capsule nobody consumed still owns the tensor; a consumer renames it and takes ownership.
  return py::capsule(&e->managed, kCapsuleName, [](PyObject* capsule) {
    if (PyCapsule_IsValid(capsule, kCapsuleName)) {
      auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsuleName));
      if (t && t->deleter) t->deleter(t);
    }
  });
}

bool IsCompactRowMajor(const DLTensor& t) {
  if (!t.strides) return true;
  int64_t expected = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    if (t.shape[i] != 1 && t.strides[i] != expected) return false;
    expected *= t.shape[i];
  }
  return true;
}

NDArray Import(py::object source) {
  if (py::hasattr(source, "__dlpack__")) source = source.attr("__dlpack__")();
  PyObject* capsule = source.ptr();
  if (!PyCapsule_IsValid(capsule, kCapsuleName))
    throw Error("from_dlpack: expected a 'dltensor' capsule (unused) or an object with __dlpack__",
                kMXPInvalidArgument);
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsuleName));
  const DLTensor& t = managed->dl_tensor;
  const int dtype = FromDLDataType(t.dtype);
  if (dtype == kMXPUnknownDType)
    throw Error("from_dlpack: DLPack type (code " + std::to_string(t.dtype.code) + ", " +
                    std::to_string(t.dtype.bits) + " bits, " + std::to_string(t.dtype.lanes) +
                    " lanes) has no NDArray dtype",
                kMXPInvalidArgument);
  if (!IsCompactRowMajor(t))
    throw Error(
        "from_dlpack: the tensor is strided (not compact row-major); make it contiguous "
        "first (torch: .contiguous(), NumPy: numpy.ascontiguousarray)",
        kMXPInvalidArgument);
  TShape shape(t.shape, t.shape + t.ndim);
  void* data = static_cast<char*>(t.data) + t.byte_offset;
  std::shared_ptr<void> owner(managed, [](void* m) {
    auto* mt = static_cast<DLManagedTensor*>(m);
    if (mt->deleter) mt->deleter(mt);
  });
  const Context ctx{t.device.device_type, t.device.device_id};
  NDArray a = NDArray::FromExternal(data, shape, dtype, ctx, std::move(owner));
  // Taken: the capsule must not free it any more.
  PyCapsule_SetName(capsule, kUsedCapsuleName);
  // The producer's pending writes: on an accelerator (FromExternal refused types with no
  // backend), or into pinned host memory by the accelerator that page-locked it.
  std::shared_ptr<const DeviceEntry> writer;
  if (!ctx.IsHost())
    writer = Runtime::Get().GetDevice(ctx.dev_type);
  else if (ctx.IsHostPinned())
    writer = Runtime::Get().PinnedMemoryBackend(ctx.dev_type);
  if (writer) {
    py::gil_scoped_release release;
    writer->Synchronize(ctx.dev_id);
  }
  return a;
}

}  // namespace

void DefineDLPack(py::module_& m, py::class_<NDArray>& cls) {
  cls.def(
         "to_dlpack_for_read", [](const NDArray& a) { return Export(a, false); },
         "A DLPack capsule viewing this array, after pending writes have finished.")
      .def(
          "to_dlpack_for_write", [](const NDArray& a) { return Export(a, true); },
          "A DLPack capsule viewing this array, after pending reads and writes have finished.")
      .def(
          "__dlpack__", [](const NDArray& a, py::object /*stream*/) { return Export(a, true); },
          py::arg("stream") = py::none())
      .def("__dlpack_device__", [](const NDArray& a) {
        const Context ctx = a.ctx().Compute();  // as Export describes the memory
        return py::make_tuple(static_cast<int>(ctx.dev_type), ctx.dev_id);
      });
  m.def("from_dlpack", &Import, py::arg("dlpack"),
        "An NDArray sharing the memory of a DLPack capsule or of an object with __dlpack__.");
}

}  // namespace mxplug::python
