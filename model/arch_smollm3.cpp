// SmolLM3: llama's block (no biases, adjacent-pair RoPE, as its converter
// permutes Q/K like llama's) with NoPE layers: every 4th layer attends
// without RoPE (Hugging Face's no_rope_layer_interval = 4; llama.cpp fixes
// the same step for this architecture and reads no key for it).
#include "model/arch.h"

namespace edgellm {
const ArchDesc& arch_smollm3() {
  static const ArchDesc d{.name = "smollm3", .rope = RopeStyle::Adjacent, .no_rope_every = 4};
  return d;
}
}  // namespace edgellm
