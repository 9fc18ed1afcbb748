// libFuzzer target for the .params loader (mxplug/ndarray_file.h): any bytes must give either
// arrays or an mxplug::Error, never a crash, a hang, an overflow or a leak (run under ASan/UBSan).
#include <cstddef>
#include <cstdint>
#include <string>

#include "mxplug/error.h"
#include "mxplug/ndarray_file.h"
#include "mxplug/runtime.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool loaded = [] {
    mxplug::Runtime::Get().EnsureDefaultPluginsLoaded();  // the CPU device, for the arrays
    return true;
  }();
  (void)loaded;
  try {
    mxplug::NDArrayFile file = mxplug::LoadNDArrays(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
    // What loaded must save again, and load back to the same arrays.
    mxplug::NDArrayFile again = mxplug::LoadNDArrays(mxplug::SaveNDArrays(file), "round trip");
    if (again.arrays.size() != file.arrays.size() || again.names != file.names) __builtin_trap();
  } catch (const mxplug::Error&) {
  }
  return 0;
}
