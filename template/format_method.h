// Python's str.format() for templates ('<tok{}>'.format(x), as in Tencent
// Hy3): what jinja2 runs when a template calls .format on a string.
#pragma once
#include <string>
#include <vector>

#include "template/value.h"

namespace edgellm::tmpl {

// Replaces the fields of `fmt` ({}, {0}, {name}, {name.attr}/{0[key]} not
// supported) with python_str() of the arguments; `{{` and `}}` are literal
// braces. Format specs: none, `s`, `d`, `f`/`.Nf`, a width with `<`/`>`/`^`
// alignment. `args` are the positional arguments, then one KwArgs value if
// there were keyword ones. Throws a RenderError for anything else, as Python
// would (a missing argument, an unmatched brace, a spec it does not know).
std::string python_format(const std::string& fmt, const std::vector<Value>& args);

}  // namespace edgellm::tmpl
