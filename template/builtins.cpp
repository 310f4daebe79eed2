// Filters, tests, methods of strings and mappings, and the global functions,
// each with the reference renderer's behaviour (including what it rejects).
#include <algorithm>
#include <cmath>
#include <ctime>
#include <unordered_set>

#include "template/format_method.h"
#include "template/interpreter.h"
#include "template/json.h"
#include "template/python_str.h"
#include "template/utf8.h"

namespace edgellm::tmpl {

namespace {

[[noreturn]] void bad_type(const std::string& filter, const Value& v) {
  throw_render_error("Cannot apply filter \"" + filter + "\" to type: " + type_name(v.t));
}

// JavaScript truthiness of a raw value (objects and arrays are always true).
bool raw_truthy(const Value& v) { return v.is_array() || v.is_container() || v.t == VT::Function || v.truthy(); }

// filter(positional[i] ?? kwargs[name] ?? def)
Value option(const std::vector<Value>& args, size_t i, const Object& kwargs, const char* name, Value def) {
  if (i < args.size()) return args[i];
  if (const Value* v = kwargs.get(name)) return *v;
  return def;
}

// What a filter gives for Python jinja2's Undefined (an absent `tools`, say),
// which behaves as an empty string or sequence there; the select family also
// takes None as empty (jinja2 tests `if seq:` first). False when jinja2
// raises for it too.
bool empty_operand_filter(const std::string& name, const Value& v, Heap& heap, Value* out) {
  const bool select = name == "selectattr" || name == "rejectattr" || name == "select" || name == "reject" ||
                      name == "map";
  if (!v.is_undefined() && !(select && v.is_null())) return false;
  if (select || name == "list" || name == "items" || name == "unique" || name == "sort" || name == "reverse")
    *out = heap.new_array({});
  else if (name == "length" || name == "count") *out = Value::integer(0);
  else if (name == "first" || name == "last") *out = Value::undefined();
  else if (name == "string" || name == "join" || name == "trim" || name == "upper" || name == "lower")
    *out = Value::string("");
  else return false;
  return true;
}

// Python's strip(chars) family: `chars` is a set of code points.
std::string strip_chars(const std::string& s, const std::string& chars, bool left, bool right) {
  const std::vector<std::string> set = split_code_points(chars);
  const auto in_set = [&](std::string_view cp) {
    for (const std::string& c : set)
      if (c == cp) return true;
    return false;
  };
  const std::vector<std::string> cps = split_code_points(s);
  size_t b = 0, e = cps.size();
  while (left && b < e && in_set(cps[b])) ++b;
  while (right && e > b && in_set(cps[e - 1])) --e;
  std::string out;
  for (size_t i = b; i < e; ++i) out += cps[i];
  return out;
}

bool is_word_byte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

std::string title_case(const std::string& s) {  // /\b\w/g -> upper (ASCII \w)
  std::string out = s;
  for (size_t i = 0; i < out.size(); ++i)
    if (is_word_byte(out[i]) && (i == 0 || !is_word_byte(out[i - 1])) && out[i] >= 'a' && out[i] <= 'z') out[i] -= 32;
  return out;
}

// Python's str.replace as the reference implements it; fails past max bytes.
std::string js_replace(const std::string& s, const std::string& from, const std::string& to, double count, size_t max) {
  if (count == 0) return s;
  const auto check = [&](const std::string& out) {
    if (out.size() > max) throw_render_error("a string would exceed " + std::to_string(max) + " bytes");
  };
  double remaining = count < 0 || std::isnan(count) ? INFINITY : count;
  std::string out;
  if (from.empty()) {  // matches at every code point boundary, both ends included
    size_t i = 0;
    while (true) {
      if (remaining > 0) out += to, --remaining;
      check(out);
      if (i >= s.size()) break;
      size_t len;
      utf8_decode(s, i, &len);
      out.append(s, i, len);
      i += len;
    }
    return out;
  }
  size_t pos = 0;
  while (remaining > 0) {
    const size_t hit = find_bytes(s, from, pos);
    if (hit == std::string::npos) break;
    out.append(s, pos, hit - pos);
    out += to;
    check(out);
    pos = hit + from.size();
    --remaining;
  }
  return out + s.substr(pos);
}

Value attribute_path(const Value& item, const std::string& path) {
  Value v = item;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (v.is_container()) {
      const Value* x = v.obj()->get(part);
      v = x ? *x : Value::undefined();
    } else if (v.is_array()) {
      const double idx = js_parse_int(part);
      if (!std::isnan(idx) && idx >= 0 && idx < double(v.arr()->items.size())) v = v.arr()->items[size_t(idx)];
      else return Value::undefined();
    } else {
      return Value::undefined();
    }
    if (dot == std::string::npos) return v;
    start = dot + 1;
  }
}

std::string indent_lines(const std::string& s, const std::string& indent, bool first, bool blank) {
  std::string out;
  size_t start = 0;
  for (size_t line = 0;; ++line) {
    const size_t nl = s.find('\n', start);
    const std::string_view x = std::string_view(s).substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    if (line) out += '\n';
    if (!((!first && line == 0) || (!blank && x.empty()))) out += indent;
    out += x;
    if (nl == std::string::npos) return out;
    start = nl + 1;
  }
}

bool is_known_test(const std::string& n) {
  static const char* const kTests[] = {"boolean", "callable", "odd",     "even",    "false",    "true",
                                       "none",    "string",   "number",  "integer", "iterable", "mapping",
                                       "sequence", "lower",   "upper",   "defined", "undefined", "equalto", "eq"};
  for (const char* t : kTests)
    if (n == t) return true;
  return false;
}

}  // namespace

bool Interpreter::run_test(const std::string& name, const Value& v, const Value* arg) {
  if (name == "boolean") return v.t == VT::Bool;
  if (name == "callable") return v.t == VT::Function;
  if (name == "odd" || name == "even") {
    if (v.t != VT::Int) throw_render_error("cannot " + name + " on " + type_name(v.t));
    const double r = std::fmod(v.n, 2);
    return name == "odd" ? r != 0 : r == 0;
  }
  if (name == "false") return v.t == VT::Bool && !v.b;
  if (name == "true") return v.t == VT::Bool && v.b;
  if (name == "none") return v.is_null();
  if (name == "string") return v.is_string();
  if (name == "number") return v.is_number();
  if (name == "integer") return v.t == VT::Int;
  if (name == "iterable") return v.t == VT::Array || v.is_string();
  if (name == "mapping") return v.is_mapping();
  if (name == "sequence") return v.is_array() || v.is_mapping() || v.is_string();
  if (name == "lower" || name == "upper") {
    if (!v.is_string()) return false;
    heap_.charge_string(v.str().size());  // the case-mapped copy
    return v.str() == (name == "lower" ? to_lower(v.str()) : to_upper(v.str()));
  }
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "equalto" || name == "eq") {
    if (arg && v.is_string() && arg->is_string()) scan(std::min(v.str().size(), arg->str().size()));
    return arg ? strict_equal(v, *arg) : v.is_undefined();
  }
  throw_render_error("Unknown test: " + name);
}

Value Interpreter::member_builtin(const Value& obj, const std::string& name) {
  if (obj.is_string()) {
    if (name == "length") return Value::integer(double(js_length(obj)));
    static const char* const kMethods[] = {"upper", "lower", "strip", "title", "capitalize", "rstrip",
                                           "lstrip", "startswith", "endswith", "split", "replace", "format"};
    for (const char* m : kMethods)
      if (name == m)
        return heap_.new_function(name, [this, obj, name](std::vector<Value>& args, Env*) {
          return string_method(obj, name, args);
        });
  } else if (obj.is_array()) {
    if (name == "length") return Value::integer(double(obj.arr()->items.size()));
  } else if (obj.is_mapping()) {
    static const char* const kMethods[] = {"get", "items", "keys", "values", "dictsort"};
    for (const char* m : kMethods)
      if (name == m)
        return heap_.new_function(
            name, [this, obj, name](std::vector<Value>& args, Env*) { return object_method(obj, name, args); }, &obj);
  }
  return Value::undefined();
}

Value Interpreter::string_method(const Value& self, const std::string& name, std::vector<Value>& args) {
  const std::string& s = self.str();
  if (name == "upper") return make_string(to_upper(s));
  if (name == "lower") return make_string(to_lower(s));
  if (name == "format") {
    std::string out = python_format(s, args);
    heap_.charge_string(out.size());
    return make_string(std::move(out));
  }
  if (name == "strip" || name == "rstrip" || name == "lstrip") {
    scan(s.size());  // all of it, when it is all whitespace
    if (!args.empty() && args[0].is_string()) {  // Python's strip(chars), e.g. lstrip('\n')
      work(args[0].str().size() * (s.size() / 16 + 1));
      return make_string(strip_chars(s, args[0].str(), name != "rstrip", name != "lstrip"));
    }
    if (name == "strip") return make_string(std::string(js_trim(s)));
    return make_string(std::string(name == "rstrip" ? js_trim_end(s) : js_trim_start(s)));
  }
  if (name == "title") return make_string(title_case(s));
  if (name == "capitalize") {
    if (s.empty()) return self;
    size_t len;
    const uint32_t cp = utf8_decode(s, 0, &len);
    return make_string((cp >= 0x10000 ? s.substr(0, len) : to_upper(s.substr(0, len))) + s.substr(len));
  }
  if (name == "startswith" || name == "endswith") {
    if (args.empty()) throw_render_error(name + "() requires at least one argument");
    const bool start = name == "startswith";
    const auto test = [&](const std::string& p) {
      scan(p.size());
      return p.size() <= s.size() && (start ? s.compare(0, p.size(), p) == 0 : s.compare(s.size() - p.size(), p.size(), p) == 0);
    };
    if (args[0].is_string()) return Value::boolean(test(args[0].str()));
    if (args[0].is_array()) {
      for (const Value& p : args[0].arr()->items) {
        if (!p.is_string()) throw_render_error(name + "() tuple elements must be strings");
        if (test(p.str())) return Value::boolean(true);
      }
      return Value::boolean(false);
    }
    throw_render_error(name + "() argument must be a string or tuple of strings");
  }
  if (name == "split") {
    const Value sep = args.size() > 0 ? args[0] : Value::null();
    if (!sep.is_string() && !sep.is_null()) throw_render_error("sep argument must be a string or null");
    const Value maxsplit = args.size() > 1 ? args[1] : Value::integer(-1);
    if (maxsplit.t != VT::Int) throw_render_error("maxsplit argument must be a number");
    scan(s.size());  // searched, whatever the parts come to
    std::vector<std::string> parts;
    if (sep.is_null()) {
      const std::string_view text = js_trim_start(s);
      size_t i = 0;
      while (i < text.size()) {
        const size_t begin = i;
        while (i < text.size() && !js_space_len(text, i)) {
          size_t len;
          utf8_decode(text, i, &len);
          i += len;
        }
        if (maxsplit.n >= 0 && double(parts.size()) >= maxsplit.n) {
          parts.emplace_back(text.substr(begin));
          break;
        }
        parts.emplace_back(text.substr(begin, i - begin));
        while (size_t n = js_space_len(text, i)) i += n;
      }
    } else {
      const std::string& d = sep.str();
      if (d.empty()) throw_render_error("empty separator");
      size_t pos = 0;
      while (true) {
        const size_t hit = find_bytes(s, d, pos);
        if (hit == std::string::npos || (maxsplit.n >= 0 && double(parts.size()) >= maxsplit.n)) {
          parts.push_back(s.substr(pos));
          break;
        }
        parts.push_back(s.substr(pos, hit - pos));
        pos = hit + d.size();
      }
    }
    std::vector<Value> items;
    for (std::string& p : parts) items.push_back(make_string(std::move(p)));
    return heap_.new_array(std::move(items));
  }
  if (name == "replace") {
    if (args.size() < 2) throw_render_error("replace() requires at least two arguments");
    if (!args[0].is_string() || !args[1].is_string()) throw_render_error("replace() arguments must be strings");
    Value count = Value::null();
    if (args.size() > 2) {
      if (args[2].t == VT::KwArgs) {
        const Value* c = args[2].obj()->get("count");
        count = c ? *c : Value::null();
      } else {
        count = args[2];
      }
    }
    if (count.t != VT::Int && !count.is_null()) throw_render_error("replace() count argument must be a number or null");
    const std::string& from = args[0].str();
    const std::string& to = args[1].str();
    scan(s.size() + from.size());  // searched
    return make_string(js_replace(s, from, to, count.is_null() ? -1 : count.n, lim_.max_output));
  }
  throw_render_error("unknown string method '" + name + "'");
}

Value Interpreter::object_method(const Value& self, const std::string& name, std::vector<Value>& args) {
  const Object& o = *self.obj();
  const auto pairs = [&](const std::vector<std::pair<std::string, Value>>& entries) {
    std::vector<Value> items;
    for (size_t i = 0; i < entries.size(); ++i) items.push_back(heap_.new_array({key_value(o, i), entries[i].second}));
    return items;
  };
  if (name == "get") {
    if (args.empty() || !args[0].is_string())
      throw_render_error(std::string("Object key must be a string: got ") + type_name(args.empty() ? VT::Undefined : args[0].t));
    scan(args[0].str().size());  // hashed
    if (const Value* v = o.get(args[0].str())) return *v;
    return args.size() > 1 ? args[1] : Value::null();
  }
  work(o.size());  // the rest go through every entry
  if (name == "items") return heap_.new_array(pairs(o.entries));
  if (name == "keys") {
    std::vector<Value> items;
    for (size_t i = 0; i < o.size(); ++i) items.push_back(key_value(o, i));
    return heap_.new_array(std::move(items));
  }
  if (name == "values") {
    std::vector<Value> items;
    for (const auto& e : o.entries) items.push_back(e.second);
    return heap_.new_array(std::move(items));
  }
  if (name == "dictsort") {
    Object kwargs;
    std::vector<Value> positional;
    for (const Value& a : args) {
      if (a.t == VT::KwArgs) kwargs = *a.obj();
      else positional.push_back(a);
    }
    const Value cs = option(positional, 0, kwargs, "case_sensitive", Value::boolean(false));
    if (cs.t != VT::Bool) throw_render_error("case_sensitive must be a boolean");
    const Value by = option(positional, 1, kwargs, "by", Value::string("key"));
    if (!by.is_string()) throw_render_error("by must be a string");
    if (by.str() != "key" && by.str() != "value") throw_render_error("by must be either 'key' or 'value'");
    const Value rev = option(positional, 2, kwargs, "reverse", Value::boolean(false));
    if (rev.t != VT::Bool) throw_render_error("reverse must be a boolean");
    std::vector<Value> items = pairs(o.entries);
    const size_t idx = by.str() == "key" ? 0 : 1;
    stable_sort_values(items, [&](const Value& a, const Value& b) {
      const int r = compare(a.arr()->items[idx], b.arr()->items[idx], cs.b);
      return rev.b ? -r : r;
    });
    return heap_.new_array(std::move(items));
  }
  throw_render_error("unknown method '" + name + "'");
}

Value Interpreter::apply_filter(const Value& v, const Node& f, Env* env) {
  if (f.kind == NK::Call) return apply_filter_call(v, f, env);
  if (f.kind != NK::Identifier) throw_render_error("Unknown filter: " + describe(f));
  const std::string& name = f.str;
  if (name == "safe") {
    if (!v.is_string() || v.is_markup()) return v;
    Value m = make_string(v.str());
    std::static_pointer_cast<StringData>(m.p)->markup = true;
    return m;
  }
  if (name == "tojson") return make_string(to_json(v, JsonOptions{}));
  Value empty;
  if (empty_operand_filter(name, v, heap_, &empty)) return empty;
  // jinja2's `string` is Python's str(): {'a': 1}, [1, 'x'], True, None.
  if (name == "string" && !v.is_string()) return make_string(python_str(v));
  if (v.is_array()) {
    const auto& items = v.arr()->items;
    work(items.size());
    if (name == "list") return v.arr()->generator ? heap_.new_array(items) : v;
    if (name == "first" || name == "last") {
      if (items.empty()) throw_render_error("the list is empty");
      return name == "first" ? items.front() : items.back();
    }
    if (name == "length") return Value::integer(double(items.size()));
    if (name == "reverse") return heap_.new_array(std::vector<Value>(items.rbegin(), items.rend()));
    if (name == "min" || name == "max") {  // jinja2: case-insensitive, undefined when empty
      if (items.empty()) return Value::undefined();
      Value best = items[0];
      for (const Value& x : items) {
        const int c = compare(x, best, false);
        if (name == "min" ? c < 0 : c > 0) best = x;
      }
      return best;
    }
    if (name == "sort") {
      std::vector<Value> sorted = items;
      stable_sort_values(sorted, [this](const Value& a, const Value& b) { return compare(a, b, false); });
      return heap_.new_array(std::move(sorted));
    }
    if (name == "join") {
      std::string out;
      for (const Value& x : items) {
        const std::string piece = raw_string(x, 0, true);
        heap_.charge_string(piece.size());
        out += piece;
      }
      return make_string(std::move(out));
    }
    if (name == "string") return make_string(to_json(v, JsonOptions{}, 0, false));
    if (name == "unique") {  // a JavaScript Set: SameValueZero
      work(items.size());
      std::unordered_set<std::string> seen;
      std::vector<Value> out;
      for (const Value& x : items) {
        std::string key(1, char(x.t == VT::Float ? VT::Int : x.t));
        if (x.is_number()) {
          const double d = std::isnan(x.n) ? NAN : x.n == 0 ? 0.0 : x.n;
          key.append(reinterpret_cast<const char*>(&d), sizeof d);
        } else if (x.is_string()) {
          heap_.charge_string(x.str().size());
          key += x.str();
        } else if (x.t == VT::Bool) {
          key += x.b ? '1' : '0';
        } else if (!x.is_null() && !x.is_undefined()) {
          const void* ptr = x.p.get();
          key.append(reinterpret_cast<const char*>(&ptr), sizeof ptr);
        }
        if (seen.insert(std::move(key)).second) out.push_back(x);
      }
      return heap_.new_array(std::move(out));
    }
    throw_render_error("Unknown ArrayValue filter: " + name);
  }
  if (v.is_string()) {
    if (name == "length") return Value::integer(double(js_length(v)));
    if (name == "upper" || name == "lower" || name == "title" || name == "capitalize") {
      std::vector<Value> none;
      return string_method(v, name, none);
    }
    if (name == "trim") {
      std::vector<Value> none;
      return string_method(v, "strip", none);
    }
    if (name == "indent") return make_string(indent_lines(v.str(), "    ", false, false));
    if (name == "join" || name == "string") return v;
    if (name == "int" || name == "float") {
      scan(v.str().size());  // parsed
      const double x = name == "int" ? js_parse_int(v.str()) : js_parse_float(v.str());
      return Value::number(std::isnan(x) ? 0 : x, name == "float");
    }
    throw_render_error("Unknown StringValue filter: " + name);
  }
  if (v.is_number()) {
    if (name == "abs") return Value::number(std::fabs(v.n), v.t == VT::Float);
    if (name == "int") return Value::integer(std::trunc(v.n) + 0.0);
    if (name == "float") return Value::floating(v.n);
    if (name == "string") return make_string(display(v));
    throw_render_error("Unknown NumericValue filter: " + name);
  }
  if (v.is_mapping()) {
    if (name == "items") {
      std::vector<Value> none;
      return object_method(v, "items", none);
    }
    if (name == "length") return Value::integer(double(v.obj()->size()));
    const Value b = member_builtin(v, name);
    if (b.t == VT::Function) {
      std::vector<Value> none;
      return b.fn()->fn(none, env);
    }
    throw_render_error("Unknown ObjectValue filter: " + name);
  }
  if (v.t == VT::Bool) {
    if (name == "bool") return v;
    if (name == "int") return Value::integer(v.b ? 1 : 0);
    if (name == "float") return Value::floating(v.b ? 1 : 0);
    if (name == "string") return Value::string(v.b ? "true" : "false");
    throw_render_error("Unknown BooleanValue filter: " + name);
  }
  bad_type(name, v);
}

Value Interpreter::generator(std::vector<Value> items) {
  Value v = heap_.new_array(std::move(items));
  v.arr()->generator = true;
  return v;
}

Value Interpreter::apply_filter_call(const Value& v, const Node& f, Env* env) {
  if (f.a[0]->kind != NK::Identifier) throw_render_error("Unknown filter: " + describe(*f.a[0]));
  const std::string& name = f.a[0]->str;
  Value empty;
  if (name != "default" && empty_operand_filter(name, v, heap_, &empty)) return empty;
  if (name == "tojson") {
    const auto [args, kwargs] = arguments(f.params, env);
    JsonOptions o;
    const Value indent = option({}, 0, kwargs, "indent", Value::null());
    if (indent.t != VT::Int && !indent.is_null()) throw_render_error("If set, indent must be a number");
    if (indent.t == VT::Int && indent.n != 0 && !std::isnan(indent.n)) {
      if (indent.n < 0 || indent.n > 4096) throw_render_error("tojson: invalid indent " + display(indent));
      o.indent = int(indent.n);
    }
    const Value ascii = option({}, 0, kwargs, "ensure_ascii", Value::boolean(false));
    if (ascii.t != VT::Bool) throw_render_error("If set, ensure_ascii must be a boolean");
    const Value sort = option({}, 0, kwargs, "sort_keys", Value::boolean(false));
    if (sort.t != VT::Bool) throw_render_error("If set, sort_keys must be a boolean");
    const Value seps = option({}, 0, kwargs, "separators", Value::null());
    if (seps.is_array()) {
      const auto& s = seps.arr()->items;
      if (s.size() != 2 || !s[0].is_string() || !s[1].is_string())
        throw_render_error("separators must be a tuple of two strings");
      o.has_separators = true;
      o.item_sep = s[0].str();
      o.key_sep = s[1].str();
    } else if (!seps.is_null()) {
      throw_render_error("If set, separators must be a tuple of two strings");
    }
    o.ensure_ascii = ascii.b;
    o.sort_keys = sort.b;
    o.heap = &heap_;
    return make_string(to_json(v, o));
  }
  if (name == "join") {
    if (!v.is_string() && !v.is_array()) bad_type(name, v);
    const auto [args, kwargs] = arguments(f.params, env);
    const Value sep = option(args, 0, kwargs, "separator", Value::string(""));
    if (!sep.is_string()) throw_render_error("separator must be a string");
    std::string out;
    if (v.is_string()) {
      out = join_code_points(v, sep.str());
    } else {
      const auto& items = v.arr()->items;
      work(items.size());
      for (size_t i = 0; i < items.size(); ++i) {
        const std::string piece = raw_string(items[i], 0, true);
        heap_.charge_string(piece.size() + (i ? sep.str().size() : 0));
        if (i) out += sep.str();
        out += piece;
      }
    }
    return make_string(std::move(out));
  }
  if (name == "int" || name == "float") {
    const bool is_int = name == "int";
    const auto [args, kwargs] = arguments(f.params, env);
    const Value def = option(args, 0, kwargs, "default", is_int ? Value::integer(0) : Value::floating(0));
    if (v.is_string()) {
      scan(v.str().size());  // parsed
      const double x = is_int ? js_parse_int(v.str()) : js_parse_float(v.str());
      return std::isnan(x) ? def : Value::number(x, !is_int);
    }
    if (v.is_number()) return is_int ? Value::integer(std::trunc(v.n) + 0.0) : Value::floating(v.n);
    if (v.t == VT::Bool) return Value::number(v.b ? 1 : 0, !is_int);
    bad_type(name, v);
  }
  if (name == "default") {
    const auto [args, kwargs] = arguments(f.params, env);
    const Value def = args.size() > 0 ? args[0] : Value::string("");
    const Value boolean = option(args, 1, kwargs, "boolean", Value::boolean(false));
    if (boolean.t != VT::Bool) throw_render_error("`default` filter flag must be a boolean");
    if (v.is_undefined() || (boolean.b && !v.truthy())) return def;
    return v;
  }
  if (v.is_array()) {
    const auto& items = v.arr()->items;
    work(items.size());
    if (name == "sort") {
      const auto [args, kwargs] = arguments(f.params, env);
      const Value rev = option(args, 0, kwargs, "reverse", Value::boolean(false));
      if (rev.t != VT::Bool) throw_render_error("reverse must be a boolean");
      const Value cs = option(args, 1, kwargs, "case_sensitive", Value::boolean(false));
      if (cs.t != VT::Bool) throw_render_error("case_sensitive must be a boolean");
      const Value attr = option(args, 2, kwargs, "attribute", Value::null());
      if (!attr.is_string() && attr.t != VT::Int && !attr.is_null())
        throw_render_error("attribute must be a string, integer, or null");
      const std::string path = attr.is_null() ? "" : attr.is_string() ? attr.str() : js_number_to_string(attr.n);
      std::vector<Value> sorted = items;
      stable_sort_values(sorted, [&](const Value& a, const Value& b) {
        if (!attr.is_null()) scan(2 * path.size());  // looked up in both
        const Value x = attr.is_null() ? a : attribute_path(a, path), y = attr.is_null() ? b : attribute_path(b, path);
        const int r = compare(x, y, cs.b);
        return rev.b ? -r : r;
      });
      return heap_.new_array(std::move(sorted));
    }
    if (name == "selectattr" || name == "rejectattr") {
      const bool select = name == "selectattr";
      for (const Value& x : items)
        if (!x.is_container()) throw_render_error("`" + name + "` can only be applied to array of objects");
      for (const NodePtr& a : f.params)
        if (a->kind != NK::String) throw_render_error("arguments of `" + name + "` must be strings");
      std::vector<Value> a;
      for (const NodePtr& p : f.params) a.push_back(eval(*p, env));
      if (a.empty()) throw_render_error("`" + name + "` needs an attribute name");
      const bool has_test = a.size() > 1;
      if (has_test && !is_known_test(a[1].str())) throw_render_error("Unknown test: " + a[1].str());
      std::vector<Value> out;
      for (const Value& x : items) {
        scan(a[0].str().size());  // hashed
        const Value* attr = x.obj()->get(a[0].str());
        bool r = false;
        if (attr) {
          if (!has_test) r = attr->truthy();
          else if ((a[1].str() == "equalto" || a[1].str() == "eq") && a.size() < 3)
            throw_render_error("test '" + a[1].str() + "' needs a value to compare with");
          else r = run_test(a[1].str(), *attr, a.size() > 2 ? &a[2] : nullptr);
        }
        if (r == select) out.push_back(x);
      }
      return generator(std::move(out));
    }
    if (name == "map") {
      const auto [args, kwargs] = arguments(f.params, env);
      const Value* attr = kwargs.get("attribute");
      if (!attr) throw_render_error("`map` expressions without `attribute` set are not currently supported.");
      if (!attr->is_string()) throw_render_error("attribute must be a string");
      const Value* def = kwargs.get("default");
      std::vector<Value> out;
      for (const Value& x : items) {
        if (!x.is_container()) throw_render_error("items in map must be an object");
        scan(attr->str().size());  // looked up
        const Value r = attribute_path(x, attr->str());
        out.push_back(r.is_undefined() && def ? *def : r);
      }
      return generator(std::move(out));
    }
    throw_render_error("Unknown ArrayValue filter: " + name);
  }
  if (v.is_string()) {
    if (name == "indent") {
      const auto [args, kwargs] = arguments(f.params, env);
      const Value width = option(args, 0, kwargs, "width", Value::integer(4));
      if (width.t != VT::Int && !width.is_string()) throw_render_error("width must be an integer or a string");
      const Value first = option(args, 1, kwargs, "first", Value::boolean(false));
      const Value blank = option(args, 2, kwargs, "blank", Value::boolean(false));
      std::string ind;
      if (width.is_string()) ind = width.str();
      else if (width.n > 0) {
        if (width.n > 4096) throw_render_error("indent width too large");
        ind.assign(size_t(width.n), ' ');
      }
      const size_t lines = size_t(std::count(v.str().begin(), v.str().end(), '\n')) + 1;
      heap_.charge_string(v.str().size() + lines * ind.size());
      return make_string(indent_lines(v.str(), ind, raw_truthy(first), raw_truthy(blank)));
    }
    if (name == "replace") {
      auto [args, kwargs] = arguments(f.params, env);
      args.push_back(heap_.new_object(VT::KwArgs, std::move(kwargs)));
      return string_method(v, "replace", args);
    }
    throw_render_error("Unknown StringValue filter: " + name);
  }
  if (v.is_mapping()) {
    const Value b = member_builtin(v, name);
    if (b.t == VT::Function) {
      std::vector<Value> args = call_arguments(f.params, env);
      return b.fn()->fn(args, env);
    }
    throw_render_error("Unknown ObjectValue filter: " + name);
  }
  bad_type(name, v);
}

std::string Interpreter::join_code_points(const Value& s, const std::string& sep) {
  const std::string& str = s.str();
  const bool ascii = is_ascii(s);
  if (!ascii) scan(str.size());
  const size_t n = ascii ? str.size() : code_point_count(str);
  // The size is known before anything is built: charge it first, so a long
  // separator fails here rather than after allocating its copies.
  const size_t seps = n ? n - 1 : 0, room = lim_.max_output - std::min(lim_.max_output, str.size());
  if (!sep.empty() && seps > room / sep.size())
    throw_render_error("a string would exceed " + std::to_string(lim_.max_output) + " bytes");
  heap_.charge_string(str.size() + seps * sep.size());
  std::string out;
  out.reserve(str.size() + seps * sep.size());
  for (size_t i = 0; i < str.size();) {
    size_t len;
    utf8_decode(str, i, &len);
    if (i) out += sep;
    out.append(str, i, len);
    i += len;
  }
  return out;
}

void Interpreter::setup_globals(Env* g) {
  namespace_fn_ = heap_.new_function("namespace", [this](std::vector<Value>& args, Env*) {
    std::vector<Value> positional = args;
    Object kwargs;
    if (!positional.empty() && positional.back().t == VT::KwArgs) {
      kwargs = *positional.back().obj();
      positional.pop_back();
    }
    if (positional.size() > 1)
      throw_render_error("namespace expected at most 1 argument, got " + std::to_string(positional.size()));
    Object entries;
    if (positional.size() == 1) {
      const Value& src = positional[0];
      if (src.is_mapping()) {
        for (const auto& [k, x] : src.obj()->entries) entries.set(k, x);
      } else if (src.is_array()) {
        for (const Value& pair : src.arr()->items) {
          std::vector<Value> kv;
          if (pair.is_array()) kv = pair.arr()->items;
          else if (pair.is_string() && has_code_points(pair.str(), 2))  // a pair only if two characters
            for (auto& c : split_code_points(pair.str())) kv.push_back(Value::string(c));
          if (kv.size() != 2) throw_render_error("namespace expected an object or an iterable of [key, value] pairs");
          if (!kv[0].is_string()) throw_render_error("namespace keys must be strings");
          entries.set(kv[0].str(), kv[1]);
        }
      } else {
        throw_render_error(std::string("'") + type_name(src.t) + "' object is not iterable");
      }
    }
    for (const auto& [k, x] : kwargs.entries) entries.set(k, x);
    return heap_.new_object(VT::Namespace, std::move(entries));
  });
  auto& vars = g->vars;
  vars["false"] = vars["False"] = Value::boolean(false);
  vars["true"] = vars["True"] = Value::boolean(true);
  vars["none"] = vars["None"] = Value::null();
  vars["raise_exception"] = heap_.new_function("raise_exception", [](std::vector<Value>& args, Env*) -> Value {
    const Value msg = args.empty() ? Value::undefined() : args[0];
    throw RenderError{msg.is_undefined() ? std::string() : raw_string(msg), true};
  });
  vars["range"] = heap_.new_function("range", [this](std::vector<Value>& args, Env*) {
    const auto num = [&](size_t i, double def) {
      return i < args.size() && !args[i].is_undefined() ? to_number(args[i]) : def;
    };
    double start = num(0, NAN), stop = num(1, NAN), stp = num(2, 1);
    if (args.size() < 2 || args[1].is_undefined()) stop = start, start = 0;
    if (stp == 0) throw_render_error("range() step must not be zero");
    std::vector<Value> out;
    for (double i = start; stp > 0 ? i < stop : i > stop; i += stp) {
      if (out.size() >= lim_.max_heap)
        throw_render_error("the template allocates too much (range of more than " + std::to_string(lim_.max_heap) + " numbers)");
      out.push_back(Value::number(i, !(std::isfinite(i) && std::trunc(i) == i)));
      if (std::isnan(i)) break;
    }
    return heap_.new_array(std::move(out));
  });
  vars["strftime_now"] = heap_.new_function("strftime_now", [this](std::vector<Value>& args, Env*) {
    if (args.empty() || !args[0].is_string()) throw_render_error("strftime_now() needs a format string");
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    static const char* const kMonths[] = {"January", "February", "March",     "April",   "May",      "June",
                                          "July",    "August",   "September", "October", "November", "December"};
    const std::string& f = args[0].str();
    std::string out;
    char buf[16];
    for (size_t i = 0; i < f.size(); ++i) {
      if (f[i] != '%' || i + 1 >= f.size()) {
        out += f[i];
        continue;
      }
      const char c = f[++i];
      switch (c) {
        case 'Y': out += std::to_string(tm.tm_year + 1900); break;
        case 'm': std::snprintf(buf, sizeof buf, "%02d", tm.tm_mon + 1); out += buf; break;
        case 'd': std::snprintf(buf, sizeof buf, "%02d", tm.tm_mday); out += buf; break;
        case 'b': out += std::string(kMonths[tm.tm_mon]).substr(0, 3); break;
        case 'B': out += kMonths[tm.tm_mon]; break;
        case 'H': std::snprintf(buf, sizeof buf, "%02d", tm.tm_hour); out += buf; break;
        case 'M': std::snprintf(buf, sizeof buf, "%02d", tm.tm_min); out += buf; break;
        case '%': out += '%'; break;
        default: out += '%'; out += c;
      }
    }
    return make_string(std::move(out));
  });
}

}  // namespace edgellm::tmpl
