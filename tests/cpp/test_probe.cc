// Probing plugins in a child process, and the verdict cache keyed by file identity.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "mxplug/plugin_probe.h"
#include "mxplug/runtime.h"
#include "test_paths.h"

namespace fs = std::filesystem;

namespace mxplug {
namespace {

// A copy of the plugin that crashes in init, in a scratch folder of its own.
fs::path ScratchCopyOfTheCrashingPlugin(const std::string& folder, const std::string& name) {
  fs::path dir = fs::path(test::kScratchDir) / folder;
  fs::create_directories(dir);
  fs::copy_file(test::kCrashDir + "/libtest_init_crashes.so", dir / name,
                fs::copy_options::overwrite_existing);
  return dir / name;
}

std::string FreshCacheDir(const std::string& name) {
  fs::path dir = fs::path(test::kScratchDir) / name;
  fs::remove_all(dir);
  return dir.string();
}

TEST(Probe, HelperIsFoundBesideTheLibrary) { EXPECT_FALSE(ProbeHelperPath().empty()); }

TEST(Probe, CrashInInitIsReportedNotSuffered) {
  ProbeVerdict v = ProbePlugin(test::kCrashDir + "/libtest_init_crashes.so");
  EXPECT_EQ(v.kind, ProbeVerdict::Kind::kCrashed);
  EXPECT_NE(v.record.reason.find("signal 11"), std::string::npos) << v.record.reason;
}

TEST(Probe, GoodAndRefusedPluginsReportWhatTheyWouldRegister) {
  ProbeVerdict good = ProbePlugin(test::kPluginDir + "/libmxplug_nn.so");
  ASSERT_EQ(good.kind, ProbeVerdict::Kind::kOk) << good.record.reason;
  EXPECT_EQ(good.record.name, "nn");
  // What the probe reports is what loading registers: the op and its CPU kernel, for each op.
  Runtime rt;
  PluginRecord loaded = rt.LoadFile(test::kPluginDir + "/libmxplug_nn.so");
  EXPECT_EQ(good.record.ops, loaded.ops);
  EXPECT_EQ(good.record.kernels, loaded.kernels);
  ASSERT_EQ(good.record.ops.size(), good.record.kernels.size());
  EXPECT_NE(std::find(good.record.ops.begin(), good.record.ops.end(), "FullyConnected"),
            good.record.ops.end());
  for (size_t i = 0; i < good.record.ops.size(); ++i)
    EXPECT_EQ(good.record.kernels[i], good.record.ops[i] + "@cpu");
  ProbeVerdict bad = ProbePlugin(test::kZooDir + "/libtest_bad_abi.so");
  EXPECT_EQ(bad.kind, ProbeVerdict::Kind::kRefused);
  EXPECT_NE(bad.record.reason.find("built for plugin ABI 99.3"), std::string::npos);
}

// The child judges an MXNet custom-op library with the adapter plugins the caller has.
TEST(Probe, AnMXNetLibraryIsProbedWithTheCallersAdapters) {
  const std::string lib = test::kMXNetLibDir + "/libmxnet_test_ops.so";
  ProbeVerdict without = ProbePlugin(lib);
  EXPECT_EQ(without.kind, ProbeVerdict::Kind::kRefused);
  ProbeVerdict with = ProbePlugin(lib, {test::kPluginDir + "/libmxplug_mxnet_lib.so"});
  EXPECT_EQ(with.kind, ProbeVerdict::Kind::kOk) << with.record.reason;
  EXPECT_EQ(with.record.name, "mxnet_lib:mxnet_test_ops");
  EXPECT_EQ(with.record.ops.size(), 4u);
}

TEST(Probe, VerdictCacheFollowsFileIdentity) {
  std::string cache = FreshCacheDir("probe-cache");
  fs::path file = ScratchCopyOfTheCrashingPlugin("identity", "libcrash.so");

  EXPECT_FALSE(CachedProbeVerdict(file.string(), cache).has_value());
  ProbeVerdict v = ProbePlugin(file.string());
  StoreProbeVerdict(file.string(), v, cache);
  auto cached = CachedProbeVerdict(file.string(), cache);
  ASSERT_TRUE(cached.has_value());
  EXPECT_EQ(cached->kind, ProbeVerdict::Kind::kCrashed);
  EXPECT_EQ(cached->record.reason, v.record.reason);

  // A rebuilt file (new modification time) is a new identity: the verdict no longer applies.
  fs::last_write_time(file, fs::last_write_time(file) + std::chrono::seconds(5));
  EXPECT_FALSE(CachedProbeVerdict(file.string(), cache).has_value());
}

TEST(Probe, VerdictCacheFollowsTheFilesContent) {
  // A file rewritten in place with other bytes of the same size, its time stamp put back (a copy
  // that keeps times, a coarse clock): path, inode, size and time all match, the content does not.
  std::string cache = FreshCacheDir("probe-cache-content");
  fs::path file = ScratchCopyOfTheCrashingPlugin("content", "libplugin.so");
  StoreProbeVerdict(file.string(), ProbePlugin(file.string()), cache);
  ASSERT_TRUE(CachedProbeVerdict(file.string(), cache).has_value());
  const auto stamp = fs::last_write_time(file);
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-1, std::ios::end);
    const char last = static_cast<char>(f.get());
    f.seekp(-1, std::ios::end);
    f.put(static_cast<char>(~last));  // the last byte of the file, changed in place
  }
  fs::last_write_time(file, stamp);
  EXPECT_FALSE(CachedProbeVerdict(file.string(), cache).has_value());
}

TEST(Probe, IsolatedLoadingSurvivesACrashingPluginAndCachesIt) {
  std::string cache = FreshCacheDir("isolated-cache");
  LoadOptions options;
  options.isolate_new_files = true;
  options.cache_dir = cache;
  std::vector<SearchFolder> path{{test::kPluginDir, "default folder"}, {test::kCrashDir, "crash"}};
  Runtime good;
  good.LoadSearchPath({{test::kPluginDir, "default folder"}});
  for (int run = 0; run < 2; ++run) {
    Runtime rt;
    rt.LoadSearchPath(path, options);
    EXPECT_EQ(rt.ops().Size(), good.ops().Size());
    bool seen = false;
    for (const PluginRecord& r : rt.Plugins()) {
      if (r.path.find("libtest_init_crashes.so") == std::string::npos) continue;
      seen = true;
      EXPECT_FALSE(r.loaded());
      EXPECT_NE(r.reason.find("crashed while loading"), std::string::npos) << r.reason;
      // The second run reuses the first run's verdict instead of probing again.
      EXPECT_EQ(r.reason.find("cached") != std::string::npos, run == 1) << r.reason;
    }
    EXPECT_TRUE(seen);
  }
}

}  // namespace
}  // namespace mxplug
