// Python's str() and repr() of template values, for the places where the
// templates' authors see Python's text in jinja2 (transformers): the `string`
// filter and str.format(). `{{ value }}` keeps the reference's printing.
#pragma once
#include <string>

#include "template/value.h"

namespace edgellm::tmpl {

// str(v): strings as they are, None/True/False, 1, 1.5, and containers as
// their repr ({'a': [1, 'x', None]}); undefined is "" (jinja2's Undefined).
std::string python_str(const Value& v);
// repr(v): strings quoted as Python quotes them ('it', "it's").
std::string python_repr(const Value& v);
// markupsafe.escape(s): & < > " ' as &amp; &lt; &gt; &#34; &#39;.
std::string html_escape(const std::string& s);

}  // namespace edgellm::tmpl
