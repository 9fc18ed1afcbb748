// The test binary's main: the tests never depend on the user's plugin path or probe cache,
// whether ctest runs them or a developer runs the binary directly.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "test_paths.h"

int main(int argc, char** argv) {
  std::filesystem::create_directories(mxplug::test::kScratchDir);
  setenv("MXPLUG_PLUGIN_PATH", "", 1);
  setenv("MXPLUG_CACHE_DIR", (mxplug::test::kScratchDir + "/cache").c_str(), 1);
#if defined(__SANITIZE_ADDRESS__)
  // Probe children inherit this: the test plugin that crashes must die of its signal, as in a
  // normal build, not of ASan's report with exit code 1.
  setenv("ASAN_OPTIONS", "handle_segv=0", 0);
#endif
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
