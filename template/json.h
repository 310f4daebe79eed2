// A small strict JSON value and parser (RFC 8259) for chat messages, tool
// definitions and template variables. Objects keep their key order; a
// repeated key keeps its first position and its last value (as JSON.parse).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace edgellm::tmpl {

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
  // be valid UTF-8; nesting deeper than max_depth is rejected.
  static Json parse(std::string_view text, std::string_view source = "JSON", int max_depth = 256);

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

  const Json* find(std::string_view key) const;  // objects only; null if absent
  void set(std::string key, Json v);             // objects: replace in place or append
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
};

// Formats a double the way JavaScript's Number.prototype.toString() does
// ("1", "0.1", "1e+21", "NaN", "-Infinity").
std::string js_number_to_string(double v);

}  // namespace edgellm::tmpl
