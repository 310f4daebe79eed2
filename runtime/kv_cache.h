// One sequence's state: its keys and values for every layer and cached
// position, and the token ids they stand for. Several caches can share one
// Executor (server slots, C API contexts); a cache never points at the model.
//
// Layout (one block, sized by the memory plan): all layers' key rows, then all
// layers' value rows; row (layer l, cell c) of keys at
//   k_base + (l * n_ctx + c) * k_row_bytes,
// a row holding n_head_kv * head_dim elements of type_k (f16, f32, q8_0, q4_0).
//
// Cell c holds position c: cells are kept contiguous from 0. A context policy
// that drops tokens (shift, window) moves the later rows down with erase() and
// re-rotates their keys to their new positions (Executor::rotate_keys; RoPE
// is relative, so that is exact up to the cache type's rounding). Positions
// therefore never exceed n_ctx, and attention needs no mask or position table.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/memory_plan.h"

namespace edgellm {

class KvCache {
 public:
  // Allocates plan.kv_bytes_per_seq at once; throws if that fails.
  KvCache(const MemoryPlan& plan, int64_t n_layer);
  KvCache(const KvCache&) = delete;
  KvCache& operator=(const KvCache&) = delete;

  int64_t n_ctx() const { return n_ctx_; }
  int64_t n_layer() const { return n_layer_; }
  int64_t size() const { return int64_t(tokens_.size()); }  // cached positions
  GgmlType type_k() const { return type_k_; }
  GgmlType type_v() const { return type_v_; }
  size_t k_row_bytes() const { return k_row_; }
  size_t v_row_bytes() const { return v_row_; }
  size_t bytes() const { return bytes_; }

  uint8_t* k_row(int64_t layer, int64_t cell) { return k_base() + (size_t(layer) * size_t(n_ctx_) + size_t(cell)) * k_row_; }
  uint8_t* v_row(int64_t layer, int64_t cell) { return v_base() + (size_t(layer) * size_t(n_ctx_) + size_t(cell)) * v_row_; }
  const uint8_t* k_row(int64_t layer, int64_t cell) const { return const_cast<KvCache*>(this)->k_row(layer, cell); }
  const uint8_t* v_row(int64_t layer, int64_t cell) const { return const_cast<KvCache*>(this)->v_row(layer, cell); }

  // The ids of the cached positions, in order.
  const std::vector<int32_t>& tokens() const { return tokens_; }
  // Records the ids of n positions whose rows were just written at size()...
  void append(const int32_t* ids, int64_t n);
  // Forgets positions >= n (n = 0 empties the cache).
  void truncate(int64_t n);
  // Removes cells [first, first + count): later rows and ids move down by
  // count. The moved keys still carry their old rotation: the caller
  // re-rotates them (Executor::rotate_keys).
  void erase(int64_t first, int64_t count);

  // Memory pressure: free the rows (the ids stay, so the caller knows what
  // was cached); reallocate() gets the same number of bytes back, its rows
  // undefined until restored (session file) or recomputed.
  bool resident() const { return data_ != nullptr; }
  void release();
  // --session-private: zero the rows whenever they are freed (release, exit).
  void set_wipe_on_free(bool on) { wipe_ = on; }
  ~KvCache();
  void reallocate();

 private:
  uint8_t* k_base() { return data_.get(); }
  uint8_t* v_base() { return data_.get() + size_t(n_layer_) * size_t(n_ctx_) * k_row_; }
  void allocate();

  int64_t n_ctx_, n_layer_;
  GgmlType type_k_, type_v_;
  size_t k_row_, v_row_, bytes_;
  std::unique_ptr<uint8_t[], void (*)(uint8_t*)> data_;
  std::vector<int32_t> tokens_;  // capacity n_ctx, reserved once
  bool wipe_ = false;
};

}  // namespace edgellm
