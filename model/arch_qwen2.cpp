// Qwen2 / Qwen2.5 / DeepSeek-R1-Distill-Qwen: llama blocks with biases on the
// q/k/v projections and NEOX-style (split-half) RoPE.
#include "model/arch.h"

namespace edgellm {
const ArchDesc& arch_qwen2() {
  static const ArchDesc d{.name = "qwen2", .rope = RopeStyle::Neox, .qkv_bias = true};
  return d;
}
}  // namespace edgellm
