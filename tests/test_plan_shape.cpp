// The planner without a file: the worked examples' arithmetic, the weight
// bytes a preset or config.json predicts against real files, and the plan
// from a description agreeing with the plan (and allocator) of a loaded model.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>

#include "base/error.h"
#include "model/model.h"
#include "runtime/memory_plan.h"
#include "test_models.h"
#include "tools/device_plan.h"
#include "tools/plan_shape.h"
#include "tools/synth.h"

namespace edgellm {
namespace {

PlanSettings ctx(int64_t n, GgmlType kv = GgmlType::F16) {
  PlanSettings s;
  s.n_ctx = n;
  s.type_k = s.type_v = kv;
  s.load_mode = gguf::Residency::Mmap;
  return s;
}

uint64_t kv_per_token(const MemoryPlan& p, int64_t n_layer) { return uint64_t(n_layer) * (p.k_row_bytes + p.v_row_bytes); }

// Llama-3-8B: 32 layers x 8 KV heads x head_dim 128, f16: 2 x 32 x 1024 x 2 B.
TEST(PlanWorkedExamples, Llama3_8B_KvIs128KiBPerTokenAnd1GiBAt8K) {
  const ModelDesc& d = *find_preset("llama3.1-8b");
  ASSERT_EQ(d.hp.n_layer, 32);
  ASSERT_EQ(d.hp.n_head_kv, 8);
  ASSERT_EQ(d.hp.head_dim, 128);
  const MemoryPlan p = plan_memory(shape_from_desc(d, parse_quant("Q4_K_M")), ctx(8192));
  EXPECT_EQ(kv_per_token(p, 32), 128u << 10);
  EXPECT_EQ(p.kv_bytes, uint64_t(1) << 30);
}

// A 36-layer, 8-KV-head, head_dim-128 model (Qwen3-4B / 8B): 144 KiB per
// token, 576 MiB at 4K; q8_0 (34 bytes per 32 values) = 34/64 of f16.
TEST(PlanWorkedExamples, ThirtySixLayers_144KiBPerToken_576MiBAt4K_Q8Is34Of64) {
  for (const char* name : {"qwen3-4b", "qwen3-8b"}) {
    const ModelDesc& d = *find_preset(name);
    ASSERT_EQ(d.hp.n_layer, 36);
    ASSERT_EQ(d.hp.n_head_kv * d.hp.head_dim, 8 * 128);
    const ModelShape shape = shape_from_desc(d, parse_quant("Q4_K_M"));
    const MemoryPlan f16 = plan_memory(shape, ctx(4096));
    EXPECT_EQ(kv_per_token(f16, 36), 144u << 10) << name;
    EXPECT_EQ(f16.kv_bytes, uint64_t(576) << 20) << name;
    const MemoryPlan q8 = plan_memory(shape, ctx(4096, GgmlType::Q8_0));
    EXPECT_EQ(q8.kv_bytes * 64, f16.kv_bytes * 34) << name;
  }
}

// 3.5 GB of weights read per token at 60 GB/s: 17 tokens per second.
TEST(PlanWorkedExamples, DecodeCeiling3_5GBAt60GBsIs17TokPerS) {
  const DecodeSpeed s = decode_speed(3'500'000'000ull, 0, 60.0);
  EXPECT_NEAR(s.ceiling_tps, 60.0 / 3.5, 1e-9);
  EXPECT_EQ(int(s.ceiling_tps), 17);
  // The KV read at a full context lowers it; the band brackets both.
  const DecodeSpeed k = decode_speed(3'500'000'000ull, 500'000'000ull, 60.0);
  EXPECT_NEAR(k.ceiling_at_ctx_tps, 15.0, 1e-9);
  EXPECT_NEAR(k.band_low_tps, kDecodeShareLow * 15.0, 1e-9);
  EXPECT_NEAR(k.band_high_tps, kDecodeShareHigh * 60.0 / 3.5, 1e-9);
}

// stories260K's config.json as transformers would write it.
const char* kStoriesConfig = R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
  "hidden_size": 64, "num_hidden_layers": 5, "num_attention_heads": 8, "num_key_value_heads": 4,
  "intermediate_size": 172, "vocab_size": 512, "max_position_embeddings": 2048,
  "tie_word_embeddings": false, "rms_norm_eps": 1e-05})";

TEST(PlanFromConfig, Stories260KWeightBytesAndPlanMatchTheLoadedFile) {
  const ModelDesc d = parse_hf_config(kStoriesConfig, "stories260K/config.json");
  auto m = Model::load(test::stories260k(), gguf::Residency::Mmap, false);
  const ModelShape predicted = shape_from_desc(d, parse_quant("F32"));
  const ModelShape real = model_shape(*m);
  EXPECT_EQ(predicted.weight_bytes, real.weight_bytes);
  // The same arithmetic on both: KV, arena (matmul scratch included) agree.
  const MemoryPlan a = plan_memory(predicted, ctx(512)), b = plan_memory(*m, ctx(512));
  EXPECT_EQ(a.kv_bytes, b.kv_bytes);
  EXPECT_EQ(a.arena.total, b.arena.total);
  EXPECT_EQ(a.weights_bytes, b.weights_bytes);
  // Decode reads all of it but 511 of the embedding's 512 rows (untied head).
  EXPECT_EQ(weight_bytes_read_per_token(*m), m->weight_bytes() - 511 * 64 * 4);
  EXPECT_EQ(weight_bytes_read_per_token(d, parse_quant("F32")), weight_bytes_read_per_token(*m));
}

// SmolLM3's config.json (the published 3B's numbers) plans as its preset.
TEST(PlanFromConfig, SmolLM3ConfigIsItsPreset) {
  const ModelDesc d = parse_hf_config(R"({"architectures": ["SmolLM3ForCausalLM"], "model_type": "smollm3",
    "hidden_size": 2048, "num_hidden_layers": 36, "num_attention_heads": 16, "num_key_value_heads": 4,
    "intermediate_size": 11008, "vocab_size": 128256, "max_position_embeddings": 65536,
    "tie_word_embeddings": true, "rms_norm_eps": 1e-06, "rope_theta": 5000000.0,
    "no_rope_layer_interval": 4})", "SmolLM3-3B/config.json");
  EXPECT_EQ(d.arch, "smollm3");
  const ModelDesc* p = find_preset("smollm3-3b");
  ASSERT_NE(p, nullptr);
  const QuantRecipe q = parse_quant("Q4_K_M");
  EXPECT_EQ(shape_from_desc(d, q).weight_bytes, shape_from_desc(*p, q).weight_bytes);
}

// Phi-3.5-mini's and Phi-4-mini's config.json (the published numbers: fused
// projections, LongRoPE factors, Phi-4-mini's partial rotary 0.75 -> 96 of
// 128 dims) plan as their presets.
TEST(PlanFromConfig, Phi3ConfigsAreTheirPresets) {
  const char* factors = R"("rope_scaling": {"type": "longrope", "long_factor": [1.0, 1.1], "short_factor": [1.0, 1.0]})";
  const ModelDesc p35 = parse_hf_config(std::string(R"({"architectures": ["Phi3ForCausalLM"], "model_type": "phi3",
    "hidden_size": 3072, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
    "intermediate_size": 8192, "vocab_size": 32064, "max_position_embeddings": 131072,
    "original_max_position_embeddings": 4096, "tie_word_embeddings": false, "rms_norm_eps": 1e-05,
    "rope_theta": 10000.0, "sliding_window": 262144, )") + factors + "}", "Phi-3.5-mini-instruct/config.json");
  const ModelDesc p4 = parse_hf_config(std::string(R"({"architectures": ["Phi3ForCausalLM"], "model_type": "phi3",
    "hidden_size": 3072, "num_hidden_layers": 32, "num_attention_heads": 24, "num_key_value_heads": 8,
    "intermediate_size": 8192, "vocab_size": 200064, "max_position_embeddings": 131072,
    "original_max_position_embeddings": 4096, "tie_word_embeddings": true, "rms_norm_eps": 1e-05,
    "partial_rotary_factor": 0.75, "rope_theta": 10000.0, )") + factors + "}", "Phi-4-mini-instruct/config.json");
  EXPECT_EQ(p35.arch, "phi3");
  EXPECT_TRUE(p35.longrope && p4.longrope);
  EXPECT_EQ(p35.hp.n_rot, 96);
  EXPECT_EQ(p4.hp.n_rot, 96);
  EXPECT_EQ(p4.hp.head_dim, 128);
  EXPECT_EQ(p4.hp.n_ctx_orig, 4096);
  const QuantRecipe q = parse_quant("Q4_K_M");
  for (const auto& [d, name] : {std::pair{&p35, "phi3.5-mini"}, std::pair{&p4, "phi4-mini"}}) {
    const ModelDesc* p = find_preset(name);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_EQ(p->hp.n_rot, d->hp.n_rot) << name;
    EXPECT_EQ(shape_from_desc(*d, q).weight_bytes, shape_from_desc(*p, q).weight_bytes) << name;
    const std::vector<PlannedTensor> ts = plan_tensors(*d, q);
    EXPECT_TRUE(std::any_of(ts.begin(), ts.end(), [](const PlannedTensor& t) { return t.name == "blk.0.attn_qkv.weight"; }));
    EXPECT_TRUE(std::any_of(ts.begin(), ts.end(), [](const PlannedTensor& t) { return t.name == "rope_factors_long.weight" && t.cols == 48; }));
  }
}

// Per tensor, the recipe's types equal what synth writes (synth takes its
// types from the same rules), for every architecture, tied heads included.
TEST(PlanQuantMix, TensorTypesMatchSynthFilesOfEveryArchitecture) {
  // (phi3: fused attn_qkv / gate-up ffn_up and the LongRoPE factors; phi4 its tied form.)
  for (const char* arch : {"llama", "qwen2", "qwen3", "phi3", "phi4"}) {
    for (const char* type : {"f16", "q8_0", "q4_0", "q4_k_m", "iq4_nl", "iq4_xs"}) {
      auto m = Model::load(test::synth_tiny(arch, type, 7, false, /*mixed=*/true), gguf::Residency::Mmap, false);
      const HParams& hp = m->hparams();
      ModelDesc d;
      d.name = "tiny";
      d.arch = m->arch().name;
      d.hp = hp;
      d.tied = m->tied_output();
      d.longrope = m->longrope_factors();
      const std::vector<PlannedTensor> ts = plan_tensors(d, parse_quant(type));
      ASSERT_EQ(ts.size(), m->file().tensors().size()) << arch << " " << type;
      uint64_t bytes = 0;
      for (const PlannedTensor& t : ts) {
        const gguf::TensorInfo* real = m->file().find_tensor(t.name);
        ASSERT_NE(real, nullptr) << t.name;
        EXPECT_EQ(type_name(uint32_t(real->type)), type_name(uint32_t(t.type))) << arch << " " << type << " " << t.name;
        EXPECT_EQ(real->nbytes, t.bytes) << t.name;
        bytes += t.bytes;
      }
      EXPECT_EQ(bytes, m->weight_bytes());
    }
  }
}

// llama-quantize's choices on shapes where they differ from the base type.
TEST(PlanQuantMix, LlamaQuantizeRules) {
  const QuantRecipe km = parse_quant("q4_k_m"), q40 = parse_quant("Q4_0"), q8 = parse_quant("Q8_0");
  using R = TensorRole;
  // Output head (and a tied embedding): q6_K, or q8_0 where 256 does not divide the row.
  EXPECT_EQ(quant_tensor_type(km, {R::Output, 4096, -1, 32, 4, false}), GgmlType::Q6_K);
  EXPECT_EQ(quant_tensor_type(q40, {R::TokenEmbd, 2048, -1, 16, 4, true}), GgmlType::Q6_K);
  EXPECT_EQ(quant_tensor_type(q40, {R::TokenEmbd, 2048, -1, 16, 4, false}), GgmlType::Q4_0);
  EXPECT_EQ(quant_tensor_type(km, {R::TokenEmbd, 896, -1, 24, 7, true}), GgmlType::Q8_0);
  EXPECT_EQ(quant_tensor_type(q8, {R::Output, 4096, -1, 32, 4, false}), GgmlType::Q8_0);
  // attn_v / ffn_down: q6_K in the first and last eighth and every third layer.
  int more = 0;
  for (int i = 0; i < 32; ++i) more += quant_tensor_type(km, {R::FfnDown, 14336, i, 32, 4, false}) == GgmlType::Q6_K;
  EXPECT_EQ(more, 4 + 4 + 8);  // layers 0-3, 28-31 and 6, 9, ..., 27
  EXPECT_EQ(quant_tensor_type(km, {R::AttnQ, 4096, 0, 32, 4, false}), GgmlType::Q4_K);
  // Rows of 896: q4_K -> q5_0, q6_K -> q8_0 (tensor_type_fallback).
  EXPECT_EQ(quant_tensor_type(km, {R::AttnQ, 896, 5, 24, 7, false}), GgmlType::Q5_0);
  EXPECT_EQ(quant_tensor_type(km, {R::AttnV, 896, 0, 24, 7, false}), GgmlType::Q8_0);
  EXPECT_EQ(quant_tensor_type(km, {R::Vector, 896, 0, 24, 7, false}), GgmlType::F32);
}

// IQ4_NL (ftype 25) and IQ4_XS (30): q6_K head, q5_K attn_v where n_gqa >= 4,
// q5_K ffn_down in the first eighth of the layers (no imatrix), and iq4_xs
// rows that 256 does not divide fall back to iq4_nl (as q2_K / q3_K do).
TEST(PlanQuantMix, Iq4Recipes) {
  const QuantRecipe nl = parse_quant("iq4_nl"), xs = parse_quant("IQ4_XS");
  EXPECT_EQ(nl.ftype, 25u);
  EXPECT_EQ(xs.ftype, 30u);
  EXPECT_EQ(quant_of_file_type(30)->name, "IQ4_XS");
  using R = TensorRole;
  using G = GgmlType;
  for (const QuantRecipe& r : {nl, xs}) {
    EXPECT_EQ(quant_tensor_type(r, {R::Output, 4096, -1, 32, 4, false}), G::Q6_K) << r.name;
    EXPECT_EQ(quant_tensor_type(r, {R::TokenEmbd, 896, -1, 24, 7, true}), G::Q8_0) << r.name;
    EXPECT_EQ(quant_tensor_type(r, {R::AttnV, 4096, 10, 32, 4, false}), G::Q5_K) << r.name;
    EXPECT_EQ(quant_tensor_type(r, {R::AttnV, 4096, 10, 32, 2, false}), r.base) << r.name;
    EXPECT_EQ(quant_tensor_type(r, {R::AttnV, 896, 10, 24, 7, false}), G::Q5_1) << r.name;  // q5_K's fallback
    EXPECT_EQ(quant_tensor_type(r, {R::FfnDown, 14336, 3, 32, 4, false}), G::Q5_K) << r.name;
    EXPECT_EQ(quant_tensor_type(r, {R::FfnDown, 14336, 4, 32, 4, false}), r.base) << r.name;
    EXPECT_EQ(quant_tensor_type(r, {R::AttnOut, 4096, 31, 32, 4, false}), r.base) << r.name;
    EXPECT_EQ(quant_tensor_type(r, {R::FfnGate, 896, 5, 24, 7, false}), G::IQ4_NL) << r.name;
    EXPECT_EQ(quant_tensor_type(r, {R::FfnGate, 900, 5, 24, 7, false}), G::F16) << r.name;
  }
  EXPECT_EQ(quant_tensor_type(parse_quant("Q2_K"), {R::AttnQ, 896, 5, 24, 7, false}), G::IQ4_NL);
}

// Synth files of the real shapes: the preset's predicted weight bytes within
// 3 % (they are exact: synth and the plan take their types from the same
// llama-quantize rules, which the test above checks tensor by tensor at every
// recipe; q8_0 here keeps the test's time down; BENCHMARKS.md lists the q4_0
// and q4_k_m files too).
TEST(PlanFromPreset, WeightBytesWithin3PercentOfSynthFiles) {
  const struct {
    const char *arch, *shape, *vocab;
  } cases[] = {{"qwen2", "qwen2.5-0.5b", "qwen2"}, {"qwen3", "qwen3-0.6b", "qwen2"}, {"llama", "llama3.2-1b", "llama-bpe"}};
  for (const auto& c : cases) {
    SynthOptions o;
    o.arch = c.arch;
    o.shape = c.shape;
    o.type = "q8_0";
    o.vocab_from = test::shared_dir() + "/testdata/vocab/ggml-vocab-" + c.vocab + ".gguf";
    const std::string path = test::temp_dir() + "/" + c.shape + "-q8_0.gguf";
    synth_model(o, path);
    uint64_t real = 0;
    {
      // The planning load (no tokenizer, no weight page read), as `run` and
      // `plan -m` begin: llama3.2's rope_freqs are left unread there and
      // must not be checked (they once were, refusing every such file).
      auto m = Model::load(path, gguf::Residency::Mmap, false);
      real = m->weight_bytes();
    }
    std::filesystem::remove(path);
    const uint64_t predicted = shape_from_desc(*find_preset(c.shape), parse_quant("Q8_0")).weight_bytes;
    EXPECT_LE(std::fabs(double(predicted) - double(real)), 0.03 * double(real))
        << c.shape << ": predicted " << predicted << ", file " << real;
  }
}

TEST(PlanFromConfig, BadConfigsAreRefusedWithTheReason) {
  auto error_of = [](const std::string& text) {
    try {
      parse_hf_config(text, "config.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error_of(R"({"architectures": ["GemmaForCausalLM"], "hidden_size": 8})").find(
                "architecture 'GemmaForCausalLM' is not supported"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"architectures": ["Gemma4ForConditionalGeneration"], "text_config": {}})")
                .find("plan the GGUF file instead"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64})").find(
                "field \"num_hidden_layers\" is missing"),
            std::string::npos);
  EXPECT_NE(error_of("{not json").find("config.json"), std::string::npos);
  EXPECT_NE(error_of(R"({"hidden_size": 64})").find("neither \"architectures\" nor \"model_type\""), std::string::npos);
  std::string bad = kStoriesConfig;
  bad.replace(bad.find("\"num_key_value_heads\": 4"), 24, "\"num_key_value_heads\": 3");
  EXPECT_NE(error_of(bad).find("not a multiple of num_key_value_heads"), std::string::npos);
}

}  // namespace
}  // namespace edgellm
