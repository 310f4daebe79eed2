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
      bytes_(size_t(plan.kv_bytes_per_seq)),
      data_(nullptr, [](uint8_t* p) { std::free(p); }) {
  const size_t L = size_t(n_layer_);
  k_rows_.resize(L);
  v_rows_.resize(L);
  owns_.resize(L);
  ring_.resize(L);
  sliding_.resize(L);
  k_off_.resize(L);
  v_off_.resize(L);
  size_t k_total = 0, v_total = 0;
  for (int64_t l = 0; l < n_layer_; ++l) {
    const size_t i = size_t(l);
    owns_[i] = hp.owns_kv(l);
    k_rows_[i] = kv_row_bytes(type_k_, hp.k_dim_at(l));
    v_rows_[i] = kv_row_bytes(type_v_, hp.v_dim_at(l));
    sliding_[i] = plan.n_swa > 0 && hp.sliding(l);
    ring_[i] = sliding_[i] ? ring_len_ : 0;
    if (!owns_[i]) continue;
    k_off_[i] = k_total;
    k_total += size_t(cells(l)) * k_rows_[i];
    v_total += size_t(cells(l)) * v_rows_[i];
  }
  for (int64_t l = 0, off = 0; l < n_layer_; ++l)
    if (owns_[size_t(l)]) {
      v_off_[size_t(l)] = k_total + size_t(off);
      off += cells(l) * int64_t(v_rows_[size_t(l)]);
    }
  // A sharing layer reads its source's rows (same kind, so the same shape).
  for (int64_t l = 0; l < n_layer_; ++l)
    if (!owns_[size_t(l)]) {
      const size_t src = size_t(hp.kv_source(l));
      if (k_rows_[src] != k_rows_[size_t(l)] || v_rows_[src] != v_rows_[size_t(l)])
        fail("KV cache: layer ", l, " shares layer ", src, "'s keys and values but its heads have another size");
      k_off_[size_t(l)] = k_off_[src];
      v_off_[size_t(l)] = v_off_[src];
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
      if (!owns(l)) continue;  // its rows are another layer's, moved there
      const size_t kr = k_rows_[size_t(l)], vr = v_rows_[size_t(l)];
      if (ring_[size_t(l)] > 0) {
        // Position p's row moves to p - count's cell: the ring turns by count.
        rotate_ring(k_layer(l), kr, ring_[size_t(l)], count);
        rotate_ring(v_layer(l), vr, ring_[size_t(l)], count);
      } else {
        std::memmove(k_row(l, first), k_row(l, first + count), moved * kr);
        std::memmove(v_row(l, first), v_row(l, first + count), moved * vr);
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
