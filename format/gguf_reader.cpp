// GGUF reader. Parsing walks a bounds-checked cursor over the mapped bytes; no
// count read from the file is used (to allocate, loop or index) before it has
// been checked against the bytes that remain and against Limits.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <limits>

#include "base/error.h"
#include "base/input_file.h"
#include "format/gguf.h"

namespace edgellm::gguf {

namespace {

constexpr uint64_t kMaxAlignment = 1u << 20;
constexpr uint64_t kMaxTensorName = 1024;

class Cursor {
 public:
  Cursor(const uint8_t* p, size_t n, const std::string& src) : p_(p), n_(n), src_(src) {}
  size_t pos() const { return pos_; }
  size_t remaining() const { return n_ - pos_; }

  template <class T>
  T read(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, p_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  // Checks a string's length against the limit and the bytes left, and moves
  // past it: its bytes, in the file.
  std::string_view take_string(const char* what, uint64_t max_len) {
    const size_t at = pos_;
    const uint64_t len = read<uint64_t>(what);
    if (len > max_len)
      fail(src_, ": ", what, " at byte ", at, " has length ", len, " (limit ", max_len, ")");
    if (len > remaining())
      fail(src_, ": ", what, " at byte ", at, " has length ", len, " but only ", remaining(),
           " bytes remain in the file (truncated?)");
    const std::string_view s(reinterpret_cast<const char*>(p_ + pos_), size_t(len));
    pos_ += size_t(len);
    return s;
  }
  std::string read_string(const char* what, uint64_t max_len) { return std::string(take_string(what, max_len)); }
  // Without building the string (summarized arrays): its length.
  uint64_t skip_string(const char* what, uint64_t max_len) { return take_string(what, max_len).size(); }
  void skip(size_t k, const char* what) {
    need(k, what);
    pos_ += k;
  }
  void need(size_t k, const char* what) const {
    if (k > remaining())
      fail(src_, ": unexpected end of file reading ", what, " at byte ", pos_, " (need ", k,
           " bytes, ", remaining(), " remain; file truncated?)");
  }

 private:
  const uint8_t* p_;
  size_t n_;
  size_t pos_ = 0;
  const std::string& src_;
};

bool mul_overflows(uint64_t a, uint64_t b, uint64_t* out) { return __builtin_mul_overflow(a, b, out); }

size_t scalar_size(ValueType t) {
  switch (t) {
    case ValueType::UINT8: case ValueType::INT8: case ValueType::BOOL: return 1;
    case ValueType::UINT16: case ValueType::INT16: return 2;
    case ValueType::UINT32: case ValueType::INT32: case ValueType::FLOAT32: return 4;
    case ValueType::UINT64: case ValueType::INT64: case ValueType::FLOAT64: return 8;
    default: return 0;
  }
}

// Names read from the file, made safe to quote in a message: control bytes are
// escaped (so an error stays one line) and long names are shortened.
std::string printable(std::string_view s) {
  std::string o;
  for (size_t k = 0; k < s.size(); ++k) {
    const unsigned char ch = static_cast<unsigned char>(s[k]);
    if (k == 200) return o + "...";
    if (ch >= 0x20 && ch != 0x7f) { o += char(ch); continue; }
    const char* hex = "0123456789abcdef";
    o += {'\\', 'x', hex[ch >> 4], hex[ch & 15]};
  }
  return o;
}

bool valid_type(uint32_t t) { return t <= uint32_t(ValueType::FLOAT64); }

struct ValueReader {
  Cursor& c;
  const Limits& lim;
  const std::string& src;
  uint64_t total_elements = 0;

  Value read(ValueType t, const std::string& key, int depth) {
    Value v;
    v.type = t;
    switch (t) {
      case ValueType::UINT8: v.u = c.read<uint8_t>("uint8 value"); break;
      case ValueType::INT8: v.i = c.read<int8_t>("int8 value"); break;
      case ValueType::UINT16: v.u = c.read<uint16_t>("uint16 value"); break;
      case ValueType::INT16: v.i = c.read<int16_t>("int16 value"); break;
      case ValueType::UINT32: v.u = c.read<uint32_t>("uint32 value"); break;
      case ValueType::INT32: v.i = c.read<int32_t>("int32 value"); break;
      case ValueType::UINT64: v.u = c.read<uint64_t>("uint64 value"); break;
      case ValueType::INT64: v.i = c.read<int64_t>("int64 value"); break;
      case ValueType::FLOAT32: v.f = c.read<float>("float32 value"); break;
      case ValueType::FLOAT64: v.f = c.read<double>("float64 value"); break;
      case ValueType::BOOL: {
        const uint8_t b = c.read<uint8_t>("bool value");
        if (b > 1) fail(src, ": metadata key '", key, "': bool value ", int(b), " is neither 0 nor 1");
        v.u = b;
        break;
      }
      case ValueType::STRING: v.str = c.read_string("string value", lim.max_string); break;
      case ValueType::ARRAY: read_array(v, key, depth); break;
    }
    return v;
  }

  void read_array(Value& v, const std::string& key, int depth) {
    if (depth >= lim.max_nesting)
      fail(src, ": metadata key '", key, "': arrays nested deeper than ", lim.max_nesting, " levels");
    const size_t at = c.pos();
    const uint32_t et = c.read<uint32_t>("array element type");
    if (!valid_type(et))
      fail(src, ": metadata key '", key, "': unknown array element type ", et, " at byte ", at);
    v.elem_type = ValueType(et);
    const uint64_t n = c.read<uint64_t>("array length");
    if (n > lim.max_array)
      fail(src, ": metadata key '", key, "': array length ", n, " exceeds the limit ", lim.max_array);
    // Every element takes at least this many bytes, so a length the file
    // cannot hold is rejected before anything is allocated.
    const uint64_t min_elem = v.elem_type == ValueType::STRING ? 8
                              : v.elem_type == ValueType::ARRAY ? 12
                                                                : scalar_size(v.elem_type);
    uint64_t min_bytes;
    if (mul_overflows(n, min_elem, &min_bytes) || min_bytes > c.remaining())
      fail(src, ": metadata key '", key, "': array of ", n, " ", value_type_name(v.elem_type),
           " elements at byte ", at, " does not fit in the ", c.remaining(),
           " bytes that remain (truncated?)");
    // A parsed element costs ~100 bytes of memory however small it is on
    // disk, so the file's elements together are bounded too.
    total_elements += n;
    if (total_elements > lim.max_total_elements)
      fail(src, ": metadata key '", key, "': the file's arrays hold more than ", lim.max_total_elements,
           " elements in total");
    if (n > lim.summarize_arrays_over && v.elem_type != ValueType::ARRAY) {
      // Planning only: the elements are checked and skipped, not built.
      v.summarized = true;
      v.u = n;
      if (v.elem_type == ValueType::STRING) {
        uint64_t heap = 0;  // what the strings' heap blocks would take (SSO holds up to 15)
        for (uint64_t k = 0; k < n; ++k) {
          const uint64_t len = c.skip_string("string value", lim.max_string);
          if (len > 15) heap += (len + 16) / 16 * 16;
        }
        v.i = int64_t(heap);
      } else {
        c.skip(size_t(n) * scalar_size(v.elem_type), "array elements");
      }
      return;
    }
    v.arr.reserve(size_t(n));
    for (uint64_t k = 0; k < n; ++k) v.arr.push_back(read(v.elem_type, key, depth + 1));
  }
};

}  // namespace

std::string TensorInfo::shape_string() const {
  std::string s = "[";
  for (uint32_t d = 0; d < n_dims; ++d) s += (d ? ", " : "") + std::to_string(ne[d]);
  return s + "]";
}

Residency parse_residency(const std::string& s) {
  if (s == "auto") return Residency::Auto;
  if (s == "mmap") return Residency::Mmap;
  if (s == "hugepages") return Residency::HugePages;
  fail("unknown load mode '", s, "' (expected auto, mmap or hugepages)");
}

const char* residency_name(Residency r) {
  switch (r) {
    case Residency::Auto: return "auto";
    case Residency::Mmap: return "mmap";
    case Residency::HugePages: return "hugepages";
  }
  return "?";
}

namespace {

bool thp_enabled_impl() {
  std::FILE* f = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (!f) return false;
  char buf[128] = {};
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  return n > 0 && std::strstr(buf, "[never]") == nullptr;
}

// Anonymous memory advised for 2 MiB pages, filled from fd's bytes
// [offset, offset + size); the file's page cache is dropped afterwards so the
// bytes are resident once. Returns null (errno set) on failure.
void* read_into_hugepages(int fd, size_t offset, size_t size) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
#ifdef MADV_HUGEPAGE
  madvise(p, size, MADV_HUGEPAGE);  // advice only: without THP the copy still works
#endif
  size_t done = 0;
  while (done < size) {
    const ssize_t r = pread(fd, static_cast<char*>(p) + done, size - done, off_t(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      const int e = r == 0 ? EIO : errno;  // the file shrank under us
      munmap(p, size);
      errno = e;
      return nullptr;
    }
    done += size_t(r);
  }
  mprotect(p, size, PROT_READ);
  posix_fadvise(fd, off_t(offset), off_t(size), POSIX_FADV_DONTNEED);
  return p;
}

}  // namespace

bool transparent_hugepages_available() { return thp_enabled_impl(); }

std::unique_ptr<File> File::open(const std::string& path, const Limits& lim, Residency residency) {
  const int fd = open_regular_file(path, "");  // a FIFO or device is refused, never waited on
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    ::close(fd);
    fail(path, ": cannot read its size: ", std::strerror(errno));
  }
  const size_t size = size_t(st.st_size);
  void* map = nullptr;
  if (size > 0) {
    map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      const int e = errno;
      ::close(fd);
      fail(path, ": mmap failed: ", std::strerror(e));
    }
  }
  ::close(fd);
  std::unique_ptr<File> f(new File());
  f->source_ = path;
  f->base_ = static_cast<const uint8_t*>(map);
  f->size_ = size;
  f->map_ = map;
  f->residency_ = Residency::Mmap;
  f->parse_all(lim);
  // Auto decides from the tensor bytes, not the file size (a file may hold
  // a large vocabulary or other metadata and few tensor bytes).
  if (residency == Residency::Auto) {
    uint64_t tensor_bytes = 0;
    for (const TensorInfo& t : f->tensors_) tensor_bytes += t.nbytes;
    residency = tensor_bytes >= kAutoHugePagesBytes && thp_enabled_impl() ? Residency::HugePages : Residency::Mmap;
  }
  if (residency == Residency::HugePages) f->make_resident();
  else f->advise_mapping();
  return f;
}

void File::advise_mapping() {
  // Experiments for a file mapping with the copy's speed (BENCHMARKS.md,
  // "Footprint-first loading"): EDGELLM_MMAP_ADVICE = a comma list of
  // hugepage (MADV_HUGEPAGE), collapse (MADV_COLLAPSE), populate
  // (MADV_POPULATE_READ), willneed (MADV_WILLNEED). Advice the kernel refuses
  // is ignored: it is only advice.
  const char* env = std::getenv("EDGELLM_MMAP_ADVICE");
  if (!env || !map_ || data_offset_ >= size_) return;
  const size_t start = data_offset_ / 4096 * 4096;
  uint8_t* p = static_cast<uint8_t*>(map_) + start;
  const size_t len = size_ - start;
  const std::string advice = env;
  auto has = [&](const char* w) { return advice.find(w) != std::string::npos; };
#ifdef MADV_HUGEPAGE
  if (has("hugepage")) madvise(p, len, MADV_HUGEPAGE);
#endif
#ifdef MADV_WILLNEED
  if (has("willneed")) madvise(p, len, MADV_WILLNEED);
#endif
#ifdef MADV_POPULATE_READ
  if (has("populate")) madvise(p, len, MADV_POPULATE_READ);
#endif
#ifdef MADV_COLLAPSE
  if (has("collapse")) {
    // Whole 2 MiB-aligned stretches only.
    uint8_t* a = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(p) + (2u << 20) - 1) & ~uintptr_t((2u << 20) - 1));
    const size_t n = (p + len > a ? size_t(p + len - a) : 0) & ~size_t((2u << 20) - 1);
    if (n > 0 && madvise(a, n, MADV_COLLAPSE) != 0) std::fprintf(stderr, "note: MADV_COLLAPSE: %s\n", std::strerror(errno));
  }
#endif
}

File::Relocation File::make_resident() {
  Relocation r;
  if (residency_ == Residency::HugePages || !map_ || data_offset_ >= size_) return r;
  // Only the tensor data section is copied (from its page), never the header.
  const size_t page = 4096, start = data_offset_ / page * page, len = size_ - start;
  const int fd = ::open(source_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(source_, ": cannot reopen to read the weights into memory: ", std::strerror(errno));
  const auto t0 = std::chrono::steady_clock::now();
  void* p = read_into_hugepages(fd, start, len);
  const int e = errno;
  ::close(fd);
  if (!p) fail(source_, ": cannot read the weights into memory (", std::strerror(e), "); try --load-mode mmap");
  copy_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  r.old_begin = base_ + start;
  r.old_end = base_ + size_;
  r.new_begin = static_cast<const uint8_t*>(p);
  for (TensorInfo& t : tensors_)
    if (t.data) t.data = r.relocate(t.data);
  // The mapping's data pages are no longer read; let the kernel drop them.
  madvise(static_cast<uint8_t*>(map_) + start, len, MADV_DONTNEED);
  resident_ = p;
  resident_len_ = len;
  residency_ = Residency::HugePages;
  return r;
}

std::unique_ptr<File> File::parse(const uint8_t* data, size_t size, std::string source,
                                  const Limits& lim) {
  std::unique_ptr<File> f(new File());
  f->source_ = std::move(source);
  f->base_ = data;
  f->size_ = size;
  f->parse_all(lim);
  return f;
}

File::~File() {
  if (realigned_) munmap(realigned_, realigned_len_);
  if (resident_) munmap(resident_, resident_len_);
  if (map_) munmap(map_, size_);
}

void File::parse_all(const Limits& lim) {
  const std::string& src = source_;
  Cursor c(base_, size_, src);
  if (size_ < 4 || std::memcmp(base_, "GGUF", 4) != 0)
    fail(src, ": not a GGUF file (bad magic; expected the bytes 'GGUF' at offset 0)");
  c.read<uint32_t>("magic");
  version_ = c.read<uint32_t>("version");
  if (version_ != 2 && version_ != 3)
    fail(src, ": unsupported GGUF version ", version_, " (this reader handles versions 2 and 3",
         version_ == 1 ? "; re-convert version-1 files with a current converter" : "", ")");
  const uint64_t n_tensors = c.read<uint64_t>("tensor count");
  const uint64_t n_kv = c.read<uint64_t>("metadata count");
  if (n_kv > lim.max_kv || n_kv > c.remaining() / 13)  // a kv takes >= 8+1+4 bytes
    fail(src, ": header claims ", n_kv, " metadata entries, more than the file (", size_,
         " bytes) can hold; truncated?");
  if (n_tensors > lim.max_tensors || n_tensors > c.remaining() / 24)  // >= 8+4+8+4 bytes each
    fail(src, ": header claims ", n_tensors, " tensors, more than the file (", size_,
         " bytes) can hold; truncated?");

  ValueReader vr{c, lim, src, 0};
  kv_.reserve(size_t(n_kv));
  for (uint64_t k = 0; k < n_kv; ++k) {
    const size_t at = c.pos();
    std::string key = c.read_string("metadata key", 65535);
    if (key.empty()) fail(src, ": metadata entry ", k, " at byte ", at, " has an empty key");
    const std::string shown = printable(key);
    const uint32_t t = c.read<uint32_t>("metadata value type");
    if (!valid_type(t))
      fail(src, ": metadata key '", shown, "' has unknown value type ", t, " (byte ", c.pos() - 4,
           ")");
    Value v = vr.read(ValueType(t), shown, 0);
    if (kv_index_.count(key)) fail(src, ": duplicate metadata key '", shown, "' (byte ", at, ")");
    kv_index_.emplace(key, kv_.size());
    kv_.emplace_back(std::move(key), std::move(v));
  }

  if (const Value* a = find("general.alignment")) {
    if (a->type != ValueType::UINT32)
      fail(src, ": general.alignment must be a uint32, found ", value_type_name(a->type));
    if (a->u == 0 || (a->u & (a->u - 1)) != 0 || a->u > kMaxAlignment)
      fail(src, ": general.alignment ", a->u, " is invalid (must be a power of two up to ",
           kMaxAlignment, ")");
    alignment_ = size_t(a->u);
  }

  tensors_.reserve(size_t(n_tensors));
  for (uint64_t k = 0; k < n_tensors; ++k) {
    const size_t at = c.pos();
    TensorInfo ti;
    ti.name = c.read_string("tensor name", kMaxTensorName);
    const std::string where =
        "tensor '" + printable(ti.name) + "' (info at byte " + std::to_string(at) + ")";
    if (ti.name.empty()) fail(src, ": ", where, " has an empty name");
    ti.n_dims = c.read<uint32_t>("tensor dimension count");
    if (ti.n_dims == 0 || ti.n_dims > 4)
      fail(src, ": ", where, " has ", ti.n_dims, " dimensions (1 to 4 are allowed)");
    uint64_t count = 1;
    for (uint32_t d = 0; d < ti.n_dims; ++d) {
      const uint64_t ne = c.read<uint64_t>("tensor dimension");
      if (ne == 0) fail(src, ": ", where, " has a zero dimension (dim ", d, ")");
      if (ne > uint64_t(std::numeric_limits<int64_t>::max()) || mul_overflows(count, ne, &count) ||
          count > uint64_t(std::numeric_limits<int64_t>::max()))
        fail(src, ": ", where, " has dimensions whose product overflows int64");
      ti.ne[d] = int64_t(ne);
    }
    const uint32_t type = c.read<uint32_t>("tensor type");
    const TypeTraits* tr = type_traits(type);
    if (!tr) fail(src, ": ", where, " has unknown type id ", type);
    ti.type = GgmlType(type);
    ti.offset = c.read<uint64_t>("tensor data offset");
    if (ti.ne[0] % tr->block_size != 0)
      fail(src, ": ", where, " of type ", tr->name, " has a row of ", ti.ne[0],
           " elements, not a multiple of the block size ", tr->block_size);
    const uint64_t rows = count / uint64_t(ti.ne[0]);
    uint64_t row_bytes;
    if (mul_overflows(uint64_t(ti.ne[0] / tr->block_size), tr->type_size, &row_bytes) ||
        mul_overflows(row_bytes, rows, &ti.nbytes))
      fail(src, ": ", where, " byte size overflows");
    if (ti.offset % alignment_ != 0)
      fail(src, ": ", where, " data offset ", ti.offset, " is not a multiple of the alignment ",
           alignment_);
    if (tensor_index_.count(ti.name))
      fail(src, ": duplicate tensor name '", printable(ti.name), "'");
    tensor_index_.emplace(ti.name, tensors_.size());
    tensors_.push_back(std::move(ti));
  }

  // The data section starts at the next multiple of the alignment.
  const uint64_t pos = c.pos();
  const uint64_t data_start = (pos + alignment_ - 1) / alignment_ * alignment_;
  data_offset_ = size_t(data_start);
  if (tensors_.empty()) return;
  if (data_start > size_)
    fail(src, ": tensor data section would start at byte ", data_start, ", past the end of the file (",
         size_, " bytes; truncated?)");
  const uint64_t data_size = size_ - data_start;
  std::vector<const TensorInfo*> by_offset;
  for (auto& t : tensors_) {
    if (t.offset > data_size || t.nbytes > data_size - t.offset)
      fail(src, ": tensor '", printable(t.name), "' extends past end of file (offset ",
           data_start + t.offset, ", size ", t.nbytes, ", file ", size_, "; truncated?)");
    t.data = base_ + data_start + t.offset;
    by_offset.push_back(&t);
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const TensorInfo* a, const TensorInfo* b) { return a->offset < b->offset; });
  for (size_t k = 1; k < by_offset.size(); ++k) {
    const TensorInfo* a = by_offset[k - 1];
    const TensorInfo* b = by_offset[k];
    if (a->offset + a->nbytes > b->offset)
      fail(src, ": tensors '", printable(a->name), "' and '", printable(b->name),
           "' overlap in the data section (offsets ", a->offset, "+", a->nbytes, " and ", b->offset,
           ")");
  }
  realign_tensors();
}

// ggml accepts any power-of-two general.alignment, so a valid file can hold
// tensor data at odd addresses (alignment 1 or 2). The kernels read floats,
// halves and block structs in place; at an address that is not a multiple of
// their size that is undefined behaviour (and a fault on some CPUs). Such
// tensors are copied once into one page-aligned anonymous buffer, each at a
// multiple of 64 bytes; every other tensor stays where it is. Files with the
// default alignment (32) never take this path.
void File::realign_tensors() {
  constexpr uintptr_t kNeed = 8;  // the widest scalar a kernel loads in place
  constexpr size_t kPlace = 64;
  const auto misaligned = [&](const TensorInfo& t) {
    return t.data && t.nbytes > 0 && reinterpret_cast<uintptr_t>(t.data) % kNeed != 0;
  };
  size_t total = 0;
  for (const TensorInfo& t : tensors_)
    if (misaligned(t)) total += (t.nbytes + kPlace - 1) / kPlace * kPlace;
  if (total == 0) return;
  void* p = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    fail(source_, ": cannot allocate ", total >> 20, " MiB to realign tensors (general.alignment ", alignment_,
         "): ", std::strerror(errno));
  uint8_t* out = static_cast<uint8_t*>(p);
  for (TensorInfo& t : tensors_) {
    if (!misaligned(t)) continue;
    std::memcpy(out, t.data, t.nbytes);
    t.data = out;
    out += (t.nbytes + kPlace - 1) / kPlace * kPlace;
  }
  realigned_ = p;
  realigned_len_ = total;
}

const Value* File::find(std::string_view key) const {
  auto it = kv_index_.find(key);
  return it == kv_index_.end() ? nullptr : &kv_[it->second].second;
}

void File::drop_array(std::string_view key) {
  auto it = kv_index_.find(key);
  if (it == kv_index_.end()) return;
  Value& v = kv_[it->second].second;
  std::vector<Value>().swap(v.arr);  // frees the elements and the storage
}

const TensorInfo* File::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

int64_t File::get_int(std::string_view key) const {
  const Value* v = find(key);
  if (!v) fail(source_, ": required metadata key '", key, "' is missing");
  return v->as_int(source_ + ": metadata key '" + std::string(key) + "'");
}

int64_t File::get_int_or(std::string_view key, int64_t def) const {
  return find(key) ? get_int(key) : def;
}

double File::get_float_or(std::string_view key, double def) const {
  const Value* v = find(key);
  return v ? v->as_float(source_ + ": metadata key '" + std::string(key) + "'") : def;
}

std::string File::get_string(std::string_view key) const {
  const Value* v = find(key);
  if (!v) fail(source_, ": required metadata key '", key, "' is missing");
  return v->as_string(source_ + ": metadata key '" + std::string(key) + "'");
}

std::string File::get_string_or(std::string_view key, std::string def) const {
  return find(key) ? get_string(key) : def;
}

bool File::get_bool_or(std::string_view key, bool def) const {
  const Value* v = find(key);
  if (!v) return def;
  if (v->type != ValueType::BOOL)
    fail(source_, ": metadata key '", key, "': expected a bool, found ", value_type_name(v->type));
  return v->u != 0;
}

}  // namespace edgellm::gguf
