#include "registry/host_api.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "mxplug/error.h"
#include "mxplug/version.h"

namespace mxplug::detail {
namespace {

MXPStatus* StatusNew(int32_t code, const char* message) {
  return new MXPStatus{code, message ? message : ""};
}
void StatusFree(MXPStatus* status) { delete status; }
int32_t StatusCode(const MXPStatus* status) { return status ? status->code : kMXPOk; }
const char* StatusMessage(const MXPStatus* status) { return status ? status->message.c_str() : ""; }

int32_t MinLogLevel() {
  static const int32_t level = [] {
    const char* v = std::getenv("MXPLUG_LOG_LEVEL");
    return v ? std::atoi(v) : static_cast<int32_t>(kMXPLogWarning);
  }();
  return level;
}

void Log(int32_t level, const char* source, const char* message) {
  if (level < MinLogLevel()) return;
  static std::mutex mu;
  static const char* names[] = {"debug", "info", "warning", "error"};
  const char* name = level >= 0 && level <= 3 ? names[level] : "log";
  std::lock_guard<std::mutex> lock(mu);
  std::fprintf(stderr, "[mxplug %s] %s: %s\n", name, PrintableText(source ? source : "?").c_str(),
               PrintableText(message ? message : "").c_str());
}

bool ValidName(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name)
    if (c <= ' ' || c == '@') return false;
  return true;
}

// Stamps an entry with the plugin registering it and adds it to the pending list.
template <typename Entry>
MXPStatus* Record(MXPRegistrar* registrar, std::shared_ptr<Entry> entry,
                  std::vector<std::shared_ptr<Entry>>& pending) {
  if (const PluginRecord* plugin = registrar->pending.plugin) {
    entry->plugin = plugin->name;
    entry->plugin_path = plugin->path;
  }
  pending.push_back(std::move(entry));
  return nullptr;
}

std::vector<std::string> Strings(const char* const* items, size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; items && i < n; ++i) out.push_back(Str(items[i]));
  return out;
}

MXPStatus* RegisterOp(MXPRegistrar* registrar, const MXPOpDef* raw) {
  if (!registrar || !raw) return NewStatus(kMXPInvalidArgument, "register_op: null argument");
  MXPOpDef def = CopyDef(raw);
  auto entry = std::make_shared<OpEntry>();
  entry->name = Str(def.name);
  const std::string what = "op '" + entry->name + "'";
  if (!ValidName(entry->name))
    return NewStatus(kMXPInvalidArgument, "register_op: invalid op name '" + entry->name + "'");
  if (!def.create || !def.destroy || !def.list || !def.infer_shape)
    return NewStatus(kMXPInvalidArgument,
                     what + " lacks one of create, destroy, list, infer_shape");
  for (const auto& other : registrar->pending.ops)
    if (other->name == entry->name)
      return NewStatus(kMXPAlreadyExists, what + " is registered twice by this plugin");
  // Docs become Python docstrings and CLI text: kept as PrintableText (a byte that is not UTF-8
  // would stop `import mxplug` with UnicodeDecodeError).
  entry->doc = PrintableText(Str(def.doc));
  for (size_t i = 0; def.params && i < def.num_params; ++i) {
    if (!def.params[i]) continue;
    MXPParamDef p = CopyDef(def.params[i]);
    ParamInfo info;
    info.name = Str(p.name);
    info.type = p.type;
    info.type_text = PrintableText(Str(p.type_text));
    if (p.default_value) info.default_value = p.default_value;
    if (p.has_lower_bound) info.lower_bound = p.lower_bound;
    if (p.has_upper_bound) info.upper_bound = p.upper_bound;
    info.choices = Strings(p.choices, p.num_choices);
    info.doc = PrintableText(Str(p.doc));
    entry->params.push_back(std::move(info));
  }
  for (size_t i = 0; def.arguments && i < def.num_arguments; ++i) {
    if (!def.arguments[i]) continue;
    MXPArgumentDef a = CopyDef(def.arguments[i]);
    entry->arguments.push_back(
        {Str(a.name), PrintableText(Str(a.type_text)), PrintableText(Str(a.doc))});
  }
  entry->def = def;
  return Record(registrar, std::move(entry), registrar->pending.ops);
}

MXPStatus* RegisterKernel(MXPRegistrar* registrar, const MXPKernelDef* raw) {
  if (!registrar || !raw) return NewStatus(kMXPInvalidArgument, "register_kernel: null argument");
  MXPKernelDef def = CopyDef(raw);
  auto entry = std::make_shared<KernelEntry>();
  entry->op_name = Str(def.op_name);
  entry->device_type = def.device_type;
  if (!ValidName(entry->op_name))
    return NewStatus(kMXPInvalidArgument,
                     "register_kernel: invalid op name '" + entry->op_name + "'");
  const std::string what = "kernel " + entry->Key();
  if (!def.create || !def.destroy || !def.forward)
    return NewStatus(kMXPInvalidArgument, what + " lacks one of create, destroy, forward");
  for (const auto& other : registrar->pending.kernels)
    if (other->Key() == entry->Key())
      return NewStatus(kMXPAlreadyExists, what + " is registered twice by this plugin");
  entry->def = def;
  return Record(registrar, std::move(entry), registrar->pending.kernels);
}

MXPStatus* RegisterDevice(MXPRegistrar* registrar, const MXPDeviceDef* raw) {
  if (!registrar || !raw) return NewStatus(kMXPInvalidArgument, "register_device: null argument");
  MXPDeviceDef def = CopyDef(raw);
  auto entry = std::make_shared<DeviceEntry>();
  entry->name = Str(def.name);
  entry->device_type = def.device_type;
  if (!ValidName(entry->name))
    return NewStatus(kMXPInvalidArgument,
                     "register_device: invalid device name '" + entry->name + "'");
  const std::string what = "device '" + entry->name + "'";
  if (!def.device_count || !def.describe || !def.allocate || !def.free || !def.copy ||
      !def.stream_create || !def.stream_destroy || !def.stream_synchronize || !def.event_create ||
      !def.event_destroy || !def.event_record || !def.stream_wait_event || !def.event_synchronize ||
      !def.synchronize)
    return NewStatus(kMXPInvalidArgument,
                     what + " lacks functions of MXPDeviceDef (all of ABI 1.0's are required)");
  // The optional 1.2 functions (memset ... thread_start) may each be null, except that pinned
  // memory comes as a pair: a block must go back to the allocator it came from.
  if (!def.host_allocate != !def.host_free)
    return NewStatus(kMXPInvalidArgument,
                     what + " has only one of host_allocate and host_free (give both or neither)");
  if (!def.collective_reduce != !def.collective_broadcast)
    return NewStatus(kMXPInvalidArgument,
                     what + " has only one of collective_reduce and collective_broadcast (give " +
                         "both or neither)");
  for (const auto& other : registrar->pending.devices)
    if (other->device_type == entry->device_type)
      return NewStatus(kMXPAlreadyExists, what + ": device type registered twice by this plugin");
  entry->def = def;
  return Record(registrar, std::move(entry), registrar->pending.devices);
}

MXPStatus* RegisterComm(MXPRegistrar* registrar, const MXPCommDef* raw) {
  if (!registrar || !raw) return NewStatus(kMXPInvalidArgument, "register_comm: null argument");
  MXPCommDef def = CopyDef(raw);
  auto entry = std::make_shared<CommEntry>();
  entry->name = Str(def.name);
  if (!ValidName(entry->name))
    return NewStatus(kMXPInvalidArgument,
                     "register_comm: invalid communication backend name '" + entry->name + "'");
  const std::string what = "communication backend '" + entry->name + "'";
  if (!def.available || !def.init || !def.rank || !def.size || !def.split || !def.comm_free ||
      !def.allreduce || !def.broadcast || !def.barrier || !def.send || !def.recv || !def.probe ||
      !def.test || !def.cancel || !def.abort || !def.finalize)
    return NewStatus(kMXPInvalidArgument,
                     what + " lacks functions of MXPCommDef (all are required)");
  if (def.num_memory_types > 0 && !def.memory_types)
    return NewStatus(kMXPInvalidArgument, what + " gives num_memory_types without memory_types");
  entry->memory_types.assign(def.memory_types, def.memory_types + def.num_memory_types);
  def.memory_types = nullptr;  // the entry's copy is the one read
  for (const auto& other : registrar->pending.comms)
    if (other->name == entry->name)
      return NewStatus(kMXPAlreadyExists, what + " is registered twice by this plugin");
  entry->def = def;
  return Record(registrar, std::move(entry), registrar->pending.comms);
}

size_t ShapeCount(const MXPShapeSlots* slots) { return slots ? slots->shapes->size() : 0; }

MXPStatus* ShapeGet(const MXPShapeSlots* slots, size_t index, int32_t* ndim, const int64_t** dims) {
  if (!slots || index >= slots->shapes->size())
    return NewStatus(kMXPOutOfRange, "shape_get: index " + std::to_string(index) + " out of range");
  const TShape& s = (*slots->shapes)[index];
  *ndim = s.ndim();
  *dims = s.data();
  return nullptr;
}

MXPStatus* ShapeSet(MXPShapeSlots* slots, size_t index, int32_t ndim, const int64_t* dims) {
  if (!slots || index >= slots->shapes->size())
    return NewStatus(kMXPOutOfRange, "shape_set: index " + std::to_string(index) + " out of range");
  if (ndim > 0 && !dims) return NewStatus(kMXPInvalidArgument, "shape_set: null dims");
  (*slots->shapes)[index] = ndim < 0 ? TShape() : TShape(dims, dims + ndim);
  return nullptr;
}

MXPStatus* TempSpace(const MXPResource* resource, size_t bytes, void** ptr) {
  if (!resource || resource->kind != kMXPResourceTempSpace || !resource->handle)
    return NewStatus(kMXPInvalidArgument, "temp_space: not a temp-space resource");
  try {
    *ptr = static_cast<TempSpaceProvider*>(resource->handle)->Get(bytes);
    return nullptr;
  } catch (const std::exception& e) {
    return NewStatus(kMXPResourceExhausted, std::string("temp_space: ") + e.what());
  }
}

MXPStatus* RandomPhilox(const MXPResource* resource, uint64_t blocks, uint64_t* key,
                        uint64_t* counter) {
  if (!resource || resource->kind != kMXPResourceRandom || !resource->handle)
    return NewStatus(kMXPInvalidArgument, "random_philox: not a random resource");
  if (!key || !counter) return NewStatus(kMXPInvalidArgument, "random_philox: null output");
  static_cast<RandomProvider*>(resource->handle)->Reserve(blocks, key, counter);
  return nullptr;
}

MXPStatus* VisitKernels(MXPRegistrar* registrar, int32_t device_type, void* user,
                        MXPStatus* (*visit)(void*, const MXPKernelDef*)) {
  if (!registrar || !registrar->pending.runtime || !visit)
    return NewStatus(kMXPInvalidArgument, "visit_kernels: null argument (only from register_all)");
  for (const auto& kernel : registrar->pending.runtime->kernels().List())
    if (kernel->device_type == device_type)
      if (MXPStatus* status = visit(user, &kernel->def)) return status;
  return nullptr;
}

}  // namespace

const MXPHostApi* HostApi() {
  static const MXPHostApi api = [] {
    MXPHostApi a{};
    a.struct_size = MXP_STRUCT_SIZE(MXPHostApi, register_comm);
    a.abi_major = MXP_ABI_MAJOR;
    a.abi_minor = MXP_ABI_MINOR;
    a.host_version = MXPLUG_VERSION_STRING;
    a.status_new = &StatusNew;
    a.status_free = &StatusFree;
    a.status_code = &StatusCode;
    a.status_message = &StatusMessage;
    a.log = &Log;
    a.register_op = &RegisterOp;
    a.register_kernel = &RegisterKernel;
    a.register_device = &RegisterDevice;
    a.shape_count = &ShapeCount;
    a.shape_get = &ShapeGet;
    a.shape_set = &ShapeSet;
    a.temp_space = &TempSpace;
    a.random_philox = &RandomPhilox;
    a.visit_kernels = &VisitKernels;
    a.register_comm = &RegisterComm;
    return a;
  }();
  return &api;
}

MXPStatus* NewStatus(int32_t code, const std::string& message) {
  return StatusNew(code, message.c_str());
}

std::string TakeMessage(MXPStatus* status) {
  std::string message = status ? status->message : "";
  delete status;
  return message;
}

}  // namespace mxplug::detail

namespace mxplug {

std::string PrintableText(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = byte(i);
    const size_t len = c < 0x80           ? 1
                       : (c >> 5) == 0x6  ? 2
                       : (c >> 4) == 0xE  ? 3
                       : (c >> 3) == 0x1E ? 4
                                          : 0;
    bool utf8 = len > 0 && i + len <= s.size();
    for (size_t k = 1; utf8 && k < len; ++k) utf8 = (byte(i + k) & 0xC0) == 0x80;
    const bool control = (len == 1 && ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F)) ||
                         (utf8 && len == 2 && c == 0xC2 && byte(i + 1) < 0xA0);  // U+0080..U+009F
    if (utf8 && !control) {
      out.append(s.substr(i, len));
      i += len;
      continue;
    }
    for (size_t k = 0; k < (utf8 ? len : 1); ++k) {
      char hex[5];
      std::snprintf(hex, sizeof(hex), "\\x%02x", byte(i + k));
      out += hex;
    }
    i += utf8 ? len : 1;
  }
  return out;
}

void ThrowIfError(MXPStatus* status, const std::string& context) {
  if (!status) return;
  int32_t code = status->code;
  std::string message = detail::TakeMessage(status);
  // Plugin messages often start with the op's name already; say it once.
  if (message.rfind(context + ":", 0) == 0) throw Error(message, code);
  throw Error(context + ": " + message, code);
}

}  // namespace mxplug
