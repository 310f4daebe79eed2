// Writing a whole output in one call, without ever leaving a partial file
// (DurableFile: a temporary renamed over PATH; devices and FIFOs are written
// through). On any failure the temporary is gone and Error thrown.
#pragma once
#include <cstddef>
#include <string>

namespace edgellm {

void write_file_atomic(const std::string& path, const void* data, size_t size);

}  // namespace edgellm
