/*!
 * \file mxplug/plugin_probe.h
 * \brief Loading a plugin file in a child process (the `mxplug-probe` helper), so that a plugin
 * that crashes or hangs in init cannot take the caller down, and a cache of verdicts keyed by
 * file identity (path, device, inode, size, modification time, a CRC-32 of the bytes, host
 * version).
 */
#ifndef MXPLUG_PLUGIN_PROBE_H_
#define MXPLUG_PLUGIN_PROBE_H_

#include <optional>
#include <string>
#include <vector>

#include "mxplug/plugin_record.h"

namespace mxplug {

struct ProbeVerdict {
  enum class Kind { kOk, kRefused, kCrashed, kTimedOut };
  Kind kind = Kind::kRefused;
  /*! \brief What the child reported; for a crash, the signal; for a refusal, the reason. */
  PluginRecord record;
};

/*! \brief "ok", "refused", "crashed", "timed out". */
const char* ProbeKindName(ProbeVerdict::Kind kind);

/*! \brief The helper executable: MXPLUG_PROBE_HELPER, else lib/mxplug/mxplug-probe beside
 * libmxplug.so. Empty when it does not exist. */
std::string ProbeHelperPath();

/*!
 * \brief Loads `path` in a child process and reports what happened. The child loads the adapter
 * plugins in `adapters` first, so that a library they adapt (Note [Adapted libraries]) is judged
 * as the caller would judge it. Never throws for a bad plugin; throws Error only when the helper
 * itself cannot be started.
 */
ProbeVerdict ProbePlugin(const std::string& path, const std::vector<std::string>& adapters = {},
                         double timeout_seconds = 20.0);

/*! \brief ${MXPLUG_CACHE_DIR}, else ${XDG_CACHE_HOME}/mxplug, else ~/.cache/mxplug. */
std::string DefaultProbeCacheDir();

/*! \brief The cached verdict for the file as it is now, if any. */
std::optional<ProbeVerdict> CachedProbeVerdict(const std::string& path,
                                               const std::string& cache_dir);
/*! \brief Stores a verdict for the file as it is now (best effort: a cache that cannot be
 * written only costs a probe next time). */
void StoreProbeVerdict(const std::string& path, const ProbeVerdict& verdict,
                       const std::string& cache_dir);

}  // namespace mxplug

#endif  // MXPLUG_PLUGIN_PROBE_H_
