#include "base/durable_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/error.h"

namespace edgellm {

namespace {
std::string dir_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}
}  // namespace

DurableFile::DurableFile(std::string path) : path_(std::move(path)) {
  if (path_.empty()) fail("an output path is empty; give a file name");
  struct stat st {};
  if (lstat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
    if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode) && !S_ISFIFO(st.st_mode))
      fail(path_, ": is ", S_ISDIR(st.st_mode) ? "a directory" : "not a regular file, device or FIFO",
           "; give a file path");
    open_through();
    return;
  }
#ifdef O_TMPFILE
  // An unnamed file: a process killed while writing leaves nothing behind.
  // It gets a name only at commit(), for the instant before the rename.
  fd_ = ::open(dir_of(path_).c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
#endif
  if (fd_ < 0) {  // no O_TMPFILE here (or on this file system): a named temporary
    std::string name = dir_of(path_) + "/.edgellm-XXXXXX";
    std::vector<char> templ(name.begin(), name.end());
    templ.push_back('\0');
    fd_ = mkstemp(templ.data());  // O_RDWR | O_CREAT | O_EXCL, mode 0600
    if (fd_ < 0) fail(path_, ": cannot create a file in ", dir_of(path_), ": ", std::strerror(errno));
    tmp_ = templ.data();
  }
  buf_.reserve(size_t(1) << 20);
}

// A device or FIFO is opened as it is: O_NOFOLLOW so a symlink swapped in
// since the lstat is not followed, and fstat to check it is still what lstat
// saw. Opening a FIFO waits for its reader, as any writer to a FIFO does.
void DurableFile::open_through() {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
  if (fd_ < 0) fail(path_, ": cannot open for writing: ", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) || S_ISFIFO(st.st_mode)))
    fail(path_, ": changed while being opened; give a file path");
  through_ = true;
  buf_.reserve(size_t(1) << 16);
}

DurableFile::~DurableFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !tmp_.empty()) ::unlink(tmp_.c_str());
}

void DurableFile::write_raw(const char* p, size_t n) {
  size_t done = 0;
  while (done < n) {
    const ssize_t w = ::write(fd_, p + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) fail(path_, ": write failed: ", std::strerror(w < 0 ? errno : EIO));
    done += size_t(w);
  }
}

void DurableFile::flush_buffer() {
  write_raw(buf_.data(), buf_.size());
  buf_.clear();
}

void DurableFile::write(const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  if (n >= buf_.capacity()) {  // a big block (tensor data): no copy through the buffer
    flush_buffer();
    write_raw(p, n);
    return;
  }
  while (n > 0) {
    const size_t room = buf_.capacity() - buf_.size();
    const size_t take = std::min(room, n);
    buf_.append(p, take);
    p += take;
    n -= take;
    if (buf_.size() == buf_.capacity()) flush_buffer();
  }
}

void DurableFile::commit() {
  flush_buffer();
  if (through_) {  // nothing to rename; a device or pipe has no durability to ask for
    if (::close(fd_) != 0) fail(path_, ": write failed: ", std::strerror(errno));
    fd_ = -1;
    committed_ = true;
    return;
  }
  if (::fsync(fd_) != 0) fail(path_, ": fsync failed: ", std::strerror(errno));
  // mkstemp made it 0600; a session or output file gets the usual 0644 less the umask.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd_, 0644 & ~mask);
  if (tmp_.empty()) {
    // Name the unnamed file (a fresh name beside the target), then rename as below.
    for (int attempt = 0; tmp_.empty(); ++attempt) {
      char name[64];
      std::snprintf(name, sizeof name, "/.edgellm-%d-%d-%d", int(::getpid()), attempt, int(std::rand() & 0xffff));
      const std::string candidate = dir_of(path_) + name;
      const std::string self = "/proc/self/fd/" + std::to_string(fd_);
      if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, candidate.c_str(), AT_SYMLINK_FOLLOW) == 0) tmp_ = candidate;
      else if (errno != EEXIST || attempt > 100)
        fail(path_, ": cannot give the finished file a name: ", std::strerror(errno));
    }
  }
  ::close(fd_);
  fd_ = -1;
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0)
    fail(path_, ": cannot move the finished file into place: ", std::strerror(errno));
  committed_ = true;
  const int dfd = ::open(dir_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);  // makes the rename durable
    ::close(dfd);
  }
}

}  // namespace edgellm
