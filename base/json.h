// Minimal JSON output helpers (we only ever write JSON in the core; parsing
// comes with the server).
#pragma once
#include <string>
#include <string_view>

namespace edgellm {

// A JSON string literal, quotes included, that strict parsers accept whatever
// the bytes: valid UTF-8 passes through, each byte of an invalid sequence
// (text from a file can be anything) becomes U+FFFD, and control characters
// are escaped.
std::string json_quote(std::string_view s);

}  // namespace edgellm
