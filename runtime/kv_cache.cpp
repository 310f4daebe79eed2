#include "runtime/kv_cache.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "base/error.h"

namespace edgellm {

namespace {
// Swaps two rows of n bytes through a small stack buffer.
void swap_rows(uint8_t* a, uint8_t* b, size_t n) {
  uint8_t tmp[256];
  for (size_t i = 0; i < n; i += sizeof tmp) {
    const size_t c = std::min(sizeof tmp, n - i);
    std::memcpy(tmp, a + i, c);
    std::memcpy(a + i, b + i, c);
    std::memcpy(b + i, tmp, c);
  }
}
void reverse_rows(uint8_t* base, size_t row, int64_t lo, int64_t hi) {
  for (--hi; lo < hi; ++lo, --hi) swap_rows(base + size_t(lo) * row, base + size_t(hi) * row, row);
}
// Turns a ring of n rows so that the row at c moves to (c - k) mod n, in
// place (three reversals: no scratch the size of the ring).
void rotate_ring(uint8_t* base, size_t row, int64_t n, int64_t k) {
  k %= n;
  if (k == 0) return;
  reverse_rows(base, row, 0, k);
  reverse_rows(base, row, k, n);
  reverse_rows(base, row, 0, n);
}
}  // namespace

KvCache::KvCache(const MemoryPlan& plan, const HParams& hp)
    : n_ctx_(plan.n_ctx),
      n_layer_(hp.n_layer),
      n_swa_(plan.n_swa),
      ring_len_(plan.swa_cells > 0 && plan.swa_cells < plan.n_ctx ? plan.swa_cells : 0),
      type_k_(plan.settings.type_k),
      type_v_(plan.settings.type_v),
      k_row_(plan.k_row_bytes),
      v_row_(plan.v_row_bytes),
      bytes_(size_t(plan.kv_bytes_per_seq)),
      data_(nullptr, [](uint8_t* p) { std::free(p); }) {
  ring_.resize(size_t(n_layer_));
  sliding_.resize(size_t(n_layer_));
  k_off_.resize(size_t(n_layer_));
  v_off_.resize(size_t(n_layer_));
  size_t k_total = 0, v_total = 0;
  for (int64_t l = 0; l < n_layer_; ++l) {
    sliding_[size_t(l)] = plan.n_swa > 0 && hp.sliding(l);
    ring_[size_t(l)] = sliding_[size_t(l)] ? ring_len_ : 0;
    k_off_[size_t(l)] = k_total;
    k_total += size_t(cells(l)) * k_row_;
    v_total += size_t(cells(l)) * v_row_;
  }
  for (int64_t l = 0, off = 0; l < n_layer_; ++l) {
    v_off_[size_t(l)] = k_total + size_t(off);
    off += cells(l) * int64_t(v_row_);
  }
  if (k_total + v_total != bytes_)
    fail("KV cache: the layers need ", k_total + v_total, " bytes, the plan has ", bytes_, " (plan for another model?)");
  allocate();
  tokens_.reserve(size_t(n_ctx_));
}

void KvCache::allocate() {
  // Rounded up to the alignment, as aligned_alloc requires.
  data_.reset(static_cast<uint8_t*>(std::aligned_alloc(64, (bytes_ + 63) / 64 * 64)));
  if (!data_)
    fail("cannot allocate ", bytes_ >> 20, " MiB for the KV cache (", n_ctx_,
         " tokens); try a smaller -c or a quantized cache (-ctk q8_0 -ctv q8_0)");
  // Touch every page now: the footprint is the planned one from the start
  // and never creeps up as the context fills (an OS that cannot give the
  // memory says so here, not in the middle of a conversation).
  std::memset(data_.get(), 0, bytes_);
}

void KvCache::append(const int32_t* ids, int64_t n) {
  if (size() + n > n_ctx_) fail("KV cache: ", size(), " + ", n, " positions exceed the context ", n_ctx_);
  tokens_.insert(tokens_.end(), ids, ids + n);  // within the reserved capacity: no allocation
  // The rows just written overwrote the ring's oldest.
  if (ring_len_ > 0) swa_floor_ = std::max(swa_floor_, size() - ring_len_);
}

int64_t KvCache::reusable(int64_t n) const {
  // The next token (position n) sees positions n - n_swa + 1 .. n - 1 of a
  // sliding layer: all of them must still be held.
  return n == 0 || std::max<int64_t>(0, n - n_swa_ + 1) >= swa_floor_ ? n : 0;
}

int64_t KvCache::truncate(int64_t n) {
  if (n < 0 || n > size()) fail("cannot truncate a cache of ", size(), " tokens to ", n);
  const int64_t keep = reusable(n);
  tokens_.resize(size_t(keep));
  if (keep == 0) swa_floor_ = 0;  // empty: every row is rewritten before it is read
  return keep;
}

void KvCache::erase(int64_t first, int64_t count) {
  const int64_t n = size();
  if (first < 0 || count < 0 || first + count > n)
    fail("KV cache: cannot erase ", count, " positions from ", first, " of ", n);
  if (count == 0) return;
  if (data_) {
    const size_t moved = size_t(n - first - count);
    for (int64_t l = 0; l < n_layer_; ++l) {
      if (ring_[size_t(l)] > 0) {
        // Position p's row moves to p - count's cell: the ring turns by count.
        rotate_ring(k_layer(l), k_row_, ring_[size_t(l)], count);
        rotate_ring(v_layer(l), v_row_, ring_[size_t(l)], count);
      } else {
        std::memmove(k_row(l, first), k_row(l, first + count), moved * k_row_);
        std::memmove(v_row(l, first), v_row(l, first + count), moved * v_row_);
      }
    }
  }
  tokens_.erase(tokens_.begin() + first, tokens_.begin() + first + count);
  // Sliding layers hold the moved positions still held before; in a ring the
  // turn took the kept ones (before `first`) off their cells.
  if (ring_len_ > 0) swa_floor_ = std::max(swa_floor_ - count, first);
  else if (swa_floor_ > first) swa_floor_ = std::max(swa_floor_ - count, first);
}

void KvCache::release() {
  if (wipe_ && data_) {
    // A volatile store loop the compiler cannot drop as dead (explicit_bzero
    // is not everywhere).
    volatile uint8_t* p = data_.get();
    for (size_t i = 0; i < bytes_; ++i) p[i] = 0;
  }
  data_.reset();
}

KvCache::~KvCache() { release(); }

void KvCache::reallocate() {
  if (!data_) allocate();
}

}  // namespace edgellm
