#include "base/file_util.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/error.h"

namespace edgellm {

void write_file_atomic(const std::string& path, const void* data, size_t size) {
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) fail(path, ": cannot write: ", std::strerror(errno));
  const bool ok = std::fwrite(data, 1, size, f) == size && std::fflush(f) == 0;
  const int err = errno;
  if (std::fclose(f) != 0 || !ok) {
    std::remove(tmp.c_str());
    fail(path, ": write failed: ", std::strerror(err));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    fail(path, ": cannot rename the finished file into place: ", std::strerror(e));
  }
}

}  // namespace edgellm
