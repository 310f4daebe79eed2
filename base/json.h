// Minimal JSON output helpers (we only ever write JSON in the core; parsing
// comes with the server).
#pragma once
#include <cstdio>
#include <string>
#include <string_view>

namespace edgellm {

// A JSON string literal, quotes included. Bytes >= 0x80 pass through (the
// input is UTF-8); control characters are escaped.
inline std::string json_quote(std::string_view s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\r': o += "\\r"; break;
      case '\t': o += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          o += buf;
        } else {
          o += char(c);
        }
    }
  }
  return o + "\"";
}

}  // namespace edgellm
