/*!
 * \file mxplug/recordio.h
 * \brief MXNet's RecordIO files (dmlc-core's format), read and written byte for byte as MXNet
 * 1.x does, so that a `.rec` file made by either is read by the other.
 *
 * A record is a 4-byte magic (0xced7230a, little-endian), a 4-byte word holding a 3-bit part flag
 * and a 29-bit length, the bytes, and zeros up to a multiple of 4. A record whose bytes contain
 * the magic at a 4-aligned position is written in parts split there (flags 1 start, 2 middle,
 * 3 end; 0 is a whole record), so that a reader can find record starts by the magic alone; the
 * reader puts the magic back between the parts.
 */
#ifndef MXPLUG_RECORDIO_H_
#define MXPLUG_RECORDIO_H_

#include <cstdint>
#include <cstdio>
#include <string>

#include "mxplug/atomic_file.h"

namespace mxplug {

/*! \brief Writes records at the end of a new file. */
class RecordWriter {
 public:
  /*!
   * \brief Starts a new version of `path`, which appears whole at Close (an AtomicFile): until
   * then, and after a kill, readers find the previous file. \throws Error naming the file when
   * its folder cannot take it.
   */
  explicit RecordWriter(const std::string& path);
  /*! \brief Closes as Close does; an error there is only logged. */
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  /*! \throws Error naming the file for a record of 2^29 bytes or more, or a failed write. */
  void Write(const void* data, size_t size);
  /*! \brief Where the next record starts: what an index file records for it. */
  uint64_t Tell() const { return written_; }
  /*! \brief Makes the records written the file; further writes throw. \throws Error when the
   * file cannot be written (the previous one then stays). */
  void Close();
  const std::string& path() const { return path_; }

 private:
  void Put(const void* data, size_t size);

  std::string path_;
  AtomicFile file_;
  uint64_t written_ = 0;
};

/*!
 * \brief Reads the records of a file: in order (Next), or the one at an offset (ReadAt, safe to
 * call from several threads at once). Errors name the file and the offset of the bad record.
 */
class RecordReader {
 public:
  /*! \throws Error naming the file when it cannot be opened. */
  explicit RecordReader(const std::string& path);
  ~RecordReader();
  RecordReader(const RecordReader&) = delete;
  RecordReader& operator=(const RecordReader&) = delete;

  /*! \brief Reads the record at the current position into `out` and moves past it; false at
   * the end of the file. \throws Error for a wrong magic or a record the file cuts short. */
  bool Next(std::string* out);
  /*! \brief Moves to `offset`, where a record starts (an index file's offset). */
  void Seek(uint64_t offset) { position_ = offset; }
  uint64_t Tell() const { return position_; }
  /*! \brief Reads the record starting at `offset`; returns the offset after it. */
  uint64_t ReadAt(uint64_t offset, std::string* out) const;
  /*! \brief Like ReadAt without keeping the bytes: the offset of the next record, reading only
   * the headers. */
  uint64_t SkipAt(uint64_t offset) const;
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  // Reads the record at `offset`; with `out` null only checks and skips its bytes.
  uint64_t Read(uint64_t offset, std::string* out) const;
  // Both throw an Error naming the file and `record` (where the record being read starts) when
  // the file ends before offset + size.
  void CheckInFile(uint64_t offset, uint64_t size, uint64_t record) const;
  void ReadBytes(uint64_t offset, void* into, size_t size, uint64_t record) const;

  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
  uint64_t position_ = 0;
};

}  // namespace mxplug

#endif  // MXPLUG_RECORDIO_H_
