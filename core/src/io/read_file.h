// Reads a whole data file into memory, gzip-compressed or not: zlib tells them apart by their
// first bytes, not by the file's name.
#ifndef MXPLUG_IO_READ_FILE_H_
#define MXPLUG_IO_READ_FILE_H_

#include <string>

namespace mxplug::io {

/*! \brief The file's (uncompressed) bytes. \throws Error naming `who` and the file when it cannot
 * be opened or its compressed stream is broken (with the offset reached). */
std::string ReadWholeFile(const std::string& who, const std::string& path);

}  // namespace mxplug::io

#endif  // MXPLUG_IO_READ_FILE_H_
