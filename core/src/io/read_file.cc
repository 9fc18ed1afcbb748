#include "io/read_file.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "mxplug/error.h"

namespace mxplug::io {

std::string ReadWholeFile(const std::string& who, const std::string& path) {
  std::unique_ptr<gzFile_s, int (*)(gzFile)> file(gzopen(path.c_str(), "rb"), gzclose);
  if (!file)
    throw Error(who + ": cannot open '" + path + "': " + std::strerror(errno), kMXPInvalidArgument);
  gzbuffer(file.get(), 1 << 20);
  std::string bytes;
  char chunk[1 << 16];
  for (;;) {
    const int got = gzread(file.get(), chunk, sizeof(chunk));
    if (got < 0) {
      int code = 0;
      const char* why = gzerror(file.get(), &code);
      throw Error(
          who + ": cannot read '" + path + "' at offset " + std::to_string(bytes.size()) +
              " of its uncompressed bytes: " + (code == Z_ERRNO ? std::strerror(errno) : why),
          kMXPInvalidArgument);
    }
    if (got == 0) break;
    bytes.append(chunk, static_cast<size_t>(got));
  }
  // A gzip stream cut short reads as a clean end with zlib >= 1.2.12 unless we ask.
  int code = 0;
  const char* why = gzerror(file.get(), &code);
  if (code != Z_OK && code != Z_STREAM_END)
    throw Error(who + ": cannot read '" + path + "' at offset " + std::to_string(bytes.size()) +
                    " of its uncompressed bytes: " + why,
                kMXPInvalidArgument);
  return bytes;
}

}  // namespace mxplug::io
