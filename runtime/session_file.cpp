#include "runtime/session_file.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "base/durable_file.h"
#include "base/error.h"
#include "base/input_file.h"

namespace edgellm {

namespace {

constexpr char kMagic[8] = {'E', 'D', 'G', 'E', 'S', 'E', 'S', 'S'};
// Version 2 added swa_floor: sliding-window layers store positions
// [swa_floor, n_tokens) only (a ring cache holds no more). Version 1 files
// (every layer from 0) still load.
constexpr uint32_t kVersion = 2;

// A 64-bit hash over whole words (FNV-style multiply-xor with a final mix):
// ~10 GB/s, enough to detect a torn or bit-flipped file; not cryptographic.
struct Hash {
  uint64_t h = 0x9E3779B97F4A7C15ull;
  void add(const void* data, size_t n) {
    const uint8_t* p = static_cast<const uint8_t*>(data);
    while (n >= 8) {
      uint64_t w;
      std::memcpy(&w, p, 8);
      h = (h ^ w) * 0x100000001B3ull;
      h ^= h >> 29;
      p += 8;
      n -= 8;
    }
    for (; n > 0; --n, ++p) h = (h ^ *p) * 0x100000001B3ull;
  }
  uint64_t done() const {
    uint64_t x = h;
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDull;
    x ^= x >> 33;
    return x;
  }
};

struct Header {
  uint64_t file_size, tensor_bytes, identity;
  int64_t n_layer, n_embd, n_head, n_head_kv, head_dim, head_dim_v, n_vocab;
  uint32_t rope_base_bits, type_k, type_v, reserved;
  uint64_t k_row_bytes, v_row_bytes, n_tokens;
  uint64_t swa_floor;  // version 2
};
constexpr uint32_t kHeaderV1 = sizeof(Header) - 8;

Header header_for(Session& s) {
  const Model& m = s.model();
  const HParams& hp = m.hparams();
  Header h{};
  h.file_size = m.file().file_size();
  h.tensor_bytes = m.weight_bytes();
  h.identity = model_identity(m);
  h.n_layer = hp.n_layer;
  h.n_embd = hp.n_embd;
  h.n_head = hp.n_head;
  h.n_head_kv = hp.n_head_kv;
  h.head_dim = hp.head_dim;
  h.head_dim_v = hp.head_dim_v;
  h.n_vocab = hp.n_vocab;
  std::memcpy(&h.rope_base_bits, &hp.rope_base, 4);
  h.type_k = uint32_t(s.kv().type_k());
  h.type_v = uint32_t(s.kv().type_v());
  h.k_row_bytes = s.kv().k_row_bytes();
  h.v_row_bytes = s.kv().v_row_bytes();
  h.n_tokens = uint64_t(s.n_past());
  h.swa_floor = uint64_t(s.kv().swa_floor());
  return h;
}

}  // namespace

uint64_t model_identity(const Model& m) {
  const gguf::File& f = m.file();
  Hash h;
  const uint64_t size = f.file_size();
  h.add(&size, 8);
  // Tensor names, types, shapes and offsets.
  for (const gguf::TensorInfo& t : f.tensors()) {
    h.add(t.name.data(), t.name.size());
    const uint64_t fields[6] = {uint64_t(t.type), uint64_t(t.ne[0]), uint64_t(t.ne[1]), uint64_t(t.ne[2]),
                                uint64_t(t.ne[3]), t.offset};
    h.add(fields, sizeof fields);
  }
  // 16 sampled 4 KiB blocks of tensor data: models of one shape (fine-tunes,
  // other seeds) differ there.
  uint64_t total = 0;
  for (const gguf::TensorInfo& t : f.tensors()) total += t.nbytes;
  if (total > 0) {
    for (int i = 0; i < 16; ++i) {
      uint64_t at = total / 16 * uint64_t(i), seen = 0;
      for (const gguf::TensorInfo& t : f.tensors()) {
        if (at < seen + t.nbytes) {
          const uint64_t off = at - seen, n = std::min<uint64_t>(4096, t.nbytes - off);
          h.add(t.data + off, size_t(n));
          break;
        }
        seen += t.nbytes;
      }
    }
  }
  return h.done();
}

namespace {
template <class Write>
void write_session(Session& s, Write&& write) {
  KvCache& kv = s.kv();
  if (!kv.resident()) fail("cannot save the session: its KV cache was released");
  const Header h = header_for(s);
  Hash sum;
  auto put = [&](const void* p, size_t n) {
    write(p, n);
    sum.add(p, n);
  };
  const uint32_t ver = kVersion, hb = sizeof(Header);
  // The checksum covers the whole stream; hash each piece as written. (Pieces
  // are multiples of 8 bytes or end the stream, so word hashing is stable.)
  put(kMagic, 8);
  put(&ver, 4);
  put(&hb, 4);
  put(&h, sizeof h);
  put(kv.tokens().data(), kv.tokens().size() * sizeof(int32_t));
  // Each layer's rows in position order, from the first it holds (a ring's
  // rows go out one by one: its oldest is not at its first row).
  const int64_t nt = kv.size();
  for (bool keys : {true, false})
    for (int64_t l = 0; l < kv.n_layer(); ++l) {
      if (!kv.owns(l)) continue;  // a KV-sharing layer's rows are its source's
      const size_t row = keys ? kv.k_row_bytes(l) : kv.v_row_bytes(l);
      const int64_t p0 = std::min(kv.first_held(l), nt);
      if (kv.ring(l) == 0) put(keys ? kv.k_row(l, p0) : kv.v_row(l, p0), size_t(nt - p0) * row);
      else
        for (int64_t p = p0; p < nt; ++p) put(keys ? kv.k_row(l, p) : kv.v_row(l, p), row);
    }
  const uint64_t c = sum.done();
  write(&c, 8);
}

void read_session(Session& s, std::FILE* f, const std::string& name) {
  KvCache& kv = s.kv();
  kv.truncate(0);
  const std::string bad = "session file " + name + ": ";
  std::fseek(f, 0, SEEK_END);
  const long size = std::ftell(f);
  std::fseek(f, 0, SEEK_SET);
  Hash sum;
  auto get = [&](void* p, size_t n, const char* what) {
    if (std::fread(p, 1, n, f) != n) fail(bad, "truncated (", what, " missing); delete it to start over");
    sum.add(p, n);
  };
  char magic[8];
  uint32_t ver = 0, hb = 0;
  get(magic, 8, "magic");
  if (std::memcmp(magic, kMagic, 8) != 0) fail(bad, "not an edgellm session file");
  get(&ver, 4, "version");
  get(&hb, 4, "header size");
  if (ver != kVersion && ver != 1) fail(bad, "format version ", ver, ", this build reads versions 1 and ", kVersion);
  const uint32_t want_hb = ver == 1 ? kHeaderV1 : uint32_t(sizeof(Header));
  if (hb != want_hb) fail(bad, "header of ", hb, " bytes, expected ", want_hb, "; corrupt");
  Header h{};
  get(&h, hb, "header");  // a version 1 header leaves swa_floor 0
  const Header want = header_for(s);
  if (h.file_size != want.file_size || h.tensor_bytes != want.tensor_bytes || h.identity != want.identity ||
      h.n_layer != want.n_layer || h.n_embd != want.n_embd || h.n_head != want.n_head ||
      h.n_head_kv != want.n_head_kv || h.head_dim != want.head_dim || h.head_dim_v != want.head_dim_v ||
      h.n_vocab != want.n_vocab || h.rope_base_bits != want.rope_base_bits)
    fail(bad, "written for another model (", s.model().file().source(), " differs); use another --session path");
  if (h.type_k != want.type_k || h.type_v != want.type_v || h.k_row_bytes != want.k_row_bytes ||
      h.v_row_bytes != want.v_row_bytes)
    fail(bad, "its KV cache is ", type_name(h.type_k), "/", type_name(h.type_v), "; run with -ctk ",
         type_name(h.type_k), " -ctv ", type_name(h.type_v), " or use another --session path");
  // The exact size follows from the header: check it before reading rows.
  // (The header matched this model, so the layers' row sizes are the cache's.)
  int64_t n_sliding = 0;
  uint64_t row_global = 0, row_sliding = 0;  // K + V bytes per position over the layers holding rows
  for (int64_t l = 0; l < kv.n_layer(); ++l) {
    n_sliding += kv.sliding(l) ? 1 : 0;
    if (kv.owns(l)) (kv.sliding(l) ? row_sliding : row_global) += kv.k_row_bytes(l) + kv.v_row_bytes(l);
  }
  if (h.n_tokens > uint64_t(1) << 32 || h.swa_floor > h.n_tokens || (n_sliding == 0 && h.swa_floor != 0))
    fail(bad, "holds positions ", h.swa_floor, " of ", h.n_tokens, " in its sliding layers; corrupt: delete it");
  const uint64_t expect =
      16 + hb + h.n_tokens * 4 + row_global * h.n_tokens + row_sliding * (h.n_tokens - h.swa_floor) + 8;
  if (uint64_t(size) != expect)
    fail(bad, "is ", size, " bytes where its header implies ", expect, "; truncated or corrupt: delete it");
  if (int64_t(h.n_tokens) > kv.n_ctx())
    fail(bad, "holds ", h.n_tokens, " tokens, more than the context of ", kv.n_ctx(), "; use -c ", h.n_tokens,
         " or more");
  if (!kv.resident()) kv.reallocate();
  std::vector<int32_t> ids(size_t(h.n_tokens));
  get(ids.data(), ids.size() * 4, "token ids");
  for (int32_t id : ids)
    if (id < 0 || id >= want.n_vocab) fail(bad, "token id ", id, " is outside the vocabulary; corrupt");
  // Rows in position order; into a ring one by one, so that a ring shorter
  // than the file's run ends up holding its last positions.
  const int64_t nt = int64_t(h.n_tokens), floor = int64_t(h.swa_floor);
  for (bool keys : {true, false})
    for (int64_t l = 0; l < kv.n_layer(); ++l) {
      if (!kv.owns(l)) continue;
      const size_t row = keys ? kv.k_row_bytes(l) : kv.v_row_bytes(l);
      const int64_t p0 = kv.sliding(l) ? floor : 0;
      const char* what = keys ? "keys" : "values";
      if (kv.ring(l) == 0) get(keys ? kv.k_row(l, p0) : kv.v_row(l, p0), size_t(nt - p0) * row, what);
      else
        for (int64_t p = p0; p < nt; ++p) get(keys ? kv.k_row(l, p) : kv.v_row(l, p), row, what);
    }
  uint64_t c = 0;
  if (std::fread(&c, 1, 8, f) != 8) fail(bad, "truncated (checksum missing)");
  if (c != sum.done()) fail(bad, "checksum mismatch: the file is corrupt; delete it to start over");
  kv.append(ids.data(), int64_t(ids.size()));
  kv.set_swa_floor(std::max(floor, kv.swa_floor()));  // append() counted what a short ring lost
  if (kv.reusable(nt) != nt) {
    kv.truncate(0);
    fail(bad, "its sliding-window layers hold too little of the window before position ", nt,
         "; delete it to start over");
  }
}
}  // namespace

void save_session(Session& s, const std::string& path) {
  DurableFile out(path);
  write_session(s, [&](const void* p, size_t n) { out.write(p, n); });
  out.commit();
}

void save_session(Session& s, std::FILE* f) {
  std::rewind(f);
  if (ftruncate(fileno(f), 0) != 0) fail("cannot reuse the temporary session file: ", std::strerror(errno));
  write_session(s, [&](const void* p, size_t n) {
    if (std::fwrite(p, 1, n, f) != n) fail("cannot write the session to a temporary file: ", std::strerror(errno));
  });
  if (std::fflush(f) != 0) fail("cannot write the session to a temporary file: ", std::strerror(errno));
}

void load_session(Session& s, const std::string& path) {
  const int fd = open_regular_file(path, "session file");
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(::fdopen(fd, "rb"), &std::fclose);
  if (!f) {
    ::close(fd);
    fail("session file ", path, ": cannot open: ", std::strerror(errno));
  }
  read_session(s, f.get(), path);
}

void load_session(Session& s, std::FILE* f) { read_session(s, f, "(temporary)"); }

}  // namespace edgellm
