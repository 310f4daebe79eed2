#include <string>

#include "tools/model_desc.h"

namespace edgellm {

namespace {

ModelDesc preset(const char* name, const char* arch, const char* family, int64_t vocab, int64_t embd,
                 int64_t layers, int64_t heads, int64_t kv, int64_t head_dim, int64_t ff, int64_t ctx, bool tied,
                 bool llama3_rope, const char* hf_repo) {
  ModelDesc d;
  d.name = name;
  d.arch = arch;
  d.family = family;
  d.hp.n_vocab = vocab;
  d.hp.n_embd = embd;
  d.hp.n_layer = layers;
  d.hp.n_head = heads;
  d.hp.n_head_kv = kv;
  d.hp.head_dim = d.hp.head_dim_v = d.hp.n_rot = head_dim;
  d.hp.n_ff = ff;
  d.hp.n_ctx_train = ctx;
  d.tied = tied;
  d.llama3_rope = llama3_rope;
  d.source = std::string("config.json of https://huggingface.co/") + hf_repo;
  return d;
}

// Gemma 2 and 3 (text): head_dim 256, a tied head, and a sliding window
// (sliding_window in config.json) on every other layer (2) or five in six (3).
ModelDesc gemma(const char* name, const char* arch, int64_t vocab, int64_t embd, int64_t layers, int64_t heads,
                int64_t kv, int64_t ff, int64_t ctx, int64_t window, const char* hf_repo) {
  ModelDesc d = preset(name, arch, arch, vocab, embd, layers, heads, kv, 256, ff, ctx, true, false, hf_repo);
  d.hp.n_swa = window;
  return d;
}

// Phi-3.5-mini / Phi-4-mini: LongRoPE factor tensors, and a partial rotary
// (partial_rotary_factor: Phi-4-mini's 0.75 rotates 96 of 128 dims).
ModelDesc phi3(const char* name, int64_t vocab, int64_t heads, int64_t kv, int64_t head_dim, int64_t n_rot,
               bool tied, const char* hf_repo) {
  ModelDesc d = preset(name, "phi3", "phi3", vocab, 3072, 32, heads, kv, head_dim, 8192, 131072, tied, false, hf_repo);
  d.hp.n_rot = n_rot;
  d.hp.n_ctx_orig = 4096;
  d.longrope = true;
  return d;
}

// Numbers copied from each repository's config.json (hidden_size,
// num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim,
// intermediate_size, vocab_size, max_position_embeddings,
// tie_word_embeddings, rope_scaling.rope_type == "llama3"). Families are
// listed smallest first: "a smaller model" is the previous entry.
const std::vector<ModelDesc> kPresets = {
    //      name            arch     family     vocab   embd  lay hd  kv  hdim  ff     ctx     tied   llama3
    preset("qwen2.5-0.5b", "qwen2", "qwen2.5", 151936, 896, 24, 14, 2, 64, 4864, 32768, true, false, "Qwen/Qwen2.5-0.5B-Instruct"),
    preset("qwen2.5-1.5b", "qwen2", "qwen2.5", 151936, 1536, 28, 12, 2, 128, 8960, 32768, true, false, "Qwen/Qwen2.5-1.5B-Instruct"),
    preset("qwen2.5-3b", "qwen2", "qwen2.5", 151936, 2048, 36, 16, 2, 128, 11008, 32768, true, false, "Qwen/Qwen2.5-3B-Instruct"),
    preset("qwen2.5-7b", "qwen2", "qwen2.5", 152064, 3584, 28, 28, 4, 128, 18944, 32768, false, false, "Qwen/Qwen2.5-7B-Instruct"),
    preset("qwen3-0.6b", "qwen3", "qwen3", 151936, 1024, 28, 16, 8, 128, 3072, 40960, true, false, "Qwen/Qwen3-0.6B"),
    preset("qwen3-1.7b", "qwen3", "qwen3", 151936, 2048, 28, 16, 8, 128, 6144, 40960, true, false, "Qwen/Qwen3-1.7B"),
    preset("qwen3-4b", "qwen3", "qwen3", 151936, 2560, 36, 32, 8, 128, 9728, 40960, true, false, "Qwen/Qwen3-4B"),
    preset("qwen3-8b", "qwen3", "qwen3", 151936, 4096, 36, 32, 8, 128, 12288, 40960, false, false, "Qwen/Qwen3-8B"),
    preset("llama3.2-1b", "llama", "llama3", 128256, 2048, 16, 32, 8, 64, 8192, 131072, true, true, "meta-llama/Llama-3.2-1B-Instruct"),
    preset("llama3.2-3b", "llama", "llama3", 128256, 3072, 28, 24, 8, 128, 8192, 131072, true, true, "meta-llama/Llama-3.2-3B-Instruct"),
    preset("llama3.1-8b", "llama", "llama3", 128256, 4096, 32, 32, 8, 128, 14336, 131072, false, true, "meta-llama/Llama-3.1-8B-Instruct"),
    preset("smollm2-135m", "llama", "smollm2", 49152, 576, 30, 9, 3, 64, 1536, 8192, true, false, "HuggingFaceTB/SmolLM2-135M-Instruct"),
    preset("smollm2-360m", "llama", "smollm2", 49152, 960, 32, 15, 5, 64, 2560, 8192, true, false, "HuggingFaceTB/SmolLM2-360M-Instruct"),
    preset("smollm3-3b", "smollm3", "smollm3", 128256, 2048, 36, 16, 4, 128, 11008, 65536, true, false, "HuggingFaceTB/SmolLM3-3B"),
    gemma("gemma2-2b", "gemma2", 256000, 2304, 26, 8, 4, 9216, 8192, 4096, "google/gemma-2-2b-it"),
    gemma("gemma3-270m", "gemma3", 262144, 640, 18, 4, 1, 2048, 32768, 512, "google/gemma-3-270m-it"),
    gemma("gemma3-1b", "gemma3", 262144, 1152, 26, 4, 1, 6912, 32768, 512, "google/gemma-3-1b-it"),
    gemma("gemma3-4b", "gemma3", 262144, 2560, 34, 8, 4, 10240, 131072, 1024, "google/gemma-3-4b-it (text)"),
    phi3("phi3.5-mini", 32064, 32, 32, 96, 96, false, "microsoft/Phi-3.5-mini-instruct"),
    phi3("phi4-mini", 200064, 24, 8, 128, 96, true, "microsoft/Phi-4-mini-instruct"),
    preset("smollm2-1.7b", "llama", "smollm2", 49152, 2048, 24, 32, 32, 64, 8192, 8192, true, false, "HuggingFaceTB/SmolLM2-1.7B-Instruct"),
};

}  // namespace

const std::vector<ModelDesc>& presets() { return kPresets; }

const ModelDesc* find_preset(const std::string& name) {
  for (const ModelDesc& d : kPresets)
    if (d.name == name) return &d;
  return nullptr;
}

std::string preset_names() {
  std::string s;
  for (const ModelDesc& d : kPresets) s += (s.empty() ? "" : ", ") + d.name;
  return s;
}

}  // namespace edgellm
