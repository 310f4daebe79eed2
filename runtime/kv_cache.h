// One sequence's state: its keys and values for every layer and cached
// position, and the token ids they stand for. Several caches can share one
// Executor (server slots, C API contexts); a cache never points at the model.
//
// Layout (one block, sized by the memory plan): all layers' key rows, then all
// layers' value rows. A layer holds n_ctx rows, position p at row p; a
// sliding-window layer (MemoryPlan::swa_cells < n_ctx) holds a ring of
// swa_cells rows, position p at row p % swa_cells, so only the last
// swa_cells positions are there. Each row holds n_head_kv * head_dim elements
// of type_k (f16, f32, q8_0, q4_0), head_dim that layer's (Gemma 4's sliding
// layers have their own); k_row(layer, p) finds position p's. A KV-sharing
// layer (HParams::kv_source) owns no rows: its rows are its source layer's.
//
// Positions are kept contiguous from 0. A context policy that drops tokens
// (shift, window) moves the later rows down with erase() and re-rotates their
// keys to their new positions (Executor::rotate_keys; RoPE is relative, so
// that is exact up to the cache type's rounding). Positions therefore never
// exceed n_ctx, and attention needs no position table.
//
// The ring's rule: the rows of sliding layers are valid for positions
// >= swa_floor() only (older ones were overwritten, or dropped by a shift).
// A cache can go on from size n only while the window before n is there
// (reusable(n) == n); truncating further back empties it instead.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "model/model.h"
#include "runtime/memory_plan.h"

namespace edgellm {

class KvCache {
 public:
  // Allocates plan.kv_bytes_per_seq at once; throws if that fails. hp says
  // which layers slide (the plan's swa_cells rows each).
  KvCache(const MemoryPlan& plan, const HParams& hp);
  KvCache(const KvCache&) = delete;
  KvCache& operator=(const KvCache&) = delete;

  int64_t n_ctx() const { return n_ctx_; }
  int64_t n_layer() const { return n_layer_; }
  int64_t size() const { return int64_t(tokens_.size()); }  // cached positions
  GgmlType type_k() const { return type_k_; }
  GgmlType type_v() const { return type_v_; }
  // Bytes of one position's keys / values in a layer (the plan's
  // k_row_bytes / v_row_bytes unless sliding layers have their own size).
  size_t k_row_bytes(int64_t layer = 0) const { return k_rows_[size_t(layer)]; }
  size_t v_row_bytes(int64_t layer = 0) const { return v_rows_[size_t(layer)]; }
  // Whether a layer's rows are its own (not another layer's, shared).
  bool owns(int64_t layer) const { return owns_[size_t(layer)] != 0; }
  size_t bytes() const { return bytes_; }

  // Rows a layer holds: n_ctx, or the ring's length; ring(layer) is that
  // length for a ring layer and 0 otherwise.
  int64_t cells(int64_t layer) const { return ring_[size_t(layer)] > 0 ? ring_[size_t(layer)] : n_ctx_; }
  int64_t ring(int64_t layer) const { return ring_[size_t(layer)]; }
  bool sliding(int64_t layer) const { return sliding_[size_t(layer)] != 0; }
  // The first position whose rows a layer holds: swa_floor() in sliding
  // layers (0 unless a ring overwrote or a shift dropped older rows, or a
  // session file did not have them), 0 in the others.
  int64_t first_held(int64_t layer) const { return sliding(layer) ? swa_floor_ : 0; }
  int64_t swa_floor() const { return swa_floor_; }

  // Position p's row in a layer (p < size() + the batch being written).
  uint8_t* k_row(int64_t layer, int64_t p) { return k_layer(layer) + cell(layer, p) * k_rows_[size_t(layer)]; }
  uint8_t* v_row(int64_t layer, int64_t p) { return v_layer(layer) + cell(layer, p) * v_rows_[size_t(layer)]; }
  const uint8_t* k_row(int64_t layer, int64_t p) const { return const_cast<KvCache*>(this)->k_row(layer, p); }
  const uint8_t* v_row(int64_t layer, int64_t p) const { return const_cast<KvCache*>(this)->v_row(layer, p); }
  // A layer's first row (what attention reads from, with ring()).
  uint8_t* k_layer(int64_t layer) { return data_.get() + k_off_[size_t(layer)]; }
  uint8_t* v_layer(int64_t layer) { return data_.get() + v_off_[size_t(layer)]; }

  // The ids of the cached positions, in order.
  const std::vector<int32_t>& tokens() const { return tokens_; }
  // Records the ids of n positions whose rows were just written at size()...
  void append(const int32_t* ids, int64_t n);
  // The longest prefix of at most n positions this cache can go on from: n,
  // or 0 when a sliding layer's ring no longer holds the window before n.
  int64_t reusable(int64_t n) const;
  // Forgets positions >= n (n = 0 empties the cache) and returns how many
  // stay: reusable(n), so less than n (0) when the window before n was
  // overwritten; the caller then feeds the tokens from there again.
  int64_t truncate(int64_t n);
  // Removes positions [first, first + count): later rows and ids move down by
  // count (a ring turns by count). The moved keys still carry their old
  // rotation: the caller re-rotates them (Executor::rotate_keys). In ring
  // layers the positions before `first` are lost; when the window after the
  // erase needs them, reusable(size()) < size() and the caller recomputes.
  void erase(int64_t first, int64_t count);
  // A session file restored positions [floor, size()) of the sliding layers.
  void set_swa_floor(int64_t floor) { swa_floor_ = floor; }

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
  size_t cell(int64_t layer, int64_t p) const {
    const int64_t r = ring_[size_t(layer)];
    return size_t(r > 0 ? p % r : p);
  }
  void allocate();

  int64_t n_ctx_, n_layer_, n_swa_, ring_len_;  // ring_len_: the ring layers' length (0: none)
  GgmlType type_k_, type_v_;
  size_t bytes_;
  std::vector<size_t> k_rows_, v_rows_;  // per layer: bytes of one position's keys / values
  std::vector<uint8_t> owns_;          // per layer: 0 for a KV-sharing layer
  std::vector<int64_t> ring_;          // per layer: ring length, 0 for a full layer
  std::vector<uint8_t> sliding_;       // per layer: attends to a window
  std::vector<size_t> k_off_, v_off_;  // per layer: byte offset of its first row
  int64_t swa_floor_ = 0;
  std::unique_ptr<uint8_t[], void (*)(uint8_t*)> data_;
  std::vector<int32_t> tokens_;  // capacity n_ctx, reserved once
  bool wipe_ = false;
};

}  // namespace edgellm
