// What a sliding-window ring must serve exactly as a full cache (--swa-full)
// does, for any model with windowed layers (gemma2/3, gemma4 with its shared
// layers): the checks the sliding-window and shared-KV tests both run, each
// given the model and what differs between them.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "model/model.h"
#include "model/reference_forward.h"
#include "runtime/context_policy.h"
#include "runtime/session.h"
#include "runtime/session_file.h"
#include "session_helpers.h"
#include "test_models.h"

namespace edgellm::test {

inline SessionConfig ring_config(int64_t n_ctx, bool swa_full, GgmlType t = GgmlType::F16) {
  SessionConfig c = config(n_ctx, t);  // batch 16
  c.swa_full = swa_full;
  return c;
}

// Cosine of the last position's logits against the reference pass's.
inline double cosine_at_last(const std::vector<double>& ref, const std::vector<float>& got, int64_t n_tokens,
                             int64_t V) {
  double dot = 0, na = 0, nb = 0;
  for (int64_t v = 0; v < V; ++v) {
    const double r = ref[size_t((n_tokens - 1) * V + v)], g = got[size_t(v)];
    dot += r * g;
    na += r * r;
    nb += g * g;
  }
  return dot / std::sqrt(na * nb);
}

// Prefill n_prefill tokens, then decode one at a time to n_total: the ring
// (wrapping several times) and the full cache give the same logits bit for
// bit, and the last ones agree with the double-precision pass.
inline void expect_deep_decode_equal(const Model& m, int64_t n_prefill, int64_t n_total, uint32_t seed) {
  const int64_t V = m.hparams().n_vocab;
  const std::vector<int32_t> ids = some_tokens(n_total, V, seed);
  Session ring(m, ring_config(512, false)), full(m, ring_config(512, true));
  prefill(ring, std::vector<int32_t>(ids.begin(), ids.begin() + n_prefill));
  prefill(full, std::vector<int32_t>(ids.begin(), ids.begin() + n_prefill));
  std::vector<float> got;
  for (size_t i = size_t(n_prefill); i < ids.size(); ++i) {
    const std::vector<float> a = next_logits(ring, ids[i]), b = next_logits(full, ids[i]);
    ASSERT_EQ(a, b) << "position " << i;
    got = a;
  }
  EXPECT_GE(cosine_at_last(reference_forward(m, ids), got, n_total, V), 0.9999);
}

// make_room on a ring and on a full cache of 256: keeping 4, the same rows,
// rotation and next logits; keeping 200 (200 kept + 28 moved: the window
// before 228 starts among the kept positions, whose rows the ring's turn
// took away), the ring computes its tokens again, equal to a fresh prefill
// of them (which the full cache's shift only approximates: its moved rows
// were made in a context that still had the dropped tokens).
inline void expect_shift_equal(const Model& m) {
  const std::vector<int32_t> ids = some_tokens(256, m.hparams().n_vocab, 13);
  for (int64_t keep : {4, 200}) {
    Session ring(m, ring_config(256, false)), full(m, ring_config(256, true));
    prefill(ring, ids);
    prefill(full, ids);
    ContextPolicy p;
    p.mode = CtxOverflow::Shift;
    p.keep = keep;
    std::string what_ring, what_full;
    ASSERT_GT(make_room(ring, p, 1, &what_ring), 0);
    ASSERT_GT(make_room(full, p, 1, &what_full), 0);
    ASSERT_EQ(ring.tokens(), full.tokens());
    const std::vector<int32_t> kept = ring.tokens();
    const std::vector<float> a = next_logits(ring, 7);
    if (keep == 4) {
      EXPECT_EQ(what_ring.find("recomputed"), std::string::npos) << what_ring;
      EXPECT_EQ(a, next_logits(full, 7));
    } else {
      EXPECT_NE(what_ring.find("recomputed"), std::string::npos) << what_ring;
      Session again(m, ring_config(256, false));
      prefill(again, kept);
      EXPECT_EQ(a, next_logits(again, 7));
    }
  }
}

// 150 tokens saved from a ring and from a full cache: the files differ by
// the sliding layers' rows past the ring (ring_file_saving bytes), and each
// loads into either kind of cache with the same tokens and next logits.
inline void expect_session_files_move_both_ways(const Model& m, const std::string& name,
                                                uint64_t ring_file_saving) {
  const std::vector<int32_t> ids = some_tokens(150, m.hparams().n_vocab, 17);
  const std::string ring_file = temp_dir() + "/" + name + "-ring.session";
  const std::string full_file = temp_dir() + "/" + name + "-full.session";
  Session ring(m, ring_config(512, false)), full(m, ring_config(512, true));
  prefill(ring, ids);
  prefill(full, ids);
  save_session(ring, ring_file);
  save_session(full, full_file);
  EXPECT_EQ(read_all(full_file).size() - read_all(ring_file).size(), ring_file_saving);
  const std::vector<float> want = next_logits(full, 11);
  for (const std::string& file : {ring_file, full_file})
    for (bool swa_full : {false, true}) {
      Session s(m, ring_config(512, swa_full));
      load_session(s, file);
      EXPECT_EQ(s.tokens(), ids);
      EXPECT_EQ(next_logits(s, 11), want) << file << " into " << (swa_full ? "a full cache" : "a ring");
    }
}

}  // namespace edgellm::test
