// Errors are values with a message a user can act on. Library code throws
// edgellm::Error; the CLI and the C API catch it at the boundary and turn it
// into one line on stderr / an error code. Nothing in the library calls exit().
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace edgellm {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// fail("tensor ", name, " extends past end of file (offset ", off, ")")
template <class... Parts>
[[noreturn]] void fail(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  throw Error(os.str());
}

}  // namespace edgellm
