// libFuzzer target for RecordIO files and the images in them (mxplug/recordio.h, mxplug/image.h):
// any file must give records or an mxplug::Error naming it, and any record's image pixels or an
// Error, never a crash, a hang, an overflow or a leak (run under ASan/UBSan).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "mxplug/error.h"
#include "mxplug/image.h"
#include "mxplug/recordio.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path =
      "/tmp/mxplug-fuzz-recordio-" + std::to_string(::getpid()) + ".rec";
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return 0;
    std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  try {
    mxplug::RecordReader reader(path);
    std::string record;
    constexpr size_t kImageRecordHeader = 24;  // MXNet's IRHeader, then the encoded image
    while (reader.Next(&record)) {
      if (record.size() < kImageRecordHeader) continue;
      try {
        const mxplug::Image image =
            mxplug::DecodeImage(record.data() + kImageRecordHeader,
                                record.size() - kImageRecordHeader, 0, mxplug::ChannelOrder::kRGB);
        if (image.pixels.size() != static_cast<size_t>(image.height) * image.width * image.channels)
          __builtin_trap();
      } catch (const mxplug::Error&) {
      }
    }
  } catch (const mxplug::Error&) {
  }
  return 0;
}
