// Llama 2/3/3.1/3.2, TinyLlama, SmolLM2, Mistral-style models: pre-norm
// RMSNorm, SwiGLU MLP, GQA, adjacent-pair RoPE, optional rope_freqs factors.
#include "model/arch.h"

namespace edgellm {
const ArchDesc& arch_llama() {
  static const ArchDesc d{.name = "llama", .rope = RopeStyle::Adjacent, .rope_freqs = true};
  return d;
}
}  // namespace edgellm
