#include "template/json.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "base/error.h"
#include "base/json.h"
#include "template/utf8.h"

namespace edgellm::tmpl {

Json Json::boolean(bool b) {
  Json j;
  j.type_ = Type::Bool;
  j.bool_ = b;
  return j;
}
Json Json::number(double d) {
  Json j;
  j.type_ = Type::Number;
  j.num_ = d;
  return j;
}
Json Json::string(std::string s) {
  Json j;
  j.type_ = Type::String;
  j.str_ = std::move(s);
  return j;
}
Json Json::array(std::vector<Json> items) {
  Json j;
  j.type_ = Type::Array;
  j.arr_ = std::move(items);
  return j;
}
Json Json::object(std::vector<std::pair<std::string, Json>> entries) {
  Json j;
  j.type_ = Type::Object;
  for (auto& [k, v] : entries) j.set(std::move(k), std::move(v));
  return j;
}

namespace {
constexpr size_t kIndexFrom = 16;  // keys; see Json::index_
}  // namespace

size_t Json::position(std::string_view key) const {
  if (!index_.empty()) {
    const auto it = index_.find(key);
    return it == index_.end() ? npos : it->second;
  }
  for (size_t i = 0; i < obj_.size(); ++i)
    if (obj_[i].first == key) return i;
  return npos;
}

const Json* Json::find(std::string_view key) const {
  const size_t i = position(key);
  return i == npos ? nullptr : &obj_[i].second;
}

void Json::set(std::string key, Json v) {
  if (const size_t i = position(key); i != npos) {
    obj_[i].second = std::move(v);
    return;
  }
  obj_.emplace_back(std::move(key), std::move(v));
  if (index_.empty() && obj_.size() <= kIndexFrom) return;
  if (index_.empty())
    for (size_t i = 0; i < obj_.size(); ++i) index_.emplace(obj_[i].first, i);
  else
    index_.emplace(obj_.back().first, obj_.size() - 1);
}

std::string Json::dump() const {
  switch (type_) {
    case Type::Null: return "null";
    case Type::Bool: return bool_ ? "true" : "false";
    case Type::Number: return std::isfinite(num_) ? js_number_to_string(num_) : "null";
    case Type::String: return json_quote(str_);
    case Type::Array: {
      std::string o = "[";
      for (size_t i = 0; i < arr_.size(); ++i) {
        if (i) o += ',';
        o += arr_[i].dump();
      }
      return o + "]";
    }
    case Type::Object: {
      std::string o = "{";
      for (size_t i = 0; i < obj_.size(); ++i) {
        if (i) o += ',';
        o += json_quote(obj_[i].first);
        o += ':';
        o += obj_[i].second.dump();
      }
      return o + "}";
    }
  }
  return "null";
}

namespace {

class Parser {
 public:
  Parser(std::string_view s, std::string_view source, int max_depth)
      : s_(s), source_(source), max_depth_(max_depth) {}

  Json parse_document(size_t max_bytes) {
    if (s_.size() > max_bytes)
      fail(source_, ": the JSON text is ", s_.size(), " bytes, more than the limit of ", max_bytes, " bytes");
    const size_t bad = utf8_invalid_at(s_);
    if (bad != std::string_view::npos) {
      pos_ = bad;
      error("invalid UTF-8");
    }
    skip_ws();
    Json v = parse_value(0);
    skip_ws();
    if (pos_ < s_.size()) error("unexpected text after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void error(std::string_view what) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < s_.size(); ++i) {
      if (s_[i] == '\n') ++line, col = 1;
      else if ((uint8_t(s_[i]) & 0xC0) != 0x80) ++col;
    }
    fail(source_, ": line ", line, ", column ", col, ": ", what);
  }
  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  bool consume(std::string_view lit) {
    if (s_.substr(pos_, lit.size()) != lit) return false;
    pos_ += lit.size();
    return true;
  }

  // `depth`: the arrays and objects around the value.
  Json parse_value(int depth) {
    if (pos_ >= s_.size()) error("unexpected end of input, expected a value");
    const char c = s_[pos_];
    if ((c == '{' || c == '[') && depth >= max_depth_)
      error("arrays and objects nested more than " + std::to_string(max_depth_) + " levels deep");
    if (c == '{') return parse_object(depth);
    if (c == '[') return parse_array(depth);
    if (c == '"') return Json::string(parse_string());
    if (c == '-' || (c >= '0' && c <= '9')) return parse_number();
    if (consume("true")) return Json::boolean(true);
    if (consume("false")) return Json::boolean(false);
    if (consume("null")) return Json::null();
    error(std::string("unexpected character '") + c + "', expected a value");
  }

  Json parse_object(int depth) {
    ++pos_;  // {
    Json obj = Json::object();
    skip_ws();
    if (consume("}")) return obj;
    while (true) {
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_] != '"') error("expected a string key");
      std::string key = parse_string();
      skip_ws();
      if (!consume(":")) error("expected ':' after an object key");
      skip_ws();
      Json v = parse_value(depth + 1);
      obj.set(std::move(key), std::move(v));
      skip_ws();
      if (consume("}")) return obj;
      if (!consume(",")) error("expected ',' or '}' in an object");
    }
  }

  Json parse_array(int depth) {
    ++pos_;  // [
    Json arr = Json::array();
    skip_ws();
    if (consume("]")) return arr;
    while (true) {
      skip_ws();
      arr.push_back(parse_value(depth + 1));
      skip_ws();
      if (consume("]")) return arr;
      if (!consume(",")) error("expected ',' or ']' in an array");
    }
  }

  uint32_t hex4() {
    if (pos_ + 4 > s_.size()) error("truncated \\u escape");
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = s_[pos_++];
      v <<= 4;
      if (h >= '0' && h <= '9') v |= uint32_t(h - '0');
      else if (h >= 'a' && h <= 'f') v |= uint32_t(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') v |= uint32_t(h - 'A' + 10);
      else error("invalid \\u escape");
    }
    return v;
  }

  std::string parse_string() {
    ++pos_;  // "
    std::string out;
    while (true) {
      if (pos_ >= s_.size()) error("unterminated string");
      const char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (uint8_t(c) < 0x20) error("control character in a string (escape it)");
      if (c != '\\') {
        out += c;
        ++pos_;
        continue;
      }
      if (++pos_ >= s_.size()) error("unterminated string");
      const char e = s_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xD800 && cp <= 0xDBFF && s_.substr(pos_, 2) == "\\u") {
            const size_t save = pos_;
            pos_ += 2;
            const uint32_t lo = hex4();
            if (lo >= 0xDC00 && lo <= 0xDFFF) cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            else pos_ = save;  // a lone high surrogate; the next escape stands alone
          }
          utf8_append(out, cp);  // lone surrogates become U+FFFD, as when printed
          break;
        }
        default: --pos_; error(std::string("invalid escape '\\") + e + "'");
      }
    }
  }

  Json parse_number() {
    const size_t start = pos_;
    const auto digits = [&] {
      const size_t d = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      return pos_ - d;
    };
    if (s_[pos_] == '-') ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '0') ++pos_;
    else if (digits() == 0) error("invalid number");
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      if (digits() == 0) error("invalid number (digits expected after '.')");
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (digits() == 0) error("invalid number (digits expected in the exponent)");
    }
    const std::string text(s_.substr(start, pos_ - start));
    return Json::number(std::strtod(text.c_str(), nullptr));
  }

  std::string_view s_, source_;
  int max_depth_;
  size_t pos_ = 0;
};

}  // namespace

Json Json::parse(std::string_view text, std::string_view source, int max_depth, size_t max_bytes) {
  return Parser(text, source, max_depth).parse_document(max_bytes);
}

std::string js_number_to_string(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  if (v == 0) return "0";
  std::string sign;
  if (v < 0) sign = "-", v = -v;
  // Shortest round-trip digits, as ECMAScript's Number::toString requires.
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  const std::string sci(buf, res.ptr);
  const size_t e = sci.find('e');
  std::string digits;
  for (size_t i = 0; i < e; ++i)
    if (sci[i] != '.') digits += sci[i];
  const int k = int(digits.size());
  const int n = std::atoi(sci.c_str() + e + 1) + 1;  // value = 0.digits * 10^n
  std::string out;
  if (k <= n && n <= 21) {
    out = digits + std::string(size_t(n - k), '0');
  } else if (0 < n && n <= 21) {
    out = digits.substr(0, size_t(n)) + "." + digits.substr(size_t(n));
  } else if (-6 < n && n <= 0) {
    out = "0." + std::string(size_t(-n), '0') + digits;
  } else {
    out = digits.substr(0, 1);
    if (k > 1) out += "." + digits.substr(1);
    out += (n - 1 >= 0 ? "e+" : "e-") + std::to_string(std::abs(n - 1));
  }
  return sign + out;
}

}  // namespace edgellm::tmpl
