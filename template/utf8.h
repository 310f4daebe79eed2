// UTF-8 helpers for the template engine. Strings are UTF-8 internally; where
// the reference renderer (@huggingface/jinja, i.e. JavaScript) measures or
// indexes in UTF-16 code units or code points, these give the same answers.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace edgellm::tmpl {

// Decodes the code point at s[i] (which must be < s.size()), setting `len` to
// its byte length. Invalid sequences decode as U+FFFD with length 1.
uint32_t utf8_decode(std::string_view s, size_t i, size_t* len);
void utf8_append(std::string& out, uint32_t cp);  // surrogates become U+FFFD
// Offset of the first invalid byte, or npos if `s` is valid UTF-8.
size_t utf8_invalid_at(std::string_view s);

// JavaScript's /\s/ (and String.prototype.trim's) set.
bool js_is_space(uint32_t cp);
// Byte length of the whitespace code point at s[i], 0 if none there.
size_t js_space_len(std::string_view s, size_t i);
std::string_view js_trim_start(std::string_view s);
std::string_view js_trim_end(std::string_view s);
inline std::string_view js_trim(std::string_view s) { return js_trim_end(js_trim_start(s)); }

// Lengths as JavaScript sees them.
size_t utf16_length(std::string_view s);
size_t code_point_count(std::string_view s);
// The code points of s, each as its own UTF-8 string (JS Array.from(str)).
std::vector<std::string> split_code_points(std::string_view s);
// Whether s has exactly `n` code points, looking at no more than it needs.
bool has_code_points(std::string_view s, size_t n);
// The byte offset of the first occurrence of `needle` in `hay` at or after
// `from`, or npos. Linear time whatever the input (std::string::find takes
// O(size * needle size) at worst).
size_t find_bytes(std::string_view hay, std::string_view needle, size_t from = 0);
// str.at(i) in UTF-16 units: the character, U+FFFD for half of a surrogate
// pair, or false if out of range. `index` follows JS ToIntegerOrInfinity.
bool utf16_at(std::string_view s, double index, std::string* out);

// Unicode case mapping for the scripts chat templates meet (Latin, Greek,
// Cyrillic, ...); other code points are unchanged.
std::string to_upper(std::string_view s);
std::string to_lower(std::string_view s);

}  // namespace edgellm::tmpl
