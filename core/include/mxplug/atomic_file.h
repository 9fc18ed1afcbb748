/*!
 * \file mxplug/atomic_file.h
 * \brief Files written whole or not at all: every file mxplug writes (.params, symbol JSON,
 * optimizer states, RecordIO files and indexes, profiler traces, the probe cache) goes through
 * here, so that a reader, or a writer killed at any moment, finds the previous file or the new
 * one, whole (Note [Atomic files] in atomic_file.cc).
 */
#ifndef MXPLUG_ATOMIC_FILE_H_
#define MXPLUG_ATOMIC_FILE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mxplug {

class AtomicFile {
 public:
  /*! \brief Starts a new version of `path`. \throws Error naming the path when its folder cannot
   * take a file. */
  explicit AtomicFile(std::string path);
  /*! \brief Without Commit: the previous file stays and no temporary is left. */
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  /*! \throws Error naming the path (a full disk, say). */
  void Write(const void* data, size_t size);
  void Write(std::string_view bytes) { Write(bytes.data(), bytes.size()); }
  /*! \brief Bytes written so far. */
  uint64_t size() const { return size_; }
  /*! \brief Makes the bytes written the file: flushed to disk, then renamed over `path`.
   * \throws Error naming the path; the previous file is then untouched. */
  void Commit();
  /*! \brief Drops what was written; the previous file stays. */
  void Abandon();
  bool open() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }

 private:
  void Flush();
  void Publish();

  std::string path_;
  std::string temp_;  // the temporary's name; empty while it has none (O_TMPFILE)
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string buffer_;
};

/*! \brief Writes `bytes` as the whole of `path` through an AtomicFile. */
void WriteFileAtomically(const std::string& path, std::string_view bytes);

}  // namespace mxplug

#endif  // MXPLUG_ATOMIC_FILE_H_
