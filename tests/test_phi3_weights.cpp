// phi3's fused projections: attn_qkv and the gate/up ffn_up are bound as row
// views of the mapped tensor (no copies), and a file with separate q/k/v
// tensors (llama.cpp accepts either) loads to the same model.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "format/gguf.h"
#include "model/model.h"
#include "runtime/session.h"
#include "test_models.h"

namespace edgellm {
namespace {

bool inside(const uint8_t* p, size_t n, const gguf::TensorInfo& t) { return p >= t.data && p + n <= t.data + t.nbytes; }

// Every q/k/v and gate/up view lies in its fused tensor's bytes, at the row
// offset of its part, and the parts tile the tensor; after make_resident
// (the tensors move into anonymous memory) they still do.
void expect_views_into_fused(const Model& m) {
  const HParams& hp = m.hparams();
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    const LayerWeights& L = m.layers()[size_t(il)];
    const std::string p = "blk." + std::to_string(il) + ".";
    const gguf::TensorInfo* qkv = m.file().find_tensor(p + "attn_qkv.weight");
    const gguf::TensorInfo* gu = m.file().find_tensor(p + "ffn_up.weight");
    ASSERT_TRUE(qkv && gu) << p;
    const size_t rb = L.wq.row_bytes();
    EXPECT_EQ(L.wq.data, qkv->data) << p;
    EXPECT_EQ(L.wk.data, qkv->data + size_t(hp.q_dim()) * rb) << p;
    EXPECT_EQ(L.wv.data, qkv->data + size_t(hp.q_dim() + hp.k_dim()) * rb) << p;
    EXPECT_EQ(L.wv.data + size_t(L.wv.rows) * rb, qkv->data + qkv->nbytes) << p;
    EXPECT_EQ(L.wq.rows + L.wk.rows + L.wv.rows, qkv->ne[1]) << p;
    EXPECT_TRUE(inside(L.wk.data, size_t(L.wk.rows) * rb, *qkv)) << p;
    const size_t gb = L.w_gate.row_bytes();
    EXPECT_EQ(L.w_gate.data, gu->data) << p;  // gate first
    EXPECT_EQ(L.w_up.data, gu->data + size_t(hp.n_ff) * gb) << p;
    EXPECT_EQ(L.w_up.data + size_t(L.w_up.rows) * gb, gu->data + gu->nbytes) << p;
    EXPECT_EQ(L.w_gate.rows, hp.n_ff) << p;
    EXPECT_EQ(L.w_up.rows, hp.n_ff) << p;
  }
}

TEST(Phi3Weights, FusedProjectionsAreViewsNotCopies) {
  for (const char* type : {"f16", "q4_0", "q4_k_m"}) {
    auto m = Model::load(test::synth_tiny("phi4", type), gguf::Residency::Mmap);
    SCOPED_TRACE(type);
    expect_views_into_fused(*m);
    m->make_resident();
    expect_views_into_fused(*m);
  }
}

// The last position's logits of a prefill of toks (one batch, one thread).
std::vector<float> last_logits(const Model& m, const std::vector<int32_t>& toks) {
  SessionConfig cfg;
  cfg.n_ctx = 64;
  cfg.n_threads = 1;
  Session s(m, cfg);
  const float* out = s.decode(toks.data(), int64_t(toks.size()));
  return std::vector<float>(out, out + m.hparams().n_vocab);
}

// The same weights written as separate attn_q / attn_k / attn_v tensors (the
// fused tensor's row ranges, byte for byte) give bit-identical logits.
TEST(Phi3Weights, SeparateQkvTensorsLoadLikeFusedOnes) {
  const std::string fused_path = test::synth_tiny("phi3", "q8_0");
  auto f = gguf::File::open(fused_path);
  auto fused = Model::load(fused_path);
  const HParams& hp = fused->hparams();
  gguf::Writer w;
  for (const auto& [k, v] : f->metadata()) w.set(k, v);
  for (const auto& t : f->tensors()) {
    const std::vector<int64_t> ne(t.ne, t.ne + t.n_dims);
    const size_t suffix = t.name.find("attn_qkv.weight");
    if (suffix == std::string::npos) {
      w.add_tensor(t.name, t.type, ne, t.data, t.nbytes);
      continue;
    }
    const std::string p = t.name.substr(0, suffix);
    const size_t rb = t.nbytes / size_t(t.ne[1]);
    const int64_t rows[3] = {hp.q_dim(), hp.k_dim(), hp.v_dim()};
    const char* names[3] = {"attn_q.weight", "attn_k.weight", "attn_v.weight"};
    size_t off = 0;
    for (int i = 0; i < 3; ++i) {
      w.add_tensor(p + names[i], t.type, {t.ne[0], rows[i]}, t.data + off, size_t(rows[i]) * rb);
      off += size_t(rows[i]) * rb;
    }
  }
  const std::string split_path = test::temp_dir() + "/phi3-split-qkv.gguf";
  w.write(split_path);
  auto split = Model::load(split_path);
  ASSERT_EQ(split->file().find_tensor("blk.0.attn_qkv.weight"), nullptr);
  const std::vector<int32_t> toks = {1, 17, 300, 42, 5, 99, 256, 3};
  EXPECT_EQ(last_logits(*fused, toks), last_logits(*split, toks));
}

// phi3 files carry attention.sliding_window (the converter writes Phi-3's
// 2047 or Phi-3.5's 262144); llama.cpp disables SWA for phi3 and so do we: a
// window of 4 over 12 tokens changes nothing.
TEST(Phi3Weights, SlidingWindowKeyIsIgnoredAsInLlamaCpp) {
  const std::string path = test::synth_tiny("phi3", "f32");
  auto f = gguf::File::open(path);
  gguf::Writer w;
  for (const auto& [k, v] : f->metadata()) w.set(k, v);
  w.set("phi3.attention.sliding_window", gguf::Value::of_u32(4));
  for (const auto& t : f->tensors()) w.add_tensor(t.name, t.type, std::vector<int64_t>(t.ne, t.ne + t.n_dims), t.data, t.nbytes);
  const std::string swa_path = test::temp_dir() + "/phi3-swa4.gguf";
  w.write(swa_path);
  auto plain = Model::load(path), swa = Model::load(swa_path);
  EXPECT_EQ(swa->hparams().n_swa, 0);
  const std::vector<int32_t> toks = {1, 17, 300, 42, 5, 99, 256, 3, 7, 8, 9, 10};
  EXPECT_EQ(last_logits(*plain, toks), last_logits(*swa, toks));
}

}  // namespace
}  // namespace edgellm
