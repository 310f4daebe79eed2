#include "base/file_util.h"

#include "base/durable_file.h"

namespace edgellm {

void write_file_atomic(const std::string& path, const void* data, size_t size) {
  DurableFile out(path);
  out.write(data, size);
  out.commit();
}

}  // namespace edgellm
