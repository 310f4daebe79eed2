// gguf::Value helpers: typed access with clear errors, display for inspect.
#include <cmath>
#include <limits>
#include <sstream>

#include "base/error.h"
#include "format/gguf.h"

namespace edgellm::gguf {

const char* value_type_name(ValueType t) {
  switch (t) {
    case ValueType::UINT8: return "uint8";
    case ValueType::INT8: return "int8";
    case ValueType::UINT16: return "uint16";
    case ValueType::INT16: return "int16";
    case ValueType::UINT32: return "uint32";
    case ValueType::INT32: return "int32";
    case ValueType::FLOAT32: return "float32";
    case ValueType::BOOL: return "bool";
    case ValueType::STRING: return "string";
    case ValueType::ARRAY: return "array";
    case ValueType::UINT64: return "uint64";
    case ValueType::INT64: return "int64";
    case ValueType::FLOAT64: return "float64";
  }
  return "unknown";
}

bool Value::is_integer() const {
  switch (type) {
    case ValueType::UINT8: case ValueType::UINT16: case ValueType::UINT32: case ValueType::UINT64:
    case ValueType::INT8: case ValueType::INT16: case ValueType::INT32: case ValueType::INT64:
      return true;
    default: return false;
  }
}

static bool is_unsigned(ValueType t) {
  return t == ValueType::UINT8 || t == ValueType::UINT16 || t == ValueType::UINT32 ||
         t == ValueType::UINT64 || t == ValueType::BOOL;
}

int64_t Value::as_int(std::string_view what) const {
  if (!is_integer()) fail(what, ": expected an integer, found ", value_type_name(type));
  if (is_unsigned(type)) {
    if (u > uint64_t(std::numeric_limits<int64_t>::max())) fail(what, ": value ", u, " is too large");
    return int64_t(u);
  }
  return i;
}

double Value::as_float(std::string_view what) const {
  if (is_float()) return f;
  if (is_integer()) return is_unsigned(type) ? double(u) : double(i);
  fail(what, ": expected a number, found ", value_type_name(type));
}

const std::string& Value::as_string(std::string_view what) const {
  if (type != ValueType::STRING) fail(what, ": expected a string, found ", value_type_name(type));
  return str;
}

std::string Value::to_display(size_t max_items) const {
  std::ostringstream os;
  switch (type) {
    case ValueType::STRING: {
      os << '"';
      size_t n = 0;
      for (char c : str) {
        if (++n > 200) { os << "..."; break; }
        if (c == '\n') os << "\\n";
        else if (c == '"') os << "\\\"";
        else if ((unsigned char)c < 0x20) os << "\\x" << std::hex << int(c) << std::dec;
        else os << c;
      }
      os << '"';
      break;
    }
    case ValueType::ARRAY:
      os << "[" << value_type_name(elem_type) << " x " << arr.size() << "]";
      if (!arr.empty() && max_items > 0) {
        os << " ";
        for (size_t k = 0; k < arr.size() && k < max_items; ++k) os << (k ? ", " : "") << arr[k].to_display(0);
        if (arr.size() > max_items) os << ", ...";
      }
      break;
    case ValueType::BOOL: os << (u ? "true" : "false"); break;
    case ValueType::FLOAT32: case ValueType::FLOAT64: os << f; break;
    default: if (is_unsigned(type)) os << u; else os << i;
  }
  return os.str();
}

Value Value::of_u32(uint32_t v) { Value x; x.type = ValueType::UINT32; x.u = v; return x; }
Value Value::of_i32(int32_t v) { Value x; x.type = ValueType::INT32; x.i = v; return x; }
Value Value::of_u64(uint64_t v) { Value x; x.type = ValueType::UINT64; x.u = v; return x; }
Value Value::of_f32(float v) { Value x; x.type = ValueType::FLOAT32; x.f = v; return x; }
Value Value::of_bool(bool v) { Value x; x.type = ValueType::BOOL; x.u = v ? 1 : 0; return x; }
Value Value::of_string(std::string v) { Value x; x.type = ValueType::STRING; x.str = std::move(v); return x; }
Value Value::of_array(ValueType elem, std::vector<Value> items) {
  Value x;
  x.type = ValueType::ARRAY;
  x.elem_type = elem;
  x.arr = std::move(items);
  return x;
}

}  // namespace edgellm::gguf
