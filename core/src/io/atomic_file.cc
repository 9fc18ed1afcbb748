#include "mxplug/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <utility>

#include "mxplug/error.h"

// Note [Atomic files]
// A file is replaced by rename(2), which puts the new file under the name in one step: a reader
// opens the old file or the new one. The new bytes go to a temporary in the same folder (a rename
// does not cross file systems), which is fsync'd before the rename (or a crash just after it could
// leave the name on a file whose blocks were never written), and the folder is fsync'd after it,
// so that the rename itself survives a crash. While it is written the temporary has no name
// (O_TMPFILE), so a writer killed then leaves nothing behind; it is given a unique name (linkat
// through /proc/self/fd) only for the instant before the rename. Where the file system has no
// O_TMPFILE, or /proc is missing, the temporary is named from the start. Either way a kill while
// it has a name leaves it behind, as ".<name>.tmp-<pid>-<random>"; the next commit of the same
// path removes those whose process is gone. Names are unique per writer: two processes saving the
// same path each write their own temporary and the last rename wins, whole (a fixed "<path>.tmp"
// let one writer rename or remove the other's half-written file).

namespace mxplug {
namespace fs = std::filesystem;

namespace {

constexpr size_t kBufferBytes = 1 << 20;

std::string Folder(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

// ".<name>.tmp-<pid>-": what every temporary of `path` is named from, its writer's pid after it.
std::string TempPrefix(const std::string& path) {
  return "." + fs::path(path).filename().string() + ".tmp-";
}

std::string UniqueName(const std::string& path) {
  thread_local std::mt19937_64 rng{std::random_device{}() ^
                                   (static_cast<uint64_t>(::getpid()) << 32)};
  char suffix[64];
  std::snprintf(suffix, sizeof(suffix), "%d-%016llx", static_cast<int>(::getpid()),
                static_cast<unsigned long long>(rng()));
  return (fs::path(path).parent_path() / (TempPrefix(path) + suffix)).string();
}

// Removes the temporaries of `path` whose writers are gone: one killed between naming its
// temporary and the rename. A live writer's (another process saving the same path) stays.
void RemoveTemporariesOfDeadWriters(const std::string& path) {
  const std::string prefix = TempPrefix(path);
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(Folder(path), ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const int pid = std::atoi(name.c_str() + prefix.size());
    if (pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH) fs::remove(e.path(), ec);
  }
}

[[noreturn]] void Fail(const std::string& path, const char* step, int err) {
  throw Error("cannot write " + path + " (" + step + "): " + std::strerror(err),
              kMXPInvalidArgument);
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
#ifdef O_TMPFILE
  fd_ = ::open(Folder(path_).c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
#endif
  for (int attempt = 0; fd_ < 0 && attempt < 100; ++attempt) {
    temp_ = UniqueName(path_);
    fd_ = ::open(temp_.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);
    if (fd_ < 0 && errno != EEXIST) break;
  }
  if (fd_ < 0) {
    const int err = errno;
    temp_.clear();
    Fail(path_, "creating a temporary file in its folder", err);
  }
}

AtomicFile::~AtomicFile() { Abandon(); }

void AtomicFile::Write(const void* data, size_t size) {
  if (fd_ < 0) throw Error("cannot write " + path_ + ": the file is closed", kMXPInvalidArgument);
  buffer_.append(static_cast<const char*>(data), size);
  size_ += size;
  if (buffer_.size() >= kBufferBytes) Flush();
}

void AtomicFile::Flush() {
  const char* p = buffer_.data();
  size_t left = buffer_.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) Fail(path_, "writing", errno);
    p += n;
    left -= static_cast<size_t>(n);
  }
  buffer_.clear();
}

void AtomicFile::Commit() {
  if (fd_ < 0) throw Error("cannot write " + path_ + ": the file is closed", kMXPInvalidArgument);
  try {
    Publish();
  } catch (...) {
    Abandon();  // the previous file stays, and so does no temporary
    throw;
  }
}

void AtomicFile::Publish() {
  Flush();
  if (::fsync(fd_) != 0) Fail(path_, "flushing to disk", errno);
  if (temp_.empty()) {  // an unnamed temporary: name it for the rename
    const std::string self = "/proc/self/fd/" + std::to_string(fd_);
    for (int attempt = 0; attempt < 100; ++attempt) {
      std::string name = UniqueName(path_);
      if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) {
        temp_ = std::move(name);
        break;
      }
      if (errno != EEXIST) Fail(path_, "naming the temporary file", errno);
    }
    if (temp_.empty()) Fail(path_, "naming the temporary file", EEXIST);
  }
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) Fail(path_, "closing", errno);
  if (::rename(temp_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp_.c_str());
    temp_.clear();
    Fail(path_, "renaming the temporary file over it", err);
  }
  temp_.clear();
  RemoveTemporariesOfDeadWriters(path_);
  // The rename is an entry of the folder: flush it too (not every file system can; that is fine).
  const int dir = ::open(Folder(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

void AtomicFile::Abandon() {
  if (fd_ >= 0) ::close(std::exchange(fd_, -1));
  if (!temp_.empty()) ::unlink(std::exchange(temp_, std::string()).c_str());
  buffer_.clear();
}

void WriteFileAtomically(const std::string& path, std::string_view bytes) {
  AtomicFile file(path);
  file.Write(bytes);
  file.Commit();
}

}  // namespace mxplug
