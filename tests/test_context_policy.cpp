// Context policies: stop ends generation with the reason; shift and window
// keep generating past the context; a shift re-rotates keys in place so the
// cache equals (up to the cache type's rounding) a fresh prefill of the kept
// tokens at their new positions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <regex>
#include <string>
#include <vector>

#include "base/error.h"
#include "model/model.h"
#include "run_cli.h"
#include "runtime/context_policy.h"
#include "runtime/generate.h"
#include "runtime/session.h"
#include "tensor/types.h"
#include "tools/synth.h"
#include "session_helpers.h"
#include "test_models.h"

namespace edgellm {
namespace {

using namespace test;  // session_helpers.h


std::vector<float> row_f32(const KvCache& kv, bool key, int64_t layer, int64_t cell, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n));
  dequantize_row(key ? kv.type_k() : kv.type_v(), key ? kv.k_row(layer, cell) : kv.v_row(layer, cell), out.data(), n);
  return out;
}

// After make_room (shift or window) on a, layer-0 keys and values equal those
// of a fresh session that prefilled only the kept tokens: layer 0's K and V
// depend on the token and its position alone.
void expect_layer0_matches_fresh(const Model& m, Session& a, GgmlType t, double rel_tol) {
  const HParams& hp = m.hparams();
  Session b(m, config(a.n_ctx(), t));
  prefill(b, a.tokens());
  ASSERT_EQ(a.n_past(), b.n_past());
  double worst = 0;
  for (int64_t c = 0; c < a.n_past(); ++c) {
    const auto ka = row_f32(a.kv(), true, 0, c, hp.k_dim()), kb = row_f32(b.kv(), true, 0, c, hp.k_dim());
    double scale = 0;
    for (float v : kb) scale = std::max(scale, double(std::fabs(v)));
    for (size_t i = 0; i < ka.size(); ++i) {
      const double d = std::fabs(double(ka[i]) - double(kb[i]));
      worst = std::max(worst, d / std::max(scale, 1e-6));
      ASSERT_LE(d, rel_tol * std::max(scale, 1e-6) + 1e-6)
          << "cell " << c << " element " << i << ": " << ka[i] << " vs fresh " << kb[i];
    }
    // Values are never rotated: moved rows are bit-identical to fresh ones.
    ASSERT_EQ(std::memcmp(a.kv().v_row(0, c), b.kv().v_row(0, c), a.kv().v_row_bytes()), 0) << "cell " << c;
  }
  ::testing::Test::RecordProperty("worst_relative_key_error", std::to_string(worst));
}

TEST(ContextPolicy, ShiftReRotatesKeysExactly) {
  auto m = Model::load(test::stories260k());
  const int64_t V = m->hparams().n_vocab;
  for (int64_t keep : {0, 1, 5}) {
    Session a(*m, config(64));
    const auto ids = some_tokens(64, V, uint32_t(keep + 3));
    prefill(a, ids);
    ASSERT_EQ(a.n_past(), 64);
    ContextPolicy p;
    p.mode = CtxOverflow::Shift;
    p.keep = keep;
    std::string what;
    const int64_t dropped = make_room(a, p, 1, &what);
    const int64_t want_drop = (64 - keep) / 2;
    ASSERT_EQ(dropped, want_drop) << what;
    EXPECT_NE(what.find("shift"), std::string::npos) << what;
    // The kept tokens: the first `keep`, then everything after the dropped half.
    std::vector<int32_t> kept(ids.begin(), ids.begin() + keep);
    kept.insert(kept.end(), ids.begin() + keep + want_drop, ids.end());
    ASSERT_EQ(a.tokens(), kept);
    expect_layer0_matches_fresh(*m, a, GgmlType::F16, 2e-3);
    // And it keeps decoding.
    const int32_t next = 7;
    const float* out = a.decode(&next, 1);
    for (int64_t i = 0; i < V; ++i) ASSERT_TRUE(std::isfinite(out[i]));
  }
}

// gemma3's local layers rotate with their own RoPE base (10,000, not 1e6):
// after a shift, layer 0 (local) equals a fresh prefill of the kept tokens.
// 64 tokens in a 64-token context, shifted keeping the first 4 (30 dropped):
// layer 0 must equal a fresh prefill of the kept tokens.
void expect_shift_of_64_matches_fresh(const Model& m, uint32_t seed) {
  Session a(m, config(64));
  prefill(a, some_tokens(64, m.hparams().n_vocab, seed));
  ContextPolicy p;
  p.mode = CtxOverflow::Shift;
  p.keep = 4;
  std::string what;
  ASSERT_EQ(make_room(a, p, 1, &what), 30) << what;
  expect_layer0_matches_fresh(m, a, GgmlType::F16, 2e-3);
}

TEST(ContextPolicy, ShiftRotatesLocalLayersWithTheirOwnBase) {
  auto m = Model::load(test::synth_tiny("gemma3", "f32"));
  ASSERT_TRUE(m->hparams().sliding(0) && m->hparams().local_rope());
  expect_shift_of_64_matches_fresh(*m, 9);
}

// Phi-4-mini's form: partial rotary (48 of 64 dims rotate, NEOX pairs i and
// i + 24), LongRoPE's long factors (n_ctx 64 > the original 32) and its
// attn_factor 1.265. A shift is a plain rotation by the distance, with the
// same factors, leaving the unrotated dims alone and not scaling again (the
// cached keys carry the attn_factor once): layer 0 equals a fresh prefill.
// (llama.cpp's K-shift passes its attn_factor to the rotation again, so it
// scales shifted phi3 keys twice; we do not follow it there.)
TEST(ContextPolicy, ShiftRotatesPartialRotaryLongRopeKeys) {
  auto m = Model::load(test::synth_tiny("phi4", "f32"));
  ASSERT_EQ(m->hparams().n_rot, 48);
  ASSERT_GT(m->hparams().rope_attn_factor, 1.2f);
  expect_shift_of_64_matches_fresh(*m, 13);
}

// A shift rotates each kept key by the distance it moved; a NoPE layer's keys
// carry no position, so they move unchanged (bit for bit), while a RoPE
// layer's keys change.
TEST(ContextPolicy, ShiftLeavesNoPELayerKeysUnrotated) {
  auto m = Model::load(test::synth_tiny("smollm3", "f32"));
  const HParams& hp = m->hparams();
  ASSERT_FALSE(m->arch().ropes_layer(3));
  Session a(*m, config(64));
  prefill(a, some_tokens(64, hp.n_vocab, 5));
  const size_t row = a.kv().k_row_bytes();
  std::vector<uint8_t> nope_before(64 * row), rope_before(64 * row);
  for (int64_t c = 0; c < 64; ++c) {
    std::memcpy(&nope_before[size_t(c) * row], a.kv().k_row(3, c), row);
    std::memcpy(&rope_before[size_t(c) * row], a.kv().k_row(2, c), row);
  }
  ContextPolicy p;
  p.mode = CtxOverflow::Shift;
  p.keep = 0;
  std::string what;
  ASSERT_EQ(make_room(a, p, 1, &what), 32) << what;
  for (int64_t c = 0; c < 32; ++c) {
    EXPECT_EQ(std::memcmp(a.kv().k_row(3, c), &nope_before[size_t(c + 32) * row], row), 0) << "cell " << c;
    EXPECT_NE(std::memcmp(a.kv().k_row(2, c), &rope_before[size_t(c + 32) * row], row), 0) << "cell " << c;
  }
}

// In a one-layer model keys and values depend only on token and position, so
// after a shift the cache is what a re-prefill of the kept tokens at the same
// positions writes (to f16 rounding): greedy continuations must agree.
TEST(ContextPolicy, ShiftEqualsReprefillOnOneLayer) {
  SynthOptions o;
  o.arch = "llama";
  o.shape = "tiny-1l";
  o.type = "f32";
  o.seed = 11;
  o.vocab_from = test::stories260k();
  const std::string path = test::temp_dir() + "/tiny-1l.gguf";
  synth_model(o, path);
  auto m = Model::load(path, gguf::Residency::Mmap);
  const int64_t V = m->hparams().n_vocab;
  for (int64_t keep : {0, 4}) {
    Session a(*m, config(64));
    prefill(a, some_tokens(64, V, uint32_t(keep + 21)));
    ContextPolicy p;
    p.mode = CtxOverflow::Shift;
    p.keep = keep;
    std::string what;
    ASSERT_GT(make_room(a, p, 1, &what), 0) << what;
    Session b(*m, config(64));
    prefill(b, a.tokens());  // the kept tokens, at the same positions
    int32_t ta = 7, tb = 7;
    for (int step = 0; step < 24; ++step) {
      const std::vector<float> la = next_logits(a, ta), lb = next_logits(b, tb);
      ta = int32_t(std::max_element(la.begin(), la.end()) - la.begin());
      tb = int32_t(std::max_element(lb.begin(), lb.end()) - lb.begin());
      ASSERT_EQ(ta, tb) << "keep " << keep << ", step " << step;
    }
  }
}

TEST(ContextPolicy, ShiftOnQuantizedKeys) {
  // A head size of 64 holds q8_0 blocks: re-rotated keys stay within the
  // block rounding of a fresh prefill's.
  auto m = Model::load(test::synth_tiny("llama", "f16"));
  const int64_t V = m->hparams().n_vocab;
  Session a(*m, config(48, GgmlType::Q8_0));
  prefill(a, some_tokens(48, V, 11));
  ContextPolicy p;
  p.mode = CtxOverflow::Shift;
  p.keep = 4;
  std::string what;
  ASSERT_EQ(make_room(a, p, 1, &what), 22) << what;
  // q8_0 quantizes twice (once after rotation): 2 steps of 1/127 of the block max.
  expect_layer0_matches_fresh(*m, a, GgmlType::Q8_0, 2.5 / 127.0);
}

TEST(ContextPolicy, WindowKeepsSinksAndTheRecentTokens) {
  auto m = Model::load(test::stories260k());
  const int64_t V = m->hparams().n_vocab;
  Session a(*m, config(64));
  const auto ids = some_tokens(64, V, 5);
  prefill(a, ids);
  ContextPolicy p;
  p.mode = CtxOverflow::Window;
  p.sinks = 4;
  p.window = 40;
  std::string what;
  const int64_t dropped = make_room(a, p, 1, &what);
  ASSERT_EQ(dropped, 64 - 4 - 40) << what;
  std::vector<int32_t> kept(ids.begin(), ids.begin() + 4);
  kept.insert(kept.end(), ids.end() - 40, ids.end());
  EXPECT_EQ(a.tokens(), kept);
  EXPECT_NE(what.find("window"), std::string::npos) << what;
  expect_layer0_matches_fresh(*m, a, GgmlType::F16, 2e-3);
  // Default window: 3/4 of the context.
  Session b(*m, config(64));
  prefill(b, ids);
  p.window = 0;
  ASSERT_EQ(make_room(b, p, 1, &what), 64 - 4 - 48) << what;
  EXPECT_EQ(b.n_past(), 52);
}

TEST(ContextPolicy, StopAndImpossibleRequestsSayWhy) {
  auto m = Model::load(test::stories260k());
  Session s(*m, config(32));
  prefill(s, some_tokens(32, m->hparams().n_vocab));
  std::string what;
  ContextPolicy p;  // stop
  EXPECT_EQ(make_room(s, p, 1, &what), -1);
  EXPECT_NE(what.find("context is full"), std::string::npos) << what;
  EXPECT_EQ(s.n_past(), 32);
  // Room already: nothing dropped.
  Session r(*m, config(32));
  prefill(r, some_tokens(8, m->hparams().n_vocab));
  p.mode = CtxOverflow::Shift;
  EXPECT_EQ(make_room(r, p, 4, &what), 0);
  EXPECT_EQ(r.n_past(), 8);
  // Shift cannot keep 30 tokens and add 8 in 32.
  p.keep = 30;
  what.clear();
  EXPECT_EQ(make_room(s, p, 8, &what), -1);
  EXPECT_NE(what.find("cannot shift"), std::string::npos) << what;
  EXPECT_EQ(s.n_past(), 32);
  // A chunk larger than half drops more than half.
  p.keep = 2;
  EXPECT_EQ(make_room(s, p, 20, &what), 20) << what;
  EXPECT_EQ(s.n_past(), 12);
  // Window cannot hold more new tokens than the context.
  Session w(*m, config(32));
  prefill(w, some_tokens(32, m->hparams().n_vocab));
  ContextPolicy pw;
  pw.mode = CtxOverflow::Window;
  EXPECT_EQ(make_room(w, pw, 40, &what), -1);
  EXPECT_NE(what.find("cannot window"), std::string::npos) << what;
  EXPECT_EQ(w.n_past(), 32);
  EXPECT_THROW(parse_ctx_overflow("rotate"), Error);
  EXPECT_EQ(parse_ctx_overflow("window"), CtxOverflow::Window);
}

TEST(ContextPolicy, GenerateRunsPastTheContext) {
  auto m = Model::load(test::stories260k());
  for (CtxOverflow mode : {CtxOverflow::Shift, CtxOverflow::Window}) {
    Session s(*m, config(32));
    SamplerParams sp;
    sp.temp = 0.8f;
    sp.seed = 3;
    Sampler sampler(sp, int32_t(m->hparams().n_vocab));
    GenerateParams gp;
    gp.n_predict = 200;
    gp.policy.mode = mode;
    gp.policy.keep = 1;
    int events = 0;
    gp.on_event = [&](const std::string&) { ++events; };
    int64_t got = 0;
    const GenerateStats st = generate(s, sampler, {1, 400, 401}, gp, [&](int32_t) {
      ++got;
      return true;
    });
    EXPECT_EQ(got, 200) << ctx_overflow_name(mode);
    EXPECT_FALSE(st.context_full);
    EXPECT_GT(st.n_overflows, 0);
    EXPECT_EQ(events, st.n_overflows);
    EXPECT_LE(s.n_past(), 32);
    EXPECT_EQ(st.n_dropped + s.n_past(), 3 + 200);
  }
}

// ---- the CLI ----------------------------------------------------------------

int64_t count_ids(const std::string& out) {
  if (out.find_first_of("0123456789") == std::string::npos) return 0;
  return int64_t(std::count(out.begin(), out.end(), ',')) + 1;
}

TEST(ContextPolicyCli, ShiftAndWindowGenerateFourTimesTheContext) {
  const std::string M = test::stories260k();
  for (const char* mode : {"shift", "window"}) {
    const auto r = run_command({EDGELLM_CLI, "run", "-m", M, "--ctx-overflow", mode, "-c", "64", "-n", "256", "-p",
                                "Once upon a time", "--temp", "0", "--ids", "--keep", "1"});
    ASSERT_TRUE(r.exited_with(0)) << r.describe();
    EXPECT_EQ(count_ids(r.out), 256) << mode << ": " << r.out;
    EXPECT_NE(r.err.find("generated 256 tokens"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(std::string("| ") + mode + " x"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("generation stopped"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(std::string("[context ") + mode), std::string::npos) << r.err;
  }
}

TEST(ContextPolicyCli, StopSaysTheContextIsFull) {
  const auto r = run_command({EDGELLM_CLI, "run", "-m", test::stories260k(), "-c", "64", "-n", "256", "-p",
                              "Once upon a time", "--temp", "0", "--ids"});
  ASSERT_TRUE(r.exited_with(0)) << r.describe();
  std::smatch mt;
  ASSERT_TRUE(std::regex_search(r.err, mt, std::regex("(^|\n)generation stopped: [^\n]*context[^\n]*\n"))) << r.err;
  EXPECT_NE(r.err.find("context full"), std::string::npos) << r.err;
  // Prompt + generated fill the context (the last token printed need not be
  // decoded).
  const auto prompt = std::regex_search(r.err, mt, std::regex("prompt (\\d+) tokens"));
  ASSERT_TRUE(prompt) << r.err;
  const int64_t total = std::stol(mt[1]) + count_ids(r.out);
  EXPECT_TRUE(total == 64 || total == 65) << total << "\n" << r.err;
}

TEST(ContextPolicyCli, BadPolicyIsRefused) {
  const auto r = run_command({EDGELLM_CLI, "run", "-m", test::stories260k(), "--ctx-overflow", "rotate", "-p", "hi"});
  EXPECT_TRUE(r.exited_with(1)) << r.describe();
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("stop, shift or window"), std::string::npos) << r.err;
}

// Exactness of a shift against a re-prefill of the kept tokens would hold
// token for token only for a 1-layer model (deeper layers' keys depend on
// the dropped tokens through attention); tools/synth has no 1-layer shape, so
// that part is covered at the KV level (layer 0) above.

}  // namespace
}  // namespace edgellm
