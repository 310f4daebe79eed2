#include "template/lexer.h"

#include "base/error.h"
#include "template/utf8.h"

namespace edgellm::tmpl {

const char* tok_name(Tok t) {
  static const char* const kNames[] = {
      "text", "number", "string", "identifier", "'='", "'('", "')'", "'{%'", "'%}'", "'{{'", "'}}'", "'['",
      "']'", "'{'", "'}'", "','", "'.'", "':'", "'|'", "operator", "operator", "'**'", "comparison",
      "unary operator", "comment", "end of template"};
  return kNames[size_t(t)];
}

namespace {

// The preprocessed source, with the original line of every byte.
struct Source {
  std::string text;
  std::vector<int> line;
  void append(std::string_view s, const int* lines) {
    text.append(s);
    line.insert(line.end(), lines, lines + s.size());
  }
};

bool is_line_start(const std::string& s, size_t i) {
  if (i == 0) return true;
  const uint8_t c = uint8_t(s[i - 1]);
  if (c == '\n' || c == '\r') return true;
  // U+2028 / U+2029 (E2 80 A8 / E2 80 A9) also end a line for /^/m.
  return i >= 3 && uint8_t(s[i - 3]) == 0xE2 && uint8_t(s[i - 2]) == 0x80 && (c == 0xA8 || c == 0xA9);
}

Source preprocess(std::string_view src) {
  Source s;
  int line = 1;
  for (char c : src) {
    s.text += c;
    s.line.push_back(line);
    if (c == '\n') ++line;
  }
  if (!s.text.empty() && s.text.back() == '\n') s.text.pop_back(), s.line.pop_back();

  // lstrip_blocks: /^[ \t]*({[#%-])/gm -> "$1"
  Source a;
  for (size_t i = 0; i < s.text.size();) {
    if (is_line_start(s.text, i)) {
      size_t j = i;
      while (j < s.text.size() && (s.text[j] == ' ' || s.text[j] == '\t')) ++j;
      if (j > i && j + 1 < s.text.size() && s.text[j] == '{' &&
          (s.text[j + 1] == '#' || s.text[j + 1] == '%' || s.text[j + 1] == '-')) {
        i = j;  // drop the indentation
      }
    }
    a.append(std::string_view(s.text).substr(i, 1), &s.line[i]);
    ++i;
  }

  // trim_blocks: /([#%-]})\n/g -> "$1"
  Source b;
  for (size_t i = 0; i < a.text.size(); ++i) {
    const bool trimmed = a.text[i] == '\n' && i >= 2 && a.text[i - 1] == '}' &&
                         (a.text[i - 2] == '#' || a.text[i - 2] == '%' || a.text[i - 2] == '-');
    if (!trimmed) b.append(std::string_view(a.text).substr(i, 1), &a.line[i]);
  }

  // {% generation %} / {% endgeneration %} tags: /{%(-?)\s*(?:end)?generation\s*(-?)%}(\s*)/g
  Source out;
  const std::string& t = b.text;
  size_t last = 0;
  for (size_t i = t.find("{%"); i != std::string::npos; i = t.find("{%", i + 1)) {
    if (i < last) continue;
    size_t j = i + 2;
    const bool lstrip = j < t.size() && t[j] == '-';
    if (lstrip) ++j;
    while (size_t n = js_space_len(t, j)) j += n;
    if (t.compare(j, 3, "end") == 0 && t.compare(j + 3, 10, "generation") == 0) j += 3;
    if (t.compare(j, 10, "generation") != 0) continue;
    j += 10;
    while (size_t n = js_space_len(t, j)) j += n;
    bool rstrip = false;
    if (j < t.size() && t[j] == '-') rstrip = true, ++j;
    if (t.compare(j, 2, "%}") != 0) continue;
    j += 2;
    const size_t after_start = j;
    while (size_t n = js_space_len(t, j)) j += n;
    size_t end = i;
    while (lstrip && end > last) {
      size_t k = end - 1;
      while (k > last && (uint8_t(t[k]) & 0xC0) == 0x80) --k;
      if (js_space_len(t, k) != end - k) break;
      end = k;
    }
    out.append(std::string_view(t).substr(last, end - last), b.line.data() + last);
    if (!rstrip) out.append(std::string_view(t).substr(after_start, j - after_start), b.line.data() + after_start);
    last = j;
    i = j - 1;
  }
  out.append(std::string_view(t).substr(last), b.line.data() + last);
  return out;
}

class Lexer {
 public:
  Lexer(Source src, std::string_view name) : s_(std::move(src)), name_(name) {}

  std::vector<Token> run();

 private:
  [[noreturn]] void error(const std::string& what) const {
    const int line = s_.line.empty() ? 1 : s_.line[std::min(pos_, s_.line.size() - 1)];
    fail(name_, ", line ", line, ": syntax error: ", what);
  }
  int line_at(size_t i) const { return s_.line.empty() ? 1 : s_.line[std::min(i, s_.line.size() - 1)]; }
  char at(size_t i) const { return i < s_.text.size() ? s_.text[i] : '\0'; }
  void push(Tok type, std::string value, size_t at_pos) {
    tokens_.push_back(Token{type, std::move(value), line_at(at_pos)});
  }
  static bool is_word(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  }
  static bool is_digit(char c) { return c >= '0' && c <= '9'; }
  template <class Pred>
  std::string consume_while(Pred pred) {  // fails if the input ends while pred holds
    const size_t start = pos_;
    while (pos_ < s_.text.size() && pred(pos_)) {
      pos_ += step_;
      if (pos_ >= s_.text.size()) error("unexpected end of template");
    }
    return s_.text.substr(start, pos_ - start);
  }
  std::string consume_digits() {
    step_ = 1;
    return consume_while([&](size_t i) { return is_digit(s_.text[i]); });
  }
  void consume_space() {
    consume_while([&](size_t i) { return (step_ = js_space_len(s_.text, i)) > 0; });
  }
  void strip_trailing_space() {
    if (!tokens_.empty() && tokens_.back().type == Tok::Text) {
      std::string& v = tokens_.back().value;
      v.resize(js_trim_end(v).size());
      if (v.empty()) tokens_.pop_back();
    }
  }
  void skip_leading_space() {
    while (size_t n = js_space_len(s_.text, pos_)) pos_ += n;
  }
  std::string consume_string(char quote);
  // "1e3" would lex as the number 1 and the name e3, which a subscript or an
  // argument list then took as two items; jinja2 reads a float, the reference
  // renderer nothing. Refused, so it is never silently mis-read.
  void reject_exponent(size_t start) {
    const char e = at(pos_), sign = at(pos_ + 1);
    if (e != 'e' && e != 'E') return;
    size_t end = pos_ + 1 + (sign == '+' || sign == '-');
    if (!is_digit(at(end))) return;
    while (is_digit(at(end))) ++end;
    error("unsupported number '" + s_.text.substr(start, end - start) +
          "' (exponent notation is not supported; write the number out, e.g. 1000.0)");
  }

  Source s_;
  std::string_view name_;
  size_t pos_ = 0, step_ = 1;
  int curly_depth_ = 0;
  std::vector<Token> tokens_;
};

std::string Lexer::consume_string(char quote) {
  std::string out;
  while (true) {
    if (pos_ >= s_.text.size()) error("unterminated string literal");
    const char c = s_.text[pos_];
    if (c == quote) break;
    ++pos_;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (pos_ >= s_.text.size()) error("unterminated string literal");
    const char e = s_.text[pos_++];
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'v': out += '\v'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case 'x': case 'u': {
        const size_t n = e == 'x' ? 2 : 4;
        uint32_t v = 0;
        for (size_t k = 0; k < n; ++k) {
          const char h = at(pos_ + k);
          const int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
                      : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
          if (d < 0) error(std::string("invalid \\") + e + " escape in a string literal");
          v = v * 16 + uint32_t(d);
        }
        pos_ += n;
        // A \uD83D\uDE00 pair is one character; a lone surrogate prints as U+FFFD.
        if (v >= 0xD800 && v <= 0xDBFF && at(pos_) == '\\' && at(pos_ + 1) == 'u') {
          uint32_t lo = 0;
          bool ok = true;
          for (size_t k = 0; k < 4 && ok; ++k) {
            const char h = at(pos_ + 2 + k);
            const int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
                        : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
            ok = d >= 0;
            lo = lo * 16 + uint32_t(d < 0 ? 0 : d);
          }
          if (ok && lo >= 0xDC00 && lo <= 0xDFFF) {
            v = 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00);
            pos_ += 6;
          }
        }
        utf8_append(out, v);
        break;
      }
      default: error(std::string("unknown escape '\\") + e + "' in a string literal");
    }
  }
  return out;
}

std::vector<Token> Lexer::run() {
  // The mapping table, in the reference's order (longer operators first).
  static const std::pair<const char*, Tok> kTable[] = {
      {"{%", Tok::OpenStatement}, {"%}", Tok::CloseStatement}, {"{{", Tok::OpenExpression},
      {"}}", Tok::CloseExpression}, {"(", Tok::OpenParen}, {")", Tok::CloseParen},
      {"{", Tok::OpenCurlyBracket}, {"}", Tok::CloseCurlyBracket}, {"[", Tok::OpenSquareBracket},
      {"]", Tok::CloseSquareBracket}, {",", Tok::Comma}, {".", Tok::Dot}, {":", Tok::Colon}, {"|", Tok::Pipe},
      {"<=", Tok::ComparisonBinaryOperator}, {">=", Tok::ComparisonBinaryOperator},
      {"==", Tok::ComparisonBinaryOperator}, {"!=", Tok::ComparisonBinaryOperator},
      {"<", Tok::ComparisonBinaryOperator}, {">", Tok::ComparisonBinaryOperator},
      {"+", Tok::AdditiveBinaryOperator}, {"-", Tok::AdditiveBinaryOperator}, {"~", Tok::AdditiveBinaryOperator},
      {"**", Tok::ExponentiationBinaryOperator}, {"*", Tok::MultiplicativeBinaryOperator},
      {"//", Tok::MultiplicativeBinaryOperator}, {"/", Tok::MultiplicativeBinaryOperator},
      {"%", Tok::MultiplicativeBinaryOperator}, {"=", Tok::Equals},
  };
  const std::string& src = s_.text;
  const size_t n = src.size();
  while (pos_ < n) {
    const bool have_last = !tokens_.empty();
    const Tok last = have_last ? tokens_.back().type : Tok::End;
    if (!have_last || last == Tok::CloseStatement || last == Tok::CloseExpression || last == Tok::Comment) {
      size_t end = pos_;
      while (true) {
        end = src.find('{', end);
        if (end == std::string::npos) {
          end = n;
          break;
        }
        const char next = at(end + 1);
        if (next == '%' || next == '{' || next == '#') break;
        ++end;
      }
      if (end > pos_) {
        push(Tok::Text, src.substr(pos_, end - pos_), pos_);
        pos_ = end;
        continue;
      }
    }
    if (src[pos_] == '{') {
      const char next = at(pos_ + 1);
      if (next == '#') {
        const size_t open = pos_;
        pos_ += 2;
        const bool strip_before = at(pos_) == '-';
        if (strip_before) ++pos_;
        const size_t end = src.find("#}", pos_);
        if (end == std::string::npos) {
          pos_ = open;
          error("comment {# is never closed with #}");
        }
        std::string comment = src.substr(pos_, end - pos_);
        const bool strip_after = !comment.empty() && comment.back() == '-';
        if (strip_after) comment.pop_back();
        if (strip_before) strip_trailing_space();
        push(Tok::Comment, std::move(comment), open);
        pos_ = end + 2;
        if (strip_after) skip_leading_space();
        continue;
      }
      if (at(pos_ + 2) == '-' && (next == '%' || next == '{')) {
        strip_trailing_space();
        push(next == '%' ? Tok::OpenStatement : Tok::OpenExpression, next == '%' ? "{%" : "{{", pos_);
        if (next == '{') curly_depth_ = 0;
        pos_ += 3;
        continue;
      }
    }
    consume_space();
    const char c = src[pos_];
    if (c == '-' && at(pos_ + 2) == '}' && (at(pos_ + 1) == '%' || at(pos_ + 1) == '}')) {
      const bool stmt = at(pos_ + 1) == '%';
      push(stmt ? Tok::CloseStatement : Tok::CloseExpression, stmt ? "%}" : "}}", pos_);
      pos_ += 3;
      skip_leading_space();
      continue;
    }
    if (c == '-' || c == '+') {
      if (!have_last || last == Tok::Text) error(std::string("unexpected character '") + c + "'");
      if (last != Tok::Identifier && last != Tok::NumericLiteral && last != Tok::StringLiteral &&
          last != Tok::CloseParen && last != Tok::CloseSquareBracket) {
        const size_t start = pos_++;
        std::string num = consume_digits();
        if (!num.empty() && at(pos_) == '.' && is_digit(at(pos_ + 1))) {
          ++pos_;
          num += '.';
          num += consume_digits();
        }
        const Tok type = num.empty() ? Tok::UnaryOperator : Tok::NumericLiteral;
        if (!num.empty()) reject_exponent(start);
        num.insert(num.begin(), c);
        push(type, std::move(num), start);
        continue;
      }
    }
    bool matched = false;
    for (const auto& [seq, type] : kTable) {
      if (seq[0] != c) continue;
      if (type == Tok::CloseExpression && curly_depth_ > 0) continue;
      const std::string_view sv(seq);
      if (src.compare(pos_, sv.size(), sv) != 0) continue;
      push(type, std::string(sv), pos_);
      if (type == Tok::OpenExpression) curly_depth_ = 0;
      else if (type == Tok::OpenCurlyBracket) ++curly_depth_;
      else if (type == Tok::CloseCurlyBracket) --curly_depth_;
      pos_ += sv.size();
      matched = true;
      break;
    }
    if (matched) continue;
    if (c == '\'' || c == '"') {
      const size_t start = pos_++;
      std::string str = consume_string(c);
      push(Tok::StringLiteral, std::move(str), start);
      ++pos_;
      continue;
    }
    if (is_digit(c)) {
      const size_t start = pos_;
      std::string num = consume_digits();
      if (last != Tok::Dot && at(pos_) == '.' && is_digit(at(pos_ + 1))) {
        ++pos_;
        num += '.';
        num += consume_digits();
      }
      reject_exponent(start);
      push(Tok::NumericLiteral, std::move(num), start);
      continue;
    }
    if (is_word(c)) {
      const size_t start = pos_;
      step_ = 1;
      std::string word = consume_while([&](size_t i) { return is_word(src[i]); });
      push(Tok::Identifier, std::move(word), start);
      continue;
    }
    size_t len;
    utf8_decode(src, pos_, &len);
    error("unexpected character '" + src.substr(pos_, len) + "'");
  }
  return std::move(tokens_);
}

}  // namespace

std::vector<Token> tokenize(std::string_view source, std::string_view name) {
  const size_t bad = utf8_invalid_at(source);
  if (bad != std::string_view::npos) {
    int line = 1;
    for (size_t i = 0; i < bad; ++i) line += source[i] == '\n';
    fail(name, ", line ", line, ": the template is not valid UTF-8");
  }
  return Lexer(preprocess(source), name).run();
}

}  // namespace edgellm::tmpl
