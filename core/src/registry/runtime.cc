// The plugin loader and the process-wide catalogue.
//
// Note [No dlclose]
// Libraries are never unloaded, refused ones included: registry entries, statuses and kernel
// states point into them, and a plugin may have started threads or registered atexit handlers.
// Every system that unloads eagerly has crashed at teardown (MXNet #20411, #19016; ONNX Runtime
// #14099). The shared_library objects live in a vector that is itself never freed, so no
// destructor runs dlclose at exit either.
#include "mxplug/runtime.h"

#define BOOST_DLL_USE_STD_FS
#include <sys/stat.h>

#include <algorithm>
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "mxplug/plugin_probe.h"
#include "mxplug/sdk/once.hpp"
#include "mxplug/version.h"
#include "registry/host_api.h"

namespace fs = std::filesystem;

namespace mxplug {

struct Runtime::Impl {
  std::mutex load_mu;  // one load at a time: validation and commit see a stable registry
  mxplug::sdk::Once defaults_once;  // Note [No std::call_once] (sdk/once.hpp)
  // Loaded plugins that export mxplug_adapt (abi/plugin.h), in load order; under load_mu.
  struct Adapter {
    std::string name, path;
    MXPAdaptFn adapt;
  };
  std::vector<Adapter> adapters;
};

namespace {
// Every library any runtime opened, kept open until the process ends: see Note [No dlclose].
// Library handles are process-wide anyway (dlopen of the same file returns the same handle).
void KeepOpen(const boost::dll::shared_library& lib) {
  static std::mutex mu;
  static auto* libraries = new std::vector<boost::dll::shared_library>();
  std::lock_guard<std::mutex> lock(mu);
  libraries->push_back(lib);
}
}  // namespace

Runtime& Runtime::Get() {
  static Runtime* runtime = new Runtime();  // never destroyed: see Note [No dlclose]
  return *runtime;
}

Runtime::Runtime() : impl_(std::make_unique<Impl>()) {}
Runtime::~Runtime() = default;

std::vector<PluginRecord> Runtime::Plugins() const {
  std::vector<PluginRecord> out;
  for (const auto& record : plugins_.List()) out.push_back(*record);
  return out;
}

namespace {

// Note [Plugins anyone may write]
// A plugin runs with the rights of the process that loads it. A plugin file that every user may
// write, or a folder where every user may add files (every .so of a search-path folder is
// loaded), lets any user of the machine run code in it. Such files still load, as a directory of
// PATH would still be searched, but the record and the log say so.
std::vector<std::string> WritableByAnyone(const std::string& path) {
  std::vector<std::string> warnings;
  auto mode = [](const struct stat& st) {
    char text[8];
    std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return std::string(text);
  };
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && (st.st_mode & S_IWOTH))
    warnings.push_back("the file is writable by every user (mode " + mode(st) +
                       "): anyone could change the code it runs");
  const std::string folder = fs::path(path).parent_path().string();
  if (::stat(folder.c_str(), &st) == 0 && (st.st_mode & S_IWOTH))
    warnings.push_back(
        "its folder " + folder + " is writable by every user (mode " + mode(st) +
        "): anyone could " +
        ((st.st_mode & S_ISVTX) ? "add plugin files there" : "add or replace plugin files there"));
  return warnings;
}

}  // namespace

void Runtime::Record(PluginRecord record) {
  // Under load_mu, so two threads that both saw a file as new record it once.
  const std::string key = record.path;
  if (plugins_.Contains(key)) return;
  record.warnings = WritableByAnyone(record.path);
  for (const std::string& w : record.warnings)
    detail::HostApi()->log(kMXPLogWarning, "loader", ("plugin " + record.path + ": " + w).c_str());
  plugins_.Insert(key, std::make_shared<const PluginRecord>(std::move(record)));
}

std::vector<SearchFolder> Runtime::DefaultSearchPath() {
  std::vector<SearchFolder> folders;
  fs::path lib_dir = fs::weakly_canonical(boost::dll::this_line_location()).parent_path();
  folders.push_back({(lib_dir / "mxplug" / "plugins").string(), "default folder"});
  if (const char* env = std::getenv("MXPLUG_PLUGIN_PATH")) {
    std::stringstream ss(env);
    std::string item;
    while (std::getline(ss, item, ':'))
      if (!item.empty()) folders.push_back({item, "MXPLUG_PLUGIN_PATH"});
  }
  return folders;
}

namespace {

std::vector<std::string> PluginFilesIn(const std::string& folder) {
  std::vector<std::string> files;
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return files;
  for (const auto& e : fs::directory_iterator(folder, ec))
    if (e.path().extension() == ".so" && e.is_regular_file(ec)) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

// Boost.DLL reports "boost::dll::shared_library::load() failed (dlerror system message: X)": the
// user wants X, which names the missing dependency or the bad ELF header.
std::string DlErrorText(const std::string& what) {
  const std::string marker = "dlerror system message: ";
  size_t pos = what.find(marker);
  if (pos == std::string::npos) return what;
  std::string text = what.substr(pos + marker.size());
  size_t end = text.rfind("): ");  // what follows is Boost's own error_code text
  if (end == std::string::npos && !text.empty() && text.back() == ')') end = text.size() - 1;
  return end == std::string::npos ? text : text.substr(0, end);
}

std::vector<int> ParseVersion(const std::string& v) {
  std::vector<int> parts;
  std::stringstream ss(v);
  std::string item;
  while (std::getline(ss, item, '.')) parts.push_back(std::atoi(item.c_str()));
  parts.resize(3, 0);
  return parts;
}

}  // namespace

namespace {

bool ProbingPossible(const LoadOptions& options) {
  if (!options.isolate_new_files) return false;
  if (!ProbeHelperPath().empty()) return true;
  detail::HostApi()->log(kMXPLogWarning, "loader",
                         "mxplug-probe helper not found; loading plugins in-process unprobed");
  return false;
}

}  // namespace

bool Runtime::RefusedByProbe(const std::string& canonical, const std::string& source,
                             const LoadOptions& options) {
  const std::string cache_dir =
      options.cache_dir.empty() ? DefaultProbeCacheDir() : options.cache_dir;
  const std::vector<std::string> adapters = AdapterPaths();
  // A file refused for exporting no mxplug_init may be a library that an adapter loaded since
  // then recognises (Note [Adapted libraries]): that verdict is not kept.
  auto stale = [&](const ProbeVerdict& v) {
    return v.kind == ProbeVerdict::Kind::kRefused && !adapters.empty() &&
           v.record.reason.rfind("not an mxplug plugin", 0) == 0;
  };
  std::optional<ProbeVerdict> verdict;
  if (auto stored = CachedProbeVerdict(canonical, cache_dir); stored && !stale(*stored))
    verdict = std::move(stored);
  const bool cached = verdict.has_value();
  if (!cached) {
    try {
      verdict = ProbePlugin(canonical, adapters);
    } catch (const Error& e) {
      detail::HostApi()->log(kMXPLogWarning, "loader", e.what());
    }
    if (verdict) StoreProbeVerdict(canonical, *verdict, cache_dir);
  }
  if (!verdict || verdict->kind == ProbeVerdict::Kind::kOk) return false;
  // Refused, crashed or hung in the child: recorded without ever being opened here, so none of
  // its static constructors runs in this process.
  PluginRecord record = verdict->record;
  record.path = canonical;
  record.source = source;
  record.state = PluginState::kRefused;
  if (cached) record.reason += " (verdict cached by file identity)";
  std::lock_guard<std::mutex> load_lock(impl_->load_mu);
  Record(std::move(record));
  return true;
}

void Runtime::LoadSearchPath(const std::vector<SearchFolder>& folders, const LoadOptions& options) {
  const bool isolate = ProbingPossible(options);
  for (const SearchFolder& folder : folders) {
    for (const std::string& file : PluginFilesIn(folder.path)) {
      std::error_code ec;
      std::string canonical = fs::weakly_canonical(file, ec).string();
      if (plugins_.Contains(canonical)) continue;
      if (isolate && RefusedByProbe(canonical, folder.source, options)) continue;
      LoadFile(canonical, folder.source);
    }
  }
}

void Runtime::EnsureDefaultPluginsLoaded(const LoadOptions& options) {
  impl_->defaults_once.Run([&] { LoadSearchPath(DefaultSearchPath(), options); });
}

PluginRecord Runtime::LoadFile(const std::string& path, const std::string& source) {
  std::lock_guard<std::mutex> load_lock(impl_->load_mu);
  std::error_code ec;
  std::string canonical = fs::weakly_canonical(path, ec).string();
  if (ec || canonical.empty()) canonical = path;
  if (auto seen = plugins_.Find(canonical)) return *seen;

  PluginRecord record;
  record.path = canonical;
  record.source = source;
  MXPRegistrar registrar;
  registrar.pending.plugin = &record;
  registrar.pending.runtime = this;
  MXPAdaptFn adapt = nullptr;  // set when the file is itself an adapter plugin

  // Each step either refuses with a reason or goes on; nothing touches the registries until the
  // commit at the end, so a refusal changes nothing.
  auto load = [&]() -> std::string {
    if (!fs::exists(canonical, ec)) return "no such file";
    boost::dll::shared_library lib;
    try {
      lib.load(canonical, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
    } catch (const std::exception& e) {
      return "cannot be loaded: " + DlErrorText(e.what());
    }
    KeepOpen(lib);
    if (!lib.has(MXP_INIT_SYMBOL)) return Adapt(canonical, &registrar, &record);
    auto init = lib.get<MXPStatus*(const MXPHostApi*, MXPPluginApi*)>(MXP_INIT_SYMBOL);
    if (lib.has(MXP_ADAPT_SYMBOL))
      adapt = lib.get<MXPStatus*(const MXPHostApi*, const char*, MXPRegistrar*, MXPPluginApi*,
                                 int32_t*)>(MXP_ADAPT_SYMBOL);

    MXPPluginApi info{};
    info.struct_size = sizeof(info);
    MXPStatus* status = nullptr;
    try {
      status = init(detail::HostApi(), &info);
    } catch (const std::exception& e) {
      return std::string(MXP_INIT_SYMBOL " threw a C++ exception across the ABI: ") + e.what();
    } catch (...) {
      return MXP_INIT_SYMBOL " threw a C++ exception across the ABI";
    }
    if (status) return MXP_INIT_SYMBOL " failed: " + detail::TakeMessage(status);
    if (info.struct_size < MXP_STRUCT_SIZE(MXPPluginApi, vendor))
      return MXP_INIT_SYMBOL " described the plugin in " + std::to_string(info.struct_size) +
             " bytes, fewer than the frozen part of MXPPluginApi";
    record.abi_major = info.abi_major;
    record.abi_minor_built = info.abi_minor_built;
    record.abi_minor_min = info.abi_minor_min;
    // What a plugin says of itself is shown to people (CLI, Python, logs): as PrintableText.
    record.name = PrintableText(detail::Str(info.name));
    record.version = PrintableText(detail::Str(info.version));
    record.vendor = PrintableText(detail::Str(info.vendor));
    if (MXP_HAS_FIELD(&info, MXPPluginApi, min_host_version))
      record.min_host_version = detail::Str(info.min_host_version);
    if (MXP_HAS_FIELD(&info, MXPPluginApi, build_info))
      record.build_info = PrintableText(detail::Str(info.build_info));

    const std::string host_abi =
        std::to_string(MXP_ABI_MAJOR) + "." + std::to_string(MXP_ABI_MINOR);
    if (info.abi_major != MXP_ABI_MAJOR)
      return "built for plugin ABI " + std::to_string(info.abi_major) + "." +
             std::to_string(info.abi_minor_built) + ", but this host speaks ABI " + host_abi +
             "; the major versions must match (rebuild the plugin against mxplug " +
             MXPLUG_VERSION_STRING + ")";
    if (info.abi_minor_min > MXP_ABI_MINOR)
      return "needs plugin ABI " + std::to_string(info.abi_major) + "." +
             std::to_string(info.abi_minor_min) + " or newer, but this host speaks ABI " + host_abi;
    if (!record.min_host_version.empty() &&
        ParseVersion(MXPLUG_VERSION_STRING) < ParseVersion(record.min_host_version))
      return "needs mxplug " + record.min_host_version + " or newer, but this host is " +
             MXPLUG_VERSION_STRING;
    if (record.name.empty()) return "declares no plugin name in " MXP_INIT_SYMBOL;
    for (const auto& other : plugins_.List())
      if (other->loaded() && other->name == record.name)
        return "a plugin named '" + record.name + "' is already loaded from " + other->path;
    if (!MXP_HAS_FIELD(&info, MXPPluginApi, register_all) || !info.register_all)
      return "declares no register_all function";

    try {
      status = info.register_all(detail::HostApi(), &registrar);
    } catch (const std::exception& e) {
      return std::string("registration threw a C++ exception across the ABI: ") + e.what();
    } catch (...) {
      return "registration threw a C++ exception across the ABI";
    }
    ListRegistrations(registrar, &record);
    if (status) return "registration failed: " + detail::TakeMessage(status);
    return "";
  };
  auto check_conflicts = [&]() -> std::string {
    auto owner = [](const std::string& plugin, const std::string& path) {
      return "plugin '" + plugin + "' (" + path + ")";
    };
    for (const auto& op : registrar.pending.ops)
      if (auto existing = ops_.Find(op->name))
        return "op '" + op->name + "' is already registered by " +
               owner(existing->plugin, existing->plugin_path);
    for (const auto& k : registrar.pending.kernels)
      if (auto existing = kernels_.Find(k->Key()))
        return "kernel " + k->Key() + " is already registered by " +
               owner(existing->plugin, existing->plugin_path);
    for (const auto& d : registrar.pending.devices)
      for (const auto& existing : devices_.List())
        if (existing->device_type == d->device_type || existing->name == d->name)
          return "device '" + d->name + "' is already provided by " +
                 owner(existing->plugin, existing->plugin_path);
    for (const auto& c : registrar.pending.comms)
      if (auto existing = comms_.Find(c->name))
        return "communication backend '" + c->name + "' is already provided by " +
               owner(existing->plugin, existing->plugin_path);
    return "";
  };

  record.reason = load();
  if (record.reason.empty()) record.reason = check_conflicts();
  if (record.reason.empty()) {
    for (auto& op : registrar.pending.ops) ops_.Insert(op->name, op);
    for (auto& k : registrar.pending.kernels) kernels_.Insert(k->Key(), k);
    for (auto& d : registrar.pending.devices) devices_.Insert(d->name, d);
    for (auto& c : registrar.pending.comms) comms_.Insert(c->name, c);
    record.state = PluginState::kLoaded;
    if (adapt) impl_->adapters.push_back({record.name, canonical, adapt});
  } else {
    record.state = PluginState::kRefused;
    detail::HostApi()->log(kMXPLogInfo, "loader", (canonical + ": " + record.reason).c_str());
  }
  Record(record);
  return record;
}

std::vector<std::string> Runtime::AdapterPaths() const {
  std::lock_guard<std::mutex> load_lock(impl_->load_mu);
  std::vector<std::string> paths;
  for (const Impl::Adapter& a : impl_->adapters) paths.push_back(a.path);
  return paths;
}

void Runtime::ListRegistrations(const MXPRegistrar& registrar, PluginRecord* record) {
  for (const auto& op : registrar.pending.ops) record->ops.push_back(op->name);
  for (const auto& k : registrar.pending.kernels) record->kernels.push_back(k->Key());
  for (const auto& d : registrar.pending.devices) record->devices.push_back(d->name);
  for (const auto& c : registrar.pending.comms) record->comms.push_back(c->name);
}

// Note [Adapted libraries]
// A file without mxplug_init may still be a library of another framework's extension interface
// (an MXNet 1.x lib_api.h custom-op library): each loaded adapter plugin is asked in turn, and
// the first that recognises the file registers what it holds through this file's registrar, so
// that the library is validated, committed or refused exactly like a plugin, under its own
// record. The record names the adapter in its build_info; its ABI numbers are the adapter's.
std::string Runtime::Adapt(const std::string& path, MXPRegistrar* registrar, PluginRecord* record) {
  std::string names;
  for (const Impl::Adapter& adapter : impl_->adapters) {
    MXPPluginApi info{};
    info.struct_size = sizeof(info);
    int32_t recognized = 0;
    MXPStatus* status = nullptr;
    try {
      status = adapter.adapt(detail::HostApi(), path.c_str(), registrar, &info, &recognized);
    } catch (...) {
      return "adapter plugin '" + adapter.name + "' threw a C++ exception across the ABI";
    }
    if (!recognized) {
      if (status) detail::HostApi()->status_free(status);
      if (!registrar->pending.ops.empty() || !registrar->pending.kernels.empty())
        return "adapter plugin '" + adapter.name + "' registered from a file it did not recognise";
      names += (names.empty() ? "'" : ", '") + adapter.name + "'";
      continue;
    }
    if (auto adapter_record = plugins_.Find(adapter.path)) {
      record->abi_major = adapter_record->abi_major;
      record->abi_minor_built = adapter_record->abi_minor_built;
      record->abi_minor_min = adapter_record->abi_minor_min;
    }
    const bool described = info.struct_size >= MXP_STRUCT_SIZE(MXPPluginApi, vendor);
    if (described) {
      record->name = PrintableText(detail::Str(info.name));
      record->version = PrintableText(detail::Str(info.version));
      record->vendor = PrintableText(detail::Str(info.vendor));
      if (MXP_HAS_FIELD(&info, MXPPluginApi, build_info))
        record->build_info = PrintableText(detail::Str(info.build_info));
    }
    // The library is named only now, after it registered: its entries take the name.
    for (auto& op : registrar->pending.ops) op->plugin = record->name;
    for (auto& k : registrar->pending.kernels) k->plugin = record->name;
    record->build_info += (record->build_info.empty() ? "" : "; ") +
                          std::string("adapted by plugin '") + adapter.name + "' (" + adapter.path +
                          ")";
    ListRegistrations(*registrar, record);
    if (status)
      return "adapter plugin '" + adapter.name + "' refused it: " + detail::TakeMessage(status);
    if (!described || record->name.empty())
      return "adapter plugin '" + adapter.name + "' gave the library no name";
    for (const auto& other : plugins_.List())
      if (other->loaded() && other->name == record->name)
        return "a plugin named '" + record->name + "' is already loaded from " + other->path;
    return "";
  }
  return "not an mxplug plugin: it does not export " MXP_INIT_SYMBOL +
         (names.empty() ? std::string() : ", and no adapter plugin (" + names + ") recognises it");
}

PluginRecord Runtime::LoadLibrary(const std::string& path, const LoadOptions& options) {
  std::error_code ec;
  std::string canonical = fs::weakly_canonical(path, ec).string();
  if (ec || canonical.empty()) canonical = path;
  if (!plugins_.Contains(canonical) && fs::exists(canonical, ec) && ProbingPossible(options))
    RefusedByProbe(canonical, "explicit", options);
  PluginRecord record = LoadFile(canonical, "explicit");
  if (!record.loaded())
    throw Error("plugin " + record.path + " was refused: " + record.reason, kMXPFailedPrecondition);
  return record;
}

std::shared_ptr<const OpEntry> Runtime::GetOp(const std::string& name) const {
  if (auto op = ops_.Find(name)) return op;
  std::string message = "operator '" + name + "' is not registered";
  std::vector<std::string> near = ClosestNames(name, ops_.Names());
  if (!near.empty()) {
    message += "; did you mean ";
    for (size_t i = 0; i < near.size(); ++i) message += (i ? ", '" : "'") + near[i] + "'";
    message += "?";
  } else if (ops_.Size() == 0) {
    message += "; no operator plugin is loaded (see `mxplug plugins`)";
  }
  throw Error(message, kMXPNotFound);
}

std::shared_ptr<const KernelEntry> Runtime::FindKernel(const std::string& op,
                                                       int32_t device_type) const {
  return kernels_.Find(KernelEntry::Key(op, device_type));
}

std::vector<std::shared_ptr<const KernelEntry>> Runtime::KernelsOf(const std::string& op) const {
  std::vector<std::shared_ptr<const KernelEntry>> out;
  for (const auto& k : kernels_.List())
    if (k->op_name == op) out.push_back(k);
  return out;
}

std::vector<std::shared_ptr<const KernelEntry>> Runtime::UnboundKernels() const {
  std::vector<std::shared_ptr<const KernelEntry>> out;
  for (const auto& k : kernels_.List())
    if (!ops_.Contains(k->op_name)) out.push_back(k);
  return out;
}

std::shared_ptr<const DeviceEntry> Runtime::GetDevice(int32_t device_type) const {
  if (auto d = devices_.FindIf([&](const DeviceEntry& e) { return e.device_type == device_type; }))
    return d;
  throw Error("no device backend for " + DeviceTypeName(device_type) +
                  " is loaded (see `mxplug devices` and `mxplug plugins`)",
              kMXPNotFound);
}

// Note [The CPU's backend]
// Every new CPU array asks which backend serves cpu(0): a search of the device registry under its
// lock and a call into the backend for its device count, a tenth of a 1-element op. Registries
// only grow (plugins are never unloaded, Note [No dlclose]) and the CPU backend always has
// device 0, so the first answer is kept and given from then on.
const std::shared_ptr<const DeviceEntry>* Runtime::KnownCpuBackend(const Context& ctx) const {
  const bool cpu0 = ctx.dev_type == kDLCPU && ctx.dev_id == 0;
  return cpu0 && cpu_backend_known_.load(std::memory_order_acquire) ? &cpu_backend_ : nullptr;
}

std::shared_ptr<const DeviceEntry> Runtime::CheckContext(const Context& ctx) const {
  if (const auto* known = KnownCpuBackend(ctx)) return *known;
  const bool cpu0 = ctx.dev_type == kDLCPU && ctx.dev_id == 0;
  std::shared_ptr<const DeviceEntry> device;
  if (ctx.IsHostPinned()) device = PinnedMemoryBackend(ctx.dev_type);
  if (!device) device = GetDevice(ctx.Compute().dev_type);
  if (ctx.dev_id >= 0 && ctx.dev_id < device->Count()) {
    if (cpu0)
      std::call_once(cpu_backend_once_, [&] {
        cpu_backend_ = device;
        cpu_backend_known_.store(true, std::memory_order_release);
      });
    return device;
  }
  std::string reason;  // asked again only for the message: it costs a string on every call
  int32_t count = device->Count(&reason);
  throw Error("context " + ctx.ToString() + " does not exist: " + device->name + " has " +
                  std::to_string(count) + " device(s)" +
                  (reason.empty() ? "" : " (" + reason + ")"),
              kMXPInvalidArgument);
}

const DeviceEntry& Runtime::CheckedBackend(const Context& ctx) const {
  if (const auto* known = KnownCpuBackend(ctx)) return **known;
  return *CheckContext(ctx);  // the registry keeps it
}

// Note [Pinned host memory]
// MXNet's cpu_pinned(i) is host memory that accelerator i has page-locked, so that its copies
// to and from the device run asynchronously (DMA) instead of through a staging buffer. Here it is
// the context {kDLCUDAHost or kDLROCMHost, i}: host memory to everything but its allocator. CPU
// kernels and CPU workers serve it (Context::Compute), copies hand it to backends as kDLCPU
// memory, and an op with inputs puts its outputs on the CPU, since (as in MXNet) a non-default
// context does not propagate. Its blocks come from host_allocate of the vendor's backend (CUDA
// for kDLCUDAHost, HIP for kDLROCMHost) when that has devices, else of another loaded
// accelerator that has devices and its own host_allocate (the asynchronous test device in CI),
// else from the CPU, as MXNet without a GPU falls back to ordinary memory.
std::shared_ptr<const DeviceEntry> Runtime::PinnedMemoryBackend(int32_t host_type) const {
  const int32_t vendor = host_type == kDLROCMHost ? kDLROCM : kDLCUDA;
  std::shared_ptr<const DeviceEntry> other;
  for (const auto& d : devices_.List()) {
    if (d->device_type == kDLCPU || !d->def.host_allocate || d->Count() == 0) continue;
    if (d->device_type == vendor) return d;
    if (!other) other = d;
  }
  return other;
}

std::vector<std::string> Runtime::ClosestNames(const std::string& name,
                                               const std::vector<std::string>& candidates,
                                               size_t max_results) {
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  auto distance = [](const std::string& a, const std::string& b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      size_t diag = row[0];
      row[0] = i;
      for (size_t j = 1; j <= b.size(); ++j) {
        size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diag = up;
      }
    }
    return row[b.size()];
  };
  const std::string query = lower(name);
  std::vector<std::pair<size_t, std::string>> scored;
  for (const std::string& c : candidates) {
    std::string lc = lower(c);
    size_t d = distance(query, lc);
    bool contains = !query.empty() && (lc.find(query) != std::string::npos ||
                                       (query.size() >= 4 && query.find(lc) != std::string::npos));
    if (contains) d = std::min<size_t>(d, 1);
    if (d <= std::max<size_t>(2, query.size() / 3)) scored.emplace_back(d, c);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && i < max_results; ++i) out.push_back(scored[i].second);
  return out;
}

}  // namespace mxplug
