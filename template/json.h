// A small strict JSON value and parser (RFC 8259) for chat messages, tool
// definitions and template variables. Objects keep their key order; a
// repeated key keeps its first position and its last value (as JSON.parse).
//
// Reading is linear in the text: objects index their keys (many keys cost no
// more than many array items), nesting is bounded (kMaxJsonDepth, so the
// recursive reader cannot overflow the stack) and so is the text itself
// (kMaxJsonBytes), each with a clear error.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace edgellm::tmpl {

// The default bounds of Json::parse. A conversation file is kilobytes to a
// few megabytes; 64 MiB leaves room for long tool outputs and documents.
constexpr int kMaxJsonDepth = 256;                   // arrays and objects within each other
constexpr size_t kMaxJsonBytes = size_t(64) << 20;  // the whole text

class Json {
 public:
  enum class Type : uint8_t { Null, Bool, Number, String, Array, Object };

  Json() = default;
  static Json null() { return Json(); }
  static Json boolean(bool b);
  static Json number(double d);
  static Json string(std::string s);
  static Json array(std::vector<Json> items = {});
  static Json object(std::vector<std::pair<std::string, Json>> entries = {});

  // Throws edgellm::Error "SOURCE: line L, column C: what is wrong". Input must
  // be valid UTF-8, nest no deeper than max_depth and be at most max_bytes long.
  static Json parse(std::string_view text, std::string_view source = "JSON", int max_depth = kMaxJsonDepth,
                    size_t max_bytes = kMaxJsonBytes);

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::Null; }
  bool is_bool() const { return type_ == Type::Bool; }
  bool is_number() const { return type_ == Type::Number; }
  bool is_string() const { return type_ == Type::String; }
  bool is_array() const { return type_ == Type::Array; }
  bool is_object() const { return type_ == Type::Object; }

  bool as_bool() const { return bool_; }
  double as_number() const { return num_; }
  const std::string& as_string() const { return str_; }
  const std::vector<Json>& items() const { return arr_; }
  std::vector<Json>& items() { return arr_; }
  const std::vector<std::pair<std::string, Json>>& entries() const { return obj_; }

  const Json* find(std::string_view key) const;  // objects only; null if absent; O(1)
  void set(std::string key, Json v);             // objects: replace in place or append; O(1)
  void push_back(Json v) { arr_.push_back(std::move(v)); }

  // Compact JSON text (non-ASCII passes through; control characters escaped).
  std::string dump() const;

 private:
  Type type_ = Type::Null;
  bool bool_ = false;
  double num_ = 0;
  std::string str_;
  std::vector<Json> arr_;
  std::vector<std::pair<std::string, Json>> obj_;
  // Key -> position in obj_, kept once an object has more than a few keys
  // (below that a scan is cheaper than hashing); looked up by string_view.
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view k) const { return std::hash<std::string_view>{}(k); }
  };
  std::unordered_map<std::string, size_t, KeyHash, std::equal_to<>> index_;
  static constexpr size_t npos = size_t(-1);
  size_t position(std::string_view key) const;  // in obj_, or npos
};

// Formats a double the way JavaScript's Number.prototype.toString() does
// ("1", "0.1", "1e+21", "NaN", "-Infinity").
std::string js_number_to_string(double v);

}  // namespace edgellm::tmpl
