#include "base/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"

namespace edgellm {

namespace {

const char* kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO (named pipe)";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

std::string label(const std::string& what, const std::string& path) {
  return what.empty() ? path : what + " " + path;
}

// Reads fd to its end, refusing more than max_bytes.
std::string read_fd(int fd, const std::string& name, size_t max_bytes) {
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(name, ": read failed: ", std::strerror(errno));
    if (n == 0) return out;
    if (out.size() + size_t(n) > max_bytes)
      fail(name, ": more than ", max_bytes >> 20, " MiB, the limit for this input; give a smaller file");
    out.append(buf, size_t(n));
  }
}

}  // namespace

int open_regular_file(const std::string& path, const std::string& what) {
  const std::string name = label(what, path);
  if (path.empty()) fail(what.empty() ? "a file" : what, ": the path is empty; give a file");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) fail(name, ": cannot open: ", std::strerror(errno));
  if (!S_ISREG(st.st_mode)) fail(name, ": is ", kind_of(st.st_mode), ", not a regular file; give a file");
  // O_NONBLOCK: if the path became a FIFO since the stat, open does not wait
  // for a writer; the fstat below then refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) fail(name, ": cannot open: ", std::strerror(errno));
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(name, ": is not a regular file; give a file");
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

std::string read_input_file(const std::string& path, const std::string& what, bool allow_stdin, size_t max_bytes) {
  if (path == "-" && allow_stdin) return read_fd(0, label(what, "(stdin)"), max_bytes);
  const int fd = open_regular_file(path, what);
  struct stat st {};
  if (::fstat(fd, &st) == 0 && uint64_t(st.st_size) > max_bytes) {
    ::close(fd);
    fail(label(what, path), ": ", uint64_t(st.st_size) >> 20, " MiB is more than ", max_bytes >> 20,
         " MiB, the limit for this input; give a smaller file");
  }
  try {
    std::string s = read_fd(fd, label(what, path), max_bytes);
    ::close(fd);
    return s;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

}  // namespace edgellm
