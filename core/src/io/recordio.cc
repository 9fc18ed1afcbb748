#include "mxplug/recordio.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "io/bytes.h"
#include "mxplug/error.h"

namespace mxplug {
namespace {

constexpr uint32_t kMagic = 0xced7230a;
constexpr uint32_t kMaxLength = (1u << 29) - 1;
enum PartFlag : uint32_t { kWhole = 0, kFirst = 1, kMiddle = 2, kLast = 3 };

uint32_t Aligned(uint32_t n) { return (n + 3u) & ~3u; }

std::string FileError(const std::string& path) { return "RecordIO file '" + path + "'"; }

}  // namespace

RecordWriter::RecordWriter(const std::string& path) : path_(path), file_(path) {}

RecordWriter::~RecordWriter() {
  try {
    Close();
  } catch (const Error& e) {
    std::fprintf(stderr, "[mxplug error] %s\n", e.what());
  }
}

void RecordWriter::Put(const void* data, size_t size) {
  try {
    file_.Write(data, size);
  } catch (const Error& e) {
    throw Error(FileError(path_) + " at offset " + std::to_string(written_) + ": " + e.what(),
                kMXPInvalidArgument);
  }
  written_ += size;
}

void RecordWriter::Write(const void* data, size_t size) {
  if (!file_.open()) throw Error(FileError(path_) + " is closed", kMXPInvalidArgument);
  if (size > kMaxLength)
    throw Error("cannot write a record of " + std::to_string(size) + " bytes to " +
                    FileError(path_) + ": RecordIO records hold at most " +
                    std::to_string(kMaxLength) + " bytes",
                kMXPInvalidArgument);
  const auto* bytes = static_cast<const unsigned char*>(data);
  const uint32_t length = static_cast<uint32_t>(size);
  unsigned char header[8];
  io::PutLittleEndian32(kMagic, header);
  auto put_part = [&](uint32_t flag, uint32_t begin, uint32_t end) {
    io::PutLittleEndian32((flag << 29) | (end - begin), header + 4);
    Put(header, sizeof(header));
    Put(bytes + begin, end - begin);
  };
  // Split where the magic itself appears at a 4-aligned position; the magic is left out and the
  // reader puts it back, so a reader that lost its place can find record starts by the magic.
  uint32_t part_begin = 0;
  for (uint32_t i = 0; i + 4 <= length; i += 4) {
    if (io::LittleEndian32(bytes + i) != kMagic) continue;
    put_part(part_begin == 0 ? kFirst : kMiddle, part_begin, i);
    part_begin = i + 4;
  }
  put_part(part_begin == 0 ? kWhole : kLast, part_begin, length);
  const unsigned char zeros[4] = {0, 0, 0, 0};
  Put(zeros, Aligned(length) - length);  // parts before the last are 4-aligned already
}

void RecordWriter::Close() {
  if (file_.open()) file_.Commit();
}

RecordReader::RecordReader(const std::string& path)
    : path_(path), fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
  if (fd_ < 0)
    throw Error("cannot open " + FileError(path) + ": " + std::strerror(errno),
                kMXPInvalidArgument);
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw Error("cannot read " + FileError(path) + ": not a regular file", kMXPInvalidArgument);
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

RecordReader::~RecordReader() { ::close(fd_); }

bool RecordReader::Next(std::string* out) {
  if (position_ >= size_) return false;
  position_ = ReadAt(position_, out);
  return true;
}

uint64_t RecordReader::ReadAt(uint64_t offset, std::string* out) const {
  out->clear();
  return Read(offset, out);
}

uint64_t RecordReader::SkipAt(uint64_t offset) const { return Read(offset, nullptr); }

void RecordReader::CheckInFile(uint64_t offset, uint64_t size, uint64_t record) const {
  if (offset + size > size_)
    throw Error(FileError(path_) + " is cut short: the record at offset " + std::to_string(record) +
                    " needs bytes up to offset " + std::to_string(offset + size) +
                    ", the file ends at offset " + std::to_string(size_),
                kMXPInvalidArgument);
}

void RecordReader::ReadBytes(uint64_t offset, void* into, size_t size, uint64_t record) const {
  CheckInFile(offset, size, record);
  auto* p = static_cast<char*>(into);
  while (size > 0) {
    const ssize_t got = ::pread(fd_, p, size, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0)
      throw Error("cannot read " + FileError(path_) + " at offset " + std::to_string(offset) +
                      ": " + (got < 0 ? std::strerror(errno) : "the file shrank"),
                  kMXPInvalidArgument);
    p += got;
    offset += static_cast<uint64_t>(got);
    size -= static_cast<size_t>(got);
  }
}

uint64_t RecordReader::Read(uint64_t offset, std::string* out) const {
  const uint64_t record = offset;
  for (bool first = true;; first = false) {
    unsigned char header[8];
    ReadBytes(offset, header, sizeof(header), record);
    const uint32_t magic = io::LittleEndian32(header), word = io::LittleEndian32(header + 4);
    if (magic != kMagic)
      throw Error(FileError(path_) + " has no record at offset " + std::to_string(offset) +
                      ": it holds " + io::Hex32(magic) + " where a record starts with the magic " +
                      io::Hex32(kMagic) + (offset == 0 ? " (not a RecordIO file?)" : ""),
                  kMXPInvalidArgument);
    const uint32_t flag = word >> 29, length = word & kMaxLength;
    const bool starts = flag == kWhole || flag == kFirst;
    if (flag > kLast || starts != first)
      throw Error(FileError(path_) + " is malformed: the record at offset " +
                      std::to_string(record) + " has a part with flag " + std::to_string(flag) +
                      " at offset " + std::to_string(offset) +
                      (first ? ", expected 0 (whole) or 1 (first part)"
                             : ", expected 2 (middle) or 3 (last part)"),
                  kMXPInvalidArgument);
    offset += sizeof(header);
    CheckInFile(offset, Aligned(length), record);
    if (out) {
      const size_t have = out->size();
      out->resize(have + length);
      ReadBytes(offset, out->data() + have, length, record);
    }
    offset += Aligned(length);
    if (flag == kWhole || flag == kLast) return offset;
    if (out) {
      unsigned char magic_bytes[4];
      io::PutLittleEndian32(kMagic, magic_bytes);
      out->append(reinterpret_cast<const char*>(magic_bytes), 4);
    }
  }
}

}  // namespace mxplug
