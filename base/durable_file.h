// A file that appears whole or not at all, and survives a crash or power
// loss once commit() returns: the bytes go to a fresh temporary in the
// target's directory (mkstemp: O_EXCL, never a planted name or symlink),
// which is fsync'ed, renamed over the target, and the directory fsync'ed so
// the rename itself is durable. A kill at any moment leaves either the old
// file or the new one. On Linux the temporary is an O_TMPFILE (no name until
// the instant before the rename), so a killed writer leaves no stray file;
// elsewhere a named mkstemp file that the destructor of an uncommitted
// DurableFile removes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace edgellm {

class DurableFile {
 public:
  // Refuses a target that exists and is not a regular file (a device, a
  // directory, a FIFO), with a clear message.
  explicit DurableFile(std::string path);
  ~DurableFile();
  DurableFile(const DurableFile&) = delete;
  DurableFile& operator=(const DurableFile&) = delete;

  void write(const void* data, size_t n);  // buffered; throws on I/O errors
  void commit();                           // fsync, rename, fsync the directory

 private:
  void flush_buffer();
  std::string path_, tmp_;
  int fd_ = -1;
  bool committed_ = false;
  std::string buf_;  // up to 1 MiB before a write(2)
};

}  // namespace edgellm
