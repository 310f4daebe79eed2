// Gemma 2 (2B, 9B): Gemma's scaled embeddings, post-norms and GeGLU, NEOX
// RoPE with one base everywhere, sliding-window attention on every other
// layer (the even ones), and soft-capped attention scores and final logits
// (llama.cpp's gemma2 and Hugging Face's Gemma2Model agree). Tied head.
#include "model/arch.h"

namespace edgellm {
const ArchDesc& arch_gemma2() {
  static const ArchDesc d{.name = "gemma2",
                          .rope = RopeStyle::Neox,
                          .embed_scale = true,
                          .post_norms = true,
                          .ffn = FfnActivation::GeluTanh,
                          .swa_period = 2,
                          .softcaps = true,
                          .head_is_embedding = true};
  return d;
}
}  // namespace edgellm
