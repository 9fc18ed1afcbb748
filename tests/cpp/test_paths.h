// Paths of the build tree, given to the tests by CMake.
#ifndef MXPLUG_TESTS_TEST_PATHS_H_
#define MXPLUG_TESTS_TEST_PATHS_H_

#include <string>

namespace mxplug::test {
inline const std::string kPluginDir = MXPLUG_TEST_PLUGIN_DIR;  // build/lib/mxplug/plugins
inline const std::string kZooDir = MXPLUG_TEST_ZOO_DIR;
inline const std::string kCrashDir = MXPLUG_TEST_CRASH_DIR;
inline const std::string kLateDir = MXPLUG_TEST_LATE_DIR;
inline const std::string kDevicesDir = MXPLUG_TEST_DEVICES_DIR;
inline const std::string kFaultyDir = MXPLUG_TEST_FAULTY_DIR;  // test.FailForward, test.Reverse
inline const std::string kScratchDir = MXPLUG_TEST_SCRATCH_DIR;
}  // namespace mxplug::test

#endif  // MXPLUG_TESTS_TEST_PATHS_H_
