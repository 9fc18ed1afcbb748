// Fixed-width numbers in the byte order a file format fixes (IDX: big-endian; RecordIO and
// MXNet's image-record header: little-endian), whatever the host's, and the hex form errors show
// them in.
#ifndef MXPLUG_IO_BYTES_H_
#define MXPLUG_IO_BYTES_H_

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace mxplug::io {

inline uint32_t BigEndian32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

inline uint32_t LittleEndian32(const unsigned char* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}

inline uint64_t LittleEndian64(const unsigned char* p) {
  return uint64_t{LittleEndian32(p)} | (uint64_t{LittleEndian32(p + 4)} << 32);
}

inline float LittleEndianFloat(const unsigned char* p) {
  const uint32_t bits = LittleEndian32(p);
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

inline void PutLittleEndian32(uint32_t v, unsigned char* out) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<unsigned char>(v >> (8 * i));
}

/*! \brief "0x0000abcd": how errors show a magic number. */
inline std::string Hex32(uint32_t v) {
  char text[16];
  std::snprintf(text, sizeof(text), "0x%08x", v);
  return text;
}

}  // namespace mxplug::io

#endif  // MXPLUG_IO_BYTES_H_
