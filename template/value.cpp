#include "template/value.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "template/json.h"
#include "template/utf8.h"

namespace edgellm::tmpl {

void throw_render_error(std::string message) { throw RenderError{std::move(message), false}; }

const char* type_name(VT t) {
  switch (t) {
    case VT::Undefined: return "UndefinedValue";
    case VT::Null: return "NullValue";
    case VT::Bool: return "BooleanValue";
    case VT::Int: return "IntegerValue";
    case VT::Float: return "FloatValue";
    case VT::String: return "StringValue";
    case VT::Array: return "ArrayValue";
    case VT::Tuple: return "TupleValue";
    case VT::Object: return "ObjectValue";
    case VT::KwArgs: return "KeywordArgumentsValue";
    case VT::Namespace: return "NamespaceValue";
    case VT::Function: return "FunctionValue";
  }
  return "?";
}

Value Value::string(std::string v) {
  Value x = make(VT::String);
  auto d = std::make_shared<StringData>();
  d->s = std::move(v);
  x.p = std::move(d);
  return x;
}

bool Value::str_ascii(bool* scanned) const {
  const StringData& d = *static_cast<const StringData*>(p.get());
  if (d.ascii < 0) {
    d.ascii = std::all_of(d.s.begin(), d.s.end(), [](char c) { return uint8_t(c) < 0x80; });
    *scanned = true;
  }
  return d.ascii == 1;
}

bool Value::truthy() const {
  switch (t) {
    case VT::Undefined: case VT::Null: return false;
    case VT::Bool: return b;
    case VT::Int: case VT::Float: return n != 0 && !std::isnan(n);
    case VT::String: return !str().empty();
    case VT::Array: case VT::Tuple: return !arr()->items.empty();
    case VT::Object: case VT::KwArgs: return obj()->size() > 0;
    case VT::Namespace: case VT::Function: return true;  // a JavaScript Map / function
  }
  return false;
}

const Value* Object::get(std::string_view key) const {
  if (!index_.empty()) {
    auto it = index_.find(std::string(key));
    return it == index_.end() ? nullptr : &entries[it->second].second;
  }
  for (const auto& [k, v] : entries)
    if (k == key) return &v;
  return nullptr;
}

void Object::set(std::string key, Value v, bool int_key) {
  if (Value* old = const_cast<Value*>(get(key))) {
    *old = std::move(v);
    return;
  }
  entries.emplace_back(std::move(key), std::move(v));
  if (int_key) {
    int_keys_.resize(entries.size());
    int_keys_.back() = true;
  }
  if (!index_.empty() || entries.size() > 16) {
    if (index_.empty())
      for (size_t i = 0; i < entries.size(); ++i) index_.emplace(entries[i].first, i);
    else
      index_.emplace(entries.back().first, entries.size() - 1);
  }
}

// --- Heap ---------------------------------------------------------------------

Heap::Heap(const Limits& lim) : lim_(lim) {
  const double secs = lim_.max_seconds > 0 && lim_.max_seconds < 1e6 ? lim_.max_seconds : 1e6;
  deadline_ = std::chrono::steady_clock::now() +
              std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(secs));
}

void Heap::work(uint64_t units) {
  steps_ += units;
  if (steps_ > lim_.max_steps)
    throw_render_error("the template runs too long (more than " + std::to_string(lim_.max_steps) + " steps)");
  if (steps_ >= next_clock_check_) {
    next_clock_check_ = steps_ + 4096;
    if (std::chrono::steady_clock::now() > deadline_)
      throw_render_error("the template runs too long (more than " + js_number_to_string(lim_.max_seconds) + " s)");
  }
}

void Heap::charge(size_t units) {
  if (units > lim_.max_heap || live_ + units > lim_.max_heap)
    throw_render_error("the template allocates too much (more than " + std::to_string(lim_.max_heap) +
                       " list elements and objects alive)");
  live_ += units;
  work(units);
}

void Heap::charge_string(size_t bytes) {
  if (bytes > lim_.max_output)
    throw_render_error("a string would exceed " + std::to_string(lim_.max_output) + " bytes");
  string_work_ += bytes;
  if (string_work_ > lim_.max_string_work)
    throw_render_error("the template builds too much text (more than " + std::to_string(lim_.max_string_work) +
                       " bytes of strings)");
  scan(bytes);
}

Heap::~Heap() {
  for (const auto& ns : namespaces_) ns->entries.clear();
  for (Env& e : envs_) e.vars.clear();
}

int nesting_depth(const Value& v) {
  switch (v.t) {
    case VT::Array: case VT::Tuple: return v.arr()->depth;
    case VT::Object: case VT::KwArgs: return v.obj()->depth;
    case VT::Function: return v.fn()->depth;
    default: return 0;  // scalars, strings, namespaces
  }
}

namespace {

int checked_depth(int child_max) {
  if (child_max + 1 > kMaxValueDepth)
    throw_render_error("values nested too deeply (more than " + std::to_string(kMaxValueDepth) + " levels)");
  return child_max + 1;
}

}  // namespace

Value Heap::new_array(std::vector<Value> items, bool tuple) {
  const size_t units = 1 + items.size();
  int d = 0;
  for (const Value& x : items) d = std::max(d, nesting_depth(x));
  const int depth = checked_depth(d);
  charge(units);
  Value v;
  v.t = tuple ? VT::Tuple : VT::Array;
  auto a = std::make_shared<Array>();
  a->items = std::move(items);
  a->acct.live = &live_;  // set in place: copies and moves of an Accounted do not account
  a->acct.units = units;
  a->depth = depth;
  v.p = std::move(a);
  return v;
}

Value Heap::new_object(VT kind, Object o) {
  const size_t units = 1 + o.size();
  size_t key_bytes = 0;  // copied and hashed to build it
  for (const auto& e : o.entries) key_bytes += e.first.size();
  scan(key_bytes);
  int d = 0;
  if (kind != VT::Namespace)
    for (const auto& e : o.entries) d = std::max(d, nesting_depth(e.second));
  const int depth = checked_depth(d);
  charge(units);
  auto obj = std::make_shared<Object>(std::move(o));
  obj->depth = depth;
  obj->acct.live = &live_;
  obj->acct.units = units;
  if (kind == VT::Namespace) namespaces_.push_back(obj);
  Value v;
  v.t = kind;
  v.p = std::move(obj);
  return v;
}

Value Heap::new_function(std::string name, NativeFn fn, const Value* bound_to) {
  const int depth = checked_depth(bound_to ? nesting_depth(*bound_to) : 0);
  charge(1);
  Value v;
  v.t = VT::Function;
  auto f = std::make_shared<Function>();
  f->name = std::move(name);
  f->fn = std::move(fn);
  f->acct.live = &live_;
  f->acct.units = 1;
  f->depth = depth;
  v.p = std::move(f);
  return v;
}

Env* Heap::new_env(Env* parent) {
  charge(1);
  envs_.push_back(Env{parent, {}, false});
  return &envs_.back();
}

// --- strings --------------------------------------------------------------------

size_t& string_limit() {
  thread_local size_t limit = size_t(32) << 20;
  return limit;
}

namespace {

constexpr int kMaxNesting = 200;  // containers within containers when converting

void check_size(const std::string& s) {
  if (s.size() > string_limit())
    throw_render_error("a string would exceed " + std::to_string(string_limit()) + " bytes");
}
void check_depth(int depth) {
  if (depth > kMaxNesting) throw_render_error("values nested too deeply (or a namespace that contains itself)");
}

}  // namespace

std::string float_to_string(double v) {
  if (v == 0 && std::signbit(v)) return "-0.0";
  if (std::isfinite(v) && std::fmod(v, 1.0) == 0) {
    if (std::fabs(v) >= 1e21) return js_number_to_string(v);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
  }
  return js_number_to_string(v);
}

std::string display(const Value& v, int depth) {
  switch (v.t) {
    case VT::Undefined: return "undefined";
    case VT::Null: return "null";
    case VT::Bool: return v.b ? "true" : "false";
    case VT::Int: return js_number_to_string(v.n);
    case VT::Float: return float_to_string(v.n);
    case VT::String: return v.str();
    case VT::Function: return "function " + v.fn()->name + "() { [native code] }";
    default: return to_json(v, JsonOptions{}, depth, false);
  }
}

std::string raw_string(const Value& v, int depth, bool null_as_empty) {
  check_depth(depth);
  switch (v.t) {
    case VT::Undefined: return null_as_empty ? "" : "undefined";
    case VT::Null: return null_as_empty ? "" : "null";
    case VT::Bool: return v.b ? "true" : "false";
    case VT::Int: case VT::Float: return js_number_to_string(v.n);
    case VT::String: return v.str();
    case VT::Array: case VT::Tuple: {
      // Array.prototype.toString: the elements' own toString(), joined by ",".
      std::string out;
      const auto& items = v.arr()->items;
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += ',';
        out += display(items[i], depth + 1);
        check_size(out);
      }
      return out;
    }
    case VT::Object: case VT::KwArgs: case VT::Namespace: return "[object Map]";
    case VT::Function: return display(v);
  }
  return "";
}

namespace {

// JSON.stringify(str), appended to `o`.
void append_json_string(std::string& o, std::string_view s, bool ensure_ascii) {
  o += '"';
  for (size_t i = 0; i < s.size();) {
    const uint8_t c = uint8_t(s[i]);
    if (c >= 0x80) {
      size_t len;
      const uint32_t cp = utf8_decode(s, i, &len);
      if (ensure_ascii) {
        char buf[16];
        if (cp >= 0x10000) {
          const uint32_t x = cp - 0x10000;
          std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xD800 + (x >> 10), 0xDC00 + (x & 0x3FF));
        } else {
          std::snprintf(buf, sizeof buf, "\\u%04x", cp);
        }
        o += buf;
      } else {
        o.append(s.substr(i, len));
      }
      i += len;
      continue;
    }
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\b': o += "\\b"; break;
      case '\f': o += "\\f"; break;
      case '\n': o += "\\n"; break;
      case '\r': o += "\\r"; break;
      case '\t': o += "\\t"; break;
      default:
        if (c < 0x20 || (c == 0x7F && ensure_ascii)) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          o += buf;
        } else {
          o += char(c);
        }
    }
    ++i;
  }
  o += '"';
}

// Writes JSON into one buffer, so the time taken is linear in the output
// (building each container's text apart and copying it into its parent's
// would copy every byte once per level of nesting).
class JsonWriter {
 public:
  JsonWriter(std::string& out, const JsonOptions& opt, bool undefined_as_null)
      : out_(out), opt_(opt), undefined_as_null_(undefined_as_null) {
    if (opt.has_separators) item_sep_ = opt.item_sep, key_sep_ = opt.key_sep;
    else if (opt.indent) item_sep_ = ",";
  }

  void write(const Value& v, int depth) {
    check_depth(depth);
    switch (v.t) {
      case VT::Null: out_ += "null"; return;
      case VT::Undefined: out_ += undefined_as_null_ ? "null" : "undefined"; return;
      case VT::Int: case VT::Float: out_ += std::isfinite(v.n) ? js_number_to_string(v.n) : "null"; return;
      case VT::Bool: out_ += v.b ? "true" : "false"; return;
      case VT::String: append_json_string(out_, v.str(), opt_.ensure_ascii); return;
      case VT::Array:
        if (v.arr()->generator) throw_render_error("Object of type generator is not JSON serializable (add |list)");
        return write_array(v.arr()->items, depth);
      case VT::Namespace: case VT::Object: return write_object(v.obj()->entries, depth);
      default: throw_render_error(std::string("Cannot convert to JSON: ") + type_name(v.t));
    }
  }

 private:
  // A line break and the indentation of `depth` levels.
  void newline(int depth) {
    const size_t n = size_t(opt_.indent) * size_t(depth);
    if (n > string_limit()) throw_render_error("tojson: indentation too large");
    out_ += '\n';
    out_.append(n, ' ');
  }
  void write_array(const std::vector<Value>& items, int depth) {
    const bool pretty = opt_.indent && !items.empty();
    out_ += '[';
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out_ += item_sep_;
      if (pretty) newline(depth + 1);
      write(items[i], depth + 1);
      check_size(out_);
    }
    if (pretty) newline(depth);
    out_ += ']';
  }
  void write_object(const std::vector<std::pair<std::string, Value>>& all, int depth) {
    std::vector<const std::pair<std::string, Value>*> entries;
    entries.reserve(all.size());
    for (const auto& e : all) entries.push_back(&e);
    if (opt_.sort_keys)
      std::stable_sort(entries.begin(), entries.end(), [this](auto* a, auto* b) {
        if (opt_.heap) opt_.heap->work(1 + std::min(a->first.size(), b->first.size()) / kBytesPerStep);
        return locale_compare(a->first, b->first) < 0;
      });
    out_ += '{';
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i) out_ += item_sep_;
      if (opt_.indent) newline(depth + 1);
      append_json_string(out_, entries[i]->first, opt_.ensure_ascii);
      out_ += key_sep_;
      write(entries[i]->second, depth + 1);
      check_size(out_);
    }
    if (opt_.indent && !entries.empty()) newline(depth);
    out_ += '}';
  }

  std::string& out_;
  const JsonOptions& opt_;
  bool undefined_as_null_;
  std::string item_sep_ = ", ", key_sep_ = ": ";
};

}  // namespace

std::string json_string(std::string_view s, bool ensure_ascii) {
  std::string o;
  append_json_string(o, s, ensure_ascii);
  return o;
}

std::string to_json(const Value& v, const JsonOptions& opt, int depth, bool undefined_as_null) {
  std::string out;
  JsonWriter(out, opt, undefined_as_null).write(v, depth);
  check_size(out);
  return out;
}

// --- equality and ordering --------------------------------------------------------

namespace {

enum class Raw { Number, String, Bool, Null, Undefined, Ref };
Raw raw_kind(const Value& v) {
  switch (v.t) {
    case VT::Int: case VT::Float: return Raw::Number;
    case VT::String: return Raw::String;
    case VT::Bool: return Raw::Bool;
    case VT::Null: return Raw::Null;
    case VT::Undefined: return Raw::Undefined;
    default: return Raw::Ref;
  }
}

}  // namespace

bool strict_equal(const Value& a, const Value& b) {
  const Raw ra = raw_kind(a), rb = raw_kind(b);
  if (ra != rb) return false;
  switch (ra) {
    case Raw::Number: return a.n == b.n;
    case Raw::String: return a.str() == b.str();
    case Raw::Bool: return a.b == b.b;
    case Raw::Null: case Raw::Undefined: return true;
    case Raw::Ref: return a.p == b.p;
  }
  return false;
}

bool same_value_zero(const Value& a, const Value& b) {
  if (raw_kind(a) == Raw::Number && raw_kind(b) == Raw::Number && std::isnan(a.n) && std::isnan(b.n)) return true;
  return strict_equal(a, b);
}

bool loose_equal(const Value& a, const Value& b) {
  const Raw ra = raw_kind(a), rb = raw_kind(b);
  if (ra == rb) return strict_equal(a, b);
  const auto nullish = [](Raw r) { return r == Raw::Null || r == Raw::Undefined; };
  if (nullish(ra) || nullish(rb)) return nullish(ra) && nullish(rb);
  if (ra == Raw::Bool) return loose_equal(Value::integer(a.b ? 1 : 0), b);
  if (rb == Raw::Bool) return loose_equal(a, Value::integer(b.b ? 1 : 0));
  if (ra == Raw::Number && rb == Raw::String) return a.n == string_to_number(b.str());
  if (ra == Raw::String && rb == Raw::Number) return string_to_number(a.str()) == b.n;
  // An object against a primitive: compare its string form (ToPrimitive).
  if (ra == Raw::Ref) return loose_equal(Value::string(raw_string(a)), b);
  if (rb == Raw::Ref) return loose_equal(a, Value::string(raw_string(b)));
  return false;
}

int compare_values(const Value& a, const Value& b, bool case_sensitive) {
  if (a.is_null() && b.is_null()) return 0;
  if (a.is_null() || b.is_null() || a.is_undefined() || b.is_undefined()) {
    if (a.is_undefined() && b.is_undefined()) return 0;
    throw_render_error(std::string("Cannot compare ") + type_name(a.t) + " with " + type_name(b.t));
  }
  if (a.is_numeric_like() && b.is_numeric_like()) {
    const double x = a.t == VT::Bool ? double(a.b) : a.n, y = b.t == VT::Bool ? double(b.b) : b.n;
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.t != b.t)
    throw_render_error(std::string("Cannot compare different types: ") + type_name(a.t) + " and " + type_name(b.t));
  if (a.t != VT::String) throw_render_error(std::string("Cannot compare type: ") + type_name(a.t));
  if (case_sensitive) return a.str() < b.str() ? -1 : a.str() > b.str() ? 1 : 0;
  const std::string x = to_lower(a.str()), y = to_lower(b.str());
  return x < y ? -1 : x > y ? 1 : 0;
}

namespace {

// ICU root collation for ASCII: punctuation and symbols, then digits, then
// letters case-insensitively; case (lower first) only breaks ties.
uint32_t collation_key(uint32_t c, bool tertiary) {
  if (tertiary) return c >= 'A' && c <= 'Z' ? 1u : 0u;
  static const std::string_view kOrder =
      "\t\n\v\f\r _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz";
  if (c >= 'A' && c <= 'Z') c += 32;
  const size_t k = c < 0x80 ? kOrder.find(char(c)) : std::string_view::npos;
  return k == std::string_view::npos ? 0x100 + c : uint32_t(k);
}

// Compares the strings' sequences of collation keys code point by code point,
// without copies (sort_keys compares many keys).
int compare_collation_keys(std::string_view a, std::string_view b, bool tertiary) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    size_t la, lb;
    const uint32_t x = collation_key(utf8_decode(a, i, &la), tertiary);
    const uint32_t y = collation_key(utf8_decode(b, j, &lb), tertiary);
    if (x != y) return x < y ? -1 : 1;
    i += la;
    j += lb;
  }
  return i < a.size() ? 1 : j < b.size() ? -1 : 0;
}

}  // namespace

int locale_compare(std::string_view a, std::string_view b) {
  for (bool tertiary : {false, true})
    if (const int r = compare_collation_keys(a, b, tertiary)) return r;
  return a < b ? -1 : a > b ? 1 : 0;
}

// --- numbers --------------------------------------------------------------------

namespace {

// Length of the longest prefix of s that is a StrDecimalLiteral ([+-]? then
// Infinity, or digits with an optional fraction and exponent); 0 if none.
size_t decimal_prefix(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (s.substr(i, 8) == "Infinity") return i + 8;
  const auto digits = [&](size_t& k) {
    const size_t start = k;
    while (k < s.size() && s[k] >= '0' && s[k] <= '9') ++k;
    return k - start;
  };
  size_t int_digits = digits(i), frac_digits = 0;
  if (i < s.size() && s[i] == '.') {
    size_t k = i + 1;
    frac_digits = digits(k);
    if (int_digits || frac_digits) i = k;
  }
  if (!int_digits && !frac_digits) return 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t k = i + 1;
    if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
    if (digits(k)) i = k;
  }
  return i;
}

double parse_decimal(std::string_view s) {
  std::string t(s);
  const size_t inf = t.find("Infinity");
  if (inf != std::string::npos) return t[0] == '-' ? -HUGE_VAL : HUGE_VAL;
  return std::strtod(t.c_str(), nullptr);
}

}  // namespace

double string_to_number(std::string_view s) {
  s = js_trim(s);
  if (s.empty()) return 0;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X' || s[1] == 'o' || s[1] == 'O' || s[1] == 'b' || s[1] == 'B')) {
    const int base = (s[1] == 'x' || s[1] == 'X') ? 16 : (s[1] == 'o' || s[1] == 'O') ? 8 : 2;
    double v = 0;
    for (size_t i = 2; i < s.size(); ++i) {
      const char c = s[i];
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 99;
      if (d >= base) return NAN;
      v = v * base + d;
    }
    return v;
  }
  const size_t n = decimal_prefix(s);
  if (n != s.size()) return NAN;
  return parse_decimal(s);
}

double to_number(const Value& v) {
  switch (v.t) {
    case VT::Undefined: return NAN;
    case VT::Null: return 0;
    case VT::Bool: return v.b ? 1 : 0;
    case VT::Int: case VT::Float: return v.n;
    case VT::String: return string_to_number(v.str());
    default: return string_to_number(raw_string(v));
  }
}

double js_parse_int(std::string_view s) {
  s = js_trim_start(s);
  size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  const size_t start = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  if (i == start) return NAN;
  const double v = std::strtod(std::string(s.substr(start, i - start)).c_str(), nullptr);
  return neg ? -v : v;
}

double js_parse_float(std::string_view s) {
  s = js_trim_start(s);
  const size_t n = decimal_prefix(s);
  if (n == 0) return NAN;
  return parse_decimal(s.substr(0, n));
}

// --- JSON in ------------------------------------------------------------------------

namespace {

bool is_array_index(const std::string& k) {
  if (k.empty() || k.size() > 10 || (k.size() > 1 && k[0] == '0')) return false;
  for (char c : k)
    if (c < '0' || c > '9') return false;
  return std::strtoull(k.c_str(), nullptr, 10) < 4294967295ull;
}

Value from_json_at(Heap& heap, const Json& j, int depth) {
  check_depth(depth);
  switch (j.type()) {
    case Json::Type::Null: return Value::null();
    case Json::Type::Bool: return Value::boolean(j.as_bool());
    case Json::Type::Number: {
      const double d = j.as_number();
      return Value::number(d, !(std::isfinite(d) && std::trunc(d) == d));
    }
    case Json::Type::String: return Value::string(j.as_string());
    case Json::Type::Array: {
      std::vector<Value> items;
      items.reserve(j.items().size());
      for (const Json& x : j.items()) items.push_back(from_json_at(heap, x, depth + 1));
      return heap.new_array(std::move(items));
    }
    case Json::Type::Object: {
      // JavaScript orders integer-like keys first, ascending.
      std::vector<const std::pair<std::string, Json>*> idx, rest;
      for (const auto& e : j.entries()) (is_array_index(e.first) ? idx : rest).push_back(&e);
      std::stable_sort(idx.begin(), idx.end(), [](auto* a, auto* b) {
        return std::strtoull(a->first.c_str(), nullptr, 10) < std::strtoull(b->first.c_str(), nullptr, 10);
      });
      Object o;
      for (auto* list : {&idx, &rest})
        for (auto* e : *list) o.set(e->first, from_json_at(heap, e->second, depth + 1));
      return heap.new_object(VT::Object, std::move(o));
    }
  }
  return Value::undefined();
}

}  // namespace

Value from_json(Heap& heap, const Json& j) { return from_json_at(heap, j, 0); }

void stable_sort_values(std::vector<Value>& v, const std::function<int(const Value&, const Value&)>& cmp) {
  // Bottom-up merge sort: stable, and well-defined whatever the comparator does.
  std::vector<Value> tmp(v.size());
  for (size_t width = 1; width < v.size(); width *= 2) {
    for (size_t lo = 0; lo < v.size(); lo += 2 * width) {
      const size_t mid = std::min(lo + width, v.size()), hi = std::min(lo + 2 * width, v.size());
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) tmp[k++] = cmp(v[j], v[i]) < 0 ? v[j++] : v[i++];
      while (i < mid) tmp[k++] = v[i++];
      while (j < hi) tmp[k++] = v[j++];
    }
    v.swap(tmp);
  }
}

}  // namespace edgellm::tmpl
