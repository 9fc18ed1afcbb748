// Paths of the build tree, given to the tests by CMake relative to the build folder, which is the
// parent of the folder the test binary is in (build/bin/mxplug_tests): a build tree moved as a
// whole, as tools/gpu/pack.sh moves one to a GPU machine, keeps working.
#ifndef MXPLUG_TESTS_TEST_PATHS_H_
#define MXPLUG_TESTS_TEST_PATHS_H_

#include <filesystem>
#include <string>

namespace mxplug::test {
inline std::string InBuildTree(const char* relative) {
  static const std::filesystem::path build =
      std::filesystem::canonical("/proc/self/exe").parent_path().parent_path();
  return (build / relative).string();
}
inline const std::string kPluginDir =
    InBuildTree(MXPLUG_TEST_PLUGIN_DIR);  // build/lib/mxplug/plugins
inline const std::string kZooDir = InBuildTree(MXPLUG_TEST_ZOO_DIR);
inline const std::string kCrashDir = InBuildTree(MXPLUG_TEST_CRASH_DIR);
inline const std::string kLateDir = InBuildTree(MXPLUG_TEST_LATE_DIR);
inline const std::string kDevicesDir = InBuildTree(MXPLUG_TEST_DEVICES_DIR);
inline const std::string kFaultyDir =
    InBuildTree(MXPLUG_TEST_FAULTY_DIR);  // test.FailForward, test.Reverse
inline const std::string kMXNetLibDir =
    InBuildTree(MXPLUG_TEST_MXNET_LIB_DIR);  // MXNet lib_api libraries (tests/mxnet_lib)
inline const std::string kScratchDir = InBuildTree(MXPLUG_TEST_SCRATCH_DIR);
}  // namespace mxplug::test

#endif  // MXPLUG_TESTS_TEST_PATHS_H_
