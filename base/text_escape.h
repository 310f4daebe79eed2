// Text from a file or a user (metadata strings, architecture names, template
// error messages) must not steer the terminal or break a one-line message:
// these helpers make any bytes printable and single-line.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace edgellm {

// Length of the well-formed UTF-8 sequence starting at s[i] (1-4), or 0 if the
// bytes there are not one (overlong forms, surrogates and values past
// U+10FFFF are not well-formed).
size_t utf8_sequence_length(std::string_view s, size_t i);

// For a terminal line: control characters (C0, DEL and the C1 range that some
// terminals obey as escape sequences) become \n, \t, \r, \e or \xHH / \u00HH,
// a backslash stays itself, and bytes that are not UTF-8 become \xHH.
// Printable text, UTF-8 included, passes through unchanged.
std::string escape_control(std::string_view s);

}  // namespace edgellm
