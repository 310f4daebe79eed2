// Gemma 4's KV sharing: its last layers hold no keys or values of their own
// but attend over an earlier layer's (the last of the same kind before them),
// and its sliding layers have their own head size. tiny-gemma4's four layers:
// 0 sliding (head 64, owns), 1 global (head 128, owns), 2 sliding reading
// layer 0's rows, 3 global reading layer 1's. What must hold: the plan and
// the cache count the two owners only, in their own row sizes; everything the
// cache serves (decode deep past the window on a ring, prefix reuse, context
// shifts, session files) equals the full cache and the reference pass, and
// the shared layers never write rows (they would overwrite their source's).
#include <gtest/gtest.h>

#include <vector>

#include "gguf_rewrite.h"
#include "model/model.h"
#include "runtime/memory_plan.h"
#include "runtime/session.h"
#include "ring_cache_checks.h"
#include "test_models.h"

namespace edgellm {
namespace {

using namespace test;

const Model& gemma4() {
  static auto m = Model::load(synth_tiny("gemma4", "f16"));
  return *m;
}

TEST(SharedKvCache, LayoutIsWhatTheMetadataSays) {
  const HParams& hp = gemma4().hparams();
  ASSERT_EQ(hp.n_layer, 4);
  EXPECT_TRUE(hp.sliding(0));
  EXPECT_FALSE(hp.sliding(1));
  EXPECT_TRUE(hp.sliding(2));
  EXPECT_FALSE(hp.sliding(3));
  EXPECT_EQ(hp.head_dim_at(0), 64);
  EXPECT_EQ(hp.head_dim_at(1), 128);
  EXPECT_TRUE(hp.owns_kv(0) && hp.owns_kv(1));
  EXPECT_FALSE(hp.owns_kv(2) || hp.owns_kv(3));
  EXPECT_EQ(hp.kv_source(2), 0);
  EXPECT_EQ(hp.kv_source(3), 1);
  // The shared layers' feed-forward is twice as wide (double-wide MLP).
  EXPECT_EQ(hp.n_ff_at(3), 2 * hp.n_ff_at(0));
}

TEST(SharedKvCache, PlanAndCacheHoldTheOwnersOnly) {
  const Model& m = gemma4();
  const HParams& hp = m.hparams();
  Session ring(m, ring_config(512, false)), full(m, ring_config(512, true));
  const MemoryPlan& p = ring.plan();
  // f16 rows: sliding 2 kv heads x 64 x 2 bytes, global 2 x 128 x 2; K + V.
  const uint64_t swa_row = 2 * (2 * 64 * 2), global_row = 2 * (2 * 128 * 2);
  EXPECT_EQ(p.n_shared_layers, 2);
  EXPECT_EQ(p.row_bytes_swa, swa_row);
  EXPECT_EQ(p.row_bytes_global, global_row);
  EXPECT_EQ(p.row_bytes_read_swa, 2 * swa_row);  // two sliding layers read one layer's rows
  EXPECT_EQ(p.row_bytes_read_global, 2 * global_row);
  EXPECT_EQ(p.swa_cells, 64);  // window 32 + batch 16 - 1, in tiles of 32
  EXPECT_EQ(p.kv_bytes_per_seq, global_row * 512 + swa_row * 64);
  EXPECT_EQ(ring.kv_bytes(), p.kv_bytes_per_seq);
  EXPECT_EQ(full.kv_bytes(), (global_row + swa_row) * 512);
  EXPECT_EQ(p.kv_bytes_per_position(), global_row);
  EXPECT_EQ(p.kv_bytes_read_at(400), 2 * global_row * 400 + 2 * swa_row * 32);
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    EXPECT_EQ(ring.kv().owns(il), hp.owns_kv(il)) << il;
    EXPECT_EQ(ring.kv().k_row_bytes(il), size_t(2 * hp.head_dim_at(il) * 2)) << il;
  }
}

TEST(SharedKvCache, DeepDecodeOnARingEqualsFullCacheAndReference) {
  expect_deep_decode_equal(gemma4(), 180, 260, 5);  // the 64-row ring wraps four times
}

// make_room rotates the owners' keys once each (a shared layer's are its
// source's).
TEST(SharedKvCache, ShiftOnARingEqualsTheFullCache) { expect_shift_equal(gemma4()); }

// The files differ by the one owning sliding layer's rows past the ring.
TEST(SharedKvCache, SessionFilesHoldTheOwnersRowsAndRoundTrip) {
  Session ring(gemma4(), ring_config(512, false));
  expect_session_files_move_both_ways(gemma4(), "g4", (150 - 64) * ring.plan().row_bytes_swa);
}

// Gemma 4's larger sizes give their global layers fewer KV heads than the
// sliding ones (attention.head_count_kv as a per-layer array).
// tiny-gemma4-kv: tiny-gemma4 with one KV head on layers 1 and 3, two on 0
// and 2. Each layer's rows, its GQA grouping and the shared layers' reading
// of their source follow its own count.
const Model& gemma4_kv() {
  static auto m = Model::load(synth_tiny("gemma4-kv", "f16"));
  return *m;
}

TEST(SharedKvCache, PerLayerKvHeadsSizeEachLayersRows) {
  const Model& m = gemma4_kv();
  const HParams& hp = m.hparams();
  EXPECT_EQ(hp.n_head_kv, 2);  // the largest
  for (int64_t il = 0; il < 4; ++il) EXPECT_EQ(hp.n_head_kv_at(il), hp.sliding(il) ? 2 : 1) << il;
  Session ring(m, ring_config(512, false));
  const MemoryPlan& p = ring.plan();
  const uint64_t swa_row = 2 * (2 * 64 * 2), global_row = 2 * (1 * 128 * 2);
  EXPECT_EQ(p.row_bytes_swa, swa_row);
  EXPECT_EQ(p.row_bytes_global, global_row);
  EXPECT_EQ(p.k_row_bytes, size_t(1 * 128 * 2));  // the first global layer's
  EXPECT_EQ(p.kv_bytes_per_seq, global_row * 512 + swa_row * 64);
  EXPECT_EQ(ring.kv_bytes(), p.kv_bytes_per_seq);
  for (int64_t il = 0; il < 2; ++il)
    EXPECT_EQ(ring.kv().k_row_bytes(il), size_t(hp.n_head_kv_at(il) * hp.head_dim_at(il) * 2)) << il;
}

TEST(SharedKvCache, PerLayerKvHeadsDecodeEqualsFullCacheAndReference) {
  expect_deep_decode_equal(gemma4_kv(), 180, 260, 5);
}

// Gemma 4's larger sizes leave v_proj out of their global layers: the values
// are then the keys' projection (V-normed, unrotated), as llama.cpp and
// Hugging Face read such files. tiny-gemma4-kv without blk.1.attn_v.weight
// (its owning global layer; layer 3 reads it): layer 1's value matrix is its
// key matrix, and the pass agrees with the reference over the same weights.
TEST(SharedKvCache, GlobalLayerWithoutValueProjectionReadsItsKeys) {
  auto m = Model::load(rewrite(synth_tiny("gemma4-kv", "f16"), "gemma4-kv-no-v", [](gguf::Writer&) {},
                               [](const gguf::TensorInfo& t) { return t.name != "blk.1.attn_v.weight"; }));
  EXPECT_EQ(m->layers()[1].wv.data, m->layers()[1].wk.data);
  EXPECT_NE(m->layers()[0].wv.data, m->layers()[0].wk.data);
  expect_deep_decode_equal(*m, 180, 260, 5);
}

}  // namespace
}  // namespace edgellm
