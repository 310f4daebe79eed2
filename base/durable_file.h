// A file that appears whole or not at all, and survives a crash or power
// loss once commit() returns: the bytes go to a fresh temporary in the
// target's directory (mkstemp: O_EXCL, never a planted name or symlink),
// which is fsync'ed, renamed over the target, and the directory fsync'ed so
// the rename itself is durable. A kill at any moment leaves either the old
// file or the new one. On Linux the temporary is an O_TMPFILE (no name until
// the instant before the rename), so a killed writer leaves no stray file;
// elsewhere a named mkstemp file that the destructor of an uncommitted
// DurableFile removes.
//
// What the target path names decides how it is written:
//   nothing, a regular file   atomic replace, as above;
//   a symbolic link           the link itself is replaced, never followed (a
//                             link planted at an output path cannot redirect
//                             the write to a file the user did not name);
//   a character or block      written through in place (`-o /dev/null`,
//   device, a FIFO            `-o /dev/stdout`, a pipe to another program):
//                             these cannot be replaced, and must not be;
//   anything else             (a directory, a socket) refused, clearly.
// Every output file of the project goes through here (also write_file_atomic).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace edgellm {

class DurableFile {
 public:
  // Refuses a target that is a directory, a socket or another kind of file
  // that can be neither replaced nor written through, with a clear message.
  explicit DurableFile(std::string path);
  ~DurableFile();
  DurableFile(const DurableFile&) = delete;
  DurableFile& operator=(const DurableFile&) = delete;

  void write(const void* data, size_t n);  // buffered; throws on I/O errors
  void commit();                           // fsync, rename, fsync the directory
  bool writes_through() const { return through_; }  // a device or FIFO

 private:
  void open_through();
  void write_raw(const char* p, size_t n);
  void flush_buffer();
  std::string path_, tmp_;
  int fd_ = -1;
  bool committed_ = false;
  bool through_ = false;
  std::string buf_;  // up to 1 MiB before a write(2)
};

}  // namespace edgellm
