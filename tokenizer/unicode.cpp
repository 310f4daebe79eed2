// Unicode helpers (see unicode.h).
#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/unicode.h"

#include <pcre2.h>

#include <algorithm>
#include <atomic>
#include <memory>

namespace edgellm::unicode {
namespace {

struct NfdRange {
  uint32_t first, last, nfd;
};
struct LowerRun {  // first + k * stride (<= last) maps to itself + delta
  uint32_t first, last, stride;
  int32_t delta;
};
#include "tokenizer/unicode_tables.inc"

constexpr uint32_t kReplacement = 0xFFFD;

}  // namespace

uint32_t decode(std::string_view s, size_t off, size_t* len) {
  auto cont = [&](size_t i) { return off + i < s.size() && (uint8_t(s[off + i]) & 0xC0) == 0x80; };
  auto bits = [&](size_t i) { return uint32_t(uint8_t(s[off + i]) & 0x3F); };
  const uint8_t c = uint8_t(s[off]);
  *len = 1;
  if (c < 0x80) return c;
  if (!(c & 0x40)) return kReplacement;  // a continuation byte cannot start a character
  if (!(c & 0x20)) {
    if (!cont(1)) return kReplacement;
    *len = 2;
    return (uint32_t(c & 0x1F) << 6) | bits(1);
  }
  if (!(c & 0x10)) {
    if (!cont(1) || !cont(2)) return kReplacement;
    *len = 3;
    return (uint32_t(c & 0x0F) << 12) | (bits(1) << 6) | bits(2);
  }
  if (!(c & 0x08)) {
    if (!cont(1) || !cont(2) || !cont(3)) return kReplacement;
    *len = 4;
    uint32_t cp = (uint32_t(c & 0x07) << 18) | (bits(1) << 12) | (bits(2) << 6) | bits(3);
    return cp > 0x10FFFF ? kReplacement : cp;
  }
  return kReplacement;  // 0xF8..0xFF
}

void append_utf8(std::string& out, uint32_t cp) {
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

std::string canonical_utf8(std::string_view text, std::string* subject) {
  std::string out;
  out.reserve(text.size());
  bool surrogates = false;
  for (size_t off = 0; off < text.size();) {
    const uint8_t c = uint8_t(text[off]);
    if (c < 0x80) {  // fast path: ASCII runs
      size_t end = off + 1;
      while (end < text.size() && uint8_t(text[end]) < 0x80) end++;
      out.append(text.substr(off, end - off));
      off = end;
      continue;
    }
    size_t len;
    uint32_t cp = decode(text, off, &len);
    if (len > 1 && cp != kReplacement && cp >= 0x80 &&
        !(len == 2 && cp < 0x80) && !(len == 3 && cp < 0x800) && !(len == 4 && cp < 0x10000)) {
      out.append(text.substr(off, len));  // already canonical
    } else {
      append_utf8(out, cp);
    }
    surrogates |= cp >= 0xD800 && cp <= 0xDFFF;
    off += len;
  }
  if (subject) {
    *subject = out;
    if (surrogates) {
      for (size_t i = 0; i + 2 < subject->size(); i++) {
        if (uint8_t((*subject)[i]) == 0xED && uint8_t((*subject)[i + 1]) >= 0xA0) {
          (*subject)[i] = char(0xEE);
          (*subject)[i + 1] = char(0x80);
          (*subject)[i + 2] = char(0x80);
          i += 2;
        }
      }
    }
  }
  return out;
}

bool is_canonical(std::string_view text) {
  for (size_t off = 0; off < text.size();) {
    if (uint8_t(text[off]) < 0x80) {
      off++;
      continue;
    }
    size_t len;
    uint32_t cp = decode(text, off, &len);
    if (len == 1 || (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        (cp >= 0xD800 && cp <= 0xDFFF) || (len == 4 && cp == 0xFFFD))
      return false;
    off += len;
  }
  return true;
}

bool is_whitespace(uint32_t cp) {
  if (cp <= 0x20) return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D);
  if (cp < 0x85) return false;
  switch (cp) {
    case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F:
    case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

const char* const kWhitespaceClass =
    "\\t-\\r\\x20\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}";

uint32_t nfd_first(uint32_t cp) {
  if (cp < 0xC0) return cp;
  const NfdRange* end = kNfdRanges + std::size(kNfdRanges);
  const NfdRange* r = std::upper_bound(kNfdRanges, end, cp,
                                       [](uint32_t c, const NfdRange& x) { return c < x.first; });
  if (r == kNfdRanges) return cp;
  --r;
  return cp <= r->last ? r->nfd : cp;
}

uint32_t to_lower(uint32_t cp) {
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
  const LowerRun* end = kLowerRuns + std::size(kLowerRuns);
  const LowerRun* r = std::upper_bound(kLowerRuns, end, cp,
                                       [](uint32_t c, const LowerRun& x) { return c < x.first; });
  if (r == kLowerRuns) return cp;
  --r;
  if (cp > r->last || (cp - r->first) % r->stride != 0) return cp;
  return uint32_t(int64_t(cp) + r->delta);
}

namespace {

// One anchored match of a single code point against four alternatives; the
// highest group that took part says which.
struct CategoryMatcher {
  pcre2_code* code = nullptr;
  CategoryMatcher() {
    static const char kPattern[] = "([\\p{Cc}\\p{Cf}\\p{Co}\\p{Cs}])|(\\p{M})|(\\p{P})|(\\p{S})";
    int err;
    PCRE2_SIZE at;
    code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(kPattern), PCRE2_ZERO_TERMINATED,
                         PCRE2_UTF | PCRE2_UCP | PCRE2_ANCHORED, &err, &at, nullptr);
  }
  ~CategoryMatcher() { pcre2_code_free(code); }
  uint8_t classify(uint32_t cp) const {
    if (cp >= 0xD800 && cp <= 0xDFFF) return kControl;  // PCRE2 cannot see surrogates in UTF mode
    if (!code) return 0;
    std::string s;
    append_utf8(s, cp);
    std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> md(
        pcre2_match_data_create_from_pattern(code, nullptr), pcre2_match_data_free);
    int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), 0, 0, md.get(), nullptr);
    switch (rc) {
      case 2: return kControl;
      case 3: return kMark;
      case 4: return kPunctuation;
      case 5: return kSymbol;
      default: return 0;
    }
  }
};

// Results cached per code point (0: not yet known; else 0x80 | flags).
std::atomic<uint8_t> g_categories[0x110000];

}  // namespace

uint8_t categories(uint32_t cp) {
  if (cp >= 0x110000) return 0;
  uint8_t v = g_categories[cp].load(std::memory_order_relaxed);
  if (v) return v & 0x7F;
  static const CategoryMatcher matcher;
  uint8_t f = matcher.classify(cp);
  g_categories[cp].store(uint8_t(0x80 | f), std::memory_order_relaxed);
  return f;
}

}  // namespace edgellm::unicode
