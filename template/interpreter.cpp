#include "template/interpreter.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <unordered_set>

#include "base/error.h"
#include "template/python_str.h"
#include "template/utf8.h"

namespace edgellm::tmpl {

namespace {

struct BreakSignal {};
struct ContinueSignal {};

struct DepthGuard {
  DepthGuard(int& d, int max) : d_(d) {
    if (++d_ > max) throw_render_error("the template recurses too deeply (more than " + std::to_string(max) + " levels)");
  }
  ~DepthGuard() { --d_; }
  int& d_;
};

bool is_int_value(const Value& v) { return v.t == VT::Int; }

// Python-style slicing of n items, as the reference's slice() helper
// (doubles throughout, so huge or NaN bounds behave as in JavaScript): the
// selected indices, in order.
std::vector<size_t> slice_indices(size_t len, const Value& start_v, const Value& stop_v, const Value& step_v) {
  const double n = double(len);
  const double step = step_v.is_undefined() ? 1 : step_v.n;
  const double dir = std::isnan(step) ? NAN : step > 0 ? 1 : step < 0 ? -1 : 0;
  double start, stop;
  if (dir >= 0) {
    start = start_v.is_undefined() ? 0 : start_v.n;
    start = start < 0 ? std::max(n + start, 0.0) : std::min(start, n);
    stop = stop_v.is_undefined() ? n : stop_v.n;
    stop = stop < 0 ? std::max(n + stop, 0.0) : std::min(stop, n);
  } else {
    start = start_v.is_undefined() ? n - 1 : start_v.n;
    start = start < 0 ? std::max(n + start, -1.0) : std::min(start, n - 1);
    stop = stop_v.is_undefined() ? -1 : stop_v.n;
    stop = stop < -1 ? std::max(n + stop, -1.0) : std::min(stop, n - 1);
  }
  std::vector<size_t> out;
  for (double i = start; dir * i < dir * stop; i += step) {
    if (!(i >= 0 && i < n)) break;  // cannot happen for valid bounds; guards NaN / overflow
    out.push_back(size_t(i));
  }
  return out;
}

// Replaces code point indices (ascending or descending, as a slice picks
// them) with the byte offsets of those code points, walking `s` once.
void code_point_offsets(std::string_view s, std::vector<size_t>& picked) {
  const bool descending = picked.size() > 1 && picked[0] > picked[1];
  if (descending) std::reverse(picked.begin(), picked.end());
  size_t at = 0, cp = 0;
  for (size_t& k : picked) {
    for (; cp < k; ++cp) {
      size_t len;
      utf8_decode(s, at, &len);
      at += len;
    }
    k = at;
  }
  if (descending) std::reverse(picked.begin(), picked.end());
}

}  // namespace

Interpreter::Interpreter(const Limits& lim, std::string_view name) : lim_(lim), name_(name), heap_(lim_) {}

int Interpreter::compare(const Value& a, const Value& b, bool case_sensitive) {
  work(1);
  if (a.is_string() && b.is_string()) {
    scan(std::min(a.str().size(), b.str().size()));
    if (!case_sensitive) heap_.charge_string(a.str().size() + b.str().size());  // lowercased copies
  }
  return compare_values(a, b, case_sensitive);
}

bool Interpreter::is_ascii(const Value& s) {
  bool scanned = false;
  const bool ascii = s.str_ascii(&scanned);
  if (scanned) scan(s.str().size());
  return ascii;
}

size_t Interpreter::js_length(const Value& s) {
  if (is_ascii(s)) return s.str().size();
  scan(s.str().size());
  return utf16_length(s.str());
}

Value Interpreter::key_string(const std::string& key) {
  scan(key.size());
  return Value::string(key);
}

Value Interpreter::key_value(const Object& o, size_t i) {
  if (o.is_int_key(i)) return Value::integer(std::strtod(o.entries[i].first.c_str(), nullptr));
  return key_string(o.entries[i].first);
}

Value Interpreter::string_at(const Value& s, double index) {
  if (is_ascii(s)) {
    double k = std::isnan(index) ? 0 : std::trunc(index);
    const double n = double(s.str().size());
    if (k < 0) k += n;
    return k >= 0 && k < n ? Value::string(std::string(1, s.str()[size_t(k)])) : Value::undefined();
  }
  scan(s.str().size());
  std::string ch;
  return utf16_at(s.str(), index, &ch) ? Value::string(std::move(ch)) : Value::undefined();
}

std::string& Interpreter::checked_append(std::string& out, std::string_view piece) {
  heap_.charge_string(piece.size());
  if (out.size() + piece.size() > lim_.max_output)
    throw_render_error("the output would exceed " + std::to_string(lim_.max_output) + " bytes");
  return out.append(piece);
}

Value Interpreter::make_string(std::string s) {
  heap_.charge_string(s.size());
  return Value::string(std::move(s));
}

std::string Interpreter::run(const Node& program, const std::vector<std::pair<std::string, Value>>& vars) {
  struct LimitScope {
    explicit LimitScope(size_t v) : saved(string_limit()) { string_limit() = v; }
    ~LimitScope() { string_limit() = saved; }
    size_t saved;
  } limit_scope(lim_.max_output);
  try {
    Env* global = heap_.new_env(nullptr);
    setup_globals(global);
    for (const auto& [k, v] : vars) {
      if (global->vars.count(k) || k == "namespace") fail(name_, ": variable '", k, "' is already declared (a built-in)");
      global->vars[k] = v;
    }
    return render_block(program.body, global);
  } catch (const RenderError& e) {
    const int line = cur_ ? cur_->line : 0;
    if (e.raised) fail(name_, ", line ", line, ": the template raised an error: ", e.message);
    fail(name_, ", line ", line, ": ", cur_ ? describe(*cur_) : std::string("template"), ": ", e.message);
  } catch (const BreakSignal&) {
    fail(name_, ", line ", cur_ ? cur_->line : 0, ": {% break %} outside of a loop");
  } catch (const ContinueSignal&) {
    fail(name_, ", line ", cur_ ? cur_->line : 0, ": {% continue %} outside of a loop");
  }
}

Value Interpreter::lookup(Env* env, const std::string& name) {
  if (name == "namespace") {
    auto it = env->vars.find(name);
    return it != env->vars.end() ? it->second : namespace_fn_;
  }
  for (Env* e = env; e; e = e->parent) {
    auto it = e->vars.find(name);
    if (it != e->vars.end()) return it->second;
  }
  return Value::undefined();
}

Value Interpreter::eval(const Node& n, Env* env) {
  DepthGuard g(depth_, lim_.max_eval_depth);
  work(1 + n.str.size() / kBytesPerStep);  // a name is hashed, a literal copied
  const Node* saved = cur_;
  cur_ = &n;
  Value v = eval_node(n, env);
  cur_ = saved;
  return v;
}

Value Interpreter::eval_node(const Node& n, Env* env) {
  switch (n.kind) {
    case NK::Identifier: return lookup(env, n.str);
    case NK::Int: return Value::integer(n.num);
    case NK::Float: return Value::floating(n.num);
    case NK::String: case NK::Text: return Value::string(n.str);
    case NK::Binary: return eval_binary(n, env);
    case NK::Member: return eval_member(n, env);
    case NK::Call: return eval_call(n, env);
    case NK::Filter: return apply_filter(eval(*n.a[0], env), *n.a[1], env);
    case NK::Test: {
      const Value operand = eval(*n.a[0], env);
      const bool r = run_test(n.str, operand, nullptr);
      return Value::boolean(n.flag ? !r : r);
    }
    case NK::Ternary: return eval(*n.a[0], env).truthy() ? eval(*n.a[1], env) : eval(*n.a[2], env);
    case NK::Select: return eval(*n.a[1], env).truthy() ? eval(*n.a[0], env) : Value::undefined();
    case NK::Unary: return eval_unary(n, env);
    case NK::ArrayLit: case NK::TupleLit: {
      std::vector<Value> items;
      for (const NodePtr& c : n.a) items.push_back(eval(*c, env));
      return heap_.new_array(std::move(items), n.kind == NK::TupleLit);
    }
    case NK::ObjectLit: {
      Object o;
      for (size_t i = 0; i + 1 < n.a.size(); i += 2) {
        const Value k = eval(*n.a[i], env);
        // Python dicts take integer keys too ({16384: ...} in Seed-OSS); they
        // are stored as their decimal text, which lookups by integer use too.
        if (!k.is_string() && k.t != VT::Int)
          throw_render_error(std::string("Object keys must be strings or integers: got ") + type_name(k.t));
        o.set(k.is_string() ? k.str() : display(k), eval(*n.a[i + 1], env), !k.is_string());
      }
      return heap_.new_object(VT::Object, std::move(o));
    }
    case NK::If: return Value::string(render_if(n, env));
    case NK::For: return Value::string(render_for(n, env));
    case NK::Set: exec_set(n, env); return Value::null();
    case NK::Macro: return define_macro(n, env);
    case NK::CallBlock: return eval_call_block(n, env);
    case NK::FilterBlock: return apply_filter(Value::string(render_block(n.body, env)), *n.a[0], env);
    case NK::Comment: return Value::null();
    case NK::Break: throw BreakSignal{};
    case NK::Continue: throw ContinueSignal{};
    case NK::Program: return Value::string(render_block(n.body, env));
    default: throw_render_error("this expression cannot be evaluated here");
  }
}

std::string Interpreter::render_block(const std::vector<NodePtr>& stmts, Env* env) {
  std::string out;
  for (const NodePtr& s : stmts) {
    switch (s->kind) {
      case NK::Text: checked_append(out, s->str); break;
      case NK::Comment: break;
      default: {
        const Value v = eval(*s, env);
        if (v.is_string()) {
          checked_append(out, v.str());
        } else if (!v.is_null() && !v.is_undefined()) {
          const Node* saved = cur_;
          cur_ = s.get();  // converting a value to text can fail too (a tuple, a self-containing namespace)
          checked_append(out, display(v));
          cur_ = saved;
        }
      }
    }
  }
  return out;
}

std::string Interpreter::render_if(const Node& n, Env* env) {
  if (eval(*n.a[0], env).truthy()) return render_block(n.body, env);
  for (const NodePtr& branch : n.params)  // the elif branches
    if (eval(*branch->a[0], env).truthy()) return render_block(branch->body, env);
  return render_block(n.alt, env);
}

void Interpreter::bind_loop_variable(const Node& var, const Value& item, Env* scope) {
  if (var.kind == NK::Identifier) {
    scan(var.str.size());
    scope->vars[var.str] = item;
    return;
  }
  const auto& values = item.arr()->items;
  for (size_t j = 0; j < var.a.size(); ++j) {
    if (var.a[j]->kind != NK::Identifier)
      throw_render_error("Cannot unpack to a non-name in a for loop (" + describe(*var.a[j]) + ")");
    scan(var.a[j]->str.size());
    scope->vars[var.a[j]->str] = j < values.size() ? values[j] : Value::undefined();
  }
}

std::string Interpreter::render_for(const Node& n, Env* env) {
  Env* scope = heap_.new_env(env);
  const Node& var = *n.a[0];
  const Node* test = nullptr;
  Value iterable;
  if (n.a[1]->kind == NK::Select) {
    iterable = eval(*n.a[1]->a[0], scope);
    test = n.a[1]->a[1].get();
  } else {
    iterable = eval(*n.a[1], scope);
  }
  std::vector<Value> candidates;
  std::vector<Value> items;
  if (iterable.is_array()) {
    candidates = iterable.arr()->items;
  } else if (iterable.is_mapping()) {
    const Object& o = *iterable.obj();
    for (size_t i = 0; i < o.size(); ++i) candidates.push_back(key_value(o, i));
  } else if (iterable.is_undefined()) {
    // Python jinja2's Undefined iterates as empty: tool templates loop over
    // `tools` whether or not the caller passed any.
  } else {
    throw_render_error(std::string("Expected iterable or object type in for loop: got ") + type_name(iterable.t));
  }
  work(candidates.size());
  if (var.kind == NK::Identifier && !test) {
    items = std::move(candidates);
    candidates.clear();
  }
  for (const Value& item : candidates) {
    if (var.kind == NK::TupleLit) {
      if (item.t != VT::Array) throw_render_error(std::string("Cannot unpack non-iterable type: ") + type_name(item.t));
      const size_t want = var.a.size(), have = item.arr()->items.size();
      if (want != have) throw_render_error(std::string("Too ") + (want > have ? "few" : "many") + " items to unpack");
    }
    if (test) {
      Env* loop_scope = heap_.new_env(scope);
      bind_loop_variable(var, item, loop_scope);
      if (!eval(*test, loop_scope).truthy()) continue;
    }
    items.push_back(item);
  }
  std::string out;
  bool iterated = false;
  const double len = double(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    step();
    Object loop;
    loop.entries.reserve(9);
    const double k = double(i);
    loop.set("index", Value::integer(k + 1));
    loop.set("index0", Value::integer(k));
    loop.set("revindex", Value::integer(len - k));
    loop.set("revindex0", Value::integer(len - k - 1));
    loop.set("first", Value::boolean(i == 0));
    loop.set("last", Value::boolean(i + 1 == items.size()));
    loop.set("length", Value::integer(len));
    loop.set("previtem", i > 0 ? items[i - 1] : Value::undefined());
    loop.set("nextitem", i + 1 < items.size() ? items[i + 1] : Value::undefined());
    scope->vars["loop"] = heap_.new_object(VT::Object, std::move(loop));
    bind_loop_variable(var, items[i], scope);
    try {
      checked_append(out, render_block(n.body, scope));
    } catch (const ContinueSignal&) {
      continue;
    } catch (const BreakSignal&) {
      break;
    }
    iterated = true;
  }
  if (!iterated) checked_append(out, render_block(n.alt, scope));
  return out;
}

void Interpreter::exec_set(const Node& n, Env* env) {
  const Value rhs = n.a[1] ? eval(*n.a[1], env) : make_string(render_block(n.body, env));
  const Node& target = *n.a[0];
  if (target.kind == NK::Identifier) {
    scan(target.str.size());
    env->vars[target.str] = rhs;
  } else if (target.kind == NK::TupleLit) {
    if (!rhs.is_array()) throw_render_error(std::string("Cannot unpack non-iterable type in set: ") + type_name(rhs.t));
    const auto& values = rhs.arr()->items;
    if (values.size() != target.a.size())
      throw_render_error(std::string("Too ") + (target.a.size() > values.size() ? "few" : "many") +
                         " items to unpack in set");
    for (size_t i = 0; i < target.a.size(); ++i) {
      if (target.a[i]->kind != NK::Identifier) throw_render_error("Cannot unpack to a non-name in set");
      scan(target.a[i]->str.size());
      env->vars[target.a[i]->str] = values[i];
    }
  } else if (target.kind == NK::Member) {
    const Value obj = eval(*target.a[0], env);
    if (obj.t != VT::Namespace) throw_render_error("cannot assign attribute on non-namespace object");
    if (target.a[1]->kind != NK::Identifier) throw_render_error("Cannot assign to member with non-identifier property");
    Object& ns = *obj.obj();
    scan(target.a[1]->str.size());
    if (!ns.get(target.a[1]->str)) heap_.grow(ns);
    ns.set(target.a[1]->str, rhs);
  } else {
    throw_render_error("invalid target for {% set %}: " + describe(target));
  }
}

Value Interpreter::eval_unary(const Node& n, Env* env) {
  const Value arg = eval(*n.a[0], env);
  if (n.str == "not") return Value::boolean(!arg.truthy());
  const double sign = n.str == "-" ? -1 : 1;
  if (arg.is_numeric_like()) {
    const double v = arg.t == VT::Bool ? (arg.b ? 1 : 0) : arg.n;
    return Value::number(sign * v, arg.t == VT::Float);
  }
  throw_render_error("Unknown operator \"" + n.str + "\" for " + type_name(arg.t));
}

Value Interpreter::eval_binary(const Node& n, Env* env) {
  const std::string& op = n.str;
  const Value left = eval(*n.a[0], env);
  if (op == "and") return left.truthy() ? eval(*n.a[1], env) : left;
  if (op == "or") return left.truthy() ? left : eval(*n.a[1], env);
  const Value right = eval(*n.a[1], env);
  if (op == "==" || op == "!=") {
    // An object against a primitive compares by its string form: build it here, where it is accounted.
    const auto is_ref = [](const Value& v) { return v.is_array() || v.is_container() || v.t == VT::Function; };
    const Value l = is_ref(left) && !is_ref(right) ? make_string(raw_string(left)) : left;
    const Value r = is_ref(right) && !is_ref(left) ? make_string(raw_string(right)) : right;
    // Strings compare bytewise, or are parsed as a number against a number.
    scan((l.is_string() ? l.str().size() : 0) + (r.is_string() ? r.str().size() : 0));
    const bool eq = loose_equal(l, r);
    return Value::boolean(op == "==" ? eq : !eq);
  }
  const bool is_in = op == "in" || op == "not in";
  if (left.is_number() && right.is_number() && op != "~" && op != "**") {
    const double a = left.n, b = right.n;
    const bool fl = left.t == VT::Float || right.t == VT::Float;
    if (op == "+") return Value::number(a + b, fl);
    if (op == "-") return Value::number(a - b, fl);
    if (op == "*") return Value::number(a * b, fl);
    if (op == "/") return Value::floating(a / b);
    if (op == "//") return Value::number(std::floor(a / b), fl);
    if (op == "%") return Value::number(std::fmod(a, b), fl);
    if (op == "<") return Value::boolean(a < b);
    if (op == ">") return Value::boolean(a > b);
    if (op == ">=") return Value::boolean(a >= b);
    if (op == "<=") return Value::boolean(a <= b);
  } else if (left.is_undefined() || right.is_undefined()) {
    if (right.is_undefined() && is_in) return Value::boolean(op == "not in");
    if (op == "~" && !left.is_null() && !right.is_null()) {
      std::string s = left.is_undefined() ? "" : raw_string(left);
      s += right.is_undefined() ? "" : raw_string(right);
      return make_string(std::move(s));
    }
    throw_render_error("Cannot perform operation " + op + " on undefined values");
  } else if (left.is_null() || right.is_null()) {
    throw_render_error("Cannot perform operation on null values");
  } else if (op == "~") {
    return make_string(raw_string(left) + raw_string(right));
  } else if (op == "**" && left.is_numeric_like() && right.is_numeric_like()) {
    const double a = left.t == VT::Bool ? double(left.b) : left.n, b = right.t == VT::Bool ? double(right.b) : right.n;
    if (a == 0 && b < 0) throw_render_error("0.0 cannot be raised to a negative power");
    double r = std::pow(a, b);
    if (std::isnan(b) || (std::fabs(a) == 1 && std::isinf(b))) r = NAN;  // JavaScript's **, not C's pow
    if (!std::isfinite(r)) throw_render_error("Exponentiation result is not a finite real number");
    return Value::number(r, left.t == VT::Float || right.t == VT::Float || b < 0);
  } else if (left.is_array() && right.is_array()) {
    if (op == "+") {
      work(left.arr()->items.size() + right.arr()->items.size());
      std::vector<Value> items = left.arr()->items;
      items.insert(items.end(), right.arr()->items.begin(), right.arr()->items.end());
      return heap_.new_array(std::move(items));
    }
  } else if (right.is_array()) {
    if (is_in) {
      work(right.arr()->items.size());
      bool member = false;
      for (const Value& x : right.arr()->items) {
        if (x.is_string() && left.is_string() && x.str().size() == left.str().size()) scan(x.str().size());
        if (strict_equal(x, left)) { member = true; break; }
      }
      return Value::boolean(op == "in" ? member : !member);
    }
  }
  if (left.is_string() && right.is_string() && op == "+" && (left.is_markup() || right.is_markup())) {
    // jinja2's Markup.__add__: the plain side is HTML-escaped, the sum is Markup.
    scan(left.str().size() + right.str().size());
    Value m = make_string((left.is_markup() ? left.str() : html_escape(left.str())) +
                          (right.is_markup() ? right.str() : html_escape(right.str())));
    std::static_pointer_cast<StringData>(m.p)->markup = true;
    return m;
  }
  if ((left.is_string() || right.is_string()) && op == "+") return make_string(raw_string(left) + raw_string(right));
  if (left.is_string() && right.is_string() && is_in) {
    scan(right.str().size() + left.str().size());
    const bool found = find_bytes(right.str(), left.str()) != std::string::npos;
    return Value::boolean(op == "in" ? found : !found);
  }
  if (left.is_string() && right.is_mapping() && is_in) {
    scan(left.str().size());  // hashed
    const bool found = right.obj()->get(left.str()) != nullptr;
    return Value::boolean(op == "in" ? found : !found);
  }
  throw_render_error("Unknown operator \"" + op + "\" between " + type_name(left.t) + " and " + type_name(right.t));
}

Value Interpreter::eval_slice(const Value& obj, const Node& slice, Env* env) {
  if (!obj.is_array() && !obj.is_string()) throw_render_error("Slice object must be an array or string");
  Value parts[3];
  static const char* const kNames[] = {"start", "stop", "step"};
  for (int i = 0; i < 3; ++i) {
    if (slice.a[i]) parts[i] = eval(*slice.a[i], env);
    if (!is_int_value(parts[i]) && !parts[i].is_undefined())
      throw_render_error(std::string("Slice ") + kNames[i] + " must be numeric or undefined");
  }
  if (obj.is_array()) {
    const auto& items = obj.arr()->items;
    work(items.size());
    std::vector<Value> out;
    for (size_t i : slice_indices(items.size(), parts[0], parts[1], parts[2])) out.push_back(items[i]);
    return heap_.new_array(std::move(out));
  }
  const std::string& s = obj.str();
  const bool ascii = is_ascii(obj);
  if (!ascii) scan(s.size());
  std::vector<size_t> picked = slice_indices(ascii ? s.size() : code_point_count(s), parts[0], parts[1], parts[2]);
  scan(picked.size() * sizeof(size_t));  // the offsets, built and read
  if (!ascii) code_point_offsets(s, picked);
  std::string out;
  for (size_t at : picked) {
    size_t len;
    utf8_decode(s, at, &len);
    out.append(s, at, len);
  }
  return make_string(std::move(out));
}

Value Interpreter::eval_member(const Node& n, Env* env) {
  const Value obj = eval(*n.a[0], env);
  // As jinja2's Undefined: `no_such.x` raises, while `no_such` alone prints
  // as empty and `d.missing` is undefined.
  if (obj.is_undefined()) throw_render_error(describe(*n.a[0]) + " is undefined");
  const Node& pn = *n.a[1];
  Value prop;
  if (n.flag) {
    if (pn.kind == NK::Slice) return eval_slice(obj, pn, env);
    prop = eval(pn, env);
  } else if (pn.kind == NK::Int) {
    prop = Value::integer(pn.num);
  } else {
    prop = key_string(pn.str);
  }
  if (obj.is_mapping() && prop.t == VT::Int) prop = make_string(display(prop));  // an integer key (see ObjectLit)
  if (obj.is_container()) {
    if (!prop.is_string()) throw_render_error(std::string("Cannot access property with non-string: got ") + type_name(prop.t));
    scan(prop.str().size());  // hashed
    if (const Value* v = obj.obj()->get(prop.str())) return *v;
    return obj.is_mapping() ? member_builtin(obj, prop.str()) : Value::undefined();
  }
  if (obj.is_array() || obj.is_string()) {
    if (prop.t == VT::Int) {
      if (obj.is_string()) return string_at(obj, prop.n);
      const auto& items = obj.arr()->items;
      double k = std::isnan(prop.n) ? 0 : std::trunc(prop.n);
      if (k < 0) k += double(items.size());
      return k >= 0 && k < double(items.size()) ? items[size_t(k)] : Value::undefined();
    }
    if (prop.is_string()) return member_builtin(obj, prop.str());
    throw_render_error(std::string("Cannot access property with non-string/non-number: got ") + type_name(prop.t));
  }
  if (!prop.is_string()) throw_render_error(std::string("Cannot access property with non-string: got ") + type_name(prop.t));
  return member_builtin(obj, prop.str());
}

std::pair<std::vector<Value>, Object> Interpreter::arguments(const std::vector<NodePtr>& args, Env* env) {
  std::vector<Value> positional;
  Object kwargs;
  for (const NodePtr& a : args) {
    if (a->kind == NK::Spread) {
      const Value v = eval(*a->a[0], env);
      if (!v.is_array()) throw_render_error(std::string("Cannot unpack non-iterable type: ") + type_name(v.t));
      work(v.arr()->items.size());
      positional.insert(positional.end(), v.arr()->items.begin(), v.arr()->items.end());
    } else if (a->kind != NK::KwArg && a->kind != NK::KwSpread) {
      positional.push_back(eval(*a, env));
    }
  }
  const auto add = [&](const std::string& k, Value v) {
    scan(k.size());  // hashed
    if (kwargs.get(k)) throw_render_error("Got multiple values for keyword argument '" + k + "'");
    kwargs.set(k, std::move(v));
  };
  for (const NodePtr& a : args) {
    if (a->kind == NK::KwArg) {
      add(a->str, eval(*a->a[0], env));
    } else if (a->kind == NK::KwSpread) {
      const Value v = eval(*a->a[0], env);
      if (!v.is_mapping()) throw_render_error(std::string("Argument after ** must be a mapping, not ") + type_name(v.t));
      work(v.obj()->size());
      for (const auto& [k, x] : v.obj()->entries) add(k, x);
    }
  }
  return {std::move(positional), std::move(kwargs)};
}

std::vector<Value> Interpreter::call_arguments(const std::vector<NodePtr>& args, Env* env) {
  for (const NodePtr& a : args) {
    if (a->kind == NK::KwArg || a->kind == NK::Spread || a->kind == NK::KwSpread) {
      auto [positional, kwargs] = arguments(args, env);
      if (kwargs.size() > 0) positional.push_back(heap_.new_object(VT::KwArgs, std::move(kwargs)));
      return positional;
    }
  }
  std::vector<Value> out;
  out.reserve(args.size());
  for (const NodePtr& a : args) out.push_back(eval(*a, env));
  return out;
}

Value Interpreter::eval_call(const Node& n, Env* env) {
  std::vector<Value> args = call_arguments(n.params, env);
  const Value fn = eval(*n.a[0], env);
  if (fn.t != VT::Function)
    throw_render_error(std::string("Cannot call something that is not a function: got ") + type_name(fn.t));
  const Node* saved = cur_;
  Value r = fn.fn()->fn(args, env);
  cur_ = saved;
  return r;
}

void Interpreter::bind_arguments(const std::string& who, const Node& def, std::vector<Value> args, Env* scope) {
  Value kw;  // the keyword arguments, looked up by name (a call may pass many with **)
  if (!args.empty() && args.back().t == VT::KwArgs) {
    kw = std::move(args.back());
    args.pop_back();
  }
  const Object* kwargs = kw.is_mapping() ? kw.obj() : nullptr;
  std::unordered_set<std::string_view> bound;  // keyword arguments taken by a parameter
  std::vector<const Node*> pending;
  for (size_t i = 0; i < def.params.size(); ++i) {
    const Node& p = *def.params[i];
    scan(p.str.size());
    bool have = i < args.size();
    Value v = have ? args[i] : Value::undefined();
    if (!have && kwargs) {
      if (const Value* x = kwargs->get(p.str)) {
        v = *x;
        have = true;
        bound.insert(p.str);
      }
    }
    if (!have && p.kind == NK::KwArg) pending.push_back(&p);
    scope->vars[p.str] = v;
  }
  const size_t n_kwargs = kwargs ? kwargs->size() : 0;
  work(n_kwargs);
  if (def.uses_kwargs) {
    Object o;
    for (size_t i = 0; i < n_kwargs; ++i)
      if (!bound.count(kwargs->entries[i].first)) o.set(kwargs->entries[i].first, kwargs->entries[i].second);
    scope->vars["kwargs"] = heap_.new_object(VT::Object, std::move(o));
  } else if (bound.size() < n_kwargs) {
    for (const auto& [k, v] : kwargs->entries)
      if (!bound.count(k)) throw_render_error("macro " + who + " takes no keyword argument '" + k + "'");
  }
  if (def.uses_varargs) {
    work(args.size());
    std::vector<Value> rest;
    for (size_t i = def.params.size(); i < args.size(); ++i) rest.push_back(args[i]);
    scope->vars["varargs"] = heap_.new_array(std::move(rest));
  } else if (args.size() > def.params.size()) {
    throw_render_error("macro " + who + " takes not more than " + std::to_string(def.params.size()) + " argument(s)");
  }
  for (const Node* p : pending) scope->vars[p->str] = eval(*p->a[0], scope);
}

Value Interpreter::define_macro(const Node& n, Env* env) {
  const Node* def = &n;
  env->vars[n.str] = heap_.new_function(n.str, [this, def, env](std::vector<Value>& args, Env* call_site) {
    DepthGuard calls(call_depth_, lim_.max_call_depth);
    Env* parent = env;
    if (def->uses_caller) {
      Value caller;
      if (call_site && call_site->call_block_scope) {
        auto it = call_site->vars.find("caller");
        if (it != call_site->vars.end()) caller = it->second;
      }
      parent = heap_.new_env(env);
      parent->vars["caller"] = caller;
    }
    Env* scope = heap_.new_env(parent);
    bind_arguments("'" + def->str + "'", *def, args, scope);
    return Value::string(render_block(def->body, scope));
  });
  return Value::null();
}

Value Interpreter::eval_call_block(const Node& n, Env* env) {
  const Node* def = &n;
  const Value caller = heap_.new_function("caller", [this, def, env](std::vector<Value>& args, Env*) {
    DepthGuard calls(call_depth_, lim_.max_call_depth);
    Env* scope = heap_.new_env(env);
    bind_arguments("None", *def, args, scope);
    return Value::string(render_block(def->body, scope));
  });
  const Node& call = *n.a[0];
  auto [args, kwargs] = arguments(call.params, env);
  args.push_back(heap_.new_object(VT::KwArgs, std::move(kwargs)));
  const Value fn = eval(*call.a[0], env);
  if (fn.t != VT::Function)
    throw_render_error(std::string("Cannot call something that is not a function: got ") + type_name(fn.t));
  Env* site = heap_.new_env(env);
  site->call_block_scope = true;
  site->vars["caller"] = caller;
  const Node* saved = cur_;
  Value r = fn.fn()->fn(args, site);
  cur_ = saved;
  return r;
}

}  // namespace edgellm::tmpl
