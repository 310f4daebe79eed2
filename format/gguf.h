// GGUF v2/v3 reader over a read-only mmap, and writer.
//
// Spec: every multi-byte field little-endian; header = magic "GGUF", u32
// version, u64 n_tensors, u64 n_kv; then n_kv key/value pairs, n_tensors
// tensor infos (name, u32 n_dims, u64 ne[n_dims], u32 type, u64 offset), padding
// to general.alignment (default 32), then the tensor data blob.
//
// The reader trusts nothing: every count, length, dimension, product, offset and
// size is checked for overflow and bounds before use, and each failure is an
// edgellm::Error naming the problem and the byte offset / key / tensor at fault.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tensor/types.h"

namespace edgellm::gguf {

enum class ValueType : uint32_t {
  UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6,
  BOOL = 7, STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
};
const char* value_type_name(ValueType t);

// A metadata value. Scalars keep their declared type; numeric ones are also
// readable through as_int()/as_float() with range checks.
struct Value {
  ValueType type = ValueType::UINT8;
  uint64_t u = 0;        // unsigned integer types and BOOL
  int64_t i = 0;         // signed integer types
  double f = 0;          // FLOAT32 / FLOAT64
  std::string str;       // STRING
  ValueType elem_type = ValueType::UINT8;  // ARRAY
  std::vector<Value> arr;                  // ARRAY
  bool summarized = false;  // ARRAY skipped by Limits::summarize_arrays_over (arr empty)

  bool is_integer() const;
  bool is_float() const { return type == ValueType::FLOAT32 || type == ValueType::FLOAT64; }
  // Throw a clear error (naming `what`) if the value is not an integer / number
  // or does not fit.
  int64_t as_int(std::string_view what) const;
  double as_float(std::string_view what) const;
  const std::string& as_string(std::string_view what) const;
  std::string to_display(size_t max_array_items = 8) const;  // for inspect

  static Value of_u32(uint32_t v);
  static Value of_i32(int32_t v);
  static Value of_u64(uint64_t v);
  static Value of_f32(float v);
  static Value of_bool(bool v);
  static Value of_string(std::string v);
  static Value of_array(ValueType elem, std::vector<Value> items);
};

struct TensorInfo {
  std::string name;
  uint32_t n_dims = 0;
  int64_t ne[4] = {1, 1, 1, 1};  // ne[0] is the contiguous (row) dimension
  GgmlType type = GgmlType::F32;
  uint64_t offset = 0;           // relative to the data section
  uint64_t nbytes = 0;
  const uint8_t* data = nullptr; // into the mapping
  int64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  std::string shape_string() const;  // "[64, 512]"
};

struct Limits {
  uint64_t max_string = 1u << 24;      // 16 MiB per string
  uint64_t max_array = 1u << 22;       // 4M elements per array (vocabularies are ~150k)
  uint64_t max_kv = 1u << 20;
  uint64_t max_tensors = 1u << 20;
  uint64_t max_total_elements = 1u << 24;  // all array elements of a file together
  int max_nesting = 2;                 // arrays of arrays, at most this deep
  // Arrays longer than this (of scalars or strings) are checked and skipped,
  // not built: Value::summarized, with the count in u and, for strings, the
  // heap bytes the strings would take in i. For planning a load before it
  // happens (a 150k-token vocabulary is ~45 MiB of Values).
  uint64_t summarize_arrays_over = UINT64_MAX;
};

// Where a file's bytes live once opened.
//  Mmap       a read-only file mapping: pages load lazily, stay in the page
//             cache (reclaimable, shared), 4 KiB pages.
//  HugePages  read once into anonymous memory advised MADV_HUGEPAGE (2 MiB
//             pages), and the file's page-cache copy is dropped, so the
//             weights are resident once, not twice. Decode streams every
//             weight per token; with 4 KiB pages a multi-GB model costs a
//             TLB miss per 4 KiB (~1M per token for 4 GB), which measured
//             5.8 -> 8.1 tok/s on a 7B Q4_0 (BENCHMARKS.md).
//  Auto       HugePages when the tensor data is at least kAutoHugePagesBytes and
//             transparent huge pages are not disabled, else Mmap. Measured
//             on qwen2.5-0.5b (2 threads): Q8_0 (501 MiB) tg 92-101 -> 119
//             tok/s, Q4_0 (330 MiB) 122-124 -> 126-128, for ~1 s more load
//             (the copy); below a few hundred MiB the TLB cost is small.
enum class Residency { Auto, Mmap, HugePages };
constexpr size_t kAutoHugePagesBytes = size_t(256) << 20;
// "auto" | "mmap" | "hugepages"; throws on anything else.
Residency parse_residency(const std::string& s);
const char* residency_name(Residency r);
// Transparent huge pages are not disabled on this system.
bool transparent_hugepages_available();

class File {
 public:
  // Map (or read, see Residency) and parse a file. Throws edgellm::Error.
  static std::unique_ptr<File> open(const std::string& path, const Limits& lim = {},
                                    Residency residency = Residency::Mmap);
  // Parse bytes owned by the caller (they must outlive the File). For fuzzing
  // and tests. `source` names the input in error messages.
  static std::unique_ptr<File> parse(const uint8_t* data, size_t size, std::string source,
                                     const Limits& lim = {});
  ~File();
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  const std::string& source() const { return source_; }
  // Copies the tensor data section (not the header) into anonymous memory
  // advised for huge pages and points every TensorInfo::data there. Pointers
  // taken earlier move with Relocation::relocate(). Throws on failure.
  struct Relocation {
    const uint8_t *old_begin = nullptr, *old_end = nullptr, *new_begin = nullptr;
    const uint8_t* relocate(const uint8_t* p) const {
      return p >= old_begin && p < old_end ? new_begin + (p - old_begin) : p;
    }
  };
  Relocation make_resident();
  // Optional madvise experiments on the file mapping (EDGELLM_MMAP_ADVICE).
  void advise_mapping();
  // What open() chose (Mmap for parse()), and the ms spent copying the bytes in.
  Residency residency() const { return residency_; }
  double copy_ms() const { return copy_ms_; }
  uint32_t version() const { return version_; }
  size_t alignment() const { return alignment_; }
  size_t data_offset() const { return data_offset_; }
  size_t file_size() const { return size_; }
  // Anonymous bytes holding tensors copied off addresses the kernels cannot
  // read in place (a general.alignment below 8); 0 for ordinary files.
  size_t realigned_bytes() const { return realigned_len_; }

  const std::vector<std::pair<std::string, Value>>& metadata() const { return kv_; }
  const Value* find(std::string_view key) const;
  // Frees an array value's elements once a consumer has its own copy (the
  // tokenizer's tables: ~40 MiB of Values for a 150k vocabulary). The key
  // stays, as an empty array.
  void drop_array(std::string_view key);
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find_tensor(std::string_view name) const;

  // Typed getters: throw "metadata key K: expected ..., found ..." on mismatch;
  // the *_or variants return the default when the key is absent.
  int64_t get_int(std::string_view key) const;
  int64_t get_int_or(std::string_view key, int64_t def) const;
  double get_float_or(std::string_view key, double def) const;
  std::string get_string(std::string_view key) const;
  std::string get_string_or(std::string_view key, std::string def) const;
  bool get_bool_or(std::string_view key, bool def) const;

 private:
  File() = default;
  void parse_all(const Limits& lim);
  void realign_tensors();
  std::string source_;
  const uint8_t* base_ = nullptr;
  size_t size_ = 0;
  void* map_ = nullptr;  // owned mapping, or null
  void* resident_ = nullptr;  // make_resident(): the copy of the data section
  size_t resident_len_ = 0;
  void* realigned_ = nullptr;  // tensors copied off odd addresses (realign_tensors)
  size_t realigned_len_ = 0;
  Residency residency_ = Residency::Mmap;
  double copy_ms_ = 0;
  uint32_t version_ = 0;
  size_t alignment_ = 32;
  size_t data_offset_ = 0;
  std::vector<std::pair<std::string, Value>> kv_;
  std::map<std::string, size_t, std::less<>> kv_index_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;
};

// Writes a GGUF v3 file. Tensor data is not copied: the pointers given to
// add_tensor must stay valid until write() returns. write() goes through
// DurableFile (a temporary renamed into place), so a failure never leaves a
// partial output file.
class Writer {
 public:
  explicit Writer(size_t alignment = 32) : alignment_(alignment) {}
  void set(std::string key, Value v);  // replaces an existing key, keeps order
  void add_tensor(std::string name, GgmlType type, std::vector<int64_t> ne, const void* data,
                  size_t nbytes);
  void write(const std::string& path) const;
  std::vector<uint8_t> to_bytes() const;  // the same bytes, in memory

 private:
  struct PendingTensor {
    std::string name;
    GgmlType type;
    std::vector<int64_t> ne;
    const void* data;
    size_t nbytes;
  };
  size_t alignment_;
  std::vector<std::pair<std::string, Value>> kv_;
  std::vector<PendingTensor> tensors_;
};

}  // namespace edgellm::gguf
