// Python's str() and repr() of template values (see python_str.h).
#include "template/python_str.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "template/utf8.h"

namespace edgellm::tmpl {

namespace {

// Fails before a string grows past the render's limit (a repr can be far
// longer than what it prints, e.g. a list of empty strings).
void check_size(const std::string& out) {
  if (out.size() > string_limit()) throw_render_error("string too long");
}

// The characters Python's repr() escapes: controls, and the non-printable
// code points a chat turn may hold (C1, NBSP, line/paragraph separators).
bool escaped_in_repr(uint32_t cp) {
  return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0xa0) || cp == 0xad || cp == 0x2028 || cp == 0x2029;
}

std::string repr_string(const std::string& s) {
  const bool has_single = s.find('\'') != std::string::npos, has_double = s.find('"') != std::string::npos;
  const char q = has_single && !has_double ? '"' : '\'';
  std::string out(1, q);
  for (size_t i = 0; i < s.size();) {
    size_t len;
    const uint32_t cp = utf8_decode(s, i, &len);
    if (cp == '\\' || cp == uint32_t(q)) {
      out += '\\';
      out += char(cp);
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (escaped_in_repr(cp)) {
      char buf[16];
      std::snprintf(buf, sizeof buf, cp < 0x100 ? "\\x%02x" : "\\u%04x", unsigned(cp));
      out += buf;
    } else {
      out.append(s, i, len);
    }
    i += len;
  }
  out += q;
  return out;
}

// Python's float repr: the shortest round-trip digits, "1.0" for integral
// values, exponent form from 1e16 on (and below 1e-4).
std::string repr_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[400];
  int prec = 1;
  for (; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  const size_t e = s.find('e');
  if (e != std::string::npos) {
    // C's "1e+16" and "1e-05" are Python's too, but Python writes the
    // exponents -4..15 positionally (1e15 is 1000000000000000.0).
    const int exp = std::atoi(s.c_str() + e + 1);
    if (exp < -4 || exp >= 16) return s;
    std::snprintf(buf, sizeof buf, "%.*f", std::max(0, prec - 1 - exp), v);
    s = buf;
  }
  if (s.find('.') == std::string::npos) s += ".0";
  return s;
}

std::string repr(const Value& v, int depth) {
  switch (v.t) {
    case VT::Undefined: return "";
    case VT::Null: return "None";
    case VT::Bool: return v.b ? "True" : "False";
    case VT::Int: {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.0f", v.n);
      return buf;
    }
    case VT::Float: return repr_float(v.n);
    case VT::String: return repr_string(v.str());
    case VT::Array: case VT::Tuple: {
      const bool tuple = v.t == VT::Tuple;
      const auto& items = v.arr()->items;
      std::string out(1, tuple ? '(' : '[');
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += ", ";
        out += repr(items[i], depth + 1);
        check_size(out);
      }
      if (tuple && items.size() == 1) out += ',';
      out += tuple ? ')' : ']';
      return out;
    }
    case VT::Object: case VT::KwArgs: case VT::Namespace: {
      std::string out = v.t == VT::Namespace ? "<Namespace {" : "{";
      bool first = true;
      for (const auto& [k, x] : v.obj()->entries) {
        if (!first) out += ", ";
        first = false;
        out += repr_string(k) + ": " + repr(x, depth + 1);
        check_size(out);
      }
      out += v.t == VT::Namespace ? "}>" : "}";
      return out;
    }
    case VT::Function: return "<function " + v.fn()->name + ">";
  }
  return "";
}

}  // namespace

std::string python_repr(const Value& v) { return repr(v, 0); }

std::string html_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string python_str(const Value& v) { return v.is_string() ? v.str() : repr(v, 0); }

}  // namespace edgellm::tmpl
