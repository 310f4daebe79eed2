// An architecture is a small description: which optional pieces its blocks
// have and how RoPE pairs dimensions. The forward pass reads these flags; it
// never switches on an architecture's name. Adding a family is adding one
// short arch_*.cpp file and one line in arch.cpp's list.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace edgellm {

enum class FfnActivation {
  Silu,      // SwiGLU: silu(gate) * up (llama, qwen, smollm)
  GeluTanh,  // GeGLU: gelu(gate) * up with GELU's tanh approximation (gemma)
};

enum class RopeStyle {
  Adjacent,  // rotate pairs (2i, 2i+1): llama (its converter permutes Q/K to match)
  Neox,      // rotate pairs (i, i + n_rot/2): qwen2, qwen3, ...
};

struct ArchDesc {
  std::string_view name;   // general.architecture
  RopeStyle rope = RopeStyle::Adjacent;
  bool qkv_bias = false;   // attn_{q,k,v}.bias present (qwen2)
  bool qk_norm = false;    // per-head RMSNorm of q and k before RoPE (qwen3)
  bool rope_freqs = false; // may carry rope_freqs.weight (llama 3.1+ frequency factors)
  // NoPE layers: with n > 0, every n-th layer (il + 1 a multiple of n) applies
  // no RoPE to q and k; their attention sees content only. smollm3: 4, fixed
  // by the architecture (its GGUF files carry no key for it, as in llama.cpp).
  int no_rope_every = 0;
  // Gemma's block: embeddings times sqrt(n_embd); an RMSNorm after attention
  // and after the FFN too (post_attention_norm, post_ffw_norm), each before
  // its residual add. (Gemma's (1 + w) norm needs nothing here: the GGUF
  // converter stores w + 1.)
  bool embed_scale = false;
  bool post_norms = false;
  FfnActivation ffn = FfnActivation::Silu;
  // Sliding-window attention: with period n > 0, layer il attends only to the
  // last attention.sliding_window positions unless il + 1 is a multiple of n
  // (gemma3: 6, five local layers to one global), and local layers may use
  // their own RoPE base (gemma3: 10,000 against the global layers' 1e6) and
  // no RoPE scaling. A file without attention.sliding_window is refused.
  int swa_period = 0;
  float swa_rope_base = 0;  // 0: the global base
  // gemma2: attention scores and final logits soft-capped, c * tanh(x / c),
  // with c from attn_logit_softcapping / final_logit_softcapping (50, 30).
  bool softcaps = false;
  // The output head is always token_embd (gemma2: llama.cpp reads no
  // output.weight for it and refuses a file with one); synth writes it so.
  bool head_is_embedding = false;
  // Phi-3's fused projections, as its checkpoints store them: attn_qkv
  // (q rows, then k, then v) where a file has no separate attn_q/k/v (the
  // loader accepts either, as llama.cpp), and ffn_up holding 2 * n_ff rows,
  // gate first, then up (HF's gate_up_proj.chunk(2); llama.cpp's SWIGLU
  // takes silu of the first half). Both are bound as row views, no copies.
  bool fused_qkv = false;
  bool fused_gate_up = false;
  // LongRoPE (phi3): per-pair frequency divisors rope_factors_long/short
  // (n_rot / 2 each), long ones when the context exceeds
  // rope.scaling.original_context_length, and rope.scaling.attn_factor
  // scaling cos and sin (see HParams).
  bool longrope = false;
  // Gemma 4 (the dense on-device E2B / E4B text models):
  //  - swa_pattern: the sliding layers listed one bool per layer in
  //    attention.sliding_window_pattern, with their own head size
  //    (attention.key_length_swa / value_length_swa), rotated dims
  //    (rope.dimension_count_swa) and RoPE base (rope.freq_base_swa);
  //    rope_freqs.weight applies to the global layers only;
  //  - shared_kv: the last attention.shared_kv_layers layers compute no keys
  //    and values; each attends to the cache of the last earlier layer of
  //    its kind (HParams::kv_source), which costs no KV memory;
  //  - per_layer_inputs: embedding_length_per_layer_input dims per layer,
  //    from per_layer_token_embd and a projection of the embeddings, fed into
  //    each block after its FFN (Executor::per_layer_inputs);
  //  - v_norm: each value head RMS-normed without a weight, like k's norm;
  //  - unit_attn_scale: scores are q.k unscaled (the q norm sets the scale);
  //  - final_softcap: final_logit_softcapping where the file gives it (no
  //    attention soft-cap); blk.N.layer_output_scale optional per layer.
  bool swa_pattern = false;
  bool shared_kv = false;
  bool per_layer_inputs = false;
  bool v_norm = false;
  bool unit_attn_scale = false;
  bool final_softcap = false;

  bool ropes_layer(int64_t il) const { return no_rope_every <= 0 || (il + 1) % no_rope_every != 0; }
};

// nullptr if unknown.
const ArchDesc* find_arch(std::string_view name);
// For an architecture llama.cpp knows and edgellm does not run: what is
// missing (model/arch_unsupported.cpp); empty otherwise.
std::string_view unsupported_arch_reason(std::string_view name);
// "llama, qwen2, qwen3, ..." for error messages.
std::string known_arch_names();

// One accessor per family, each defined in its own arch_*.cpp and listed once
// in arch.cpp (explicit, so a static library cannot drop a family).
const ArchDesc& arch_llama();
const ArchDesc& arch_qwen2();
const ArchDesc& arch_qwen3();
const ArchDesc& arch_smollm3();
const ArchDesc& arch_gemma2();
const ArchDesc& arch_gemma3();
const ArchDesc& arch_phi3();
const ArchDesc& arch_gemma4();

}  // namespace edgellm
