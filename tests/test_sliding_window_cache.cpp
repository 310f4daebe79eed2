// The sliding-window KV cache (MemoryPlan::swa_cells): gemma's local layers
// keep a ring of window + batch rows instead of the whole context. The ring
// changes only where rows live, so everything it serves must equal the same
// model over a full cache (--swa-full) bit for bit: decoding deep past the
// window, prefix reuse (and its refusal once the ring overwrote the window
// a prefix needs), context shifts (and the recompute when the kept tokens
// reach into the window), session files in both directions.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "base/error.h"
#include "model/model.h"
#include "model/reference_forward.h"
#include "runtime/context_policy.h"
#include "runtime/session.h"
#include "runtime/session_file.h"
#include "session_helpers.h"
#include "test_models.h"

namespace edgellm {
namespace {

using namespace test;

SessionConfig cfg(int64_t n_ctx, bool swa_full, GgmlType t = GgmlType::F16) {
  SessionConfig c = config(n_ctx, t);  // batch 16
  c.swa_full = swa_full;
  return c;
}

const Model& gemma3() {
  static auto m = Model::load(synth_tiny("gemma3", "f16"));  // six layers, window 32: five slide
  return *m;
}

TEST(SlidingWindowCache, PlanAndCacheHoldWindowPlusBatch) {
  const Model& m = gemma3();
  Session ring(m, cfg(512, false)), full(m, cfg(512, true));
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
  Session small(m, cfg(64, false));
  EXPECT_EQ(small.plan().swa_cells, 64);
  EXPECT_EQ(small.kv().ring(0), 0);
}

TEST(SlidingWindowCache, DeepDecodeEqualsFullCacheAndReference) {
  const Model& m = gemma3();
  const int64_t V = m.hparams().n_vocab;
  const std::vector<int32_t> ids = some_tokens(300, V, 5);  // the ring wraps four times
  Session ring(m, cfg(512, false)), full(m, cfg(512, true));
  prefill(ring, std::vector<int32_t>(ids.begin(), ids.begin() + 200));
  prefill(full, std::vector<int32_t>(ids.begin(), ids.begin() + 200));
  std::vector<float> got;
  for (size_t i = 200; i < ids.size(); ++i) {
    const std::vector<float> a = next_logits(ring, ids[i]), b = next_logits(full, ids[i]);
    ASSERT_EQ(a, b) << "position " << i;
    if (i + 1 == ids.size()) got = a;
  }
  // And both against the double-precision pass over the whole sequence.
  const std::vector<double> ref = reference_forward(m, ids);
  double dot = 0, na = 0, nb = 0;
  for (int64_t v = 0; v < V; ++v) {
    const double r = ref[size_t((int64_t(ids.size()) - 1) * V + v)];
    dot += r * got[size_t(v)];
    na += r * r;
    nb += double(got[size_t(v)]) * got[size_t(v)];
  }
  EXPECT_GE(dot / std::sqrt(na * nb), 0.9999);
}

TEST(SlidingWindowCache, PrefixReuseWithinTheRingOtherwiseRefed) {
  const Model& m = gemma3();
  const int64_t V = m.hparams().n_vocab;
  const std::vector<int32_t> ids = some_tokens(200, V, 9);
  Session s(m, cfg(512, false));
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
  Session fresh(m, cfg(512, false));
  prefill(fresh, std::vector<int32_t>(ids.begin(), ids.begin() + 102));
  EXPECT_EQ(next_logits(s, ids[102]), next_logits(fresh, ids[102]));
  // A full cache keeps any prefix.
  Session full(m, cfg(512, true));
  prefill(full, ids);
  EXPECT_EQ(full.truncate(100), 100);
}

TEST(SlidingWindowCache, DecodingWithoutTheWindowIsRefused) {
  const Model& m = gemma3();
  Session s(m, cfg(512, false));
  prefill(s, some_tokens(200, m.hparams().n_vocab, 3));
  s.kv().set_swa_floor(190);  // as if the rows before 190 were gone
  try {
    next_logits(s, 5);
    FAIL() << "decoded without the window";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sliding-window layers no longer hold"), std::string::npos) << e.what();
  }
}

// make_room on a ring and on a full cache: the same rows, the same rotation,
// the same next logits; when the kept tokens reach into the window, the ring
// recomputes its tokens, as a fresh prefill of them would.
TEST(SlidingWindowCache, ShiftOnARingEqualsTheFullCache) {
  const Model& m = gemma3();
  const int64_t V = m.hparams().n_vocab;
  const std::vector<int32_t> ids = some_tokens(256, V, 13);
  for (int64_t keep : {4, 200}) {
    Session ring(m, cfg(256, false)), full(m, cfg(256, true));
    prefill(ring, ids);
    prefill(full, ids);
    ContextPolicy p;
    p.mode = CtxOverflow::Shift;
    p.keep = keep;
    std::string what_ring, what_full;
    ASSERT_GT(make_room(ring, p, 1, &what_ring), 0);
    ASSERT_GT(make_room(full, p, 1, &what_full), 0);
    ASSERT_EQ(ring.tokens(), full.tokens());
    const std::vector<float> a = next_logits(ring, 7), b = next_logits(full, 7);
    if (keep == 4) {
      EXPECT_EQ(what_ring.find("recomputed"), std::string::npos) << what_ring;
      EXPECT_EQ(a, b);
    } else {
      // 200 kept + 28 moved: the window before 228 starts at 197, among
      // the kept positions, whose rows the ring's turn took away. The ring
      // computes its tokens again: a fresh prefill of the kept tokens (which
      // the full cache's shift only approximates: its moved rows were made
      // in a context that still had the dropped tokens).
      EXPECT_NE(what_ring.find("recomputed"), std::string::npos) << what_ring;
      std::vector<int32_t> kept = full.tokens();
      kept.pop_back();  // the 7 fed above
      Session again(m, cfg(256, false));
      prefill(again, kept);
      EXPECT_EQ(a, next_logits(again, 7));
    }
  }
}

TEST(SlidingWindowCache, SessionFilesMoveBetweenRingAndFullCaches) {
  const Model& m = gemma3();
  const std::vector<int32_t> ids = some_tokens(150, m.hparams().n_vocab, 17);
  const std::string ring_file = temp_dir() + "/swa-ring.session", full_file = temp_dir() + "/swa-full.session";
  Session ring(m, cfg(512, false)), full(m, cfg(512, true));
  prefill(ring, ids);
  prefill(full, ids);
  save_session(ring, ring_file);
  save_session(full, full_file);
  // The ring's file holds 64 positions of each sliding layer, not 150.
  const uint64_t row = ring.plan().k_row_bytes + ring.plan().v_row_bytes;
  EXPECT_EQ(read_all(full_file).size() - read_all(ring_file).size(), 5 * (150 - 64) * row);
  const std::vector<float> want = next_logits(full, 11);
  for (const std::string& file : {ring_file, full_file})
    for (bool swa_full : {false, true}) {
      Session s(m, cfg(512, swa_full));
      load_session(s, file);
      EXPECT_EQ(s.tokens(), ids);
      EXPECT_EQ(next_logits(s, 11), want) << file << " into " << (swa_full ? "a full cache" : "a ring");
    }
}

}  // namespace
}  // namespace edgellm
