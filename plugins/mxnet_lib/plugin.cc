// The adapter plugin for MXNet 1.x custom-op libraries (lib_api.h, MX_LIBRARY_VERSION 11): the
// host offers it every file that exports no mxplug_init (Note [Adapted libraries] in
// core/src/registry/runtime.cc); it recognises a library by MXNet's entry points, checks and
// initialises it as MXNet's MXLoadLib does, and registers each of its ops with a kernel per
// context it supports ("cpu": the CPU, "gpu": CUDA). So `mx.library.load` of a library built for
// MXNet 1.9 registers its ops here too, unrebuilt.
#include "mxplug/plugin.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "lib_api.h"
#include "lib_op.h"

namespace mxplug::mxnet_lib {

std::string Library::Failure(const std::string& what, const std::string& op) const {
  std::string message = "Error calling " + what + " for custom operator '" + op + "'";
  std::lock_guard<std::mutex> lock(mu_);
  if (!msg_size || !msg_get) return message;
  const int count = msg_size();
  std::string traceback;
  for (int i = messages_seen_; i < count; ++i) {
    const char* text = nullptr;
    msg_get(i, &text);
    traceback += "\n\t[" + std::to_string(i - messages_seen_) + "] " + (text ? text : "");
  }
  messages_seen_ = count;
  return traceback.empty() ? message : message + "\nExtension Traceback:" + traceback;
}

std::mt19937* Library::CpuRandomStates(uint64_t key) {
  // Calls that take the random resource are ordered by the engine, so one set serves them all.
  std::lock_guard<std::mutex> lock(mu_);
  if (!cpu_random_ || key != cpu_random_key_) {
    if (!cpu_random_) cpu_random_.reset(new std::mt19937[kCpuRandomStates]);
    std::seed_seq base{static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32)};
    std::vector<uint32_t> seeds(kCpuRandomStates);
    base.generate(seeds.begin(), seeds.end());
    for (int i = 0; i < kCpuRandomStates; ++i) cpu_random_[i].seed(seeds[i]);
    cpu_random_key_ = key;
  }
  return cpu_random_.get();
}

namespace {

template <typename Fn>
Fn Find(void* handle, const char* name) {
  return reinterpret_cast<Fn>(dlsym(handle, name));
}

template <typename Fn>
Fn Require(void* handle, const char* name, const std::string& path) {
  Fn fn = Find<Fn>(handle, name);
  if (!fn)
    throw std::runtime_error("MXNet custom-op library " + path + " does not export " + name +
                             ", which lib_api.h version " + std::to_string(kLibraryVersion) +
                             " libraries have");
  return fn;
}

// "libmy_ops.so" -> "mxnet_lib:my_ops": the library's name among the plugins.
std::string LibraryName(const std::string& path) {
  std::string stem = std::filesystem::path(path).stem().string();
  if (stem.rfind("lib", 0) == 0 && stem.size() > 3) stem = stem.substr(3);
  return "mxnet_lib:" + stem;
}

// What the host keeps of every adapted library: it is never unloaded (Note [No dlclose]).
struct Adapted {
  Library lib;
  std::vector<std::unique_ptr<LibOp>> ops;
  std::vector<std::unique_ptr<OpRegistration>> registrations;
  std::vector<std::unique_ptr<sdk::KernelRecord>> kernels;
  std::string name, build_info;
};

// Every adapted library, for the life of the process: any runtime that registered its ops may
// call into them until the end (and a leak checker sees them held).
std::vector<std::unique_ptr<Adapted>>& AdaptedLibraries() {
  static auto* libraries = new std::vector<std::unique_ptr<Adapted>>();
  return *libraries;
}

std::unique_ptr<Adapted> Open(void* handle, const std::string& path) {
  auto a = std::make_unique<Adapted>();
  Library& lib = a->lib;
  lib.path = path;
  auto op_version = Require<OpVersionFn>(handle, "_opVersion", path);
  auto initialize = Require<InitializeFn>(handle, "initialize", path);
  auto reg_size = Require<RegSizeFn>(handle, "_opRegSize", path);
  auto reg_get = Require<OpRegGetFn>(handle, "_opRegGet", path);
  lib.call_free = Require<CallFreeFn>(handle, "_opCallFree", path);
  lib.parse_attrs = Require<CallParseAttrsFn>(handle, "_opCallParseAttrs", path);
  lib.infer_shape = Require<CallInferShapeFn>(handle, "_opCallInferShape", path);
  lib.infer_type = Require<CallInferTypeFn>(handle, "_opCallInferType", path);
  lib.mutate_inputs = Require<CallMutateInputsFn>(handle, "_opCallMutateInputs", path);
  lib.fcompute = Require<CallFComputeFn>(handle, "_opCallFCompute", path);
  lib.create_op_state = Require<CallCreateOpStateFn>(handle, "_opCallCreateOpState", path);
  lib.destroy_op_state = Require<CallDestroyOpStateFn>(handle, "_opCallDestroyOpState", path);
  lib.stateful_compute = Require<CallFStatefulComputeFn>(handle, "_opCallFStatefulCompute", path);
  lib.msg_size = Find<MsgSizeFn>(handle, "_msgSize");
  lib.msg_get = Find<MsgGetFn>(handle, "_msgGet");

  const int version = op_version();
  if (version != kLibraryVersion)
    throw std::runtime_error("Library version (" + std::to_string(version) +
                             ") does not match MXNet version (" + std::to_string(kLibraryVersion) +
                             "): mxplug loads libraries built against MXNet 1.9's lib_api.h");
  if (!initialize(kMXNetVersion)) {
    std::string failure = lib.Failure("initialize", "");
    const size_t traceback = failure.find("\nExtension Traceback:");
    throw std::runtime_error("Library failed to initialize" +
                             (traceback == std::string::npos ? "" : failure.substr(traceback)));
  }

  const int count = reg_size();
  for (int i = 0; i < count; ++i) {
    const char* name = nullptr;
    int is_subgraph = 0, forward_count = 0, backward_count = 0, create_count = 0;
    const char **forward_ctx = nullptr, **backward_ctx = nullptr, **create_ctx = nullptr;
    OpaqueFn *forward = nullptr, *backward = nullptr, *create = nullptr;
    OpaqueFn infer_stype = nullptr;
    auto op = std::make_unique<LibOp>();
    reg_get(i, &name, &is_subgraph, &forward_ctx, &forward, &forward_count, &backward_ctx,
            &backward, &backward_count, &create_ctx, &create, &create_count, &op->parse,
            &op->infer_type, &infer_stype, &op->infer_shape, &op->mutate);
    op->lib = &lib;
    op->name = name ? name : "";
    for (int k = 0; k < forward_count; ++k) op->forward[forward_ctx[k]] = forward[k];
    for (int k = 0; k < backward_count; ++k) op->backward[backward_ctx[k]] = backward[k];
    for (int k = 0; k < create_count; ++k) op->create[create_ctx[k]] = create[k];
    // The checks of MXNet's loader, in its words.
    const std::string which = "Error loading '" + op->name + "' custom op, ";
    if (op->name.empty()) throw std::runtime_error("op " + std::to_string(i) + " has no name");
    if (is_subgraph)
      throw std::runtime_error(which +
                               "a subgraph op: mxplug does not run MXNet's subgraph "
                               "ops (partitioning is not supported)");
    if (!op->parse) throw std::runtime_error(which + "ParseAttrs function was not set.");
    if (op->forward.empty() && op->create.empty())
      throw std::runtime_error(which + "Forward or CreateOpState function was not set.");
    if (!op->infer_type) throw std::runtime_error(which + "InferType function was not set.");
    if (!op->infer_shape) throw std::runtime_error(which + "InferShape function was not set.");
    a->ops.push_back(std::move(op));
  }
  a->name = LibraryName(path);
  a->build_info = "MXNet custom-op library (lib_api.h, MX_LIBRARY_VERSION " +
                  std::to_string(version) + "), " + std::to_string(count) + " op(s)";

  auto part_size = Find<RegSizeFn>(handle, "_partRegSize");
  auto pass_size = Find<RegSizeFn>(handle, "_passRegSize");
  const int partitioners = part_size ? part_size() : 0, passes = pass_size ? pass_size() : 0;
  if (partitioners || passes) {
    std::string warning = path + ": its " + std::to_string(partitioners) + " partitioner(s) and " +
                          std::to_string(passes) +
                          " graph pass(es) are not supported and were ignored; its ops load";
    sdk::Host()->log(kMXPLogWarning, "mxnet_lib", warning.c_str());
  }
  return a;
}

// Registers an adapted library's ops and their kernels through the host.
void Register(Adapted* a, const MXPHostApi* host, MXPRegistrar* registrar) {
  for (const auto& op_ptr : a->ops) {
    const LibOp* op = op_ptr.get();
    a->registrations.push_back(
        std::make_unique<OpRegistration>(op->name, [op]() -> std::unique_ptr<OperatorProperty> {
          return std::make_unique<LibOpProperty>(op);
        }));
    OpRegistration* reg = a->registrations.back().get();
    reg->describe("Custom operator '" + op->name + "' of the MXNet library " + a->lib.path +
                  ": inputs and parameters as the library defines them (its ParseAttrs).");
    const size_t first_kernel = sdk::Records().kernels.size();
    auto on = [&](const char* ctx) { return op->forward.count(ctx) || op->create.count(ctx); };
    if (on("cpu")) reg->add_kernel(kDLCPU);
    if (on("gpu")) reg->add_kernel(kDLCUDA);
    // add_kernel keeps its records with the plugin's own, which every host that loads this
    // plugin registers: this library's are taken back out, registered here only.
    const size_t first_own = a->kernels.size();
    for (size_t k = first_kernel; k < sdk::Records().kernels.size(); ++k)
      a->kernels.emplace_back(sdk::Records().kernels[k]);
    sdk::Records().kernels.resize(first_kernel);
    sdk::ThrowIfError(host->register_op(registrar, reg->Def()));
    for (size_t k = first_own; k < a->kernels.size(); ++k)
      sdk::ThrowIfError(host->register_kernel(registrar, &a->kernels[k]->def));
  }
}

}  // namespace
}  // namespace mxplug::mxnet_lib

MXPLUG_PLUGIN("mxnet_lib", MXPLUG_PLUGIN_VERSION, "mxplug")

extern "C" MXP_EXPORT MXPStatus* mxplug_adapt(const MXPHostApi* host, const char* path,
                                              MXPRegistrar* registrar, MXPPluginApi* out,
                                              int32_t* recognized) {
  using namespace mxplug::mxnet_lib;
  *recognized = 0;
  // Opened again here (the host has it open already, so this only takes a reference).
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) return nullptr;
  if (!dlsym(handle, "_opRegSize") || !dlsym(handle, "_opVersion") ||
      !dlsym(handle, "initialize")) {
    dlclose(handle);
    return nullptr;
  }
  *recognized = 1;
  return mxplug::sdk::Guard([&] {
    mxplug::sdk::HostSlot() = host;
    // Kept for the life of the process: the host may call into its ops until the end.
    AdaptedLibraries().push_back(Open(handle, path));
    Adapted* adapted = AdaptedLibraries().back().get();
    out->struct_size = MXP_STRUCT_SIZE(MXPPluginApi, build_info);
    out->abi_major = MXP_ABI_MAJOR;
    out->abi_minor_built = MXP_ABI_MINOR;
    out->abi_minor_min = 5;
    out->name = adapted->name.c_str();
    out->version = "lib_api 11";
    out->vendor = "MXNet custom-op library";
    out->build_info = adapted->build_info.c_str();
    Register(adapted, host, registrar);
  });
}
