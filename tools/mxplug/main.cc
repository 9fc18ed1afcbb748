// mxplug: lists and checks what the plugins register. See docs/cli.md.
#include <vector>  // Boost 1.74's library_info.hpp uses std::vector without including it

#define BOOST_DLL_USE_STD_FS
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <boost/dll/library_info.hpp>
#include <cerrno>
#include <cstdio>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "mxplug/error.h"
#include "mxplug/plugin_abi.h"
#include "mxplug/plugin_probe.h"
#include "mxplug/runtime.h"
#include "mxplug/version.h"

namespace {

using mxplug::Runtime;
using nlohmann::json;

// Note [stdout is the CLI's]
// Plugins load in this process, and one may print from a static constructor or its init; on
// stdout that would corrupt --json output. For the whole run fd 1 is pointed at stderr, and what
// the CLI itself prints is collected here and written at the end to a private copy of the
// original stdout: as it is for --json (which escapes control characters itself), as
// PrintableText for text, so that names and reasons from plugins cannot drive the terminal.
std::ostringstream& Out() {
  static std::ostringstream out;
  return out;
}

int OriginalStdout() {
  static const int fd = [] {
    std::fflush(stdout);
    const int copy = ::dup(STDOUT_FILENO);
    ::dup2(STDERR_FILENO, STDOUT_FILENO);
    return copy;
  }();
  return fd;
}

// JSON as --json prints it: bytes that are not UTF-8 (say, in a plugin's name) replaced.
std::string Dumped(const json& j) { return j.dump(2, ' ', false, json::error_handler_t::replace); }

void WriteOut(bool as_json) {
  const std::string text = as_json ? Out().str() : mxplug::PrintableText(Out().str());
  const int fd = OriginalStdout();
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
}

// Exit codes: 0 success, 1 the thing asked about is missing or bad, 2 usage error.
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

struct Options {
  bool json = false;
  std::string plugin_path;  // replaces the default search path when given
  bool no_probe = false;
};

std::vector<mxplug::SearchFolder> SearchPath(const Options& o) {
  if (o.plugin_path.empty()) return Runtime::DefaultSearchPath();
  std::vector<mxplug::SearchFolder> folders;
  std::stringstream ss(o.plugin_path);
  std::string item;
  while (std::getline(ss, item, ':'))
    if (!item.empty()) folders.push_back({item, "--plugin-path"});
  return folders;
}

Runtime& LoadPlugins(const Options& o) {
  mxplug::LoadOptions load;
  load.isolate_new_files = !o.no_probe;
  Runtime& rt = Runtime::Get();
  rt.LoadSearchPath(SearchPath(o), load);
  return rt;
}

std::string Join(const std::vector<std::string>& items, const std::string& sep = ", ") {
  std::string s;
  for (const std::string& i : items) s += (s.empty() ? "" : sep) + i;
  return s;
}

void PrintTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], r[i].size());
    }
  for (const auto& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i)
      line += i + 1 < r.size() ? r[i] + std::string(width[i] - r[i].size() + 2, ' ') : r[i];
    Out() << line << "\n";
  }
}

size_t RefusedCount(const Runtime& rt) {
  size_t n = 0;
  for (const auto& p : rt.Plugins()) n += !p.loaded();
  return n;
}

std::string SearchPathText(const Options& o) {
  std::vector<std::string> parts;
  for (const auto& f : SearchPath(o)) parts.push_back(f.path);
  return Join(parts, ":");
}

std::vector<std::string> KernelDevices(const Runtime& rt, const std::string& op) {
  std::vector<std::string> devices;
  for (const auto& k : rt.KernelsOf(op)) devices.push_back(mxplug::DeviceTypeName(k->device_type));
  return devices;
}

// ---- list ----
int CmdList(const Options& o) {
  Runtime& rt = LoadPlugins(o);
  auto ops = rt.ops().List();
  if (o.json) {
    json j = json::array();
    for (const auto& op : ops)
      j.push_back({{"name", op->name},
                   {"plugin", op->plugin},
                   {"path", op->plugin_path},
                   {"devices", KernelDevices(rt, op->name)}});
    Out() << Dumped(json{{"operators", j}, {"refused_plugins", RefusedCount(rt)}}) << "\n";
    return 0;
  }
  if (ops.empty()) {
    Out() << "no operators registered (plugin folders searched: " << SearchPathText(o) << ")\n";
  } else {
    std::vector<std::vector<std::string>> rows{{"OPERATOR", "PLUGIN", "DEVICES"}};
    for (const auto& op : ops) {
      std::vector<std::string> devices = KernelDevices(rt, op->name);
      rows.push_back({op->name, op->plugin, devices.empty() ? "(no kernel)" : Join(devices)});
    }
    PrintTable(rows);
    size_t loaded = rt.Plugins().size() - RefusedCount(rt);
    Out() << "\n" << ops.size() << " operators from " << loaded << " plugins";
    if (size_t refused = RefusedCount(rt))
      Out() << "; " << refused << " plugin file(s) refused: see `mxplug plugins`";
    Out() << "\n";
  }
  return 0;
}

// ---- describe ----
json ParamJson(const mxplug::ParamInfo& p) {
  json j{{"name", p.name},
         {"type", p.type_text},
         {"required", !p.default_value},
         {"doc", p.doc},
         {"summary", p.Summary()}};
  if (p.default_value) j["default"] = *p.default_value;
  if (p.lower_bound) j["min"] = *p.lower_bound;
  if (p.upper_bound) j["max"] = *p.upper_bound;
  if (!p.choices.empty()) j["choices"] = p.choices;
  return j;
}

// Makes an instance for the given kwargs; when required parameters are missing, fills them with
// a sample value (the lower bound, the first choice, or 1) and says so in `note`.
std::unique_ptr<mxplug::OpProperty> SampleInstance(std::shared_ptr<const mxplug::OpEntry> op,
                                                   mxplug::KwArgs kwargs, std::string* note,
                                                   std::string* error) {
  std::vector<std::string> filled;
  for (const auto& p : op->params) {
    bool given = std::any_of(kwargs.begin(), kwargs.end(),
                             [&](const auto& kv) { return kv.first == p.name; });
    if (given || p.default_value) continue;
    std::string v = !p.choices.empty()         ? p.choices[0]
                    : p.lower_bound            ? mxplug::FieldInfo::FormatBound(*p.lower_bound)
                    : p.type == kMXPParamShape ? "(1,)"
                                               : "1";
    kwargs.emplace_back(p.name, v);
    filled.push_back(p.name + "=" + v);
  }
  try {
    auto prop = std::make_unique<mxplug::OpProperty>(op, kwargs);
    if (!filled.empty()) *note = "shown for the sample values " + Join(filled);
    return prop;
  } catch (const std::exception& e) {
    *error = e.what();
    return nullptr;
  }
}

std::string InplaceText(const std::vector<MXPInplacePair>& pairs, const mxplug::OpProperty& prop) {
  if (pairs.empty()) return "none";
  auto args = prop.ListArguments(), outs = prop.ListOutputs();
  auto name = [&](int32_t role, int32_t i) -> std::string {
    switch (role) {
      case kMXPRoleInData:
        return args.at(i);
      case kMXPRoleOutData:
        return outs.at(i);
      case kMXPRoleOutGrad:
        return "grad(" + outs.at(i) + ")";
      case kMXPRoleInGrad:
        return "grad(" + args.at(i) + ")";
      default:
        return "aux" + std::to_string(i);
    }
  };
  std::vector<std::string> items;
  for (const auto& p : pairs)
    items.push_back(name(p.src_role, p.src_index) + " -> " + name(p.dst_role, p.dst_index));
  return Join(items);
}

std::string ResourceText(uint32_t mask) {
  std::vector<std::string> items;
  if (mask & kMXPResourceTempSpace) items.push_back("temp space");
  if (mask & kMXPResourceRandom) items.push_back("random");
  return items.empty() ? "none" : Join(items);
}

int CmdDescribe(const Options& o, const std::string& name,
                const std::vector<std::string>& kv_args) {
  Runtime& rt = LoadPlugins(o);
  std::shared_ptr<const mxplug::OpEntry> op;
  try {
    op = rt.GetOp(name);
  } catch (const mxplug::Error& e) {
    std::vector<std::string> near = Runtime::ClosestNames(name, rt.ops().Names());
    if (o.json)
      Out() << Dumped(json{{"error", e.what()}, {"closest", near}}) << "\n";
    else
      std::cerr << "mxplug: " << e.what() << "\n";
    return kExitFailure;
  }
  mxplug::KwArgs kwargs;
  for (const std::string& kv : kv_args) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "mxplug describe: '" << kv << "' is not KEY=VALUE\n";
      return kExitUsage;
    }
    kwargs.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  std::string note, error;
  auto prop = SampleInstance(op, kwargs, &note, &error);

  json j{{"name", op->name}, {"doc", op->doc}, {"plugin", op->plugin}, {"path", op->plugin_path}};
  j["params"] = json::array();
  for (const auto& p : op->params) j["params"].push_back(ParamJson(p));
  j["inputs"] = json::array();
  for (const auto& a : op->arguments)
    j["inputs"].push_back({{"name", a.name}, {"type", a.type_text}, {"doc", a.doc}});
  j["kernels"] = json::array();
  for (const auto& k : rt.KernelsOf(op->name))
    j["kernels"].push_back({{"device", mxplug::DeviceTypeName(k->device_type)},
                            {"plugin", k->plugin},
                            {"backward", k->has_backward()}});
  if (prop) {
    try {
      auto deps = prop->DeclareBackwardDependency();
      auto args = prop->ListArguments(), outs = prop->ListOutputs();
      std::vector<std::string> reads;
      for (size_t i = 0; i < deps.out_grad.size(); ++i)
        if (deps.out_grad[i]) reads.push_back("grad(" + outs[i] + ")");
      for (size_t i = 0; i < deps.in_data.size(); ++i)
        if (deps.in_data[i]) reads.push_back(args[i]);
      for (size_t i = 0; i < deps.out_data.size(); ++i)
        if (deps.out_data[i]) reads.push_back(outs[i]);
      j["instance"] = {
          {"note", note},
          {"arguments", args},
          {"outputs", outs},
          {"auxiliary_states", prop->ListAuxiliaryStates()},
          {"forward_inplace", InplaceText(prop->InplaceOption(kMXPPhaseForward), *prop)},
          {"backward_inplace", InplaceText(prop->InplaceOption(kMXPPhaseBackward), *prop)},
          {"backward_reads", reads},
          {"forward_resources", ResourceText(prop->Resources(kMXPPhaseForward))},
          {"backward_resources", ResourceText(prop->Resources(kMXPPhaseBackward))}};
    } catch (const std::exception& e) {
      error = e.what();
      prop.reset();
    }
  }
  if (!prop) j["instance_error"] = error;
  if (o.json) {
    Out() << Dumped(j) << "\n";
    return prop || kwargs.empty() ? 0 : kExitFailure;
  }

  Out() << op->name << "  (plugin " << op->plugin << ", " << op->plugin_path << ")\n";
  if (!op->doc.empty()) Out() << "  " << op->doc << "\n";
  Out() << "\nParameters:\n";
  if (op->params.empty()) Out() << "  none\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : op->params) rows.push_back({"  " + p.name, p.Summary(), p.doc});
  PrintTable(rows);
  Out() << "\nInputs:\n";
  rows.clear();
  for (const auto& a : op->arguments) rows.push_back({"  " + a.name, a.type_text, a.doc});
  if (rows.empty()) Out() << "  (not documented)\n";
  PrintTable(rows);
  if (prop) {
    const json& in = j["instance"];
    Out() << "\nInstance" << (note.empty() ? "" : " (" + note + "; pass KEY=VALUE for others)")
          << ":\n";
    PrintTable(
        {{"  arguments", Join(in["arguments"].get<std::vector<std::string>>())},
         {"  outputs", Join(in["outputs"].get<std::vector<std::string>>())},
         {"  auxiliary states", in["auxiliary_states"].empty()
                                    ? "none"
                                    : Join(in["auxiliary_states"].get<std::vector<std::string>>())},
         {"  in-place forward", in["forward_inplace"].get<std::string>()},
         {"  in-place backward", in["backward_inplace"].get<std::string>()},
         {"  backward reads", Join(in["backward_reads"].get<std::vector<std::string>>())},
         {"  resources", "forward " + in["forward_resources"].get<std::string>() + "; backward " +
                             in["backward_resources"].get<std::string>()}});
  } else {
    Out() << "\nInstance: " << error << "\n";
  }
  Out() << "\nKernels:\n";
  auto kernels = rt.KernelsOf(op->name);
  if (kernels.empty()) Out() << "  none: no loaded plugin provides a kernel for this op\n";
  for (const auto& k : kernels)
    Out() << "  " << mxplug::DeviceTypeName(k->device_type) << "  (plugin " << k->plugin << ")"
          << (k->has_backward() ? "" : ", forward only") << "\n";
  return prop || kwargs.empty() ? 0 : kExitFailure;
}

// With --json, {key: entries}; else a line or more per entry (`print`), or that no `what` is
// loaded.
int PrintEntries(const Options& o, const char* key, const char* what, const json& entries,
                 const std::function<void(const json&)>& print) {
  if (o.json) {
    Out() << Dumped(json{{key, entries}}) << "\n";
    return 0;
  }
  if (entries.empty())
    Out() << "no " << what << " loaded (plugin folders searched: " << SearchPathText(o) << ")\n";
  for (const auto& e : entries) print(e);
  return 0;
}

// ---- devices ----
int CmdDevices(const Options& o) {
  Runtime& rt = LoadPlugins(o);
  json j = json::array();
  for (const auto& d : rt.devices().List()) {
    json entry{{"name", d->name}, {"dlpack_device_type", d->device_type}, {"plugin", d->plugin}};
    try {
      std::string reason;
      int32_t count = d->Count(&reason);
      entry["count"] = count;
      if (count == 0) entry["reason"] = reason;
      entry["devices"] = json::array();
      for (int32_t i = 0; i < count; ++i)
        entry["devices"].push_back({{"id", i}, {"description", d->Describe(i)}});
    } catch (const std::exception& e) {
      entry["count"] = 0;
      entry["reason"] = e.what();
    }
    j.push_back(entry);
  }
  return PrintEntries(o, "devices", "device backends", j, [](const json& e) {
    Out() << e["name"].get<std::string>() << "  (plugin " << e["plugin"].get<std::string>()
          << ", DLPack device type " << e["dlpack_device_type"] << "): " << e["count"]
          << " device(s)";
    if (e.contains("reason")) Out() << ": " << e["reason"].get<std::string>();
    Out() << "\n";
    if (e.contains("devices"))
      for (const auto& dev : e["devices"])
        Out() << "  " << e["name"].get<std::string>() << "(" << dev["id"] << ")  "
              << dev["description"].get<std::string>() << "\n";
  });
}

// ---- comms ----
int CmdComms(const Options& o) {
  Runtime& rt = LoadPlugins(o);
  json j = json::array();
  for (const auto& c : rt.comms().List()) {
    std::vector<std::string> memory;
    for (int32_t t : c->memory_types) memory.push_back(mxplug::DeviceTypeName(t));
    json entry{{"name", c->name}, {"plugin", c->plugin}, {"memory", memory}};
    try {
      std::string reason;
      entry["available"] = c->Available(&reason);
      if (!reason.empty()) entry["reason"] = reason;
    } catch (const std::exception& e) {
      entry["available"] = false;
      entry["reason"] = e.what();
    }
    j.push_back(entry);
  }
  return PrintEntries(o, "comms", "communication backends", j, [](const json& e) {
    Out() << e["name"].get<std::string>() << "  (plugin " << e["plugin"].get<std::string>()
          << ", memory: " << Join(e["memory"].get<std::vector<std::string>>())
          << "): " << (e["available"].get<bool>() ? "this process is part of a job" : "no job");
    if (e.contains("reason")) Out() << ": " << e["reason"].get<std::string>();
    Out() << "\n";
  });
}

// ---- plugins ----
int CmdPlugins(const Options& o) {
  Runtime& rt = LoadPlugins(o);
  auto plugins = rt.Plugins();
  auto unbound = rt.UnboundKernels();
  if (o.json) {
    json u = json::array();
    for (const auto& k : unbound) u.push_back({{"kernel", k->Key()}, {"plugin", k->plugin}});
    std::vector<std::string> folders;
    for (const auto& f : SearchPath(o)) folders.push_back(f.path);
    Out() << Dumped(json{{"plugins", plugins}, {"unbound_kernels", u}, {"search_path", folders}})
          << "\n";
    return 0;
  }
  Out() << "Search path: " << SearchPathText(o) << "\n\n";
  if (plugins.empty()) Out() << "no plugin files found\n";
  for (const auto& p : plugins) {
    Out() << p.path << "\n";
    if (p.loaded()) {
      Out() << "  loaded: " << p.name << " " << p.version << " (" << p.vendor << "), ABI "
            << p.abi_major << "." << p.abi_minor_built << " (needs host ABI " << p.abi_major << "."
            << p.abi_minor_min << " or newer), from " << p.source << "\n";
      if (!p.ops.empty()) Out() << "  ops: " << Join(p.ops) << "\n";
      if (!p.kernels.empty()) Out() << "  kernels: " << Join(p.kernels) << "\n";
      if (!p.devices.empty()) Out() << "  devices: " << Join(p.devices) << "\n";
      if (!p.comms.empty()) Out() << "  communication backends: " << Join(p.comms) << "\n";
    } else {
      Out() << "  refused: " << p.reason << "\n";
    }
    for (const std::string& w : p.warnings) Out() << "  warning: " << w << "\n";
  }
  if (!unbound.empty()) {
    Out() << "\nUnbound kernels (their op is not defined by any loaded plugin; they bind when it "
             "loads):\n";
    for (const auto& k : unbound) Out() << "  " << k->Key() << "  (plugin " << k->plugin << ")\n";
  }
  return 0;
}

// ---- check ----
std::vector<std::string> ExtraExports(const std::string& path) {
  std::vector<std::string> extra;
  try {
    boost::dll::library_info info(path);
    std::vector<std::string> symbols = info.symbols();
    // An adapted library (no mxplug_init) exports what its own interface asks for.
    if (std::find(symbols.begin(), symbols.end(), MXP_INIT_SYMBOL) == symbols.end()) return extra;
    for (const std::string& s : symbols)
      if (s != MXP_INIT_SYMBOL && s != MXP_ADAPT_SYMBOL && !s.empty()) extra.push_back(s);
  } catch (const std::exception&) {
  }
  return extra;
}

int CmdCheck(const Options& o, const std::string& file) {
  mxplug::ProbeVerdict v;
  try {
    // With the adapter plugins of the search path, so that a library they adapt (an MXNet
    // custom-op library) is judged as mx.library.load judges it.
    v = mxplug::ProbePlugin(file, LoadPlugins(o).AdapterPaths());
  } catch (const std::exception& e) {
    std::cerr << "mxplug check: " << e.what() << "\n";
    return kExitFailure;
  }
  mxplug::StoreProbeVerdict(v.record.path, v, mxplug::DefaultProbeCacheDir());
  bool ok = v.kind == mxplug::ProbeVerdict::Kind::kOk;
  std::vector<std::string> extra = ok ? ExtraExports(file) : std::vector<std::string>{};
  if (o.json) {
    Out() << Dumped(json{{"verdict", mxplug::ProbeKindName(v.kind)},
                         {"plugin", v.record},
                         {"extra_exports", extra}})
          << "\n";
    return ok ? 0 : kExitFailure;
  }
  const auto& r = v.record;
  if (!ok) {
    Out() << file << ": " << mxplug::ProbeKindName(v.kind) << ": " << r.reason << "\n";
    return kExitFailure;
  }
  Out() << file << ": ok: plugin " << r.name << " " << r.version << " (" << r.vendor << "), ABI "
        << r.abi_major << "." << r.abi_minor_built << ", built with " << r.build_info << "\n";
  Out() << "  would register ops: " << (r.ops.empty() ? "none" : Join(r.ops)) << "\n";
  Out() << "  would register kernels: " << (r.kernels.empty() ? "none" : Join(r.kernels)) << "\n";
  Out() << "  would register devices: " << (r.devices.empty() ? "none" : Join(r.devices)) << "\n";
  Out() << "  would register communication backends: " << (r.comms.empty() ? "none" : Join(r.comms))
        << "\n";
  if (!extra.empty())
    Out() << "  warning: exports " << extra.size()
          << " symbol(s) besides " MXP_INIT_SYMBOL " (e.g. " << extra[0]
          << "); build with mxplug_add_plugin to hide them\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mxplug " MXPLUG_VERSION_STRING
               ": lists and checks the operators, kernels, devices and communication backends that "
               "plugins register"};
  app.set_version_flag("--version", MXPLUG_VERSION_STRING);
  app.require_subcommand(1);
  app.fallthrough();
  Options o;
  app.add_flag("--json", o.json, "Print JSON instead of text");
  app.add_option(
      "--plugin-path", o.plugin_path,
      "Colon-separated plugin folders, replacing the default folder and MXPLUG_PLUGIN_PATH");
  app.add_flag("--no-probe", o.no_probe,
               "Load plugin files in-process without probing new ones in a child process first");

  auto* list = app.add_subcommand(
      "list", "List every operator with its plugin and the devices that have kernels");
  std::string op_name;
  std::vector<std::string> kv_args;
  auto* describe = app.add_subcommand(
      "describe",
      "Describe one operator: parameters, inputs, outputs, in-place options, resources, kernels");
  describe->add_option("op", op_name, "Operator name")->required();
  describe->add_option("params", kv_args, "KEY=VALUE parameters for the instance shown");
  auto* devices = app.add_subcommand("devices", "List device backends and their devices");
  auto* comms = app.add_subcommand(
      "comms",
      "List communication backends (for distributed kvstores) and whether this process "
      "is part of a job");
  auto* plugins = app.add_subcommand(
      "plugins", "List plugin files: loaded or refused and why, versions, what they registered");
  std::string check_file;
  auto* check = app.add_subcommand(
      "check", "Validate one plugin file in a child process and print what it would register");
  check->add_option("file", check_file, "Plugin file (.so)")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  OriginalStdout();  // from here on, fd 1 is stderr (Note [stdout is the CLI's])
  int code = kExitUsage;
  try {
    if (*list)
      code = CmdList(o);
    else if (*describe)
      code = CmdDescribe(o, op_name, kv_args);
    else if (*devices)
      code = CmdDevices(o);
    else if (*comms)
      code = CmdComms(o);
    else if (*plugins)
      code = CmdPlugins(o);
    else if (*check)
      code = CmdCheck(o, check_file);
  } catch (const std::exception& e) {
    WriteOut(o.json);
    std::cerr << "mxplug: " << mxplug::PrintableText(e.what()) << "\n";
    return kExitFailure;
  }
  WriteOut(o.json);
  return code;
}
