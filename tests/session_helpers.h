// Pieces the session, context-policy, memory-plan and pressure tests share:
// a small session configuration, reproducible token streams, prefill in
// batches, the next-token logits, whole-file I/O, and whether ASan is on
// (its allocator keeps freed memory, so anonymous-memory checks skip there).
#pragma once
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "runtime/session.h"

#if defined(__SANITIZE_ADDRESS__)
#define EDGELLM_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EDGELLM_TEST_ASAN 1
#endif
#endif

namespace edgellm::test {

inline SessionConfig config(int64_t n_ctx, GgmlType t = GgmlType::F16) {
  SessionConfig c;
  c.n_ctx = n_ctx;
  c.n_batch = 16;
  c.n_threads = 2;
  c.type_k = c.type_v = t;
  return c;
}

// BOS (1), then ids from an LCG over [3, n_vocab).
inline std::vector<int32_t> some_tokens(int64_t n, int64_t n_vocab, uint32_t seed = 1) {
  std::vector<int32_t> t{1};
  uint32_t x = seed;
  while (int64_t(t.size()) < n) {
    x = x * 1664525u + 1013904223u;
    t.push_back(int32_t(3 + (x >> 8) % uint32_t(n_vocab - 3)));
  }
  return t;
}

inline void prefill(Session& s, const std::vector<int32_t>& ids) {
  for (size_t i = 0; i < ids.size(); i += size_t(s.n_batch())) {
    const int64_t n = std::min<int64_t>(s.n_batch(), int64_t(ids.size() - i));
    s.decode(ids.data() + i, n);
  }
}

inline std::vector<float> next_logits(Session& s, int32_t id) {
  const float* out = s.decode(&id, 1);
  return std::vector<float>(out, out + s.model().hparams().n_vocab);
}

inline std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

inline void write_all(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(data.data(), std::streamsize(data.size()));
}

}  // namespace edgellm::test
