// The malformed-GGUF corpus. Fields are found by searching for the
// length-prefixed key or tensor name that precedes them, then overwritten, so
// the cases keep working if the valid file gains keys or tensors.
#include "tests/gguf_corpus.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string_view>

#include "format/gguf.h"

namespace edgellm::test {

namespace {

using gguf::Value;
using gguf::ValueType;
using Bytes = std::vector<uint8_t>;

Value uval(ValueType t, uint64_t u) { Value v; v.type = t; v.u = u; return v; }
Value ival(ValueType t, int64_t i) { Value v; v.type = t; v.i = i; return v; }
Value fval(ValueType t, double f) { Value v; v.type = t; v.f = f; return v; }

// The valid file, plus `extra` metadata appended after the standard keys.
Bytes build(const std::vector<std::pair<std::string, Value>>& extra = {}) {
  static const float a[8] = {1, 2, 3, 4, 5, 6, 7, 8};                  // f32 [4, 2]
  static const uint16_t b[8] = {0x3c00, 0x4000, 0xbc00, 0, 1, 2, 3, 4};  // f16 [8]
  static uint8_t c[34] = {0x00, 0x3c, 1, 2, 3, 0xff};                   // one q8_0 block
  gguf::Writer w;
  w.set("general.architecture", Value::of_string("llama"));
  w.set("t.u8", uval(ValueType::UINT8, 200));
  w.set("t.i8", ival(ValueType::INT8, -5));
  w.set("t.u16", uval(ValueType::UINT16, 60000));
  w.set("t.i16", ival(ValueType::INT16, -30000));
  w.set("t.u32", Value::of_u32(7));
  w.set("t.i32", Value::of_i32(-7));
  w.set("t.u64", Value::of_u64(1ull << 40));
  w.set("t.i64", ival(ValueType::INT64, -(1ll << 40)));
  w.set("t.f32", Value::of_f32(0.5f));
  w.set("t.f64", fval(ValueType::FLOAT64, 0.25));
  w.set("t.bool", Value::of_bool(true));
  w.set("t.str", Value::of_string("hello"));
  w.set("t.ints", Value::of_array(ValueType::INT32,
                                  {Value::of_i32(1), Value::of_i32(2), Value::of_i32(3)}));
  w.set("t.strings", Value::of_array(ValueType::STRING, {Value::of_string("a"),
                                                         Value::of_string("bc"),
                                                         Value::of_string("")}));
  w.set("t.nested",
        Value::of_array(ValueType::ARRAY,
                        {Value::of_array(ValueType::UINT8, {uval(ValueType::UINT8, 1),
                                                            uval(ValueType::UINT8, 2)}),
                         Value::of_array(ValueType::UINT8, {uval(ValueType::UINT8, 3)})}));
  for (const auto& [k, v] : extra) w.set(k, v);
  w.add_tensor("tensor.a", GgmlType::F32, {4, 2}, a, sizeof a);
  w.add_tensor("tensor.b", GgmlType::F16, {8}, b, sizeof b);
  w.add_tensor("tensor.c", GgmlType::Q8_0, {32}, c, sizeof c);
  return w.to_bytes();
}

Bytes length_prefixed(std::string_view s) {
  Bytes n(8);
  for (int k = 0; k < 8; ++k) n[k] = uint8_t(uint64_t(s.size()) >> (8 * k));
  n.insert(n.end(), s.begin(), s.end());
  return n;
}

// Offset of the length field of the string s (a key or tensor name).
size_t find_string(const Bytes& b, std::string_view s) {
  const Bytes n = length_prefixed(s);
  const auto it = std::search(b.begin(), b.end(), n.begin(), n.end());
  if (it == b.end()) throw std::logic_error("gguf corpus: string not found: " + std::string(s));
  return size_t(it - b.begin());
}
// Offset just past the string s: where the field that follows it starts.
size_t after(const Bytes& b, std::string_view s) { return find_string(b, s) + 8 + s.size(); }

Bytes put(Bytes b, size_t at, uint64_t v, int nbytes) {
  for (int k = 0; k < nbytes; ++k) b.at(at + k) = uint8_t(v >> (8 * k));
  return b;
}
Bytes put32(const Bytes& b, size_t at, uint32_t v) { return put(b, at, v, 4); }
Bytes put64(const Bytes& b, size_t at, uint64_t v) { return put(b, at, v, 8); }

// Renames a key or tensor to another name of the same length.
Bytes renamed(Bytes b, std::string_view from, std::string_view to) {
  const size_t at = after(b, from) - from.size();
  std::copy(to.begin(), to.end(), b.begin() + at);
  return b;
}

}  // namespace

std::vector<uint8_t> valid_small_gguf() { return build(); }

size_t valid_small_gguf_min_size() {
  const Bytes b = build();
  const auto f = gguf::File::parse(b.data(), b.size(), "valid_small_gguf");
  size_t end = 0;
  for (const auto& t : f->tensors()) end = std::max(end, size_t(t.offset + t.nbytes));
  return f->data_offset() + end;
}

std::vector<CorpusCase> malformed_gguf_corpus() {
  const Bytes base = build();
  std::vector<CorpusCase> out;
  auto add = [&](std::string name, Bytes b, std::string keyword) {
    out.push_back({std::move(name), std::move(b), std::move(keyword)});
  };

  // Header: magic "GGUF" at 0, version at 4, n_tensors at 8, n_kv at 16.
  Bytes magic = base;
  magic[0] = 'X';
  add("bad_magic", magic, "bad magic");
  add("version_0", put32(base, 4, 0), "unsupported GGUF version");
  add("version_1", put32(base, 4, 1), "unsupported GGUF version");
  add("version_4", put32(base, 4, 4), "unsupported GGUF version");
  add("version_big_endian_3", put32(base, 4, 0x03000000), "unsupported GGUF version");
  add("n_tensors_2p63", put64(base, 8, 1ull << 63), "tensors, more than");
  add("n_tensors_1000", put64(base, 8, 1000), "tensors, more than");
  add("n_kv_2p63", put64(base, 16, 1ull << 63), "metadata entries");
  add("n_kv_1000", put64(base, 16, 1000), "metadata entries");

  // Metadata. After a key: u32 value type, then the value; an array value is
  // u32 element type, u64 count, elements.
  add("key_len_max", put64(base, 24, ~0ull), "limit");
  add("key_len_past_eof", put64(base, 24, 60000), "remain");
  const size_t str = after(base, "t.str");
  add("string_len_max", put64(base, str + 4, ~0ull), "limit");
  add("string_len_past_eof", put64(base, str + 4, 1u << 20), "remain");
  add("string_len_limit_plus_1", put64(base, str + 4, (1u << 24) + 1), "limit");
  const size_t strs = after(base, "t.strings");
  add("array_string_len_max", put64(base, strs + 16, ~0ull), "limit");
  add("array_string_len_past_eof", put64(base, strs + 16, 4096), "remain");
  const size_t ints = after(base, "t.ints");
  add("array_count_2p62", put64(base, ints + 8, 1ull << 62), "exceeds the limit");
  add("array_count_max", put64(base, ints + 8, ~0ull), "exceeds the limit");
  add("array_count_past_eof", put64(base, ints + 8, 1u << 20), "does not fit");
  add("array_elem_type_13", put32(base, ints + 4, 13), "unknown array element type");
  add("array_elem_type_max", put32(base, ints + 4, ~0u), "unknown array element type");
  const size_t nested = after(base, "t.nested");
  add("array_nested_too_deep", put32(base, nested + 16, 9), "nested deeper");
  add("array_nested_count_past_eof", put64(base, nested + 8, 1000), "does not fit");
  add("value_type_13", put32(base, after(base, "t.u32"), 13), "unknown value type");
  add("value_type_max", put32(base, after(base, "t.u32"), ~0u), "unknown value type");
  add("bool_2", put(base, after(base, "t.bool") + 4, 2, 1), "neither 0 nor 1");
  add("duplicate_key", renamed(base, "t.i8", "t.u8"), "duplicate metadata key");
  add("duplicate_key_newline", renamed(renamed(base, "t.i8", "t\n88"), "t.u8", "t\n88"),
      "duplicate metadata key 't\\x0a88'");

  // general.alignment: a bad value, or the right key with the wrong type.
  const Bytes al = build({{"general.alignment", Value::of_u32(32)}});
  const size_t alv = after(al, "general.alignment") + 4;
  add("alignment_0", put32(al, alv, 0), "general.alignment 0 is invalid");
  add("alignment_13", put32(al, alv, 13), "general.alignment 13 is invalid");
  add("alignment_2p31", put32(al, alv, 1u << 31), "is invalid");
  add("alignment_max", put32(al, alv, ~0u), "is invalid");
  add("alignment_string",
      renamed(build({{"general.alignmenX", Value::of_string("32")}}), "general.alignmenX",
              "general.alignment"),
      "must be a uint32");
  add("alignment_uint64",
      renamed(build({{"general.alignmenX", Value::of_u64(32)}}), "general.alignmenX",
              "general.alignment"),
      "must be a uint32");

  // Tensor infos: name, u32 n_dims, u64 ne[n_dims], u32 type, u64 offset.
  // tensor.a is f32 [4, 2] at 0, tensor.b f16 [8] at 32, tensor.c q8_0 [32] at 64.
  const size_t ta = after(base, "tensor.a"), tb = after(base, "tensor.b"),
               tc = after(base, "tensor.c");
  add("tensor_name_len_max", put64(base, find_string(base, "tensor.a"), ~0ull), "limit");
  add("n_dims_0", put32(base, ta, 0), "dimensions (1 to 4");
  add("n_dims_5", put32(base, ta, 5), "dimensions (1 to 4");
  add("n_dims_max", put32(base, ta, ~0u), "dimensions (1 to 4");
  add("zero_dimension", put64(base, ta + 12, 0), "zero dimension");
  add("zero_dimension_0", put64(base, ta + 4, 0), "zero dimension");
  add("dims_product_overflow", put64(put64(base, ta + 4, 1ull << 32), ta + 12, 1ull << 32),
      "overflows int64");
  add("dim_2p63", put64(base, ta + 4, 1ull << 63), "overflows int64");
  add("byte_size_overflow", put64(put64(base, ta + 4, 1ull << 62), ta + 12, 1),
      "byte size overflows");
  add("row_not_block_multiple", put64(base, tc + 4, 33), "block size");
  add("type_99", put32(base, ta + 20, 99), "unknown type id 99");
  add("type_max", put32(base, ta + 20, ~0u), "unknown type id");
  add("offset_past_eof", put64(base, tc + 16, 1ull << 40), "extends past end");
  add("offset_just_past_eof", put64(base, tc + 16, 96), "extends past end");
  add("offset_max", put64(base, tc + 16, ~0ull - 31), "extends past end");
  add("offset_misaligned", put64(base, tb + 16, 33), "not a multiple of the alignment");
  add("tensors_overlap", put64(base, tb + 16, 0), "overlap");
  add("tensors_overlap_partly", put64(base, tb + 16, 96), "overlap");  // c is [64, 98)
  add("duplicate_tensor_name", renamed(base, "tensor.b", "tensor.a"), "duplicate tensor name");

  // Truncated at every byte before the end of the last tensor's data.
  const size_t need = valid_small_gguf_min_size();
  for (size_t n = 0; n < need; ++n) {
    char name[32];
    std::snprintf(name, sizeof name, "truncated_%04zu", n);
    add(name, Bytes(base.begin(), base.begin() + n), n < 4 ? "bad magic" : "truncated");
  }
  return out;
}

size_t write_gguf_corpus(const std::string& dir) {
  auto write = [&](const std::string& name, const Bytes& b) {
    const std::string path = dir + "/" + name + ".gguf";
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
    if (!f) throw std::runtime_error("cannot write " + path);
  };
  write("valid", valid_small_gguf());
  size_t n = 1;
  for (const auto& c : malformed_gguf_corpus()) {
    write(c.name, c.bytes);
    ++n;
  }
  return n;
}

}  // namespace edgellm::test
