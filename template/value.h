// Runtime values of the template interpreter, and the heap that owns them.
//
// The semantics follow the reference renderer, @huggingface/jinja (the one
// transformers.js and the Hub use), down to its JavaScript details: numbers
// are doubles tagged integer or float, `==` is JavaScript's loose equality,
// lists and mappings compare by identity, `{{ true }}` prints "true".
// Where real chat templates rely on Python's jinja2 (transformers' renderer,
// which their authors test with) being more lenient or different, jinja2
// wins: an undefined variable iterates as empty and has length 0 (its
// attributes raise), dicts take integer keys, str.format(), `|string` is
// Python's str(), `|safe` makes a Markup, map/selectattr give generators
// that tojson refuses (tests/test_template_jinja2.cpp checks all of them).
//
// Strings, lists, mappings and functions are reference-counted and freed as
// soon as nothing refers to them (a loop's per-iteration `loop` object, say).
// Only two kinds of object are mutable and can close a reference cycle:
// namespaces (`{% set ns.me = ns %}`) and scopes (a macro is held by the scope
// it closes over). Those live in the per-render Heap, which empties them when
// the render ends, so no cycle outlives it.
#pragma once
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace edgellm::tmpl {

class Json;

// Bounds on one render: a template is untrusted input (it comes with the
// model file), so every resource it can consume is capped.
struct Limits {
  size_t max_output = size_t(32) << 20;        // bytes of rendered text (and of any one string)
  size_t max_string_work = size_t(256) << 20;  // bytes of all strings built during the render
  uint64_t max_steps = 20'000'000;             // work, in steps (see kBytesPerStep)
  size_t max_heap = 4'000'000;                 // list elements, mapping entries, objects alive at once
  int max_call_depth = 64;                     // nested macro calls
  int max_eval_depth = 512;                    // nested evaluation (expressions within expressions)
  // A backstop on wall-clock time, checked every few thousand steps; the
  // bounds above are the deterministic ones.
  double max_seconds = 10;
};

// Work is counted in steps: one per expression evaluated or loop iteration,
// one per list element or mapping entry created, and one per kBytesPerStep
// bytes of string built, copied or scanned (measuring, searching, comparing,
// parsing a number). Every operation is charged in proportion to what it
// costs, so no single step takes long and the limits hold for any template.
constexpr size_t kBytesPerStep = 64;

// A runtime error without position; the interpreter adds line and construct.
struct RenderError {
  std::string message;
  bool raised = false;  // from raise_exception(): the template's own message
};
[[noreturn]] void throw_render_error(std::string message);

enum class VT : uint8_t {
  Undefined, Null, Bool, Int, Float, String, Array, Tuple, Object, KwArgs, Namespace, Function
};
const char* type_name(VT t);

struct Array;
struct Object;
struct Function;

struct Value {
  VT t = VT::Undefined;
  bool b = false;
  double n = 0;
  std::shared_ptr<void> p;  // std::string / Array / Object / Function, by t

  static Value undefined() { return {}; }
  static Value null() { return make(VT::Null); }
  static Value boolean(bool v) { Value x = make(VT::Bool); x.b = v; return x; }
  static Value integer(double v) { Value x = make(VT::Int); x.n = v; return x; }
  static Value floating(double v) { Value x = make(VT::Float); x.n = v; return x; }
  static Value number(double v, bool is_float) { return is_float ? floating(v) : integer(v); }
  static Value string(std::string v);

  const std::string& str() const;
  // Whether a string value is all ASCII (so its length and indices in
  // characters are its bytes'). The first call scans the string and sets
  // *scanned, for the caller to account; later calls are O(1).
  bool str_ascii(bool* scanned) const;
  Array* arr() const { return static_cast<Array*>(p.get()); }
  Object* obj() const { return static_cast<Object*>(p.get()); }
  Function* fn() const { return static_cast<Function*>(p.get()); }

  bool is_undefined() const { return t == VT::Undefined; }
  bool is_null() const { return t == VT::Null; }
  bool is_string() const { return t == VT::String; }
  bool is_markup() const;  // a string marked safe (StringData::markup)
  bool is_number() const { return t == VT::Int || t == VT::Float; }
  bool is_numeric_like() const { return is_number() || t == VT::Bool; }
  bool is_array() const { return t == VT::Array || t == VT::Tuple; }      // lists and tuples
  bool is_mapping() const { return t == VT::Object || t == VT::KwArgs; }  // not namespaces
  bool is_container() const { return is_mapping() || t == VT::Namespace; }
  bool truthy() const;

 private:
  static Value make(VT t) { Value x; x.t = t; return x; }
};

// What a string value points to: the bytes, and whether they are ASCII once
// that is known (strings are immutable, so it stays true).
struct StringData {
  std::string s;
  mutable int8_t ascii = -1;  // -1 unknown, 0 no, 1 yes
  // jinja2's Markup (what |safe returns): `markup + str` HTML-escapes the str
  // and is Markup again, as in jinja2 (functionary's tool list relies on it).
  bool markup = false;
};
inline const std::string& Value::str() const { return static_cast<const StringData*>(p.get())->s; }
inline bool Value::is_markup() const { return t == VT::String && static_cast<const StringData*>(p.get())->markup; }

// Heap units held by a list, mapping or function, returned to the Heap's
// count of live units when it is freed. A copy is not accounted.
struct Accounted {
  size_t* live = nullptr;
  size_t units = 0;
  Accounted() = default;
  Accounted(const Accounted&) {}
  Accounted& operator=(const Accounted&) { return *this; }
  ~Accounted() {
    if (live) *live -= units;
  }
};

// Lists, mappings and bound functions record how deeply they nest (a
// namespace counts as a root: the Heap holds it). Nesting is bounded, so that
// freeing a value never recurses without bound.
constexpr int kMaxValueDepth = 500;
int nesting_depth(const Value& v);

struct Array {
  std::vector<Value> items;
  Accounted acct;
  int depth = 1;
  // What jinja2 returns as a generator (map, selectattr, rejectattr): json
  // cannot serialise it (tojson fails, as in transformers), |list makes it a list.
  bool generator = false;
};

// An insertion-ordered mapping (a JavaScript Map): setting an existing key
// keeps its position.
struct Object {
  std::vector<std::pair<std::string, Value>> entries;
  Accounted acct;
  int depth = 1;
  const Value* get(std::string_view key) const;
  // `int_key`: the key is an integer in the template ({16384: 1024}), kept
  // as its decimal text and given back as an integer when iterated.
  void set(std::string key, Value v, bool int_key = false);
  bool is_int_key(size_t i) const { return i < int_keys_.size() && int_keys_[i]; }
  size_t size() const { return entries.size(); }

 private:
  std::unordered_map<std::string, size_t> index_;  // built once there are many entries
  std::vector<bool> int_keys_;                     // empty unless some key is an integer
};

struct Env;
// Native and template-defined functions. `args` are the positional arguments,
// then one KwArgs value if there were keyword arguments. `call_site` is the
// scope of the caller (call blocks pass `caller` through it).
using NativeFn = std::function<Value(std::vector<Value>& args, Env* call_site)>;
struct Function {
  std::string name;
  NativeFn fn;
  Accounted acct;
  int depth = 1;  // 1 + the nesting of the value it is bound to
};

// A scope. Every scope has its own `namespace` (as in the reference), so a
// lookup of "namespace" that misses in the innermost scope finds the built-in.
// Scopes are owned by the Heap; functions refer to them by plain pointers.
struct Env {
  Env* parent = nullptr;
  std::unordered_map<std::string, Value> vars;
  bool call_block_scope = false;
};

class Heap {
 public:
  explicit Heap(const Limits& lim);
  ~Heap();  // empties scopes and namespaces first, which breaks every cycle
  Heap(const Heap&) = delete;
  Heap& operator=(const Heap&) = delete;
  Value new_array(std::vector<Value> items, bool tuple = false);
  Value new_object(VT kind, Object o = {});  // kind: Object, KwArgs or Namespace
  Value new_function(std::string name, NativeFn fn, const Value* bound_to = nullptr);
  Env* new_env(Env* parent);
  // Accounts `units` more live heap (list elements, mapping entries, objects;
  // freed objects give theirs back) / `bytes` of string building over the
  // whole render; throws past the limits. Both count as work too.
  void charge(size_t units);
  void charge_string(size_t bytes);
  // Accounts `units` steps of work / `bytes` scanned or copied (see
  // kBytesPerStep); throws past Limits::max_steps or max_seconds.
  void work(uint64_t units);
  void scan(size_t bytes) { work(bytes / kBytesPerStep); }
  // A namespace grew by one attribute.
  void grow(Object& ns) {
    charge(1);
    ++ns.acct.units;
  }
  const Limits& limits() const { return lim_; }

 private:
  const Limits& lim_;
  size_t live_ = 0, string_work_ = 0;
  uint64_t steps_ = 0, next_clock_check_ = 4096;
  std::chrono::steady_clock::time_point deadline_;
  std::deque<Env> envs_;
  std::vector<std::shared_ptr<Object>> namespaces_;
};

// --- JavaScript-compatible conversions ------------------------------------

// The longest string a conversion below may build before it fails (the
// interpreter sets it to Limits::max_output for the duration of a render).
size_t& string_limit();

// What `{{ value }}` prints (the reference's RuntimeValue.toString()).
std::string display(const Value& v, int depth = 0);
// String(value.value): the raw JavaScript value as a string, used by `~`,
// string `+` and the join filter (`null_as_empty`: Array.join's treatment).
std::string raw_string(const Value& v, int depth = 0, bool null_as_empty = false);

struct JsonOptions {
  int indent = 0;  // 0: none
  bool ensure_ascii = false;
  bool sort_keys = false;
  bool has_separators = false;
  std::string item_sep, key_sep;
  Heap* heap = nullptr;  // if set, charged for sort_keys' comparisons (the output is the caller's to charge)
};
std::string to_json(const Value& v, const JsonOptions& o, int depth = 0, bool undefined_as_null = true);
std::string json_string(std::string_view s, bool ensure_ascii = false);  // JSON.stringify(str)

bool loose_equal(const Value& a, const Value& b);   // JavaScript ==
bool strict_equal(const Value& a, const Value& b);  // JavaScript ===
bool same_value_zero(const Value& a, const Value& b);  // Set membership
// The reference's compareRuntimeValues (sort, dictsort); throws on mixed types.
int compare_values(const Value& a, const Value& b, bool case_sensitive);
// Approximates String.prototype.localeCompare (ICU root collation) for keys.
int locale_compare(std::string_view a, std::string_view b);

double string_to_number(std::string_view s);  // JavaScript Number(string)
double to_number(const Value& v);             // JavaScript ToNumber of the raw value
double js_parse_int(std::string_view s);      // parseInt(s, 10)
double js_parse_float(std::string_view s);    // parseFloat(s)
std::string float_to_string(double v);        // FloatValue.toString(): "1.0", "-0.0", "1.5"

// Converts JSON (messages, variables) into heap values, as the reference's
// convertToRuntimeValues does after JSON.parse: integral numbers are
// integers, and keys that are array indices come first in ascending order.
Value from_json(Heap& heap, const Json& j);

// A stable merge sort that tolerates comparators that throw.
void stable_sort_values(std::vector<Value>& v, const std::function<int(const Value&, const Value&)>& cmp);

}  // namespace edgellm::tmpl
