// Writing outputs without ever leaving a partial file: write PATH.tmp, flush,
// rename over PATH. On any failure the temporary is removed and Error thrown.
#pragma once
#include <cstddef>
#include <string>

namespace edgellm {

void write_file_atomic(const std::string& path, const void* data, size_t size);

}  // namespace edgellm
