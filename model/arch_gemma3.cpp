// Gemma 3 (text: 270M, 1B, 4B and the text half of the larger ones): qwen3's
// q/k RMSNorm and NEOX RoPE, plus Gemma's scaled embeddings, post-norms and
// GeGLU, and sliding-window attention on five of every six layers with a
// local RoPE base of 10,000 (llama.cpp's gemma3 and Hugging Face's
// Gemma3TextModel agree on all of this). Tied output head.
#include "model/arch.h"

namespace edgellm {
const ArchDesc& arch_gemma3() {
  static const ArchDesc d{.name = "gemma3",
                          .rope = RopeStyle::Neox,
                          .qk_norm = true,
                          .embed_scale = true,
                          .post_norms = true,
                          .ffn = FfnActivation::GeluTanh,
                          .swa_period = 6,
                          .swa_rope_base = 10000.0f};
  return d;
}
}  // namespace edgellm
