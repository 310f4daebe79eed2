#include "runtime/kv_cache.h"

#include <cstdlib>
#include <cstring>

#include "base/error.h"

namespace edgellm {

KvCache::KvCache(const MemoryPlan& plan, int64_t n_layer)
    : n_ctx_(plan.n_ctx),
      n_layer_(n_layer),
      type_k_(plan.settings.type_k),
      type_v_(plan.settings.type_v),
      k_row_(plan.k_row_bytes),
      v_row_(plan.v_row_bytes),
      bytes_(size_t(plan.kv_bytes_per_seq)),
      data_(nullptr, [](uint8_t* p) { std::free(p); }) {
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
}

void KvCache::truncate(int64_t n) {
  if (n < 0 || n > size()) fail("cannot truncate a cache of ", size(), " tokens to ", n);
  tokens_.resize(size_t(n));
}

void KvCache::erase(int64_t first, int64_t count) {
  const int64_t n = size();
  if (first < 0 || count < 0 || first + count > n)
    fail("KV cache: cannot erase ", count, " positions from ", first, " of ", n);
  if (count == 0) return;
  if (data_) {
    const size_t moved = size_t(n - first - count);
    for (int64_t l = 0; l < n_layer_; ++l) {
      std::memmove(k_row(l, first), k_row(l, first + count), moved * k_row_);
      std::memmove(v_row(l, first), v_row(l, first + count), moved * v_row_);
    }
  }
  tokens_.erase(tokens_.begin() + first, tokens_.begin() + first + count);
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
