// Model-level validation: a GGUF that parses but whose hyper-parameters,
// tensors or vocabulary do not add up is refused with a message naming the
// problem.
#include <gtest/gtest.h>

#include "base/error.h"
#include "format/gguf.h"
#include "gguf_rewrite.h"
#include "model/model.h"
#include "run_cli.h"
#include "test_models.h"

namespace edgellm {
namespace {

using test::rewrite;

void expect_load_error(const std::string& path, const std::string& needle) {
  try {
    Model::load(path);
    ADD_FAILURE() << path << " loaded but should not";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
  const auto r = test::run_command({EDGELLM_CLI, "run", "-m", path, "--tokens", "1", "-n", "1"});
  EXPECT_TRUE(r.exited_with(1)) << r.describe();
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.describe();
}


TEST(ModelMalformed, HyperParametersDisagreeWithShapes) {
  const std::string m = test::stories260k();
  expect_load_error(rewrite(m, "embd", [](gguf::Writer& w) { w.set("llama.embedding_length", gguf::Value::of_u32(96)); }),
                    "token_embd.weight");
  expect_load_error(rewrite(m, "ff", [](gguf::Writer& w) { w.set("llama.feed_forward_length", gguf::Value::of_u32(100)); }),
                    "ffn_gate.weight");
  expect_load_error(rewrite(m, "kv", [](gguf::Writer& w) { w.set("llama.attention.head_count_kv", gguf::Value::of_u32(8)); }),
                    "attn_k.weight");
  expect_load_error(rewrite(m, "heads", [](gguf::Writer& w) { w.set("llama.attention.head_count_kv", gguf::Value::of_u32(3)); }),
                    "not a multiple");
  expect_load_error(rewrite(m, "layers", [](gguf::Writer& w) { w.set("llama.block_count", gguf::Value::of_u32(6)); }),
                    "blk.5.attn_norm.weight' is missing");
  expect_load_error(rewrite(m, "zero_layers", [](gguf::Writer& w) { w.set("llama.block_count", gguf::Value::of_u32(0)); }),
                    "out of range");
  expect_load_error(rewrite(m, "wrongtype", [](gguf::Writer& w) { w.set("llama.block_count", gguf::Value::of_string("5")); }),
                    "expected an integer");
  expect_load_error(rewrite(m, "rope", [](gguf::Writer& w) { w.set("llama.rope.dimension_count", gguf::Value::of_u32(9)); }),
                    "rope.dimension_count");
  expect_load_error(rewrite(m, "arch", [](gguf::Writer& w) { w.set("general.architecture", gguf::Value::of_string("mamba")); }),
                    "architecture 'mamba' is not supported");
  expect_load_error(rewrite(m, "missing", [](gguf::Writer&) {}, [](const gguf::TensorInfo& t) { return t.name != "blk.2.attn_v.weight"; }),
                    "blk.2.attn_v.weight' is missing");
}

// What is well-formed but not supported is named: a mixture-of-experts file
// (llama.cpp's Mixtral GGUFs say "llama"), a tensor of an IQ type without
// kernels here.
TEST(ModelMalformed, UnsupportedFeaturesAreNamed) {
  const std::string m = test::stories260k();
  expect_load_error(rewrite(m, "moe", [](gguf::Writer& w) { w.set("llama.expert_count", gguf::Value::of_u32(8)); }),
                    "mixture-of-experts model (llama.expert_count = 8) is not supported");
  expect_load_error(rewrite(m, "gemma3n", [](gguf::Writer& w) { w.set("general.architecture", gguf::Value::of_string("gemma3n")); }),
                    "architecture 'gemma3n' is not supported: Gemma 3n needs AltUp");
  const std::string tiny = test::synth_tiny("llama", "f32");
  auto f = gguf::File::open(tiny);
  const gguf::TensorInfo* q = nullptr;
  for (const auto& t : f->tensors())
    if (t.name == "blk.0.attn_q.weight") q = &t;
  ASSERT_NE(q, nullptr);
  const std::vector<uint8_t> iq2(size_t(q->ne[1]) * size_t(q->ne[0] / 256) * 66, 0);  // iq2_xxs: 66 bytes per 256
  const std::string path = rewrite(
      tiny, "iq2",
      [&](gguf::Writer& w) { w.add_tensor(q->name, GgmlType(16), {q->ne[0], q->ne[1]}, iq2.data(), iq2.size()); },
      [](const gguf::TensorInfo& t) { return t.name != "blk.0.attn_q.weight"; });
  expect_load_error(path, "blk.0.attn_q.weight");
  expect_load_error(path, "iq2_xxs");
}

TEST(ModelMalformed, VocabularyProblems) {
  const std::string m = test::stories260k();
  expect_load_error(rewrite(m, "bos", [](gguf::Writer& w) { w.set("tokenizer.ggml.bos_token_id", gguf::Value::of_u32(600)); }),
                    "bos");
  expect_load_error(rewrite(m, "eos", [](gguf::Writer& w) { w.set("tokenizer.ggml.eos_token_id", gguf::Value::of_u32(512)); }),
                    "eos");
  expect_load_error(rewrite(m, "longtok", [&](gguf::Writer& w) {
                      auto f = gguf::File::open(m);
                      gguf::Value toks = *f->find("tokenizer.ggml.tokens");
                      toks.arr[300].str = std::string(100000, 'a');
                      w.set("tokenizer.ggml.tokens", toks);
                    }),
                    "300");
  expect_load_error(rewrite(m, "fewtok", [&](gguf::Writer& w) {
                      auto f = gguf::File::open(m);
                      gguf::Value toks = *f->find("tokenizer.ggml.tokens");
                      toks.arr.resize(400);
                      w.set("tokenizer.ggml.tokens", toks);
                    }),
                    "tokenizer.ggml");
}

// phi3: a missing fused tensor, a fused tensor of the wrong size, a fused
// q/k/v bias (which we would otherwise drop) and bad LongRoPE factors are
// each named in the message.
TEST(ModelMalformed, Phi3FusedTensorsAndRopeFactors) {
  const std::string m = test::synth_tiny("phi3", "f32");
  expect_load_error(rewrite(m, "noqkv", [](gguf::Writer&) {}, [](const gguf::TensorInfo& t) { return t.name != "blk.1.attn_qkv.weight"; }),
                    "blk.1.attn_qkv.weight' (or separate 'blk.1.attn_q.weight'");
  // One hyper-parameter changed: the tensor it no longer fits is named.
  const struct {
    const char *key, *needle;
    uint32_t value;
  } wrong[] = {{"phi3.feed_forward_length", "'blk.0.ffn_up.weight' has shape", 256},
               {"phi3.attention.head_count_kv", "'blk.0.attn_qkv.weight' has shape", 2},
               {"phi3.rope.dimension_count", "'rope_factors_long.weight' has shape", 32}};
  for (const auto& c : wrong)
    expect_load_error(rewrite(m, c.key, [&](gguf::Writer& w) { w.set(c.key, gguf::Value::of_u32(c.value)); }), c.needle);
  static const std::vector<float> zeros(3 * 256, 0.0f);  // tiny-phi3's q, k, v rows (4 heads x 64 each)
  expect_load_error(rewrite(m, "phi_qkv_bias", [](gguf::Writer& w) {
                      w.add_tensor("blk.0.attn_qkv.bias", GgmlType::F32, {3 * 256}, reinterpret_cast<const uint8_t*>(zeros.data()),
                                   zeros.size() * sizeof(float));
                    }),
                    "'blk.0.attn_qkv.bias' (a fused q/k/v bias) is not supported");
  expect_load_error(rewrite(m, "phi_zero", [](gguf::Writer& w) {
                      w.add_tensor("rope_factors_short.weight", GgmlType::F32, {32}, reinterpret_cast<const uint8_t*>(zeros.data()),
                                   32 * sizeof(float));
                    }, [](const gguf::TensorInfo& t) { return t.name != "rope_factors_short.weight"; }),
                    "rope_factors_short.weight holds a non-positive factor");
}

// A per-layer attention.head_count_kv (Gemma 4's larger sizes): the wrong
// length, a count that does not divide the heads, a count the layer's
// tensors do not have, and a KV-sharing layer whose count differs from its
// source's are each refused by name.
TEST(ModelMalformed, PerLayerKvHeadCounts) {
  const std::string m = test::synth_tiny("gemma4-kv", "f32");
  auto counts = [](std::vector<uint32_t> v) {
    std::vector<gguf::Value> a;
    for (uint32_t n : v) a.push_back(gguf::Value::of_u32(n));
    return gguf::Value::of_array(gguf::ValueType::UINT32, std::move(a));
  };
  const struct {
    const char* name;
    std::vector<uint32_t> counts;
    const char* needle;
  } wrong[] = {{"kv_len", {2, 1, 2}, "head_count_kv lists 3 layers, block_count is 4"},
               {"kv_div", {2, 3, 2, 3}, "is not a multiple of head_count_kv 3 (layer 1)"},
               {"kv_shape", {2, 2, 2, 2}, "'blk.1.attn_k.weight' has shape"},
               {"kv_shared", {2, 1, 1, 1}, "layer 2 shares the keys and values of layer 0"}};
  for (const auto& c : wrong)
    expect_load_error(rewrite(m, c.name, [&](gguf::Writer& w) { w.set("gemma4.attention.head_count_kv", counts(c.counts)); }),
                      c.needle);
}

}  // namespace
}  // namespace edgellm
