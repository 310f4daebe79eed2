// Python's str.format() (see format_method.h).
#include "template/format_method.h"

#include <cmath>
#include <cstdio>
#include <string_view>

#include "template/python_str.h"
#include "template/utf8.h"

namespace edgellm::tmpl {

namespace {

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// Applies a format spec: [[fill]align][width][.precision][type].
std::string apply_spec(const Value& v, std::string_view spec) {
  if (spec.empty()) return python_str(v);
  size_t i = 0;
  char fill = ' ', align = 0;
  if (spec.size() >= 2 && (spec[1] == '<' || spec[1] == '>' || spec[1] == '^')) {
    fill = spec[0];
    align = spec[1];
    i = 2;
  } else if (spec[0] == '<' || spec[0] == '>' || spec[0] == '^') {
    align = spec[0];
    i = 1;
  }
  size_t width = 0;
  while (i < spec.size() && spec[i] >= '0' && spec[i] <= '9') width = width * 10 + size_t(spec[i++] - '0');
  int precision = -1;
  if (i < spec.size() && spec[i] == '.') {
    precision = 0;
    ++i;
    while (i < spec.size() && spec[i] >= '0' && spec[i] <= '9') precision = precision * 10 + (spec[i++] - '0');
  }
  const char type = i < spec.size() ? spec[i++] : 0;
  if (i != spec.size() || width > 4096 || precision > 100)
    throw_render_error("str.format: unsupported format spec '" + std::string(spec) + "'");
  std::string text;
  if (type == 'd') {
    if (v.t != VT::Int) throw_render_error("str.format: format code 'd' needs an integer");
    text = python_str(v);
  } else if (type == 'f') {
    if (!v.is_number()) throw_render_error("str.format: format code 'f' needs a number");
    char buf[512];
    std::snprintf(buf, sizeof buf, "%.*f", precision < 0 ? 6 : precision, v.n);
    text = buf;
  } else if (type == 0 || type == 's') {
    if (type == 's' && !v.is_string()) throw_render_error("str.format: format code 's' needs a string");
    text = python_str(v);
    if (precision >= 0 && v.is_string()) {  // the first `precision` code points
      size_t at = 0, len;
      for (int k = 0; k < precision && at < text.size(); ++k) {
        utf8_decode(text, at, &len);
        at += len;
      }
      text.resize(at);
    }
  } else {
    throw_render_error(std::string("str.format: unsupported format code '") + type + "'");
  }
  const size_t len = code_point_count(text);
  if (len >= width) return text;
  // Strings align left by default, numbers right.
  if (!align) align = v.is_number() ? '>' : '<';
  const size_t pad = width - len, left = align == '>' ? pad : align == '^' ? pad / 2 : 0;
  return std::string(left, fill) + text + std::string(pad - left, fill);
}

}  // namespace

std::string python_format(const std::string& fmt, const std::vector<Value>& args) {
  const Object* kwargs = !args.empty() && args.back().t == VT::KwArgs ? args.back().obj() : nullptr;
  const size_t positional = args.size() - (kwargs ? 1 : 0);
  std::string out;
  size_t next_auto = 0;
  bool used_auto = false, used_manual = false;
  for (size_t i = 0; i < fmt.size(); ++i) {
    const char c = fmt[i];
    if (c == '}') {
      if (i + 1 < fmt.size() && fmt[i + 1] == '}') {
        out += '}';
        ++i;
        continue;
      }
      throw_render_error("str.format: Single '}' encountered in format string");
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (i + 1 < fmt.size() && fmt[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    const size_t close = fmt.find('}', i + 1);
    if (close == std::string::npos) throw_render_error("str.format: Single '{' encountered in format string");
    const std::string_view field(fmt.data() + i + 1, close - i - 1);
    const size_t colon = field.find(':');
    std::string_view name = field.substr(0, colon);
    const std::string_view spec = colon == std::string_view::npos ? std::string_view() : field.substr(colon + 1);
    if (name.find_first_of(".[!{") != std::string_view::npos)
      throw_render_error("str.format: unsupported field '{" + std::string(field) + "}'");
    const Value* v = nullptr;
    if (name.empty() || all_digits(name)) {
      size_t k;
      if (name.empty()) {
        used_auto = true;
        k = next_auto++;
      } else {
        used_manual = true;
        k = size_t(std::stoul(std::string(name.substr(0, 9))));
      }
      if (used_auto && used_manual)
        throw_render_error("str.format: cannot switch between automatic and manual field numbering");
      if (k >= positional) throw_render_error("str.format: Replacement index " + std::to_string(k) + " out of range");
      v = &args[k];
    } else {
      v = kwargs ? kwargs->get(name) : nullptr;
      if (!v) throw_render_error("str.format: no argument named '" + std::string(name) + "'");
    }
    out += apply_spec(*v, spec);
    if (out.size() > string_limit()) throw_render_error("string too long");
    i = close;
  }
  return out;
}

}  // namespace edgellm::tmpl
