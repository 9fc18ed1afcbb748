/*!
 * \file mxplug/runtime.h
 * \brief The process-wide catalogue: the registries of ops, kernels, devices and communication
 * backends, and the plugin loader that fills them. See docs/architecture.md, "Loading plugins".
 *
 * Loading is all or nothing per plugin: a file that is not a plugin, speaks another ABI major,
 * fails or throws in init, or registers a name that exists changes nothing and is recorded as
 * refused with the reason. Libraries are never unloaded (Note [No dlclose] in runtime.cc).
 * Every member is safe to call from any thread.
 */
#ifndef MXPLUG_RUNTIME_H_
#define MXPLUG_RUNTIME_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mxplug/comm.h"
#include "mxplug/device.h"
#include "mxplug/kernel.h"
#include "mxplug/op.h"
#include "mxplug/plugin_record.h"
#include "mxplug/registry.h"

struct MXPRegistrar;  // abi/host.h

namespace mxplug {

/*! \brief How a search path is loaded. */
struct LoadOptions {
  /*!
   * \brief Probe each file not seen before in a child process first (see plugin_probe.h), so a
   * plugin that crashes in init costs one probe instead of the process. Verdicts are cached by
   * file identity.
   */
  bool isolate_new_files = false;
  /*! \brief Where probe verdicts are cached; empty: DefaultProbeCacheDir(). */
  std::string cache_dir;
};

/*! \brief One folder of a search path and where it came from. */
struct SearchFolder {
  std::string path;
  std::string source;
};

class Runtime {
 public:
  /*! \brief The process-wide runtime, created on first use and never destroyed. */
  static Runtime& Get();

  /*! \brief A runtime of its own, for tests and the probe helper. */
  Runtime();
  ~Runtime();

  const Registry<OpEntry>& ops() const { return ops_; }
  const Registry<KernelEntry>& kernels() const { return kernels_; }
  const Registry<DeviceEntry>& devices() const { return devices_; }
  /*! \brief Communication backends (abi/comm.h), keyed by name ("mpi"). */
  const Registry<CommEntry>& comms() const { return comms_; }
  /*! \brief Every plugin file seen, loaded or refused, keyed by canonical path. */
  const Registry<PluginRecord>& plugins() const { return plugins_; }
  /*! \brief The same, as values sorted by path. */
  std::vector<PluginRecord> Plugins() const;

  /*! \brief The default plugin folder (lib/mxplug/plugins beside libmxplug.so), then each folder
   * of MXPLUG_PLUGIN_PATH. */
  static std::vector<SearchFolder> DefaultSearchPath();
  /*! \brief Loads every *.so in each folder, sorted by name; missing folders are skipped. */
  void LoadSearchPath(const std::vector<SearchFolder>& folders, const LoadOptions& options = {});
  /*! \brief Loads the default search path once per runtime; later calls do nothing. */
  void EnsureDefaultPluginsLoaded(const LoadOptions& options = {});

  /*!
   * \brief Loads one file; never throws. A file already seen (same canonical path) returns its
   * earlier record.
   */
  PluginRecord LoadFile(const std::string& path, const std::string& source = "explicit");
  /*!
   * \brief mx.library.load: like LoadFile, but throws Error with the reason when refused. With
   * options.isolate_new_files, a file not seen before is probed in a child process first, as
   * the search path's files are: one that crashes or hangs there is refused unopened.
   */
  PluginRecord LoadLibrary(const std::string& path, const LoadOptions& options = {});
  /*! \brief The loaded adapter plugins' files, in load order (Note [Adapted libraries]). */
  std::vector<std::string> AdapterPaths() const;

  /*! \brief The op called `name`. \throws Error naming the closest registered names. */
  std::shared_ptr<const OpEntry> GetOp(const std::string& name) const;
  /*! \brief The kernel of op on a device type, or nullptr. */
  std::shared_ptr<const KernelEntry> FindKernel(const std::string& op, int32_t device_type) const;
  /*! \brief Every kernel registered for op. */
  std::vector<std::shared_ptr<const KernelEntry>> KernelsOf(const std::string& op) const;
  /*! \brief Kernels whose op no loaded plugin defines (yet). */
  std::vector<std::shared_ptr<const KernelEntry>> UnboundKernels() const;
  /*! \brief The backend of a device type. \throws Error when none is loaded. */
  std::shared_ptr<const DeviceEntry> GetDevice(int32_t device_type) const;
  /*!
   * \brief Checks that ctx names an existing device. \returns the backend that serves its memory
   * (for pinned host memory, the accelerator that pins it, if any). \throws Error saying what
   * exists.
   */
  std::shared_ptr<const DeviceEntry> CheckContext(const Context& ctx) const;
  /*! \brief CheckContext's backend, uncounted: registered backends live as long as the process
   * (Note [No dlclose]), and every new array asks. */
  const DeviceEntry& CheckedBackend(const Context& ctx) const;
  /*!
   * \brief The accelerator backend whose host_allocate serves pinned host memory of this type
   * (kDLCUDAHost, kDLROCMHost), or nullptr: then ordinary CPU memory serves it, as in MXNet
   * without a GPU (Note [Pinned host memory]).
   */
  std::shared_ptr<const DeviceEntry> PinnedMemoryBackend(int32_t host_type) const;

  /*! \brief Registered names nearest to `name` (edit distance), best first. */
  static std::vector<std::string> ClosestNames(const std::string& name,
                                               const std::vector<std::string>& candidates,
                                               size_t max_results = 3);

 private:
  struct Impl;
  void Record(PluginRecord record);
  /*! \brief Probes `canonical` (or takes the cached verdict); records it as refused and returns
   * true unless the child loaded it. */
  bool RefusedByProbe(const std::string& canonical, const std::string& source,
                      const LoadOptions& options);
  /*! \brief A file without mxplug_init, offered to the adapter plugins (Note [Adapted
   * libraries]); returns why it is refused, or "". Called under the load lock. */
  std::string Adapt(const std::string& path, MXPRegistrar* registrar, PluginRecord* record);
  static void ListRegistrations(const MXPRegistrar& registrar, PluginRecord* record);

  Registry<OpEntry> ops_;
  Registry<KernelEntry> kernels_;
  Registry<DeviceEntry> devices_;
  Registry<CommEntry> comms_;
  Registry<PluginRecord> plugins_;
  // cpu(0)'s backend once CheckContext has found it (Note [The CPU's backend] in runtime.cc);
  // KnownCpuBackend gives it for cpu(0) once known, else null.
  const std::shared_ptr<const DeviceEntry>* KnownCpuBackend(const Context& ctx) const;
  mutable std::shared_ptr<const DeviceEntry> cpu_backend_;
  mutable std::atomic<bool> cpu_backend_known_{false};
  mutable std::once_flag cpu_backend_once_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mxplug

#endif  // MXPLUG_RUNTIME_H_
