// The sliding-window KV cache (MemoryPlan::swa_cells): gemma's local layers
// keep a ring of window + batch rows instead of the whole context. The ring
// changes only where rows live, so everything it serves must equal the same
// model over a full cache (--swa-full) bit for bit: decoding deep past the
// window, prefix reuse (and its refusal once the ring overwrote the window
// a prefix needs), context shifts (and the recompute when the kept tokens
// reach into the window), session files in both directions.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/error.h"
#include "model/model.h"
#include "runtime/session.h"
#include "ring_cache_checks.h"
#include "session_helpers.h"
#include "test_models.h"

namespace edgellm {
namespace {

using namespace test;

const Model& gemma3() {
  static auto m = Model::load(synth_tiny("gemma3", "f16"));  // six layers, window 32: five slide
  return *m;
}

TEST(SlidingWindowCache, PlanAndCacheHoldWindowPlusBatch) {
  const Model& m = gemma3();
  Session ring(m, ring_config(512, false)), full(m, ring_config(512, true));
  const MemoryPlan& p = ring.plan();
  EXPECT_EQ(p.n_swa, 32);
  EXPECT_EQ(p.n_swa_layers, 5);
  EXPECT_EQ(p.swa_cells, 64);  // 32 + 16 - 1, in whole tiles of 32
  EXPECT_EQ(p.kv_bytes_per_seq, uint64_t(1 * 512 + 5 * 64) * (p.k_row_bytes + p.v_row_bytes));
  EXPECT_EQ(ring.kv_bytes(), p.kv_bytes_per_seq);
  EXPECT_EQ(full.plan().swa_cells, 512);
  EXPECT_EQ(full.kv_bytes(), uint64_t(6 * 512) * (p.k_row_bytes + p.v_row_bytes));
  EXPECT_EQ(ring.kv().ring(0), 64);
  EXPECT_EQ(ring.kv().ring(5), 0);  // the global layer
  // Decode reads a window's rows per sliding layer however deep the context.
  EXPECT_EQ(p.kv_bytes_read_at(400), uint64_t(400 + 5 * 32) * (p.k_row_bytes + p.v_row_bytes));
  // A context no larger than the ring keeps every layer whole.
  Session small(m, ring_config(64, false));
  EXPECT_EQ(small.plan().swa_cells, 64);
  EXPECT_EQ(small.kv().ring(0), 0);
}

TEST(SlidingWindowCache, DeepDecodeEqualsFullCacheAndReference) {
  expect_deep_decode_equal(gemma3(), 200, 300, 5);  // the ring wraps four times
}

TEST(SlidingWindowCache, PrefixReuseWithinTheRingOtherwiseRefed) {
  const Model& m = gemma3();
  const int64_t V = m.hparams().n_vocab;
  const std::vector<int32_t> ids = some_tokens(200, V, 9);
  Session s(m, ring_config(512, false));
  prefill(s, ids);
  EXPECT_EQ(s.kv().swa_floor(), 200 - 64);
  // Back 10 (the window before 190 is still in the ring): kept.
  EXPECT_EQ(s.kv().reusable(190), 190);
  std::vector<int32_t> feed{ids[190]};
  EXPECT_EQ(s.keep_prefix(190, feed), 190);
  EXPECT_EQ(feed.size(), 1u);
  // Back to 100: the ring overwrote positions 69..135, so nothing stays and
  // the ids come back to be fed again; the result equals a fresh prefill.
  std::vector<int32_t> rest{ids[100], ids[101]};
  EXPECT_EQ(s.keep_prefix(100, rest), 0);
  ASSERT_EQ(rest.size(), 102u);
  EXPECT_EQ(s.n_past(), 0);
  prefill(s, rest);
  Session fresh(m, ring_config(512, false));
  prefill(fresh, std::vector<int32_t>(ids.begin(), ids.begin() + 102));
  EXPECT_EQ(next_logits(s, ids[102]), next_logits(fresh, ids[102]));
  // A full cache keeps any prefix.
  Session full(m, ring_config(512, true));
  prefill(full, ids);
  EXPECT_EQ(full.truncate(100), 100);
}

TEST(SlidingWindowCache, DecodingWithoutTheWindowIsRefused) {
  const Model& m = gemma3();
  Session s(m, ring_config(512, false));
  prefill(s, some_tokens(200, m.hparams().n_vocab, 3));
  s.kv().set_swa_floor(190);  // as if the rows before 190 were gone
  try {
    next_logits(s, 5);
    FAIL() << "decoded without the window";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sliding-window layers no longer hold"), std::string::npos) << e.what();
  }
}

TEST(SlidingWindowCache, ShiftOnARingEqualsTheFullCache) { expect_shift_equal(gemma3()); }

// The ring's file holds 64 positions of each of the five sliding layers, not 150.
TEST(SlidingWindowCache, SessionFilesMoveBetweenRingAndFullCaches) {
  Session ring(gemma3(), ring_config(512, false));
  const uint64_t row = ring.plan().k_row_bytes + ring.plan().v_row_bytes;
  expect_session_files_move_both_ways(gemma3(), "swa", 5 * (150 - 64) * row);
}

}  // namespace
}  // namespace edgellm
