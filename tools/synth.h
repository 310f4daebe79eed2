// Random-weight models of real architectures' shapes: our speed and
// cross-engine workloads until real weights are at hand. The file is an
// ordinary GGUF (tokenizer copied from a vocab file) that llama.cpp loads too.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace edgellm {

struct SynthShape {
  const char* name;
  int64_t n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff, n_ctx;
  float rope_base, rms_eps;
  bool tied;          // output shares token_embd
  bool llama3_rope;   // write rope_freqs.weight (llama 3.1+ frequency factors) when arch is llama
  int64_t n_swa = 0;  // attention.sliding_window, for architectures with local layers (gemma3)
  float rope_linear = 0;  // rope.scaling.factor of linear scaling (0: none)
  int64_t n_rot = 0;      // rotated dims per head (partial rotary); 0: head_dim
  // LongRoPE (architectures with ArchDesc::longrope): the original context;
  // synth writes it, the attn_factor the converter derives from it and
  // random long / short factor tensors. 0: none.
  int64_t n_ctx_orig = 0;
  // Gemma 4 (architectures with ArchDesc::swa_pattern): every global_every-th
  // layer global, the others sliding with head size head_dim_swa (head_dim
  // is the global layers'); the last n_kv_shared layers reading earlier
  // layers' keys and values, with a twice wider FFN (use_double_wide_mlp);
  // n_embd_per_layer dims of per-layer input; global layers rotate
  // rot_fraction_global of their dims (the converter's "proportional" RoPE).
  int64_t head_dim_swa = 0, global_every = 0, n_kv_shared = 0, n_embd_per_layer = 0;
  bool double_wide_ffn = false;
  float rot_fraction_global = 0;
  // KV heads of the global layers where they differ from the sliding ones'
  // (Gemma 4's num_global_key_value_heads: head_count_kv becomes a per-layer
  // array, as the converter writes it). 0: n_head_kv everywhere.
  int64_t n_head_kv_global = 0;
};

const SynthShape* find_synth_shape(const std::string& name);
std::string synth_shape_names();  // "qwen2.5-0.5b, ..." for messages

struct SynthOptions {
  std::string arch = "llama";     // an architecture model/arch.h knows
  std::string shape = "tiny";
  std::string type = "f16";       // f32 | f16 | q8_0 | q4_0 | q4_k_m | iq4_nl | iq4_xs: llama-quantize's mix for that recipe
  bool pure = false;              // every matrix the recipe's base type, as llama-quantize --pure (kernel tests)
  std::string vocab_from;         // GGUF whose tokenizer.* keys are copied
  uint64_t seed = 1;
  int n_threads = 0;
  int64_t n_swa = 0;              // sliding window (gemma3); 0: the shape's
};

// Builds the model and writes it to path (atomically). Throws Error.
void synth_model(const SynthOptions& opt, const std::string& path);

}  // namespace edgellm
