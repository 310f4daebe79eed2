#include "template/utf8.h"

#include <string.h>

#include <cmath>

namespace edgellm::tmpl {

uint32_t utf8_decode(std::string_view s, size_t i, size_t* len) {
  const auto b = [&](size_t k) { return uint8_t(s[i + k]); };
  const uint8_t c = b(0);
  *len = 1;
  if (c < 0x80) return c;
  size_t n;
  uint32_t cp, min;
  if ((c & 0xE0) == 0xC0) n = 2, cp = c & 0x1F, min = 0x80;
  else if ((c & 0xF0) == 0xE0) n = 3, cp = c & 0x0F, min = 0x800;
  else if ((c & 0xF8) == 0xF0) n = 4, cp = c & 0x07, min = 0x10000;
  else return 0xFFFD;
  if (i + n > s.size()) return 0xFFFD;
  for (size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0xFFFD;
    cp = (cp << 6) | (b(k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0xFFFD;
  *len = n;
  return cp;
}

void utf8_append(std::string& out, uint32_t cp) {
  if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) cp = 0xFFFD;
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xC0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += char(0xE0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  } else {
    out += char(0xF0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3F));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  }
}

size_t utf8_invalid_at(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    size_t len;
    const uint32_t cp = utf8_decode(s, i, &len);
    // A real U+FFFD is 3 bytes; a decoding failure reports length 1.
    if (cp == 0xFFFD && len == 1) return i;
    i += len;
  }
  return std::string_view::npos;
}

bool js_is_space(uint32_t c) {
  if (c <= 32) return c == 32 || (c >= 9 && c <= 13);
  return c > 127 && (c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
                     c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000 || c == 0xFEFF);
}

size_t js_space_len(std::string_view s, size_t i) {
  if (i >= s.size()) return 0;
  const uint8_t c = uint8_t(s[i]);
  if (c < 0x80) return js_is_space(c) ? 1 : 0;
  size_t len;
  return js_is_space(utf8_decode(s, i, &len)) ? len : 0;
}

std::string_view js_trim_start(std::string_view s) {
  size_t i = 0;
  while (size_t n = js_space_len(s, i)) i += n;
  return s.substr(i);
}

std::string_view js_trim_end(std::string_view s) {
  size_t end = s.size();
  while (end > 0) {
    // Step back to the start of the last code point.
    size_t start = end - 1;
    while (start > 0 && (uint8_t(s[start]) & 0xC0) == 0x80 && end - start < 4) --start;
    if (js_space_len(s.substr(0, end), start) != end - start) break;
    end = start;
  }
  return s.substr(0, end);
}

size_t utf16_length(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size();) {
    size_t len;
    n += utf8_decode(s, i, &len) >= 0x10000 ? 2 : 1;
    i += len;
  }
  return n;
}

size_t code_point_count(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size();) {
    size_t len;
    utf8_decode(s, i, &len);
    i += len;
    ++n;
  }
  return n;
}

std::vector<std::string> split_code_points(std::string_view s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    size_t len;
    utf8_decode(s, i, &len);
    out.emplace_back(s.substr(i, len));
    i += len;
  }
  return out;
}

bool has_code_points(std::string_view s, size_t n) {
  size_t count = 0;
  for (size_t i = 0; i < s.size() && count <= n; ++count) {
    size_t len;
    utf8_decode(s, i, &len);
    i += len;
  }
  return count == n;
}

size_t find_bytes(std::string_view hay, std::string_view needle, size_t from) {
  if (from > hay.size()) return std::string_view::npos;
  if (needle.empty()) return from;
  // memmem is linear in the haystack in glibc and the BSDs (two-way search).
  const void* hit = memmem(hay.data() + from, hay.size() - from, needle.data(), needle.size());
  return hit ? size_t(static_cast<const char*>(hit) - hay.data()) : std::string_view::npos;
}

bool utf16_at(std::string_view s, double index, std::string* out) {
  double k = std::isnan(index) ? 0 : std::trunc(index);
  const double n = double(utf16_length(s));
  if (k < 0) k += n;
  if (!(k >= 0 && k < n)) return false;
  const size_t want = size_t(k);
  size_t unit = 0;
  for (size_t i = 0; i < s.size();) {
    size_t len;
    const uint32_t cp = utf8_decode(s, i, &len);
    const size_t units = cp >= 0x10000 ? 2 : 1;
    if (want < unit + units) {
      if (units == 2) *out = "\xEF\xBF\xBD";  // half of a surrogate pair
      else *out = std::string(s.substr(i, len));
      return true;
    }
    unit += units;
    i += len;
  }
  return false;
}

namespace {

// Simple one-to-one mappings: ranges where upper and lower differ by a fixed
// offset, and ranges of alternating (upper, lower) pairs.
struct Offset { uint32_t lo, hi; int32_t delta; };  // lower -> upper = cp + delta (for lo..hi lower)
const Offset kLowerToUpper[] = {
    {0x61, 0x7A, -32},     {0xE0, 0xF6, -32},     {0xF8, 0xFE, -32},     {0x3B1, 0x3C1, -32},
    {0x3C3, 0x3CB, -32},   {0x3AD, 0x3AF, -37},   {0x3CD, 0x3CE, -63},   {0x430, 0x44F, -32},
    {0x450, 0x45F, -80},   {0x561, 0x586, -48},   {0xFF41, 0xFF5A, -32},
};
struct Pairs { uint32_t lo, hi; };  // even = upper, odd = lower when lo is even (or vice versa)
const Pairs kPairs[] = {
    {0x100, 0x12F}, {0x132, 0x137}, {0x139, 0x148}, {0x14A, 0x177}, {0x179, 0x17E},
    {0x1CD, 0x1DC}, {0x1DE, 0x1EF}, {0x1F4, 0x1F5}, {0x1F8, 0x21F}, {0x222, 0x233}, {0x246, 0x24F},
    {0x3D8, 0x3EF}, {0x460, 0x481}, {0x48A, 0x4BF}, {0x4C1, 0x4CE}, {0x4D0, 0x4FF}, {0x1E00, 0x1E95}, {0x1EA0, 0x1EFF},
};

uint32_t pair_map(uint32_t c, bool upper) {
  for (const Pairs& p : kPairs) {
    if (c < p.lo || c > p.hi) continue;
    const bool is_upper = ((c - p.lo) % 2) == 0;
    if (upper && !is_upper) return c - 1;
    if (!upper && is_upper && c + 1 <= p.hi) return c + 1;
    return c;
  }
  return c;
}

// DŽ Dž dž, LJ Lj lj, NJ Nj nj, DZ Dz dz: upper, title and lower forms.
bool digraph(uint32_t c, uint32_t* first) {
  for (uint32_t f : {0x1C4u, 0x1C7u, 0x1CAu, 0x1F1u})
    if (c >= f && c < f + 3) {
      *first = f;
      return true;
    }
  return false;
}

void append_upper(std::string& out, uint32_t c) {
  uint32_t f;
  if (digraph(c, &f)) return utf8_append(out, f);
  switch (c) {
    case 0xDF: out += "SS"; return;
    case 0xFF: c = 0x178; break;
    case 0xB5: c = 0x39C; break;
    case 0x131: c = 'I'; break;
    case 0x17F: c = 'S'; break;
    case 0x149: out += "\xCA\xBCN"; return;
    case 0x3C2: c = 0x3A3; break;
    case 0x3AC: c = 0x386; break;
    case 0x3CC: c = 0x38C; break;
    default: {
      for (const Offset& o : kLowerToUpper) {
        if (c >= o.lo && c <= o.hi) {
          c = uint32_t(int32_t(c) + o.delta);
          utf8_append(out, c);
          return;
        }
      }
      c = pair_map(c, true);
    }
  }
  utf8_append(out, c);
}

void append_lower(std::string& out, uint32_t c) {
  uint32_t f;
  if (digraph(c, &f)) return utf8_append(out, f + 2);
  switch (c) {
    case 0x178: c = 0xFF; break;
    case 0x130: out += "i\xCC\x87"; return;
    case 0x386: c = 0x3AC; break;
    case 0x38C: c = 0x3CC; break;
    default: {
      for (const Offset& o : kLowerToUpper) {
        const uint32_t ulo = uint32_t(int32_t(o.lo) + o.delta), uhi = uint32_t(int32_t(o.hi) + o.delta);
        if (c >= ulo && c <= uhi && c != 0xD7) {  // U+00D7 (x) sits inside the Latin-1 range
          c = uint32_t(int32_t(c) - o.delta);
          utf8_append(out, c);
          return;
        }
      }
      c = pair_map(c, false);
    }
  }
  utf8_append(out, c);
}

template <class F>
std::string map_case(std::string_view s, F f) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const uint8_t b = uint8_t(s[i]);
    if (b < 0x80) {
      f(out, b);
      ++i;
      continue;
    }
    size_t len;
    const uint32_t cp = utf8_decode(s, i, &len);
    if (cp == 0xFFFD && len == 1) out += s[i];  // keep invalid bytes as they are
    else f(out, cp);
    i += len;
  }
  return out;
}

}  // namespace

std::string to_upper(std::string_view s) {
  return map_case(s, [](std::string& o, uint32_t c) {
    if (c < 0x80) o += char(c >= 'a' && c <= 'z' ? c - 32 : c);
    else append_upper(o, c);
  });
}

std::string to_lower(std::string_view s) {
  return map_case(s, [](std::string& o, uint32_t c) {
    if (c < 0x80) o += char(c >= 'A' && c <= 'Z' ? c + 32 : c);
    else append_lower(o, c);
  });
}

}  // namespace edgellm::tmpl
