// Gemma 4, the dense on-device text models (E2B, E4B): Gemma 3's block
// (scaled embeddings, q/k RMSNorm, post-norms, GeGLU, NEOX RoPE) with the
// sliding layers listed in the file and given their own head size, the last
// layers attending to earlier layers' keys and values, a per-layer input
// added after each FFN, value heads RMS-normed, unscaled scores and a
// soft-capped output (llama.cpp's gemma4 and Hugging Face's Gemma4 agree on
// all of this). Tied output head. Its mixture-of-experts sizes (26B-A4B)
// carry expert_count and are refused by it.
#include "model/arch.h"

namespace edgellm {
const ArchDesc& arch_gemma4() {
  static const ArchDesc d{.name = "gemma4",
                          .rope = RopeStyle::Neox,
                          .qk_norm = true,
                          .rope_freqs = true,
                          .embed_scale = true,
                          .post_norms = true,
                          .ffn = FfnActivation::GeluTanh,
                          .swa_rope_base = 10000.0f,
                          .swa_pattern = true,
                          .shared_kv = true,
                          .per_layer_inputs = true,
                          .v_norm = true,
                          .unit_attn_scale = true,
                          .final_softcap = true};
  return d;
}
}  // namespace edgellm
