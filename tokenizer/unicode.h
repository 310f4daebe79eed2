// Unicode helpers shared by the BPE and WordPiece tokenizers.
//
// Everything here follows llama.cpp's own conventions rather than a textbook,
// because token ids must match it exactly:
//  - UTF-8 is decoded the way unicode_cpt_from_utf8 does it: an invalid or
//    truncated sequence becomes U+FFFD and costs one byte; overlong forms and
//    surrogates are accepted as the code point they spell.
//  - "Whitespace" is the Unicode White_Space property (25 code points), the
//    set llama.cpp uses for \s.
// Categories come from PCRE2's Unicode tables; the two mappings PCRE2 lacks
// (NFD first code point, simple lowercase) are generated tables
// (unicode_tables.inc, from gen_unicode_tables.py).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace edgellm::unicode {

// Decodes the code point at s[off] as llama.cpp does; *len gets the bytes it
// used (1 for an invalid byte, which decodes to U+FFFD). Code points above
// U+10FFFF, which llama.cpp cannot re-encode (it throws), also give U+FFFD.
uint32_t decode(std::string_view s, size_t off, size_t* len);

// Appends the UTF-8 encoding of cp (cp <= 0x10FFFF; surrogates are encoded
// as their three bytes, as llama.cpp does).
void append_utf8(std::string& out, uint32_t cp);

// The text as llama.cpp's pre-tokenizer sees it: decoded and re-encoded, so
// invalid bytes become U+FFFD and overlong forms their shortest encoding.
// *subject, if given, gets the same text with surrogates (which PCRE2 rejects)
// replaced by U+E000 (same length, also "other"), ready for PCRE2 in UTF mode.
std::string canonical_utf8(std::string_view text, std::string* subject = nullptr);

// True if canonical_utf8(text) == text and text has no surrogates, i.e. text
// can go to PCRE2 as it is (the common case: valid UTF-8).
bool is_canonical(std::string_view text);

bool is_whitespace(uint32_t cp);

// Body of a PCRE2 character class matching exactly the whitespace set above.
extern const char* const kWhitespaceClass;

// First code point of cp's canonical decomposition (cp itself if none).
uint32_t nfd_first(uint32_t cp);

// Simple lowercase mapping (cp itself if none).
uint32_t to_lower(uint32_t cp);

// General-category facts the WordPiece normalizer needs, from PCRE2.
enum CategoryFlags : uint8_t {
  kControl = 1,      // Cc Cf Co Cs (llama.cpp's "control"; unassigned is not)
  kMark = 2,         // M
  kPunctuation = 4,  // P
  kSymbol = 8,       // S
};
uint8_t categories(uint32_t cp);

}  // namespace edgellm::unicode
