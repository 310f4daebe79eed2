// GGUF v3 writer. Everything is validated before a byte is written, and the
// output is exactly what the reader accepts: little-endian fields, tensor data
// offsets aligned to general.alignment, every tensor (so the data section, and
// the file) padded to the alignment with zeros, as ggml's writer does.
//
// Layout of the file (see gguf.h):
//   header | kv pairs | tensor infos | pad | data[0] pad | data[1] pad | ...

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

#include "base/durable_file.h"
#include "base/error.h"
#include "format/gguf.h"

namespace edgellm::gguf {

namespace {

constexpr uint64_t kDefaultAlignment = 32;
constexpr uint64_t kMaxAlignment = 1u << 20;  // as the reader
constexpr size_t kMaxKey = 65535;             // as the reader
constexpr size_t kMaxTensorName = 1024;       // as the reader
constexpr const char* kAlignmentKey = "general.alignment";

uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

void check_alignment(uint64_t a, const char* what) {
  if (a == 0 || (a & (a - 1)) != 0 || a > kMaxAlignment)
    fail("gguf writer: ", what, " ", a, " is invalid (must be a power of two up to ",
         kMaxAlignment, ")");
}

// Appends little-endian fields to a byte vector.
struct Out {
  std::vector<uint8_t>& b;
  void le(uint64_t v, int nbytes) {
    for (int k = 0; k < nbytes; ++k) b.push_back(uint8_t(v >> (8 * k)));
  }
  void u32(uint32_t v) { le(v, 4); }
  void u64(uint64_t v) { le(v, 8); }
  void str(std::string_view s) {
    u64(s.size());
    b.insert(b.end(), s.begin(), s.end());
  }
  void pad_to(uint64_t a) { b.resize(size_t(align_up(b.size(), a)), 0); }
};

// Writes one value (without its type tag, which the caller wrote), checking
// that it is representable in its declared type and that arrays are uniform.
struct ValueWriter {
  Out& o;
  const std::string& key;
  Limits lim;

  void write(const Value& v, int depth) {
    switch (v.type) {
      case ValueType::UINT8: o.le(unsigned_in_range(v, 0xff), 1); break;
      case ValueType::UINT16: o.le(unsigned_in_range(v, 0xffff), 2); break;
      case ValueType::UINT32: o.le(unsigned_in_range(v, 0xffffffffu), 4); break;
      case ValueType::UINT64: o.u64(v.u); break;
      case ValueType::BOOL: o.le(unsigned_in_range(v, 1), 1); break;
      case ValueType::INT8: o.le(uint64_t(signed_in_range(v, INT8_MIN, INT8_MAX)), 1); break;
      case ValueType::INT16: o.le(uint64_t(signed_in_range(v, INT16_MIN, INT16_MAX)), 2); break;
      case ValueType::INT32: o.le(uint64_t(signed_in_range(v, INT32_MIN, INT32_MAX)), 4); break;
      case ValueType::INT64: o.u64(uint64_t(v.i)); break;
      case ValueType::FLOAT32: o.u32(std::bit_cast<uint32_t>(float(v.f))); break;
      case ValueType::FLOAT64: o.u64(std::bit_cast<uint64_t>(v.f)); break;
      case ValueType::STRING:
        if (v.str.size() > lim.max_string)
          fail("gguf writer: metadata key '", key, "': string of ", v.str.size(),
               " bytes exceeds the limit ", lim.max_string);
        o.str(v.str);
        break;
      case ValueType::ARRAY: write_array(v, depth); break;
      default:
        fail("gguf writer: metadata key '", key, "' has unknown value type ", uint32_t(v.type));
    }
  }

  void write_array(const Value& v, int depth) {
    if (depth >= lim.max_nesting)
      fail("gguf writer: metadata key '", key, "': arrays nested deeper than ", lim.max_nesting,
           " levels");
    if (v.arr.size() > lim.max_array)
      fail("gguf writer: metadata key '", key, "': array of ", v.arr.size(),
           " elements exceeds the limit ", lim.max_array);
    o.u32(uint32_t(v.elem_type));
    o.u64(v.arr.size());
    for (size_t k = 0; k < v.arr.size(); ++k) {
      if (v.arr[k].type != v.elem_type)
        fail("gguf writer: metadata key '", key, "': array element ", k, " is a ",
             value_type_name(v.arr[k].type), " in an array of ", value_type_name(v.elem_type));
      write(v.arr[k], depth + 1);
    }
  }

  uint64_t unsigned_in_range(const Value& v, uint64_t max) const {
    if (v.u > max)
      fail("gguf writer: metadata key '", key, "': value ", v.u, " does not fit in a ",
           value_type_name(v.type));
    return v.u;
  }
  int64_t signed_in_range(const Value& v, int64_t lo, int64_t hi) const {
    if (v.i < lo || v.i > hi)
      fail("gguf writer: metadata key '", key, "': value ", v.i, " does not fit in a ",
           value_type_name(v.type));
    return v.i;
  }
};

// The alignment the file will use: general.alignment if set (it must agree
// with the Writer's), else the Writer's.
uint64_t effective_alignment(const std::vector<std::pair<std::string, Value>>& kv,
                             uint64_t alignment) {
  check_alignment(alignment, "alignment");
  for (const auto& [k, v] : kv) {
    if (k != kAlignmentKey) continue;
    if (v.type != ValueType::UINT32)
      fail("gguf writer: general.alignment must be a uint32, found ", value_type_name(v.type));
    check_alignment(v.u, "general.alignment");
    if (v.u != alignment)
      fail("gguf writer: general.alignment ", v.u, " conflicts with the Writer's alignment ",
           alignment, " (construct the Writer with the same alignment, or drop the key)");
  }
  return alignment;
}

}  // namespace

void Writer::set(std::string key, Value v) {
  if (key.empty()) fail("gguf writer: metadata key is empty");
  if (key.size() > kMaxKey)
    fail("gguf writer: metadata key of ", key.size(), " bytes is longer than ", kMaxKey);
  for (auto& [k, old] : kv_)
    if (k == key) {
      old = std::move(v);
      return;
    }
  kv_.emplace_back(std::move(key), std::move(v));
}

void Writer::add_tensor(std::string name, GgmlType type, std::vector<int64_t> ne,
                        const void* data, size_t nbytes) {
  if (name.empty()) fail("gguf writer: tensor name is empty");
  if (name.size() > kMaxTensorName)
    fail("gguf writer: tensor name of ", name.size(), " bytes is longer than ", kMaxTensorName);
  const std::string where = "gguf writer: tensor '" + name + "'";
  for (const auto& t : tensors_)
    if (t.name == name) fail(where, " was added twice");
  const TypeTraits* tr = type_traits(uint32_t(type));
  if (!tr) fail(where, " has unknown type id ", uint32_t(type));
  if (ne.empty() || ne.size() > 4)
    fail(where, " has ", ne.size(), " dimensions (1 to 4 are allowed)");
  int64_t count = 1;
  for (size_t d = 0; d < ne.size(); ++d) {
    if (ne[d] <= 0) fail(where, " has dimension ", d, " = ", ne[d], " (must be positive)");
    if (__builtin_mul_overflow(count, ne[d], &count))
      fail(where, " has dimensions whose product overflows int64");
  }
  if (ne[0] % tr->block_size != 0)
    fail(where, " of type ", tr->name, " has a row of ", ne[0],
         " elements, not a multiple of the block size ", tr->block_size);
  // nbytes = row_size(type, ne[0]) * rows, computed without overflow.
  uint64_t row_bytes, expect;
  if (__builtin_mul_overflow(uint64_t(ne[0] / tr->block_size), tr->type_size, &row_bytes) ||
      __builtin_mul_overflow(row_bytes, uint64_t(count / ne[0]), &expect))
    fail(where, " byte size overflows");
  if (nbytes != expect) {
    std::string shape;
    for (int64_t n : ne) shape += (shape.empty() ? "" : ", ") + std::to_string(n);
    fail(where, " of type ", tr->name, " and shape [", shape, "] needs ", expect,
         " bytes of data, got ", nbytes);
  }
  if (!data) fail(where, " has no data (null pointer)");
  tensors_.push_back({std::move(name), type, std::move(ne), data, nbytes});
}

// Header, metadata, tensor infos and the padding before the data section.
// Tensor k's data goes at the aligned end of tensor k-1's.
static std::vector<uint8_t> header_bytes(const std::vector<std::pair<std::string, Value>>& kv,
                                         const auto& tensors, uint64_t align) {
  bool has_align_key = false;
  for (const auto& p : kv) has_align_key |= p.first == kAlignmentKey;
  const bool add_align_key = !has_align_key && align != kDefaultAlignment;

  std::vector<uint8_t> b;
  Out o{b};
  for (char c : {'G', 'G', 'U', 'F'}) b.push_back(uint8_t(c));
  o.u32(3);
  o.u64(tensors.size());
  o.u64(kv.size() + (add_align_key ? 1 : 0));
  for (const auto& [k, v] : kv) {
    o.str(k);
    o.u32(uint32_t(v.type));
    ValueWriter{o, k, Limits{}}.write(v, 0);
  }
  if (add_align_key) {
    o.str(kAlignmentKey);
    o.u32(uint32_t(ValueType::UINT32));
    o.u32(uint32_t(align));
  }
  uint64_t off = 0;
  for (const auto& t : tensors) {
    o.str(t.name);
    o.u32(uint32_t(t.ne.size()));
    for (int64_t n : t.ne) o.u64(uint64_t(n));
    o.u32(uint32_t(t.type));
    o.u64(off);
    off = align_up(off + t.nbytes, align);
  }
  o.pad_to(align);
  return b;
}

std::vector<uint8_t> Writer::to_bytes() const {
  const uint64_t align = effective_alignment(kv_, alignment_);
  std::vector<uint8_t> b = header_bytes(kv_, tensors_, align);
  for (const auto& t : tensors_) {
    const uint8_t* p = static_cast<const uint8_t*>(t.data);
    b.insert(b.end(), p, p + t.nbytes);
    Out{b}.pad_to(align);
  }
  return b;
}

void Writer::write(const std::string& path) const {
  const uint64_t align = effective_alignment(kv_, alignment_);
  const std::vector<uint8_t> head = header_bytes(kv_, tensors_, align);
  DurableFile out(path);  // atomic over a regular file, through to a device or FIFO
  static const uint8_t zeros[4096] = {};
  out.write(head.data(), head.size());
  for (const auto& t : tensors_) {
    out.write(t.data, t.nbytes);
    for (uint64_t pad = align_up(t.nbytes, align) - t.nbytes; pad > 0;) {
      const size_t n = size_t(std::min<uint64_t>(pad, sizeof zeros));
      out.write(zeros, n);
      pad -= n;
    }
  }
  out.commit();
}

}  // namespace edgellm::gguf
