// Probing a plugin in a child process. The child is the `mxplug-probe` helper, started with
// posix_spawn (not fork: the caller may have threads, and a forked copy of a threaded process
// may deadlock in the loader). The helper writes its JSON report to fd 3, so whatever a plugin
// prints on stdout cannot corrupt it.
#include "mxplug/plugin_probe.h"

#define BOOST_DLL_USE_STD_FS
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <boost/dll/runtime_symbol_info.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "mxplug/atomic_file.h"
#include "mxplug/error.h"
#include "mxplug/version.h"

extern char** environ;

namespace fs = std::filesystem;

namespace mxplug {

const char* ProbeKindName(ProbeVerdict::Kind kind) {
  switch (kind) {
    case ProbeVerdict::Kind::kOk:
      return "ok";
    case ProbeVerdict::Kind::kRefused:
      return "refused";
    case ProbeVerdict::Kind::kCrashed:
      return "crashed";
    case ProbeVerdict::Kind::kTimedOut:
      return "timed out";
  }
  return "unknown";
}

namespace {

std::optional<ProbeVerdict::Kind> KindFromName(const std::string& name) {
  for (auto k : {ProbeVerdict::Kind::kOk, ProbeVerdict::Kind::kRefused,
                 ProbeVerdict::Kind::kCrashed, ProbeVerdict::Kind::kTimedOut})
    if (name == ProbeKindName(k)) return k;
  return std::nullopt;
}

}  // namespace

std::string ProbeHelperPath() {
  if (const char* env = std::getenv("MXPLUG_PROBE_HELPER")) return fs::exists(env) ? env : "";
  fs::path helper = boost::dll::this_line_location().parent_path() / "mxplug" / "mxplug-probe";
  std::error_code ec;
  return fs::exists(helper, ec) ? helper.string() : "";
}

ProbeVerdict ProbePlugin(const std::string& path, const std::vector<std::string>& adapters,
                         double timeout_seconds) {
  std::string helper = ProbeHelperPath();
  if (helper.empty())
    throw Error("cannot probe " + path +
                    ": the mxplug-probe helper was not found (set "
                    "MXPLUG_PROBE_HELPER, or install mxplug so lib/mxplug/mxplug-probe exists)",
                kMXPNotFound);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw Error("cannot probe " + path + ": pipe failed");

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 3);  // dup2 clears O_CLOEXEC on fd 3
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::string arg_fd = "--report-fd=3";
  std::vector<std::string> adapter_args;
  for (const std::string& a : adapters) adapter_args.push_back("--adapter=" + a);
  std::vector<char*> argv = {helper.data(), arg_fd.data()};
  for (std::string& a : adapter_args) argv.push_back(a.data());
  argv.push_back(const_cast<char*>(path.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, helper.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    throw Error("cannot probe " + path + ": starting " + helper + " failed: " + std::strerror(rc));
  }

  std::string report;
  bool timed_out = false;
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000));
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd pfd{fds[0], POLLIN, 0};
    int ready = poll(&pfd, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      timed_out = ready == 0;
      break;
    }
    char buf[4096];
    ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    report.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }

  ProbeVerdict verdict;
  verdict.record.path = path;
  if (timed_out) {
    verdict.kind = ProbeVerdict::Kind::kTimedOut;
    verdict.record.reason = "did not finish loading within " +
                            std::to_string(static_cast<int>(timeout_seconds)) + " s in a probe";
    return verdict;
  }
  if (WIFSIGNALED(wstatus)) {
    int sig = WTERMSIG(wstatus);
    verdict.kind = ProbeVerdict::Kind::kCrashed;
    verdict.record.reason = "crashed while loading in a probe process (signal " +
                            std::to_string(sig) + ", " + strsignal(sig) + ")";
    return verdict;
  }
  try {
    verdict.record = nlohmann::json::parse(report).get<PluginRecord>();
    verdict.kind = verdict.record.loaded() ? ProbeVerdict::Kind::kOk : ProbeVerdict::Kind::kRefused;
  } catch (const std::exception&) {
    verdict.kind = ProbeVerdict::Kind::kCrashed;
    verdict.record.reason = "the probe process exited with code " +
                            std::to_string(WEXITSTATUS(wstatus)) + " without a report";
  }
  verdict.record.path = path;
  return verdict;
}

std::string DefaultProbeCacheDir() {
  if (const char* dir = std::getenv("MXPLUG_CACHE_DIR")) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME")) return (fs::path(xdg) / "mxplug").string();
  if (const char* home = std::getenv("HOME"))
    return (fs::path(home) / ".cache" / "mxplug").string();
  return (fs::temp_directory_path() / "mxplug-cache").string();
}

namespace {

// A plugin's identity: the same bytes at the same place, judged by the same host release.
// The file's bytes, as a CRC-32: a file rewritten in place with the same size and time stamp (a
// copy that keeps times, a clock set back, a file system with coarse times) must be probed again.
std::optional<std::string> ContentChecksum(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  uLong crc = crc32(0L, Z_NULL, 0);
  std::vector<char> block(1 << 16);
  while (in.read(block.data(), static_cast<std::streamsize>(block.size())) || in.gcount() > 0)
    crc = crc32(crc, reinterpret_cast<const Bytef*>(block.data()), static_cast<uInt>(in.gcount()));
  char hex[9];
  std::snprintf(hex, sizeof(hex), "%08lx", crc & 0xffffffffUL);
  return std::string(hex);
}

std::optional<std::string> IdentityKey(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return std::nullopt;
  std::optional<std::string> content = ContentChecksum(path);
  if (!content) return std::nullopt;
  return path + "|" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + "|" +
         std::to_string(st.st_size) + "|" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec) + "|crc32:" + *content + "|" + MXPLUG_VERSION_STRING;
}

fs::path CacheFile(const std::string& dir) { return fs::path(dir) / "plugin-probes.json"; }

nlohmann::json ReadCache(const std::string& dir) {
  std::ifstream in(CacheFile(dir));
  if (!in) return nlohmann::json::object();
  try {
    nlohmann::json j = nlohmann::json::parse(in);
    return j.is_object() ? j : nlohmann::json::object();
  } catch (const std::exception&) {
    return nlohmann::json::object();  // a damaged cache only costs probes
  }
}

}  // namespace

std::optional<ProbeVerdict> CachedProbeVerdict(const std::string& path,
                                               const std::string& cache_dir) {
  auto key = IdentityKey(path);
  if (!key) return std::nullopt;
  nlohmann::json cache = ReadCache(cache_dir);
  if (!cache.contains(*key)) return std::nullopt;
  try {
    const auto& entry = cache.at(*key);
    auto kind = KindFromName(entry.at("verdict").get<std::string>());
    if (!kind) return std::nullopt;
    ProbeVerdict v;
    v.kind = *kind;
    v.record = entry.at("record").get<PluginRecord>();
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void StoreProbeVerdict(const std::string& path, const ProbeVerdict& verdict,
                       const std::string& cache_dir) {
  auto key = IdentityKey(path);
  if (!key) return;
  std::error_code ec;
  fs::create_directories(cache_dir, ec);
  nlohmann::json cache = ReadCache(cache_dir);
  // Drop entries for older versions of this same file, so the cache does not grow forever.
  for (auto it = cache.begin(); it != cache.end();)
    it = it.key().rfind(path + "|", 0) == 0 ? cache.erase(it) : std::next(it);
  cache[*key] = {{"verdict", ProbeKindName(verdict.kind)}, {"record", verdict.record}};
  try {
    WriteFileAtomically(CacheFile(cache_dir).string(), cache.dump(1));
  } catch (const Error&) {
    // A cache that cannot be written only means probing again next time.
  }
}

}  // namespace mxplug
