#include "base/text_escape.h"

#include <cstdint>
#include <cstdio>

#include "base/json.h"

namespace edgellm {

size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = at(i);
  if (c < 0x80) return 1;
  size_t n;
  uint32_t cp, min;
  if ((c & 0xe0) == 0xc0) n = 2, cp = c & 0x1f, min = 0x80;
  else if ((c & 0xf0) == 0xe0) n = 3, cp = c & 0x0f, min = 0x800;
  else if ((c & 0xf8) == 0xf0) n = 4, cp = c & 0x07, min = 0x10000;
  else return 0;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((at(i + k) & 0xc0) != 0x80) return 0;
    cp = cp << 6 | (at(i + k) & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

namespace {
void append_hex(std::string& o, const char* fmt, unsigned v) {
  char buf[12];
  std::snprintf(buf, sizeof buf, fmt, v);
  o += buf;
}
}  // namespace

std::string escape_control(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      append_hex(o, "\\x%02x", c);
      ++i;
    } else if (n == 1 && (c < 0x20 || c == 0x7f)) {
      switch (c) {
        case '\n': o += "\\n"; break;
        case '\t': o += "\\t"; break;
        case '\r': o += "\\r"; break;
        case 0x1b: o += "\\e"; break;
        default: append_hex(o, "\\x%02x", c);
      }
      ++i;
    } else if (n == 2 && c == 0xc2 && static_cast<unsigned char>(s[i + 1]) < 0xa0) {  // C1: U+0080..U+009F
      append_hex(o, "\\u%04x", static_cast<unsigned char>(s[i + 1]));
      i += 2;
    } else {
      o.append(s.substr(i, n));
      i += n;
    }
  }
  return o;
}

std::string json_quote(std::string_view s) {
  std::string o = "\"";
  o.reserve(s.size() + 2);
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      o += "\xef\xbf\xbd";  // U+FFFD REPLACEMENT CHARACTER, one per invalid byte
      ++i;
      continue;
    }
    if (n > 1) {
      o.append(s.substr(i, n));
      i += n;
      continue;
    }
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\r': o += "\\r"; break;
      case '\t': o += "\\t"; break;
      default:
        if (c < 0x20) append_hex(o, "\\u%04x", c);
        else o += char(c);
    }
    ++i;
  }
  return o + "\"";
}

}  // namespace edgellm
