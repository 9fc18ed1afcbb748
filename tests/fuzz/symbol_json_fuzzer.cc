// libFuzzer target for the symbol JSON loader (Symbol::FromJSON, Note [Symbol JSON]): any text must
// give either a graph or an mxplug::Error, never a crash, a hang, an overflow or a leak (run under
// ASan/UBSan). Seeds: graphs MXNet 1.9.1 wrote (tests/fuzz/corpus/symbol_json).
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "mxplug/error.h"
#include "mxplug/runtime.h"
#include "mxplug/symbol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool loaded = [] {
    mxplug::Runtime::Get().EnsureDefaultPluginsLoaded();  // the ops the graphs name
    return true;
  }();
  (void)loaded;
  try {
    const mxplug::Symbol sym = mxplug::Symbol::FromJSON(std::string(reinterpret_cast<const char*>(data), size));
    // What loaded must write again, and read back to the same text.
    const std::string text = sym.ToJSON();
    if (mxplug::Symbol::FromJSON(text).ToJSON() != text) __builtin_trap();
    // Inference over whatever graph came in must end in shapes or an error (no input shapes known).
    (void)sym.InferShape({});
  } catch (const mxplug::Error&) {
  }
  return 0;
}
